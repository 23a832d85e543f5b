/* fp: floating point through libm, in float, double and long double.
 *
 * sin/cos/tan/exp/log/pow/sqrt/atan2/cbrt/hypot/erf/lgamma/fma over a range
 * of arguments (including special values), printed with %.17g (%.21Lg for
 * long double) so every bit shows; float and long double arithmetic; the
 * four fenv rounding modes applied to division, rint and conversions;
 * exception flags; classification; frexp/ldexp/modf/remquo; and a
 * Kahan-summed series. glibc picks FMA/AVX2 variants of several functions
 * at start-up, so this also checks that the ifunc choice matches.
 * "count": two of the arguments, 2,000 terms of the series, and the
 * largest long double in hex.
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include "common.h"

/* gcc ignores "#pragma STDC FENV_ACCESS ON"; the Makefile builds this file
   with -frounding-math instead, and every operand whose rounding matters is
   read from a volatile so nothing is folded at compile time. */
static volatile double vd, v1 = 1.0, v2 = 2.0, v2_5 = 2.5, vm2_5 = -2.5, v3_5 = 3.5,
                          vm0_5 = -0.5, v0_1 = 0.1;
static volatile long double vl2_5 = 2.5L;
static volatile float vf;
static volatile long double vl;

int main(int argc, char **argv) {
    int count = count_mode(argc, argv);
    const double xs[] = {0.0, -0.0, 1e-310, 0.1, 0.5, 1.0, 2.0, 3.141592653589793, 10.0,
                         100.5, 1e5, 1e22, 1e300, -3.75, INFINITY, -INFINITY, NAN};
    const unsigned some[] = {3, 16};   /* "count": 0.1 and NaN */
    unsigned nx = count ? sizeof some / sizeof some[0] : sizeof xs / sizeof xs[0];
    for (unsigned k = 0; k < nx; k++) {
        double x = xs[count ? some[k] : k];
        printf("x=%.17g\n", x);
        printf("  sin %.17g cos %.17g tan %.17g\n", sin(x), cos(x), tan(x));
        printf("  exp %.17g log %.17g log2 %.17g log10 %.17g\n", exp(x), log(x), log2(x), log10(x));
        printf("  sqrt %.17g cbrt %.17g pow(x,1.5) %.17g pow(1.5,x) %.17g\n", sqrt(x), cbrt(x),
               pow(x, 1.5), pow(1.5, x));
        printf("  atan %.17g atan2(x,-2) %.17g hypot(x,3) %.17g\n", atan(x), atan2(x, -2.0),
               hypot(x, 3.0));
        printf("  sinh %.17g tanh %.17g erf %.17g lgamma %.17g expm1 %.17g log1p %.17g\n", sinh(x),
               tanh(x), erf(x), lgamma(x), expm1(x), log1p(x));
        printf("  sinf %.9g expf %.9g powf %.9g\n", (double)sinf((float)x), (double)expf((float)x),
               (double)powf((float)x, 0.75f));
        printf("  sinl %.21Lg expl %.21Lg logl %.21Lg\n", sinl(x), expl(x), logl(x));
    }

    /* fma: a single rounding */
    double a = 1.0 + 0x1p-30, c = -(1.0 + 0x1p-29);
    printf("fma(a, a, c) = %a, a * a + c = %a\n", fma(a, a, c), (vd = a * a) + c);
    CHECK(fma(a, a, c) == 0x1p-60);

    /* float and long double arithmetic */
    vf = 1.0f;
    float f = vf / 3.0f;
    vl = 1.0L;
    long double l = vl / 3.0L;
    printf("1/3: float %.9g double %.17g long double %.21Lg\n", (double)f, 1.0 / (vd = 3.0), l);
    long double big = LDBL_MAX / 2;
    if (!count)   /* printing a 4,933-digit number costs 160,000 instructions */
        printf("LDBL_MAX/2*1.5 %.21Lg, LDBL_EPSILON %.21Lg\n", big * 1.5L, LDBL_EPSILON);
    else
        printf("LDBL_MAX/2*1.5 %La, LDBL_EPSILON %.21Lg\n", big * 1.5L, LDBL_EPSILON);
    float s = 0.0f;
    for (int i = 1; i <= 1000; i++)
        s += 1.0f / (float)i;
    printf("float harmonic(1000) %.9g\n", (double)s);

    /* rounding modes */
    const int modes[] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
    const char *names[] = {"nearest", "down", "up", "zero"};
    for (int m = 0; m < 4; m++) {
        CHECK(fesetround(modes[m]) == 0);
        vd = 1.0;
        double q = vd / 3.0;
        double nq = -vd / 3.0;
        vl = 2.0L;
        long double lq = vl / 3.0L;
        vf = 2.0f;
        float fq = vf / 3.0f;
        printf("round %-7s: 1/3 %a -1/3 %a 2/3L %La 2/3f %a rint(2.5) %g rint(-2.5) %g "
               "lrint(3.5) %ld nearbyint(-0.5) %g llrintl(2.5L) %lld\n",
               names[m], q, nq, lq, (double)fq, rint(v2_5), rint(vm2_5), lrint(v3_5),
               nearbyint(vm0_5), llrintl(vl2_5));
        printf("              sqrt(2) %a exp(1) %a (float)0.1 %a 0.1+0.2 %a\n", sqrt(v2), exp(v1),
               (double)(float)v0_1, v0_1 + v2 / 10.0);
    }
    fesetround(FE_TONEAREST);
    printf("fegetround back to nearest: %d\n", fegetround() == FE_TONEAREST);

    /* exception flags */
    feclearexcept(FE_ALL_EXCEPT);
    vd = 1.0;
    vd = vd / 0.0;
    printf("1/0 raises DIVBYZERO %d\n", fetestexcept(FE_DIVBYZERO) != 0);
    feclearexcept(FE_ALL_EXCEPT);
    vd = 0.0;
    vd = vd / vd;
    printf("0/0 raises INVALID %d\n", fetestexcept(FE_INVALID) != 0);
    feclearexcept(FE_ALL_EXCEPT);
    vd = 1e308;
    vd = vd * 10.0;
    printf("1e308*10 raises OVERFLOW %d INEXACT %d\n", fetestexcept(FE_OVERFLOW) != 0,
           fetestexcept(FE_INEXACT) != 0);
    feclearexcept(FE_ALL_EXCEPT);
    vd = 0.5;
    vd = vd * 2.0;
    printf("0.5*2 raises nothing %d\n", fetestexcept(FE_ALL_EXCEPT) == 0);

    /* classification and decomposition */
    const double cs[] = {0.0, 1e-310, 1.0, INFINITY, NAN};
    for (int i = 0; i < 5; i++)
        printf("fpclassify(%g) = %d signbit(-x) %d\n", cs[i], fpclassify(cs[i]), signbit(-cs[i]) != 0);
    int e;
    double fr = frexp(1234.5, &e);
    double ip;
    double fp = modf(-7.25, &ip);
    int quo;
    double rem = remquo(29.0, 3.0, &quo);
    printf("frexp(1234.5) %.17g * 2^%d, ldexp %.17g, modf(-7.25) %g %g, remquo(29,3) %g %d\n", fr, e,
           ldexp(fr, e), ip, fp, rem, quo);
    printf("nextafter(1,2) %a, copysign(3,-0.0) %g, fmod(-7,3) %g, trunc(-2.7) %g, round(-2.5) %g\n",
           nextafter(1.0, 2.0), copysign(3.0, -0.0), fmod(-7.0, 3.0), trunc(-2.7), round(-2.5));

    /* Kahan summation of a slowly converging series */
    double sum = 0.0, comp = 0.0, naive = 0.0;
    for (int k = 1; k <= (count ? 2000 : 200000); k++) {
        double term = 1.0 / ((double)k * k);
        naive += term;
        double y = term - comp;
        double t = sum + y;
        comp = (t - sum) - y;
        sum = t;
    }
    printf("sum 1/k^2: kahan %.17g naive %.17g pi^2/6 %.17g\n", sum, naive, M_PI * M_PI / 6);
    puts("ok");
    return 0;
}
