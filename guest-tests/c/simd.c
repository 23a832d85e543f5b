/* simd: vector code from C - loops that gcc auto-vectorises for AVX2 and
 * AVX-512 (selected per function with target attributes, after checking
 * the CPU), and explicit intrinsics with masks. The scalar versions of the
 * same loops are the reference; results must agree exactly (integer) or
 * bit for bit (floating point done in the same order). The loops run over
 * n = 4096 elements ("count": 256).
 */
#include "common.h"
#include <immintrin.h>

#define N 4096
static float fa[N], fb[N], fc[N];
static int32_t ia[N], ib[N], ic[N];
/* elements in use: N, or 256 for "count" (a multiple of 16) */
static int n = N;

__attribute__((noinline, optimize("no-tree-vectorize"))) static void scalar(void) {
    for (int i = 0; i < n; i++) {
        fc[i] = fa[i] * fb[i] + 1.0f;
        ic[i] = ia[i] * ib[i] + (ia[i] >> 3);
    }
}

__attribute__((noinline, target("avx2,fma"))) static void avx2_loop(void) {
    for (int i = 0; i < n; i++) {
        fc[i] = fa[i] * fb[i] + 1.0f;
        ic[i] = ia[i] * ib[i] + (ia[i] >> 3);
    }
}

__attribute__((noinline, target("avx512f,avx512vl,avx512bw,avx512dq"))) static void avx512_loop(void) {
    for (int i = 0; i < n; i++) {
        fc[i] = fa[i] * fb[i] + 1.0f;
        ic[i] = ia[i] * ib[i] + (ia[i] >> 3);
    }
}

__attribute__((noinline, target("avx512f,avx512bw"))) static int64_t avx512_masked(void) {
    /* sum of ia[i] where ia[i] > ib[i], with a masked tail */
    __m512i acc = _mm512_setzero_si512();
    int i = 0;
    for (; i + 16 <= n - 5; i += 16) {
        __m512i x = _mm512_loadu_si512(&ia[i]), y = _mm512_loadu_si512(&ib[i]);
        __mmask16 k = _mm512_cmpgt_epi32_mask(x, y);
        acc = _mm512_mask_add_epi32(acc, k, acc, x);
    }
    __mmask16 tail = (__mmask16)((1u << (n - 5 - i)) - 1);
    __m512i x = _mm512_maskz_loadu_epi32(tail, &ia[i]), y = _mm512_maskz_loadu_epi32(tail, &ib[i]);
    acc = _mm512_mask_add_epi32(acc, _mm512_cmpgt_epi32_mask(x, y) & tail, acc, x);
    return _mm512_reduce_add_epi32(acc);
}

__attribute__((noinline, target("avx2"))) static int64_t avx2_masked(void) {
    __m256i acc = _mm256_setzero_si256();
    for (int i = 0; i + 8 <= n - 5; i += 8) {
        __m256i x = _mm256_loadu_si256((const __m256i *)&ia[i]), y = _mm256_loadu_si256((const __m256i *)&ib[i]);
        acc = _mm256_add_epi32(acc, _mm256_and_si256(_mm256_cmpgt_epi32(x, y), x));
    }
    int32_t lanes[8];
    _mm256_storeu_si256((__m256i *)lanes, acc);
    int64_t s = 0;
    for (int j = 0; j < 8; j++)
        s += lanes[j];
    /* the last partial vector */
    for (int i = (n - 5) / 8 * 8; i < n - 5; i++)
        s += ia[i] > ib[i] ? ia[i] : 0;
    return s;
}

static float ref_fc[N];
static int32_t ref_ic[N];

/* ints must match the scalar loop exactly; floats may differ where the
   vector loop contracted a*b+1 into an FMA: count those lanes */
static void compare(const char *what) {
    int int_diff = 0, float_diff = 0;
    for (int i = 0; i < n; i++) {
        int_diff += ic[i] != ref_ic[i];
        float_diff += memcmp(&fc[i], &ref_fc[i], sizeof(float)) != 0;
    }
    printf("%s: int lanes differing %d, float lanes differing (FMA contraction) %d, digest %016llx\n",
           what, int_diff, float_diff,
           (unsigned long long)fnv1a(fc, n * sizeof fc[0], fnv1a(ic, n * sizeof ic[0], FNV_INIT)));
    CHECK(int_diff == 0);
}

int main(int argc, char **argv) {
    if (count_mode(argc, argv))
        n = 256;
    rng_t r = {17};
    for (int i = 0; i < n; i++) {
        fa[i] = (float)(int32_t)(rng_next(&r) >> 40) / 1024.0f;
        fb[i] = (float)(int32_t)(rng_next(&r) >> 40) / 2048.0f;
        ia[i] = (int32_t)(rng_next(&r) >> 40) - (1 << 23);
        ib[i] = (int32_t)(rng_next(&r) >> 40) - (1 << 23);
    }
    scalar();
    memcpy(ref_fc, fc, n * sizeof fc[0]);
    memcpy(ref_ic, ic, n * sizeof ic[0]);
    compare("scalar");
    int32_t ref_sum32 = 0;
    for (int i = 0; i < n - 5; i++)
        ref_sum32 += ia[i] > ib[i] ? ia[i] : 0;
    printf("reference masked sum (32-bit wrap) %d\n", ref_sum32);

    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        memset(fc, 0, n * sizeof fc[0]);
        memset(ic, 0, n * sizeof ic[0]);
        avx2_loop();
        compare("avx2 loop");
        int32_t s = (int32_t)avx2_masked();
        printf("avx2 masked sum %d\n", s);
        CHECK(s == ref_sum32);
    } else {
        printf("avx2: skipped\n");
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
        memset(fc, 0, n * sizeof fc[0]);
        memset(ic, 0, n * sizeof ic[0]);
        avx512_loop();
        compare("avx512 loop");
        int32_t s = (int32_t)avx512_masked();
        printf("avx512 masked sum %d\n", s);
        CHECK(s == ref_sum32);
    } else {
        printf("avx512: skipped\n");
    }
    puts("ok");
    return 0;
}
