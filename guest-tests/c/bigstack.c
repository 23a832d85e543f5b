/* bigstack: large stack frames.
 *
 * A function with a 1 MiB local array touched from top to bottom (the
 * kernel grows the stack one page fault at a time, below the current rsp
 * guard as the probes go), a 4 MiB alloca, nested 256 KiB frames, and a
 * variable-length array; gcc's -fstack-clash-protection style probes are
 * exercised by the page-by-page touching. "count": a VLA of 2,000 longs
 * instead of 100,000 (the large frames stay).
 */
#include "common.h"
#include <alloca.h>

__attribute__((noinline)) static uint64_t one_mib(int seed) {
    volatile unsigned char big[1 << 20];
    for (long i = sizeof big - 1; i >= 0; i -= 512)
        big[i] = (unsigned char)(i * seed);
    uint64_t h = FNV_INIT;
    for (size_t i = 0; i < sizeof big; i += 4096)
        h = (h ^ big[i + 511]) * 0x100000001b3ULL;
    return h;
}

__attribute__((noinline)) static uint64_t nested(int depth) {
    volatile unsigned char frame[256 * 1024];
    frame[0] = (unsigned char)depth;
    frame[sizeof frame - 1] = (unsigned char)(depth * 3);
    uint64_t below = depth > 0 ? nested(depth - 1) : 0;
    return below * 31 + frame[0] + frame[sizeof frame - 1];
}

__attribute__((noinline)) static uint64_t with_alloca(size_t n) {
    unsigned char *p = alloca(n);
    for (size_t i = 0; i < n; i += 4096)
        p[i] = (unsigned char)(i >> 12);
    p[n - 1] = 0x5a;
    uint64_t s = 0;
    for (size_t i = 0; i < n; i += 4096)
        s += p[i];
    return s + p[n - 1];
}

__attribute__((noinline)) static long vla(int n) {
    long a[n];
    for (int i = 0; i < n; i++)
        a[i] = (long)i * i;
    long s = 0;
    for (int i = n - 1; i >= 0; i -= 3)
        s += a[i];
    return s;
}

int main(int argc, char **argv) {
    int vla_len = count_mode(argc, argv) ? 2000 : 100000;
    printf("1 MiB frame digest %016llx\n", (unsigned long long)one_mib(3));
    printf("1 MiB frame again  %016llx\n", (unsigned long long)one_mib(5));
    printf("16 nested 256 KiB frames: %llu\n", (unsigned long long)nested(15));
    printf("4 MiB alloca sum %llu\n", (unsigned long long)with_alloca(4 << 20));
    printf("VLA of %d longs: %ld\n", vla_len, vla(vla_len));
    puts("ok");
    return 0;
}
