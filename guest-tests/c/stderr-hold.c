/* stderr-hold: a forked child puts a pipe's write end at fd 2, keeps it
 * there past the moment its monitor wakes (a forked child's monitor
 * starts idle and copies the descriptor table once awake), then closes
 * it: its parent, reading the pipe, must see end of file at once, as
 * natively. hotlift's helper threads with a descriptor table of their own
 * kept the fd 2 they copied, so the pipe stayed open until the child
 * ended (a shell waiting on a vfork pipe that had landed on a closed fd 2
 * hung for ever).
 */
#include "common.h"
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

int main(void) {
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        CHECK(dup2(p[1], 2) == 2);
        close(p[1]);
        /* Long enough for an idle monitor to wake (10 ms) and copy. */
        nap_ms(60);
        close(2);
        /* Alive well past the parent's wait: only the close ends it. */
        nap_ms(3000);
        _exit(0);
    }
    close(p[1]);
    struct pollfd f = {p[0], POLLIN, 0};
    int r = poll(&f, 1, 1500);
    char c;
    int eof = r == 1 && read(p[0], &c, 1) == 0;
    puts(eof ? "end of file once the child closed fd 2" : "the pipe stayed open");
    kill(pid, SIGKILL);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return eof ? 0 : 1;
}
