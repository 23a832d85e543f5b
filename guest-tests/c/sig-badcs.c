/* sig-badcs: a signal handler that returns through a frame whose code
 * segment is not 64-bit user code (here the user data selector, 0x2b):
 * the kernel restores the frame, its return to user mode faults, and the
 * thread takes SIGSEGV (SI_KERNEL) at the frame's registers, to its
 * handler when it has one. hotlift killed it without running the
 * handler. Then once more with SIGSEGV blocked in the frame's mask: the
 * kernel forces the signal, and the process dies of it.
 */
#include "common.h"
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile int segv_code = -1;
static volatile int block_in_frame;

static void on_usr1(int sig, siginfo_t *si, void *ctx) {
    (void)sig;
    (void)si;
    ucontext_t *uc = ctx;
    unsigned long long *csgsfs = (unsigned long long *)&uc->uc_mcontext.gregs[REG_CSGSFS];
    *csgsfs = (*csgsfs & ~0xffffull) | 0x2b;
    if (block_in_frame)
        sigaddset(&uc->uc_sigmask, SIGSEGV);
}

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    (void)sig;
    (void)ctx;
    segv_code = si->si_code;
    siglongjmp(back, 1);
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGUSR1, &sa, 0) == 0);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    CHECK(sigaction(SIGSEGV, &sa, 0) == 0);
    if (sigsetjmp(back, 1) == 0) {
        raise(SIGUSR1);
        puts("returned through the frame");
    }
    printf("SIGSEGV to its handler, si_code %d\n", segv_code);
    fflush(stdout);
    block_in_frame = 1;
    raise(SIGUSR1);
    puts("not reached");
    return 0;
}
