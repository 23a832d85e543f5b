/* intops: integer corner cases through the compiler's eyes: __int128
 * multiply/divide, overflow builtins, bit builtins (popcount, clz, ctz,
 * bswap, parity, rotates), signed division and modulo rounding, shifts by
 * variable amounts, saturating conversions, and 8/16-bit wraparound. gcc
 * emits mul/imul/div, adc chains, setcc/cmov, bt and bsr/lzcnt for these.
 * "count": 1,000 rounds of the checksum loop instead of 100,000.
 */
#include "common.h"
#include <limits.h>

static volatile int64_t vz = 0;   /* keeps the compiler from folding */

int main(int argc, char **argv) {
    int rounds = count_mode(argc, argv) ? 1000 : 100000;
    unsigned __int128 a = (unsigned __int128)0x0123456789abcdefULL << 64 | 0xfedcba9876543210ULL;
    unsigned __int128 b = (unsigned __int128)0x1111111111111111ULL * (3 + vz);
    unsigned __int128 p = a * b, q = a / b, r = a % b;
    printf("u128 a*b hi %016llx lo %016llx\n", (unsigned long long)(p >> 64), (unsigned long long)p);
    printf("u128 a/b %016llx%016llx a%%b %016llx\n", (unsigned long long)(q >> 64), (unsigned long long)q,
           (unsigned long long)r);
    CHECK(q * b + r == a);
    __int128 s = -(__int128)a / 7;
    printf("s128 -a/7 hi %016llx lo %016llx\n", (unsigned long long)((unsigned __int128)s >> 64),
           (unsigned long long)s);

    int ov;
    int32_t r32;
    int64_t r64;
    ov = __builtin_add_overflow(INT_MAX, 1 + (int)vz, &r32);
    printf("INT_MAX + 1 overflows %d -> %d\n", ov, r32);
    ov = __builtin_mul_overflow(INT64_C(3037000500), INT64_C(3037000500) + vz, &r64);
    printf("3037000500^2 overflows %d\n", ov);
    ov = __builtin_sub_overflow(INT64_MIN, 1 + vz, &r64);
    printf("INT64_MIN - 1 overflows %d\n", ov);
    unsigned long long ur;
    ov = __builtin_umulll_overflow(1ULL << 32, (1ULL << 32) + vz, &ur);
    printf("2^32 * 2^32 unsigned overflows %d\n", ov);

    uint64_t x = 0x00f0000000010000ULL + vz;
    printf("popcount %d clz %d ctz %d parity %d bswap %016llx\n", __builtin_popcountll(x),
           __builtin_clzll(x), __builtin_ctzll(x), __builtin_parityll(x),
           (unsigned long long)__builtin_bswap64(x));
    uint32_t y = 0x80000001u + (uint32_t)vz;
    for (unsigned k = 0; k < 40; k += 13)
        printf("rotl32(%#x, %u) = %#x, rotr = %#x\n", y, k, (y << (k & 31)) | (y >> (-k & 31)),
               (y >> (k & 31)) | (y << (-k & 31)));

    /* division rounds toward zero; % has the dividend's sign */
    int vals[] = {7, -7, 7, -7, INT_MIN, INT_MIN};
    int divs[] = {2, 2, -2, -2, 3, -3};
    for (int i = 0; i < 6; i++) {
        volatile int n = vals[i], d = divs[i];
        printf("%d / %d = %d, %% = %d\n", n, d, n / d, n % d);
    }
    volatile int64_t big = INT64_MIN;
    printf("INT64_MIN / 2 = %lld, INT64_MIN %% 10 = %lld\n", (long long)(big / 2), (long long)(big % 10));

    /* variable shifts, including by 0 and 63 */
    for (volatile int sh = 0; sh < 64; sh += 21) {
        printf("1<<%d = %llx, -1>>%d (arith) = %llx, ~0u>>%d = %llx\n", sh, 1ULL << sh, sh,
               (unsigned long long)(INT64_C(-1) >> sh), sh, ~0ULL >> sh);
    }

    /* narrow wraparound and conversions */
    volatile uint8_t u8 = 250;
    volatile int8_t i8 = 120;
    volatile uint16_t u16 = 65530;
    u8 += 10;
    i8 = (int8_t)(i8 + 10);
    u16 += 10;
    printf("u8 250+10 = %u, i8 120+10 = %d, u16 65530+10 = %u\n", u8, i8, u16);
    volatile double dv = 3.99, dn = -3.99, dbig = 1e30;
    printf("(int)3.99 = %d, (int)-3.99 = %d, (long long)1e30 = %lld, (unsigned)-1.0 via int = %u\n",
           (int)dv, (int)dn, (long long)dbig, (unsigned)(int)-1.0);
    volatile float fh = 16777217.0f;
    printf("(float)16777217 = %.1f, (double)(1<<53)+1 = %.1f\n", (double)fh,
           (double)((1LL << 53) + 1 + vz));

    /* a checksum loop that gcc turns into adc/sbb and cmov */
    uint64_t acc = 0, carry = 0, mx = 0;
    rng_t rg = {5};
    for (int i = 0; i < rounds; i++) {
        uint64_t v = rng_next(&rg);
        uint64_t t = acc + v;
        carry += t < acc;
        acc = t;
        mx = v > mx ? v : mx;
    }
    printf("sum mod 2^64 %016llx carries %llu max %016llx\n", (unsigned long long)acc,
           (unsigned long long)carry, (unsigned long long)mx);
    puts("ok");
    return 0;
}
