/* smc-seal: a store into JIT code after it was sealed with mprotect(R|X)
 * must fault, exactly as on the CPU.
 *
 * A function is written into an RWX page and called, then the page is
 * sealed with mprotect(PROT_READ|PROT_EXEC) (W^X) and called again. A
 * translator that write-protects code pages itself and handles the
 * resulting faults must tell its own protection from the guest's: the
 * store into sealed code must kill the process with SIGSEGV (the default
 * action), not be performed as self-modifying code (a hotlift regression).
 * Expected: signal:SIGSEGV.
 */
#include "common.h"
#include <sys/mman.h>

typedef int (*fn_t)(void);

int main(void) {
    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    static const unsigned char code[] = {0xb8, 1, 0, 0, 0, 0xc3}; /* mov eax, 1; ret */
    memcpy(p, code, sizeof code);
    fn_t f = (fn_t)p;
    printf("RWX call: %d\n", f());
    p[1] = 2;
    printf("RWX call after a patch: %d\n", f());
    CHECK(mprotect(p, 4096, PROT_READ | PROT_EXEC) == 0);
    printf("sealed call: %d\n", f());
    CHECK(f() == 2);
    printf("storing into the sealed code (must die of SIGSEGV)\n");
    fflush(stdout);
    *(volatile unsigned char *)(p + 1) = 5;
    printf("store to sealed code succeeded, f=%d\n", f());
    return 3;
}
