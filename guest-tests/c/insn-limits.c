/* insn-limits: instructions whose meaning is the CPU's own.
 *
 * An instruction of 16 bytes (15 operand-size prefixes and a nop) raises
 * general protection: SIGSEGV with si_code SI_KERNEL and si_addr 0, RIP
 * at it. A `jmp rel8` with an operand-size prefix (66 eb) is a 16-bit
 * jump on AMD CPUs (RIP cut to 16 bits: SIGSEGV at a low address) and an
 * ordinary jump on Intel's: the program says which it saw, and matches
 * the native run on the same CPU.
 */
#include "common.h"
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

extern char long_at[], jmp16_at[];

static sigjmp_buf jb;
static volatile int code, rip_at_insn;
static volatile unsigned long addr;

static void h_segv(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    code = si->si_code;
    addr = (unsigned long)si->si_addr;
    rip_at_insn = uc->uc_mcontext.gregs[REG_RIP] == (long)long_at;
    siglongjmp(jb, 1);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h_segv;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);

    if (sigsetjmp(jb, 1) == 0) {
        __asm__ volatile(".globl long_at\nlong_at:\n"
                         ".byte 0x66,0x66,0x66,0x66,0x66,0x66,0x66,0x66\n"
                         ".byte 0x66,0x66,0x66,0x66,0x66,0x66,0x66,0x90\n");
        printf("16-byte instruction ran\n");
    } else {
        printf("16-byte instruction: SIGSEGV, si_code %#x, si_addr %#lx, rip at it %d\n", code,
               addr, rip_at_insn);
    }

    volatile int went_on = 0;
    if (sigsetjmp(jb, 1) == 0) {
        __asm__ volatile(".globl jmp16_at\njmp16_at:\n"
                         ".byte 0x66,0xeb,0x00\n");
        went_on = 1;
        printf("66 eb: went on\n");
    } else {
        printf("66 eb: SIGSEGV at a 16-bit address %d\n",
               addr == (((unsigned long)jmp16_at + 3) & 0xffff));
    }
    printf("done %d\n", went_on);
    return 0;
}
