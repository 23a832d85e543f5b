/* sig-kill-self: SIGSEGV sent by the program to itself is an ordinary
 * signal, not a fault.
 *
 * A translator that catches SIGSEGV for its own purposes must treat a
 * process-sent SIGSEGV as the guest's: the guest sees SIG_DFL as its
 * disposition (not the translator's handler), and kill(getpid(), SIGSEGV)
 * ends the process by SIGSEGV with no extra output (the comparison
 * includes stderr; a hotlift regression).
 * Expected: signal:SIGSEGV.
 */
#include "common.h"
#include <signal.h>
#include <unistd.h>

int main(void) {
    struct sigaction old;
    CHECK(sigaction(SIGSEGV, NULL, &old) == 0);
    printf("SIGSEGV disposition is SIG_DFL: %d, flags %d\n", old.sa_handler == SIG_DFL,
           old.sa_flags);
    CHECK(old.sa_handler == SIG_DFL);
    printf("kill(getpid(), SIGSEGV) with the default action (must die of it)\n");
    fflush(stdout);
    kill(getpid(), SIGSEGV);
    printf("survived kill(getpid(), SIGSEGV)\n");
    return 1;
}
