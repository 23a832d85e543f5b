/* Waits to be killed from outside, in one of several states; prints
 * "ready" first. Argument: "spin" (a busy loop in translated code), "read"
 * (blocked reading stdin), "sleep" (in nanosleep), "ignore" (ignores
 * SIGTERM, then reads), "blocked" (blocks SIGTERM for a while, then
 * unblocks it), "pause". */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "spin";
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    if (!strcmp(how, "ignore"))
        signal(SIGTERM, SIG_IGN);
    if (!strcmp(how, "blocked"))
        sigprocmask(SIG_BLOCK, &set, NULL);
    write(1, "ready\n", 6);
    volatile unsigned long n = 0;
    char c;
    if (!strcmp(how, "spin"))
        for (;;)
            n++;
    if (!strcmp(how, "read") || !strcmp(how, "ignore"))
        while (read(0, &c, 1) != 0)
            ;
    if (!strcmp(how, "sleep")) {
        struct timespec ts = {100, 0};
        nanosleep(&ts, NULL);
    }
    if (!strcmp(how, "pause"))
        pause();
    if (!strcmp(how, "blocked")) {
        struct timespec ts = {0, 300 * 1000 * 1000};
        nanosleep(&ts, NULL);
        write(1, "unblocking\n", 11);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
    }
    write(1, "done\n", 5);
    return 0;
}
