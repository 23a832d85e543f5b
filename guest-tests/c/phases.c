/* phases: three phases, one after the other, each spending its time in its
 * own function: integer mixing (mix_integers), byte hashing (hash_bytes),
 * then a floating-point recurrence (float_steps). tests/report.rs profiles
 * it with call-stack sampling and checks that `hotlift report` finds each
 * phase's function in its part of the run, and draws the timeline.
 * Argument: work units per phase (default 4; "bench": 2000). One unit is
 * about half a million instructions in each phase; "count" runs one unit
 * a tenth of that size.
 */
#include "common.h"

static int UNIT = 100000;

__attribute__((noinline)) static uint64_t mix_integers(uint64_t seed) {
    uint64_t s = seed;
    for (uint64_t i = 0; i < (uint64_t)UNIT; i++)
        s = (s ^ (s >> 7)) * 0x9e3779b97f4a7c15ULL + i;
    return s;
}

static unsigned char buf[4096];

__attribute__((noinline)) static uint64_t hash_bytes(uint64_t seed) {
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    for (int r = 0; r < UNIT / 2048; r++)
        for (int i = 0; i < 4096; i++)
            h = (h ^ buf[i]) * 0x100000001b3ULL;
    return h;
}

__attribute__((noinline)) static double float_steps(double x) {
    for (int i = 0; i < UNIT; i++)
        x = x * 0.999999 + 0.5 / (1.0 + (i & 7));
    return x;
}

__attribute__((noinline)) static uint64_t phase_integers(long units) {
    uint64_t s = 1;
    for (long u = 0; u < units; u++)
        s = mix_integers(s);
    return s;
}

__attribute__((noinline)) static uint64_t phase_hash(long units) {
    uint64_t h = 0;
    for (long u = 0; u < units; u++)
        h ^= hash_bytes(h + u);
    return h;
}

__attribute__((noinline)) static double phase_float(long units) {
    double x = 1.0;
    for (long u = 0; u < units; u++)
        x = float_steps(x);
    return x;
}

int main(int argc, char **argv) {
    long units = 4;
    if (count_mode(argc, argv)) {
        units = 1;
        UNIT = 10000;
    }
    else if (bench_mode(argc, argv))
        units = 2000;
    else if (argc > 1)
        units = atol(argv[1]);
    CHECK(units > 0);
    for (int i = 0; i < 4096; i++)
        buf[i] = (unsigned char)(i * 31 + 7);
    uint64_t a = phase_integers(units);
    uint64_t b = phase_hash(units);
    double c = phase_float(units);
    printf("units %ld: integers %016llx, hash %016llx, float %.6f\n", units,
           (unsigned long long)a, (unsigned long long)b, c);
    CHECK(c > 0.0);
    puts("ok");
    return 0;
}
