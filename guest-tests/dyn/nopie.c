/* nopie: a dynamically linked program that is not position-independent
 * (ET_EXEC at its link address, with PT_INTERP): ld.so loads libc for it,
 * which calls back into it (qsort's comparison, atexit) while it uses its
 * own globals and libc's (environ, stdout). */
#include "common.h"

static int calls;
static long table[512];

static int cmp(const void *a, const void *b) {
    calls++;
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void bye(void) { printf("atexit handler ran; %d comparisons\n", calls); }

int main(int argc, char **argv) {
    size_t n = count_mode(argc, argv) ? 32 : sizeof table / sizeof table[0];
    rng_t r = {0x12345678};
    for (size_t i = 0; i < n; i++)
        table[i] = (long)(rng_next(&r) % 100000) - 50000;
    qsort(table, n, sizeof table[0], cmp);
    for (size_t i = 1; i < n; i++)
        CHECK(table[i - 1] <= table[i]);
    char buf[64];
    snprintf(buf, sizeof buf, "%ld..%ld", table[0], table[n - 1]);
    printf("sorted %s\n", buf);
    printf("main is at a link address: %s\n",
           (unsigned long)&main < 0x1000000 ? "yes" : "no");
    CHECK(atexit(bye) == 0);
    return 0;
}
