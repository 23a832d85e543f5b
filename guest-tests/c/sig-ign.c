/* sig-ign: signals whose disposition is SIG_IGN are discarded.
 *
 * A translator that installs its own handlers (for SIGSEGV, SIGTRAP, ...)
 * must honour the guest's SIG_IGN for signals sent by a process, and must
 * report SIG_IGN back from sigaction. Each of SIGTRAP, SIGSEGV, SIGUSR1 and
 * SIGBUS is set to SIG_IGN, raised (tgkill) and sent with kill(): the
 * program survives and the disposition reads back as SIG_IGN.
 * (raise(SIGTRAP) under SIG_IGN is a hotlift regression.)
 */
#include "common.h"
#include <signal.h>
#include <unistd.h>

static void ignore_and_send(int sig, const char *name) {
    CHECK(signal(sig, SIG_IGN) != SIG_ERR);
    struct sigaction old;
    CHECK(sigaction(sig, NULL, &old) == 0);
    int ign = old.sa_handler == SIG_IGN;
    int r1 = raise(sig);
    int r2 = kill(getpid(), sig);
    printf("%s: disposition SIG_IGN %d, raise %d, kill %d, still alive\n", name, ign, r1, r2);
    CHECK(ign && r1 == 0 && r2 == 0);
}

int main(void) {
    ignore_and_send(SIGTRAP, "SIGTRAP");
    ignore_and_send(SIGSEGV, "SIGSEGV");
    ignore_and_send(SIGUSR1, "SIGUSR1");
    ignore_and_send(SIGBUS, "SIGBUS");
    puts("ok");
    return 0;
}
