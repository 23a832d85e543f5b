/* trapflag: the trap flag a program sets itself (`popf`, a signal frame's
 * flags) single-steps it: SIGTRAP (TRAP_TRACE) after each instruction,
 * the first after the instruction after the `popf`, the frame's flags
 * with TF, `pushf` reading TF set, the trap after a `popf` that clears TF
 * still taken; steps across call/ret and an indirect jump stop at each
 * instruction; a stepped `syscall` traps only after the instruction after
 * it. `iretq` to a 64-bit user frame returns there; to another
 * frame, and `sysret`, raise general protection (SIGSEGV, SI_KERNEL).
 * With "die": TF set without a handler kills the program with SIGTRAP.
 * Every address is printed relative to a label of the same code.
 */
#include "common.h"
#include <signal.h>
#include <ucontext.h>

extern char tf_base[], tf_stop_a[], tf_stop_c[], tf_stop_d[], tf_fn[];
extern char gp_iret[], gp_sysret[];

static struct {
    long rip, addr;
    int code, tf;
} steps[64];
static int nsteps;
static char *resume;

static void on_trap(int sig, siginfo_t *si, void *u) {
    ucontext_t *uc = u;
    long rip = uc->uc_mcontext.gregs[REG_RIP];
    if (nsteps < 64) {
        steps[nsteps].rip = rip - (long)tf_base;
        steps[nsteps].addr = (long)si->si_addr - (long)tf_base;
        steps[nsteps].code = si->si_code;
        steps[nsteps].tf = (uc->uc_mcontext.gregs[REG_EFL] & 0x100) != 0;
        nsteps++;
    }
    (void)sig;
    /* Stepping ends at the stop labels (the handler clears TF). */
    if (rip == (long)tf_stop_a || rip == (long)tf_stop_c || rip == (long)tf_stop_d || nsteps >= 64)
        uc->uc_mcontext.gregs[REG_EFL] &= ~0x100LL;
}

static void on_segv(int sig, siginfo_t *si, void *u) {
    ucontext_t *uc = u;
    long rip = uc->uc_mcontext.gregs[REG_RIP];
    const char *at = rip == (long)gp_iret ? "iretq" : rip == (long)gp_sysret ? "sysret" : "elsewhere";
    printf("SIGSEGV %d at %s: si_code %d, trapno %lld, err %lld\n", sig, at, si->si_code,
           (long long)uc->uc_mcontext.gregs[REG_TRAPNO], (long long)uc->uc_mcontext.gregs[REG_ERR]);
    uc->uc_mcontext.gregs[REG_RIP] = (long)resume;
}

static void show(const char *what) {
    printf("%s: %d traps\n", what, nsteps);
    for (int i = 0; i < nsteps; i++)
        printf("  rip base%+ld si_addr base%+ld si_code %d tf %d\n", steps[i].rip, steps[i].addr,
               steps[i].code, steps[i].tf);
    nsteps = 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "die") == 0) {
        /* No handler: the first trap kills (after the nop after popf). */
        puts("setting TF without a handler");
        fflush(stdout);
        __asm__ volatile("pushfq\n"
                         "orq $0x100, (%%rsp)\n"
                         "popfq\n"
                         "nop\n"
                         "nop\n"
                         :
                         :
                         : "cc", "memory");
        puts("not reached");
        return 1;
    }
    struct sigaction sa = {0};
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGTRAP, &sa, NULL) == 0);
    sa.sa_sigaction = on_segv;
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);

    long pushed = 0, after = 0;
    /* A: set TF, step straight-line code (pushf reads TF), stop at a label. */
    __asm__ volatile("tf_base:\n"
                     "pushfq\n"
                     "orq $0x100, (%%rsp)\n"
                     "popfq\n"
                     "nop\n"
                     "mov $1, %%eax\n"
                     "add $2, %%eax\n"
                     "pushfq\n"
                     "popq %0\n"
                     "tf_stop_a: nop\n"
                     "nop\n"
                     : "=r"(pushed)
                     :
                     : "rax", "cc", "memory");
    show("straight");
    printf("pushf while stepping read TF %ld\n", (pushed >> 8) & 1);

    /* B: a popf that clears TF is still followed by a trap. */
    __asm__ volatile("pushfq\n"
                     "orq $0x100, (%%rsp)\n"
                     "popfq\n"
                     "nop\n"
                     "pushfq\n"
                     "andq $-257, (%%rsp)\n"
                     "popfq\n"
                     "nop\n"
                     "nop\n"
                     "pushfq\n"
                     "popq %0\n"
                     : "=r"(after)
                     :
                     : "cc", "memory");
    show("popf clearing TF");
    printf("TF after: %ld\n", (after >> 8) & 1);

    /* C: across a call, a ret and an indirect jump. */
    __asm__ volatile("pushfq\n"
                     "orq $0x100, (%%rsp)\n"
                     "popfq\n"
                     "call tf_fn\n"
                     "lea 1f(%%rip), %%rcx\n"
                     "jmp *%%rcx\n"
                     "nop\n"
                     "1: nop\n"
                     "tf_stop_c: nop\n"
                     "jmp 2f\n"
                     "tf_fn: nop\n"
                     "ret\n"
                     "2:\n"
                     :
                     :
                     : "rcx", "cc", "memory");
    show("call, ret, indirect jump");

    /* C2: a syscall (getppid) while stepping. */
    __asm__ volatile("pushfq\n"
                     "orq $0x100, (%%rsp)\n"
                     "popfq\n"
                     "nop\n"
                     "mov $110, %%eax\n"
                     "syscall\n"
                     "nop\n"
                     "tf_stop_d: nop\n"
                     :
                     :
                     : "rax", "rcx", "r11", "cc", "memory");
    show("syscall");

    /* D: iretq to a 64-bit user frame. */
    long landed = 0;
    __asm__ volatile("mov %%rsp, %%rdx\n"
                     "mov %%ss, %%eax\n"
                     "push %%rax\n"
                     "push %%rdx\n"
                     "pushfq\n"
                     "mov %%cs, %%eax\n"
                     "push %%rax\n"
                     "lea 1f(%%rip), %%rax\n"
                     "push %%rax\n"
                     "iretq\n"
                     "mov $0, %0\n"
                     "1: mov $7, %0\n"
                     : "=r"(landed)
                     :
                     : "rax", "rdx", "cc", "memory");
    printf("iretq landed %ld\n", landed);

    /* E: iretq to a kernel code selector, and sysret: general protection. */
    __asm__ volatile("lea 1f(%%rip), %%rax\n"
                     "mov %%rax, %0\n"
                     "mov %%rsp, %%rdx\n"
                     "push $0x2b\n"
                     "push %%rdx\n"
                     "pushfq\n"
                     "push $0x10\n"
                     "push %%rax\n"
                     "gp_iret: iretq\n"
                     "1: mov %%rdx, %%rsp\n"
                     : "=m"(resume)
                     :
                     : "rax", "rdx", "cc", "memory");
    __asm__ volatile("lea 1f(%%rip), %%rax\n"
                     "mov %%rax, %0\n"
                     "gp_sysret: sysretq\n"
                     "1:\n"
                     : "=m"(resume)
                     :
                     : "rax", "rcx", "r11", "cc", "memory");
    puts("ok");
    return 0;
}
