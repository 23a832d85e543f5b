/* common.h: helpers shared by the C guest tests.
 *
 * Every C test is built three times (c-NAME: static non-PIE, cpie-NAME:
 * static-pie, cdyn-NAME: dynamically linked PIE) and must print only
 * deterministic text: no addresses, pids, times or environment values.
 * CHECK() prints the failing condition and exits 1, so a failure is
 * visible natively too. Benchmarks run a short
 * workload by default and a long one when argv[1] is "bench"; programs
 * with more than a few hundred thousand instructions also have a tiny one
 * when argv[1] is "count" (the manifest's count lines: the form
 * tests/exact.rs single-steps).
 */
#ifndef GUEST_COMMON_H
#define GUEST_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fflush(stdout);                                                \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

/* True when the test was asked for its long (benchmark) form. */
static inline int bench_mode(int argc, char **argv) {
    return argc > 1 && strcmp(argv[1], "bench") == 0;
}

/* True when the test was asked for its tiny (single-step count) form. */
static inline int count_mode(int argc, char **argv) {
    return argc > 1 && strcmp(argv[1], "count") == 0;
}

/* A small deterministic PRNG (xorshift64*), so runs never depend on libc's
   rand() implementation details or on seeds from the environment. */
typedef struct { uint64_t s; } rng_t;

static inline uint64_t rng_next(rng_t *r) {
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* FNV-1a over a buffer, for printing a digest of large results. */
static inline uint64_t fnv1a(const void *p, size_t n, uint64_t h) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

/* Make `h` the SA_SIGINFO handler of `sig`, with SA_NODEFER (a handler
   that leaves by siglongjmp is entered again next time). */
#include <signal.h>
static inline void catch_signal(int sig, void (*h)(int, siginfo_t *, void *)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    CHECK(sigaction(sig, &sa, NULL) == 0);
}
/* Write `mov eax, v; ret` at `at` (6 bytes): code a test writes at run
   time, returning `v`. */
static inline void emit_ret(unsigned char *at, int v) {
    at[0] = 0xb8;
    memcpy(at + 1, &v, 4);
    at[5] = 0xc3;
}

#endif
