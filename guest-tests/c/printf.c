/* printf: glibc's formatted output and input on many formats.
 *
 * Integers in every length modifier and flag combination, widths and
 * precisions from arguments, %a/%e/%f/%g on doubles and long doubles
 * (including subnormals, infinities, NaN and huge values), %s/%c/%%,
 * snprintf truncation and return values, positional arguments, and
 * strtod/strtold/sscanf round trips. %n and %p are not used (%p would print
 * an address). "count" leaves out the conversions of extreme values (the
 * multi-precision paths cost 10,000-100,000 instructions each) and most
 * round trips.
 */
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include "common.h"

static void vcheck(const char *want, const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    printf("%-24s -> [%s] (%d)\n", fmt, buf, n);
    if (want && strcmp(buf, want) != 0) {
        printf("FAIL: want [%s]\n", want);
        exit(1);
    }
}

int main(int argc, char **argv) {
    int count = count_mode(argc, argv);
    /* integers */
    vcheck("42", "%d", 42);
    vcheck("-2147483648", "%d", INT_MIN);
    vcheck("4294967295", "%u", UINT_MAX);
    vcheck("-9223372036854775808", "%lld", LLONG_MIN);
    vcheck("18446744073709551615", "%llu", ULLONG_MAX);
    vcheck("ffffffffffffffff", "%llx", ULLONG_MAX);
    vcheck("0X1F", "%#X", 31);
    vcheck("0755", "%#o", 0755);
    vcheck("-128", "%hhd", 128);
    vcheck("65535", "%hu", -1);
    vcheck("+7", "%+d", 7);
    vcheck(" 7", "% d", 7);
    vcheck("00042", "%05d", 42);
    vcheck("42   |", "%-5d|", 42);
    vcheck("  -0042", "%7.4d", -42);
    vcheck("", "%.0d", 0);
    vcheck("   42", "%*d", 5, 42);
    vcheck("42   ", "%*d", -5, 42);
    vcheck("00042", "%.*d", 5, 42);
    vcheck("123456789", "%zu", (size_t)123456789);
    vcheck("-5", "%jd", (intmax_t)-5);
    vcheck("ptrdiff -3", "ptrdiff %td", (ptrdiff_t)-3);
    vcheck("18446744073709551615", "%" PRIu64, UINT64_MAX);
    vcheck("b a", "%2$s %1$s", "a", "b");

    /* characters and strings */
    vcheck("x", "%c", 'x');
    vcheck("[  abc]", "[%5s]", "abc");
    vcheck("[ab   ]", "[%-5.2s]", "abc");
    vcheck("100%", "100%%");
    vcheck("(null)", "%s", (char *)NULL);

    /* doubles */
    vcheck("3.141593", "%f", M_PI);
    vcheck("3.14159265358979311600", "%.20f", M_PI);
    vcheck("3.141593e+00", "%e", M_PI);
    vcheck("0x1.921fb54442d18p+1", "%a", M_PI);
    vcheck("0X1.921FB54442D18P+1", "%A", M_PI);
    vcheck("3.14159", "%g", M_PI);
    vcheck("1e+100", "%g", 1e100);
    vcheck("1e-05", "%g", 0.00001);
    vcheck("0.0001", "%g", 0.0001);
    vcheck("100000", "%g", 1e5);
    vcheck("1e+06", "%g", 1e6);
    vcheck("2.5", "%.2g", 2.5);
    vcheck("2", "%.0f", 2.5);
    vcheck("4", "%.0f", 3.5);
    vcheck("-0.000000", "%f", -0.0);
    vcheck("inf", "%f", INFINITY);
    vcheck("-INF", "%F", -INFINITY);
    vcheck("nan", "%f", NAN);
    if (!count) {
        vcheck("4.9406564584124654e-324", "%.17g", 4.9406564584124654e-324);
        vcheck("1.7976931348623157e+308", "%.17g", DBL_MAX);
        vcheck(NULL, "%.60f", 0.1);
        vcheck(NULL, "%f", 1e300);
    }
    vcheck("0x0.0000000000001p-1022", "%a", 4.9406564584124654e-324);
    vcheck("+001.50", "%+07.2f", 1.5);
    vcheck("1.000000e+00", "%#e", 1.0);
    vcheck("1.00000", "%#g", 1.0);

    /* long double */
    vcheck("3.14159265358979323851", "%.20Lf", 3.14159265358979323846264338327950288L);
    vcheck("0xc.90fdaa22168c235p-2", "%La", 3.14159265358979323846264338327950288L);
    if (!count) {
        vcheck("1.18973149535723176502e+4932", "%.20Le", LDBL_MAX);
        vcheck("3.64519953188247460253e-4951", "%.20Le", LDBL_TRUE_MIN);
    }
    vcheck(NULL, "%.30Lg", 1.0L / 3.0L);

    /* snprintf truncation and return value */
    char small[8];
    const char *volatile twelve = "abcdefghijkl";
    int n = snprintf(small, sizeof small, "%s", twelve);
    printf("snprintf truncated to [%s], returned %d\n", small, n);
    CHECK(n == 12 && strcmp(small, "abcdefg") == 0);
    n = snprintf(NULL, 0, "%d-%d", 123, 456);
    printf("snprintf(NULL, 0) returned %d\n", n);
    CHECK(n == 7);

    /* strtod / strtold round trips and sscanf */
    const char *nums[] = {"0.1", "1e-320", "2.2250738585072014e-308", "123456789012345678901234567890",
                          "0x1.8p3", "-0", "inf", "nan", "1.7976931348623159e308", "4.9e-325"};
    for (size_t i = 0; i < (count ? 2 : sizeof nums / sizeof nums[0]); i++) {
        double d = strtod(nums[i], NULL);
        long double ld = strtold(nums[i], NULL);
        uint64_t bits;
        memcpy(&bits, &d, 8);
        printf("strtod(%s) = %.17g bits %016" PRIx64 " strtold = %.21Lg\n", nums[i], d, bits, ld);
    }
    double back;
    char text[64];
    int trips = 0;
    for (int i = 1; i < 2000; i += count ? 401 : 37, trips++) {
        double d = 1.0 / i + i * 1e10;
        snprintf(text, sizeof text, "%.17g", d);
        back = strtod(text, NULL);
        CHECK(back == d);
    }
    printf("%%.17g round trips for %d values\n", trips);
    int a, b;
    char word[16];
    float f;
    n = sscanf("12 0x1f hello 2.5", "%d %i %15s %f", &a, &b, word, &f);
    printf("sscanf: n=%d a=%d b=%d word=%s f=%g\n", n, a, b, word, f);
    CHECK(n == 4 && a == 12 && b == 31 && strcmp(word, "hello") == 0 && f == 2.5f);

    /* a long line through stdio buffering */
    for (int i = 0; i < (count ? 40 : 200); i++)
        printf("%d%c", i * i, i % 20 == 19 ? '\n' : ' ');
    puts("ok");
    return 0;
}
