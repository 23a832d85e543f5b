/* sieve: the sieve of Eratosthenes on a bit array, plus a segmented
 * count. Short form: primes below 200,000. "bench": below 200,000,000.
 * "count": below 2,000, and pi(10^3) instead of pi(10^6).
 */
#include "common.h"

static uint64_t count_primes(uint64_t n, uint64_t *last, uint64_t *sum_mod) {
    /* odd numbers only: bit i stands for 2i+1 */
    uint64_t bits = n / 2 + 1;
    uint64_t *composite = calloc((bits + 63) / 64, 8);
    CHECK(composite != NULL);
    for (uint64_t i = 1; (2 * i + 1) * (2 * i + 1) < n; i++) {
        if (composite[i / 64] >> (i % 64) & 1)
            continue;
        uint64_t p = 2 * i + 1;
        for (uint64_t j = (p * p) / 2; j < bits; j += p)
            composite[j / 64] |= 1ULL << (j % 64);
    }
    uint64_t count = n > 2 ? 1 : 0, s = 2;
    *last = 2;
    for (uint64_t i = 1; 2 * i + 1 < n; i++) {
        if (!(composite[i / 64] >> (i % 64) & 1)) {
            count++;
            *last = 2 * i + 1;
            s = (s + 2 * i + 1) % 1000000007;
        }
    }
    *sum_mod = s;
    free(composite);
    return count;
}

int main(int argc, char **argv) {
    int count = count_mode(argc, argv);
    uint64_t n = bench_mode(argc, argv) ? 200000000 : count ? 2000 : 200000;
    uint64_t last, sum;
    uint64_t c = count_primes(n, &last, &sum);
    printf("primes below %llu: %llu, largest %llu, sum mod 1e9+7 %llu\n", (unsigned long long)n,
           (unsigned long long)c, (unsigned long long)last, (unsigned long long)sum);
    /* known values */
    uint64_t c100 = count_primes(100, &last, &sum);
    uint64_t c1m = count_primes(count ? 1000 : 1000000, &last, &sum);
    printf("pi(100) = %llu, pi(10^%d) = %llu\n", (unsigned long long)c100, count ? 3 : 6,
           (unsigned long long)c1m);
    CHECK(c100 == 25 && c1m == (count ? 168 : 78498));
    puts("ok");
    return 0;
}
