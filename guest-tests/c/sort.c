/* sort: sorting integers three ways - an introsort-style quicksort with
 * insertion sort for small ranges, a bottom-up merge sort, and an LSD radix
 * sort - and checking that all three agree with each other. Short form:
 * 20,000 ints. "bench": 1,000,000 ints, twice. "count": 300 ints.
 */
#include "common.h"

static void insertion(int32_t *a, long lo, long hi) {
    for (long i = lo + 1; i <= hi; i++) {
        int32_t v = a[i];
        long j = i - 1;
        while (j >= lo && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static void quick(int32_t *a, long lo, long hi) {
    while (hi - lo > 16) {
        long mid = lo + (hi - lo) / 2;
        int32_t x = a[lo], y = a[mid], z = a[hi];
        int32_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        long i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                int32_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (j - lo < hi - i) {
            quick(a, lo, j);
            lo = i;
        } else {
            quick(a, i, hi);
            hi = j;
        }
    }
    insertion(a, lo, hi);
}

static void merge_sort(int32_t *a, int32_t *tmp, long n) {
    for (long width = 1; width < n; width *= 2) {
        for (long lo = 0; lo < n; lo += 2 * width) {
            long mid = lo + width < n ? lo + width : n;
            long hi = lo + 2 * width < n ? lo + 2 * width : n;
            long i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        memcpy(a, tmp, sizeof(int32_t) * n);
    }
}

static void radix(int32_t *a, int32_t *tmp, long n) {
    for (int shift = 0; shift < 32; shift += 8) {
        long count[257] = {0};
        for (long i = 0; i < n; i++)
            count[(((uint32_t)a[i] ^ 0x80000000u) >> shift & 0xff) + 1]++;
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (long i = 0; i < n; i++)
            tmp[count[((uint32_t)a[i] ^ 0x80000000u) >> shift & 0xff]++] = a[i];
        memcpy(a, tmp, sizeof(int32_t) * n);
    }
}

int main(int argc, char **argv) {
    int bench = bench_mode(argc, argv);
    long n = bench ? 1000000 : count_mode(argc, argv) ? 300 : 20000;
    int rounds = bench ? 2 : 1;
    int32_t *orig = malloc(4 * n), *a = malloc(4 * n), *b = malloc(4 * n), *c = malloc(4 * n), *tmp = malloc(4 * n);
    CHECK(orig && a && b && c && tmp);
    rng_t r = {2024};
    uint64_t h = FNV_INIT;
    for (int round = 0; round < rounds; round++) {
        for (long i = 0; i < n; i++)
            orig[i] = (int32_t)rng_next(&r) >> (round * 4);
        memcpy(a, orig, 4 * n);
        memcpy(b, orig, 4 * n);
        memcpy(c, orig, 4 * n);
        quick(a, 0, n - 1);
        merge_sort(b, tmp, n);
        radix(c, tmp, n);
        for (long i = 0; i < n; i++) {
            CHECK(a[i] == b[i] && b[i] == c[i]);
            CHECK(i == 0 || a[i - 1] <= a[i]);
        }
        h = fnv1a(a, 4 * n, h);
        printf("round %d: min %d median %d max %d\n", round, a[0], a[n / 2], a[n - 1]);
    }
    printf("sorted %ld ints x %d, digest %016llx\n", n, rounds, (unsigned long long)h);
    puts("ok");
    return 0;
}
