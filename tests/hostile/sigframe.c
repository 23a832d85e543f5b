/* Forged signal frames (tests/hostile/frames.rs): a SIGUSR1 handler
 * changes the frame the kernel (or hotlift) built, and returns through
 * rt_sigreturn.
 *   fp:    the FPU state pointer is set to an address read from stdin
 *          (one of hotlift's mappings; natively an unmapped one): the
 *          kernel cannot read it there, SIGSEGV. hotlift read its own
 *          memory into the guest's vector registers and went on.
 *   cs32:  the code segment is 32-bit user code (0x23): hotlift stops
 *          and says so.
 *   csbad: the code segment is no user segment (0x0b): SIGSEGV.
 */
#define _GNU_SOURCE 1
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static const char *mode;
static unsigned long addr;

static void on_usr1(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    (void)si;
    ucontext_t *uc = ucv;
    if (strcmp(mode, "fp") == 0)
        uc->uc_mcontext.fpregs = (fpregset_t)addr;
    else {
        greg_t segs = uc->uc_mcontext.gregs[REG_CSGSFS] & ~0xffffL;
        uc->uc_mcontext.gregs[REG_CSGSFS] = segs | (strcmp(mode, "cs32") == 0 ? 0x23 : 0x0b);
    }
}

int main(int argc, char **argv) {
    mode = argc > 1 ? argv[1] : "fp";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (strcmp(mode, "fp") == 0) {
        puts("ready");
        char line[64];
        if (!fgets(line, sizeof line, stdin))
            return 2;
        addr = strtoul(line, NULL, 16);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    puts("survived");
    return 0;
}
