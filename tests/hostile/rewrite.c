/* A JIT-like guest: rewrites a small function in an RWX page and calls
 * it, over and over (argv[1] times, ten calls each). Its output is the
 * sum of what the function returned, which only code run as it was last
 * written gives. With a second argument, each rewrite also runs a hot
 * loop of static code that many times (superblocks to build, store and
 * pre-build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The hot phase's work: a call and branches, so that its loop makes
 * superblocks of several blocks. */
__attribute__((noinline)) static long step(long i, long j) {
    if ((i ^ j) % 7 == 3)
        return j * 3;
    return (j & 1) ? 1 : 2;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    unsigned char *page = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    long sum = 0;
    long hot = argc > 2 ? atol(argv[2]) : 0;
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < hot; j++)
            sum += step(i, j);
        /* mov eax, imm32; ret */
        unsigned char code[8] = {0xb8, 0, 0, 0, 0, 0xc3, 0x90, 0x90};
        int v = (int)(i & 0xffff);
        memcpy(code + 1, &v, 4);
        memcpy(page, code, sizeof code);
        int (*f)(void) = (int (*)(void))page;
        for (int k = 0; k < 10; k++)
            sum += f();
    }
    printf("%ld\n", sum);
    return 0;
}
