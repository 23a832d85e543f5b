/* sig-state: what a signal handler sees and changes, and signals from
 * odd places:
 *   1. a handler that changes only the x87 control word in its frame
 *      (the frame marks x87 and SSE in use, as the kernel's does, so the
 *      change comes back with rt_sigreturn);
 *   2. `int $3` in its two-byte form (cd 03): SIGTRAP, RIP past both
 *      bytes, as `int3`;
 *   3. a call into a non-executable buffer on the stack: SIGSEGV
 *      (SEGV_ACCERR) to a handler whose frame goes on that same stack.
 */
#include "common.h"
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

static unsigned long bv;
static sigjmp_buf jb;
static unsigned long at;

static void on_usr1(int sig, siginfo_t *si, void *u) {
    (void)sig;
    (void)si;
    ucontext_t *uc = u;
    bv = *(unsigned long *)((unsigned char *)uc->uc_mcontext.fpregs + 512);
    uc->uc_mcontext.fpregs->cwd = 0x7f;
}

static void on_fault(int sig, siginfo_t *si, void *u) {
    ucontext_t *uc = u;
    long rip = uc->uc_mcontext.gregs[REG_RIP] - (long)at;
    printf("   signal %d, si_code %d, rip %s\n", sig, si->si_code, at == 0 ? "-" : rip == 2 ? "past it" : "elsewhere");
    siglongjmp(jb, 1);
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    raise(SIGUSR1);
    unsigned short cw;
    __asm__ volatile("fnstcw %0" : "=m"(cw));
    printf("1. frame marks x87 %lu, SSE %lu; control word after the handler %#x\n", bv & 1, (bv >> 1) & 1, cw);
    unsigned short std_cw = 0x37f;
    __asm__ volatile("fldcw %0" ::"m"(std_cw));

    sa.sa_sigaction = on_fault;
    CHECK(sigaction(SIGTRAP, &sa, NULL) == 0 && sigaction(SIGSEGV, &sa, NULL) == 0);
    puts("2. int $3 (cd 03):");
    if (!sigsetjmp(jb, 1))
        __asm__ volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %0\n1: .byte 0xcd, 0x03" : "=m"(at)::"rax");
    puts("3. call into the stack:");
    at = 0;
    volatile unsigned char buf[64];
    memset((void *)buf, 0xc3, sizeof buf);
    if (!sigsetjmp(jb, 1))
        ((void (*)(void))buf)();
    puts("ok");
    return 0;
}
