/* smc-mremap: JIT code moved with mremap, then patched and called at its
 * new address.
 *
 * A translator must follow the move: the old address no longer holds the
 * code, the new one does, and stores at the new address modify code that
 * may already have been translated under the old address. Cases:
 *   1. mremap(MREMAP_MAYMOVE) growing a one-page RWX mapping, patch at the
 *      result, call (the original hotlift regression);
 *   2. a move forced with MREMAP_FIXED onto a page whose own code had been
 *      called before: the destination must run the moved code, and a patch
 *      there must take effect;
 *   3. a fresh page mapped at the vacated old address runs its new code.
 */
#include "common.h"
#include <sys/mman.h>

typedef int (*fn_t)(void);

static unsigned char *rwx_page(void *at) {
    unsigned char *p = mmap(at, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                            MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
    CHECK(p != MAP_FAILED);
    return p;
}

/* mov eax, imm; ret */
static void put_fn(unsigned char *p, int imm) {
    p[0] = 0xb8;
    memcpy(p + 1, &imm, 4);
    p[5] = 0xc3;
}

static int call(unsigned char *p) { return ((fn_t)p)(); }

int main(void) {
    /* 1 */
    unsigned char *p = rwx_page(NULL);
    put_fn(p, 1);
    int a = call(p);
    unsigned char *q = mremap(p, 4096, 8192, MREMAP_MAYMOVE);
    CHECK(q != MAP_FAILED);
    q[1] = 2;
    int b = call(q);
    printf("mremap(MAYMOVE): before %d, patched after the move %d\n", a, b);
    CHECK(a == 1 && b == 2);
    CHECK(munmap(q, 8192) == 0);

    /* 2 */
    p = rwx_page(NULL);
    put_fn(p, 10);
    unsigned char *dst = rwx_page(NULL);
    put_fn(dst, 7);
    int d0 = call(dst);
    int p0 = call(p);
    q = mremap(p, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
    CHECK(q == dst);
    int d1 = call(dst);
    dst[1] = 11;
    int d2 = call(dst);
    printf("mremap(FIXED) onto translated code: dest was %d, source %d; dest now %d, "
           "patched %d\n", d0, p0, d1, d2);
    CHECK(d0 == 7 && p0 == 10 && d1 == 10 && d2 == 11);

    /* 3 */
    CHECK(rwx_page(p) == p);
    put_fn(p, 12);
    int n = call(p);
    printf("new page at the old address: %d\n", n);
    CHECK(n == 12);
    puts("ok");
    return 0;
}
