/* sig-pending: a blocked signal sent by the program itself stays pending.
 *
 * hotlift keeps SIGSEGV (and its other fault signals) unblocked in the
 * kernel even when the guest blocks them, and its monitor thread must never
 * receive a process-directed signal. So: block SIGUSR1 and SIGSEGV, send
 * each with kill(), check sigpending() shows them and the program survives,
 * then set SIG_IGN, which discards a pending signal, and check it is gone.
 */
#include "common.h"
#include <signal.h>
#include <unistd.h>

static void pending_then_discard(int sig, const char *name) {
    sigset_t s, p;
    sigemptyset(&s);
    sigaddset(&s, sig);
    CHECK(sigprocmask(SIG_BLOCK, &s, NULL) == 0);
    CHECK(kill(getpid(), sig) == 0);
    CHECK(sigpending(&p) == 0);
    int before = sigismember(&p, sig);
    signal(sig, SIG_IGN);
    CHECK(sigpending(&p) == 0);
    int after = sigismember(&p, sig);
    printf("%s: pending after kill %d, after SIG_IGN %d\n", name, before, after);
    CHECK(before == 1 && after == 0);
    CHECK(sigprocmask(SIG_UNBLOCK, &s, NULL) == 0);
}

int main(void) {
    pending_then_discard(SIGUSR1, "SIGUSR1");
    pending_then_discard(SIGSEGV, "SIGSEGV");
    puts("ok");
    return 0;
}
