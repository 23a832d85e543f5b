/* gsbase-bad: wrgsbase of a non-canonical address raises general
 * protection (SIGSEGV, SI_KERNEL, RIP at the instruction, GS base
 * unchanged), as the CPU does; a canonical one, 32-bit and 64-bit, sets
 * it. hotlift took any 64-bit value. The count form (single-stepped)
 * leaves out the canonical address in the kernel's half, which ptrace
 * refuses to write back (EIO). */
#define _GNU_SOURCE
#include "common.h"

#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

extern char wr_at[];
static sigjmp_buf back;

static void on_segv(int sig, siginfo_t *si, void *ucv) {
    ucontext_t *uc = ucv;
    printf("  signal %d code %d rip-ok %d\n", sig, si->si_code,
           (char *)uc->uc_mcontext.gregs[REG_RIP] == wr_at);
    siglongjmp(back, 1);
}

static unsigned long rd(void) {
    unsigned long v;
    __asm__ volatile("rdgsbase %0" : "=r"(v));
    return v;
}

__attribute__((noinline)) static void wr(unsigned long v) {
    __asm__ volatile("wr_at: wrgsbase %0" ::"r"(v) : "memory");
}

int main(int argc, char **argv) {
    catch_signal(SIGSEGV, on_segv);
    setvbuf(stdout, NULL, _IONBF, 0);
    unsigned long before = rd();
    wr(0x00007fff12345000ul);
    printf("canonical: %d\n", rd() == 0x00007fff12345000ul);
    if (!count_mode(argc, argv)) {
        wr(0xffff800000001000ul);
        printf("canonical high: %d\n", rd() == 0xffff800000001000ul);
    }
    unsigned int lo = 0x1234;
    __asm__ volatile("wrgsbase %0" ::"r"(lo) : "memory");
    printf("32-bit: %d\n", rd() == 0x1234);
    wr(before);
    unsigned long bad[] = {0x0000800000000000ul, 0x8000000000000000ul, 0x1234567812345678ul};
    for (int i = 0; i < 3; i++) {
        if (sigsetjmp(back, 1) == 0) {
            wr(bad[i]);
            printf("  accepted\n");
        }
        printf("non-canonical %d: unchanged %d\n", i, rd() == before);
    }
    puts("done");
    return 0;
}
