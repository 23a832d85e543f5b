/* trap-int1: `int1` (icebp) raises SIGTRAP. Whether it retires (the
 * handler's rip past it) is the CPU's choice (Intel hosts: past it; AMD
 * under KVM: at it): a translator must report what the host CPU reports.
 * The handler prints where rip was, si_code and si_addr relative to the
 * instruction, and moves rip past it either way.
 */
#include "common.h"
#include <signal.h>
#include <ucontext.h>

extern char icebp_at[];

static void on_trap(int sig, siginfo_t *si, void *u) {
    ucontext_t *uc = u;
    long rip = uc->uc_mcontext.gregs[REG_RIP] - (long)icebp_at;
    printf("SIGTRAP %d: rip at int1%+ld, si_code %d, si_addr at int1%+ld, trapno %lld\n", sig, rip,
           si->si_code, (long)((char *)si->si_addr - icebp_at),
           (long long)uc->uc_mcontext.gregs[REG_TRAPNO]);
    uc->uc_mcontext.gregs[REG_RIP] = (long)icebp_at + 1;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGTRAP, &sa, NULL) == 0);
    __asm__ volatile("icebp_at: .byte 0xf1\n" : : : "memory");
    puts("ok");
    return 0;
}
