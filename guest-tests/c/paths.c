/* paths: functions of different shapes for `hotlift paths` (tests/paths.rs,
 * tools/paths-bench): few and many paths, nested branches, a loop run
 * many times in one call, a switch (a jump table), recursion, calls in
 * the middle of a function, and a loop back to a function's entry.
 *
 *   paths [SHAPE [N [M]]]   SHAPE: all (default), few, many, nested,
 *                           loop, switch, rec, calls, tail, signal,
 *                           jump, threads; N calls of it; M iterations
 *                           per call for `loop`
 *   paths bench             the long form (tools/bench)
 *
 * Branches go through volatile stores so gcc keeps them as branches (no
 * cmov), and every function is noinline/noclone so it exists under its
 * own name.
 */
#include "common.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

#define KEEP __attribute__((noinline, noclone))

static volatile uint64_t v1, v2, v3, v4;

/* Two diamonds: 4 paths. */
KEEP uint64_t few(uint64_t x) {
    if (x & 1)
        v1 = x;
    else
        v2 = x;
    if (x & 2)
        v3 = x;
    else
        v4 = x;
    return x * 3;
}

/* Eight diamonds in a row: 256 paths. */
KEEP uint64_t many(uint64_t x) {
    if (x & 1) v1 = x; else v2 = x;
    if (x & 2) v3 = x; else v4 = x;
    if (x & 4) v1 = x + 1; else v2 = x + 1;
    if (x & 8) v3 = x + 1; else v4 = x + 1;
    if (x & 16) v1 = x + 2; else v2 = x + 2;
    if (x & 32) v3 = x + 2; else v4 = x + 2;
    if (x & 64) v1 = x + 3; else v2 = x + 3;
    if (x & 128) v3 = x + 3; else v4 = x + 3;
    return x ^ 0x55;
}

/* Nested branches with early returns. */
KEEP int nested(int a, int b) {
    if (a > 0) {
        if (b > 0) {
            v1 = (uint64_t)(a + b);
            if (a > b)
                return 1;
            v2 = 1;
            return 2;
        }
        v3 = (uint64_t)a;
        return 3;
    }
    if (b == 0) {
        v4 = 0;
        return 4;
    }
    v1 = (uint64_t)b;
    return 5;
}

/* A loop: n iterations, a rare branch every 1024th. */
KEEP uint64_t loop(uint64_t n) {
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) {
        if ((i & 1023) == 1023)
            v1 = s;
        else
            s += i;
    }
    return s;
}

/* A dense switch: a jump table (an indirect jump inside the function). */
KEEP uint64_t sw(unsigned k, uint64_t x) {
    switch (k) {
    case 0: v1 = x; return x + 1;
    case 1: v2 = x; return x * 3;
    case 2: v3 = x; return x ^ 7;
    case 3: v4 = x; return x - 9;
    case 4: v1 = x + 1; return x << 2;
    case 5: v2 = x + 1; return x >> 1;
    case 6: v3 = x + 1; return x | 8;
    case 7: v4 = x + 1; return x & 0xff;
    default: return 0;
    }
}

/* Recursion through two calls, with branches. */
KEEP uint64_t rec(unsigned n) {
    if (n < 2) {
        v1 = n;
        return n;
    }
    uint64_t a = rec(n - 1);
    if (n & 1)
        return a + rec(n - 2);
    v2 = a;
    return a + 1;
}

KEEP uint64_t helper(uint64_t x) {
    if (x & 4)
        v3 = x;
    return x + 11;
}

/* Calls in the middle of the function (to its own helper and to libc). */
KEEP uint64_t calls(uint64_t x, const char *s) {
    uint64_t r = helper(x);
    if (x & 1)
        r += strlen(s);
    else
        r += helper(x + 1);
    return r;
}

/* A loop back to the entry: a tail recursion gcc turns into a jump. */
KEEP uint64_t tail(uint64_t n, uint64_t acc) {
    if (n == 0)
        return acc;
    if (n & 1)
        v4 = acc;
    return tail(n - 1, acc + n);
}

/* Raises a signal on some paths; the handler calls it again (a nested
 * activation while the outer one waits in raise()). */
static volatile int in_handler;
static volatile uint64_t sig_sum;
KEEP uint64_t sigf(uint64_t x);
static void on_usr1(int s) {
    (void)s;
    in_handler = 1;
    sig_sum += sigf(5);
    in_handler = 0;
}
KEEP uint64_t sigf(uint64_t x) {
    if ((x & 3) == 0 && !in_handler)
        raise(SIGUSR1);
    if (x & 1)
        v1 = x;
    else
        v2 = x;
    return x + 1;
}

/* longjmp out of a callee, past the profiled function (jumper), and
 * back into it, to a setjmp of its own (jumper2). */
