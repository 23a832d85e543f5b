/* nest: nested loops around 1-6 levels of nested, data-dependent branches
 * (the workload of design S2, sequential pattern mining, in tools/bench):
 *
 *   nest DEPTH THREADS [count|bench|ROUNDS]
 *
 * DEPTH (1-6) picks the function: an outer loop over rounds, an inner loop
 * over a table of bytes, and DEPTH levels of if/else on bits of the byte
 * (each bit set with probability 3/4, so one path through the nest is the
 * hottest and the others are colder the deeper they branch off), with a
 * different leaf computation in each of the 2^DEPTH arms. THREADS threads
 * (1-8) run the same function on tables of their own (design S2's "many
 * instances"); each prints its own digest, in thread order, so the output
 * does not depend on scheduling. The empty volatile asm in every leaf
 * keeps each arm a real branch (gcc would turn small arms into cmov). */
#include "common.h"

#include <pthread.h>

enum { TABLE = 4096 };

#define LEAF(k)                                                        \
    do {                                                               \
        __asm__ volatile("" ::: "memory");                             \
        acc = (acc ^ (x + (k))) * 0x9E3779B97F4A7C15ull + (k);         \
        acc ^= acc >> (63 - (k));                                      \
    } while (0)

#define B1(b, k)              \
    if ((x >> (b)) & 1)       \
        LEAF(k);              \
    else                      \
        LEAF((k) + 1)
#define B2(b, k)                  \
    if ((x >> (b)) & 1) {         \
        B1((b) + 1, k);           \
    } else {                      \
        B1((b) + 1, (k) + 2);     \
    }
#define B3(b, k)                  \
    if ((x >> (b)) & 1) {         \
        B2((b) + 1, k);           \
    } else {                      \
        B2((b) + 1, (k) + 4);     \
    }
#define B4(b, k)                  \
    if ((x >> (b)) & 1) {         \
        B3((b) + 1, k);           \
    } else {                      \
        B3((b) + 1, (k) + 8);     \
    }

#define B5(b, k)                  \
    if ((x >> (b)) & 1) {         \
        B4((b) + 1, k);           \
    } else {                      \
        B4((b) + 1, (k) + 16);    \
    }
#define B6(b, k)                  \
    if ((x >> (b)) & 1) {         \
        B5((b) + 1, k);           \
    } else {                      \
        B5((b) + 1, (k) + 32);    \
    }

#define NEST(name, B)                                                   \
    static __attribute__((noinline)) uint64_t name(const uint8_t *d,   \
                                                   int rounds) {       \
        uint64_t acc = 1;                                               \
        for (int r = 0; r < rounds; r++)                                \
            for (unsigned i = 0; i < TABLE; i++) {                      \
                unsigned x = d[(i * 7 + (unsigned)r) & (TABLE - 1)];    \
                B(0, 0);                                                \
            }                                                           \
        return acc;                                                     \
    }

NEST(nest1, B1)
NEST(nest2, B2)
NEST(nest3, B3)
NEST(nest4, B4)
NEST(nest5, B5)
NEST(nest6, B6)

static uint64_t (*const nests[])(const uint8_t *, int) = {nest1, nest2, nest3,
                                                          nest4, nest5, nest6};

struct job {
    int depth, rounds, id;
    uint8_t table[TABLE];
    uint64_t result;
};

static void *run(void *p) {
    struct job *j = p;
    j->result = nests[j->depth - 1](j->table, j->rounds);
    return NULL;
}

int main(int argc, char **argv) {
    CHECK(argc >= 3);
    int depth = atoi(argv[1]), threads = atoi(argv[2]);
    CHECK(depth >= 1 && depth <= 6 && threads >= 1 && threads <= 8);
    const char *form = argc > 3 ? argv[3] : "";
    int rounds = strcmp(form, "bench") == 0 ? 30000
                 : strcmp(form, "count") == 0 ? 1
                 : *form                      ? atoi(form)
                                              : 48;
    CHECK(rounds >= 1);
    static struct job jobs[8];
    for (int t = 0; t < threads; t++) {
        rng_t rng = {0x9e3779b97f4a7c15ull * (uint64_t)(t + 1)};
        jobs[t].depth = depth;
        jobs[t].rounds = rounds;
        jobs[t].id = t;
        for (int i = 0; i < TABLE; i++) {
            uint64_t v = rng_next(&rng);
            uint8_t byte = 0;
            for (int b = 0; b < 8; b++)
                byte |= (uint8_t)(((v >> (2 * b)) & 3) != 0) << b;
            jobs[t].table[i] = byte;
        }
    }
    if (threads == 1) {
        run(&jobs[0]);
    } else {
        pthread_t tid[8];
        for (int t = 0; t < threads; t++)
            CHECK(pthread_create(&tid[t], NULL, run, &jobs[t]) == 0);
        for (int t = 0; t < threads; t++)
            CHECK(pthread_join(tid[t], NULL) == 0);
    }
    for (int t = 0; t < threads; t++)
        printf("nest depth %d rounds %d thread %d: %016llx\n", depth, rounds, t,
               (unsigned long long)jobs[t].result);
    return 0;
}
