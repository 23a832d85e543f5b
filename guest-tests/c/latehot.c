/* latehot: a program whose hot code appears late (the profile store's
 * measurement, tools/store-bench). A cold phase first (256 small distinct
 * functions, each called a few hundred times through a table: nothing
 * gets hot), then six phases, each with its own hot loop nest that only
 * runs in that phase: marking multiples, hashing, Collatz steps, an
 * insertion sort, a small matrix product, a naive substring search, and
 * libc's qsort (hot code in libc.so.6 for the dynamically linked build).
 * Each phase prints a checksum.
 *
 * Forms: no argument (short: a few million instructions), "count" (tiny,
 * for single-stepping), "bench" (long), or a number N (N times the work
 * of each hot phase; the short form is 1).
 */
#include "common.h"

/* ---- the cold phase ---------------------------------------------------- */

#define F(n)                                                                  \
    static uint32_t f##n(uint32_t x) {                                        \
        x = x * (2u * (n) + 1u) + (n);                                        \
        if (x & (1u << ((n) % 13)))                                           \
            x ^= x >> ((n) % 7 + 1);                                          \
        return x;                                                             \
    }
#define F8(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7)
#define F64(n) F8(n##0) F8(n##1) F8(n##2) F8(n##3) F8(n##4) F8(n##5) F8(n##6) F8(n##7)
F64(1)
F64(2)
F64(3)
F64(4)
#define R(n) f##n,
#define R8(n) R(n##0) R(n##1) R(n##2) R(n##3) R(n##4) R(n##5) R(n##6) R(n##7)
#define R64(n) R8(n##0) R8(n##1) R8(n##2) R8(n##3) R8(n##4) R8(n##5) R8(n##6) R8(n##7)
static uint32_t (*const cold_table[256])(uint32_t) = {R64(1) R64(2) R64(3) R64(4)};

static uint32_t cold_phase(int rounds) {
    uint32_t x = 12345;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < 256; i++)
            x = cold_table[(i * 37 + r) & 255](x);
    return x;
}

/* ---- the hot phases ---------------------------------------------------- */

static uint64_t mark_multiples(long n) {
    static unsigned char marks[1 << 16];
    uint64_t sum = 0;
    for (long rep = 0; rep < n; rep++) {
        memset(marks, 0, sizeof marks);
        for (unsigned p = 3; p < 64; p += 2)
            for (unsigned j = p * p; j < sizeof marks; j += 2 * p)
                marks[j] = 1;
        for (unsigned j = 1; j < sizeof marks; j += 2)
            sum += marks[j] ? 0 : j;
    }
    return sum;
}

static uint64_t hash_words(long n) {
    uint64_t h = 1469598103934665603ULL;
    rng_t r = {99};
    for (long i = 0; i < n * 60000; i++) {
        uint64_t w = rng_next(&r);
        for (int k = 0; k < 4; k++) {
            h ^= (w >> (16 * k)) & 0xffff;
            h *= 1099511628211ULL;
        }
    }
    return h;
}

static uint64_t collatz(long seeds) {
    uint64_t total = 0;
    for (uint64_t s = 1; s < (uint64_t)seeds; s++) {
        uint64_t x = s;
        while (x != 1) {
            x = (x & 1) ? 3 * x + 1 : x / 2;
            total++;
        }
    }
    return total;
}

static uint64_t insertion_sorts(long n) {
    uint32_t a[96];
    rng_t r = {7};
    uint64_t sum = 0;
    for (long rep = 0; rep < n * 300; rep++) {
        for (int i = 0; i < 96; i++)
            a[i] = (uint32_t)rng_next(&r);
        for (int i = 1; i < 96; i++) {
            uint32_t v = a[i];
            int j = i - 1;
            while (j >= 0 && a[j] > v) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = v;
        }
        sum += a[rep % 96];
    }
    return sum;
}

static uint64_t matrix_products(long n) {
    enum { M = 24 };
    static double a[M][M], b[M][M], c[M][M];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            a[i][j] = (i * M + j) % 17 * 0.25;
            b[i][j] = (i + 2 * j) % 11 * 0.5;
        }
    double trace = 0;
    for (long rep = 0; rep < n * 40; rep++) {
        for (int i = 0; i < M; i++)
            for (int j = 0; j < M; j++) {
                double s = 0;
                for (int k = 0; k < M; k++)
                    s += a[i][k] * b[k][j];
                c[i][j] = s;
            }
        trace += c[rep % M][rep % M];
        a[rep % M][(rep * 7) % M] += 0.125;
    }
    return (uint64_t)trace;
}

static uint64_t substring_search(long n) {
    static char text[8192];
    rng_t r = {3};
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "abcab"[rng_next(&r) % 5];
    const char *pats[] = {"abcabca", "bcabba", "aabcab", "cabcab"};
    uint64_t found = 0;
    for (long rep = 0; rep < n * 4; rep++)
        for (int p = 0; p < 4; p++) {
            size_t len = strlen(pats[p]);
            for (size_t i = 0; i + len <= sizeof text; i++) {
                size_t k = 0;
                while (k < len && text[i + k] == pats[p][k])
                    k++;
                found += k == len;
            }
        }
    return found;
}

static int by_value(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint64_t libc_sorts(long n) {
    uint32_t a[64];
    rng_t r = {11};
    uint64_t sum = 0;
    for (long rep = 0; rep < n * 150; rep++) {
        for (int i = 0; i < 64; i++)
            a[i] = (uint32_t)rng_next(&r) % 1000;
        qsort(a, 64, sizeof a[0], by_value);
        sum += a[rep % 64] * (uint64_t)(rep % 7 + 1);
    }
    return sum;
}

int main(int argc, char **argv) {
    long scale = 1;
    int cold = 300;
    if (count_mode(argc, argv)) {
        printf("latehot (count form)\n");
        printf("cold %u\n", cold_phase(2));
        printf("collatz %llu\n", (unsigned long long)collatz(200));
        return 0;
    }
    if (bench_mode(argc, argv))
        scale = 40;
    else if (argc > 1)
        scale = strtol(argv[1], NULL, 10);
    CHECK(scale >= 1 && scale <= 100000);
    printf("cold %u\n", cold_phase(cold));
    printf("mark %llu\n", (unsigned long long)mark_multiples(scale));
    printf("hash %llx\n", (unsigned long long)hash_words(scale));
    printf("collatz %llu\n", (unsigned long long)collatz(scale * 6000));
    printf("sort %llu\n", (unsigned long long)insertion_sorts(scale));
    printf("matrix %llu\n", (unsigned long long)matrix_products(scale));
    printf("search %llu\n", (unsigned long long)substring_search(scale));
    printf("qsort %llu\n", (unsigned long long)libc_sorts(scale));
    return 0;
}