static jmp_buf jb_out;
KEEP void thrower(uint64_t x) {
    if (x % 3 == 0)
        longjmp(jb_out, 1);
    v1 = x;
}
KEEP uint64_t jumper(uint64_t x) {
    if (x & 1)
        v2 = x;
    thrower(x);
    if (x & 2)
        v3 = x;
    return x + 1;
}
KEEP void inner_throw(jmp_buf *b, uint64_t x) {
    if (x & 2)
        longjmp(*b, 1);
    v4 = x;
}
KEEP uint64_t jumper2(uint64_t x) {
    jmp_buf b;
    volatile uint64_t r = 0;
    if (setjmp(b) == 0) {
        r = 1;
        inner_throw(&b, x);
    } else {
        r = 2;
    }
    if (x & 1)
        v1 = r;
    return r;
}

static uint64_t run_jump(uint64_t n, uint64_t h0) {
    rng_t r = {0x243f6a8885a308d3ULL};
    volatile uint64_t h = h0;
    for (volatile uint64_t i = 0; i < n; i++) {
        uint64_t y;
        if (setjmp(jb_out) == 0)
            y = jumper(rng_next(&r) % 1000);
        else
            y = 7;
        y += jumper2(i);
        h = fnv1a(&y, 8, h);
    }
    return h;
}

/* Four threads calling rec and few at once. */
struct work {
    uint64_t n, h;
    unsigned id;
};
static void *worker(void *arg) {
    struct work *w = arg;
    rng_t r = {0x1234567ULL + w->id};
    uint64_t h = FNV_INIT;
    for (uint64_t i = 0; i < w->n; i++) {
        uint64_t y = rec((unsigned)((i + w->id) % 10)) + few(rng_next(&r));
        h = fnv1a(&y, 8, h);
    }
    w->h = h;
    return 0;
}

static int run(const char *shape, uint64_t n, uint64_t m) {
    int all = strcmp(shape, "all") == 0;
    uint64_t h = FNV_INIT;
    rng_t r = {0x9e3779b97f4a7c15ULL};
    int known = 0;
    if (all || !strcmp(shape, "few")) {
        known = 1;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t y = few(rng_next(&r));
            h = fnv1a(&y, 8, h);
        }
    }
    if (all || !strcmp(shape, "many")) {
        known = 1;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t y = many(rng_next(&r));
            h = fnv1a(&y, 8, h);
        }
    }
    if (all || !strcmp(shape, "nested")) {
        known = 1;
        for (uint64_t i = 0; i < n; i++) {
            int y = nested((int)(rng_next(&r) % 7) - 3, (int)(rng_next(&r) % 5) - 2);
            h = fnv1a(&y, sizeof y, h);
        }
    }
    if (all || !strcmp(shape, "loop")) {
        known = 1;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t y = loop(m + i % 3);
            h = fnv1a(&y, 8, h);
        }
    }
    if (all || !strcmp(shape, "switch")) {
        known = 1;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t k = rng_next(&r);
            uint64_t y = sw((unsigned)(k % 10), k);
            h = fnv1a(&y, 8, h);
        }
    }
    if (all || !strcmp(shape, "rec")) {
        known = 1;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t y = rec((unsigned)(i % 12));
            h = fnv1a(&y, 8, h);
        }
    }
    if (all || !strcmp(shape, "calls")) {
        known = 1;
        static const char *words[] = {"a", "path", "profile"};
        for (uint64_t i = 0; i < n; i++) {
            uint64_t y = calls(rng_next(&r), words[i % 3]);
            h = fnv1a(&y, 8, h);
        }
    }
    if (all || !strcmp(shape, "tail")) {
        known = 1;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t y = tail(i % 9, 1);
            h = fnv1a(&y, 8, h);
        }
    }
    if (all || !strcmp(shape, "signal")) {
        known = 1;
        signal(SIGUSR1, on_usr1);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t y = sigf(rng_next(&r));
            h = fnv1a(&y, 8, h);
        }
        uint64_t s = sig_sum;
        h = fnv1a(&s, 8, h);
    }
    if (all || !strcmp(shape, "jump")) {
        known = 1;
        h = run_jump(n, h);
    }
    if (!strcmp(shape, "threads")) {
        known = 1;
        pthread_t t[4];
        struct work w[4];
        for (unsigned i = 0; i < 4; i++) {
            w[i] = (struct work){n, 0, i};
            CHECK(pthread_create(&t[i], 0, worker, &w[i]) == 0);
        }
        for (unsigned i = 0; i < 4; i++) {
            CHECK(pthread_join(t[i], 0) == 0);
            h = fnv1a(&w[i].h, 8, h);
        }
    }
    if (!known) {
        fprintf(stderr, "unknown shape %s\n", shape);
        return 2;
    }
    printf("%s %llu %llu: %016llx\n", shape, (unsigned long long)n,
           (unsigned long long)m, (unsigned long long)h);
    return 0;
}

int main(int argc, char **argv) {
    if (bench_mode(argc, argv))
        return run("all", 200000, 2000);
    if (count_mode(argc, argv))
        return run("all", 20, 40);
    const char *shape = argc > 1 ? argv[1] : "all";
    uint64_t n = argc > 2 ? strtoull(argv[2], 0, 10) : 200;
    uint64_t m = argc > 3 ? strtoull(argv[3], 0, 10) : 100;
    return run(shape, n, m);
}
