/* sig-queued: fault signals a program queues to itself with a positive
 * si_code (rt_tgsigqueueinfo allows that within one's own process), which
 * must reach its handlers with the siginfo it queued, stay pending while
 * blocked and be dropped when ignored, as the kernel does; a translator
 * that takes them for faults of its own must not. With "die", a queued
 * SIGSEGV at its default action ends the program; with "rtmax", kill of
 * itself with signal 64 does.
 */
#include "common.h"
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

static void on_sig(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    printf("  handler: signal %d, si_code %d, si_addr %#lx\n", sig, si->si_code, (unsigned long)si->si_addr);
}

static long queue(int sig, int code) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = sig;
    si.si_code = code;
    si.si_addr = (void *)0x1234;
    return syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, &si);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "die") == 0) {
        puts("queueing SIGSEGV (SEGV_ACCERR) at its default action");
        fflush(stdout);
        queue(SIGSEGV, 2);
        puts("not reached");
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "rtmax") == 0) {
        puts("kill of itself with signal 64");
        fflush(stdout);
        kill(getpid(), 64);
        puts("not reached");
        return 1;
    }
    struct sigaction sa = {0};
    sa.sa_sigaction = on_sig;
    sa.sa_flags = SA_SIGINFO;
    int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE};
    for (unsigned i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        CHECK(sigaction(sigs[i], &sa, NULL) == 0);
        printf("queue signal %d with si_code 2:\n", sigs[i]);
        fflush(stdout);
        CHECK(queue(sigs[i], 2) == 0);
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGSEGV);
    CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
    CHECK(queue(SIGSEGV, 1) == 0);
    puts("queued SIGSEGV while blocked; unblocking:");
    fflush(stdout);
    CHECK(sigprocmask(SIG_UNBLOCK, &set, NULL) == 0);
    signal(SIGBUS, SIG_IGN);
    CHECK(queue(SIGBUS, 2) == 0);
    puts("queued SIGBUS while ignored: nothing");
    return 0;
}
