/* matmul: dense matrix multiply, double (i-k-j order, which gcc
 * vectorises) and 32-bit integer, checked against a transposed-order
 * computation of a few entries. Short form: 64x64. "bench": 900x900.
 * "count": 12x12.
 */
#include "common.h"

int main(int argc, char **argv) {
    int n = bench_mode(argc, argv) ? 900 : count_mode(argc, argv) ? 12 : 64;
    double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n);
    double *c = calloc((size_t)n * n, sizeof(double));
    int32_t *ia = malloc(4 * (size_t)n * n), *ib = malloc(4 * (size_t)n * n);
    int32_t *ic = calloc((size_t)n * n, 4);
    CHECK(a && b && c && ia && ib && ic);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            a[i * n + j] = (double)((i * 7 + j * 3) % 17) / 8.0 - 1.0;
            b[i * n + j] = (double)((i * 5 + j * 11) % 13) / 4.0 - 1.5;
            ia[i * n + j] = (i * 31 + j * 17) % 101 - 50;
            ib[i * n + j] = (i * 13 + j * 29) % 97 - 48;
        }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            double aik = a[i * n + k];
            int32_t iaik = ia[i * n + k];
            for (int j = 0; j < n; j++) {
                c[i * n + j] += aik * b[k * n + j];
                ic[i * n + j] += iaik * ib[k * n + j];
            }
        }
    double trace = 0, total = 0;
    int64_t itrace = 0, itotal = 0;
    for (int i = 0; i < n; i++) {
        trace += c[i * n + i];
        itrace += ic[i * n + i];
        for (int j = 0; j < n; j++) {
            total += c[i * n + j];
            itotal += ic[i * n + j];
        }
    }
    /* spot checks in the other loop order */
    for (int t = 0; t < 5; t++) {
        int i = (t * 37) % n, j = (t * 53 + 11) % n;
        double s = 0;
        int32_t is = 0;
        for (int k = 0; k < n; k++) {
            s += a[i * n + k] * b[k * n + j];
            is += ia[i * n + k] * ib[k * n + j];
        }
        CHECK(is == ic[i * n + j]);
        CHECK(s == c[i * n + j]);   /* exact: all values are multiples of 1/32 */
    }
    printf("n %d: double trace %.17g total %.17g; int trace %lld total %lld\n", n, trace, total,
           (long long)itrace, (long long)itotal);
    puts("ok");
    return 0;
}
