/* hidden: a guest looking for descriptors and threads it did not make
 * finds none, as in a process of its own.
 *   1. with fd 2 closed (hotlift keeps a copy of it for its messages),
 *      every descriptor number below the limit is tried with F_GETFD:
 *      only 0 and 1 are open;
 *   2. close_range over all of them but 0 and 1, and dup2 of stdout onto
 *      every number in the top half, then closed again: stdout still
 *      works, nothing else is open;
 *   3. /proc/self/fd, /proc/self/fdinfo and /proc/thread-self/fd list
 *      0 and 1 only (and the listing's own descriptor), /proc/self/task
 *      the one thread, and /proc/self/status counts it alone;
 *   4. every thread id in /proc/self/task other than the caller's (there
 *      is none) and none takes a signal 0 (tgkill, tkill, kill), a
 *      SIGEV_THREAD_ID timer or an F_SETOWN_EX owner (hotlift's monitor
 *      thread took all three, and was listed).
 * hotlift's own descriptors showed up in 1 and were closed or replaced
 * by 2, and were listed (and counted by `status`) in 3. The count form (single-stepped) tries 64
 * numbers and stops after 2. */
#define _GNU_SOURCE
#include "common.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int open_count(int limit) {
    int n = 0;
    for (int fd = 0; fd < limit; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            n++;
    return n;
}

/* Entries of the /proc listing `path` but ".", ".." and the listing's
 * own descriptor. */
static int listed(const char *path) {
    DIR *d = opendir(path);
    CHECK(d != NULL);
    int n = 0, self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && atoi(e->d_name) != self)
            n++;
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    int limit = rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
    int tiny = count_mode(argc, argv);
    if (tiny)
        limit = 64;
    CHECK(close(2) == 0);
    printf("1. open: %d\n", open_count(limit));

    CHECK(syscall(SYS_close_range, 3u, ~0u, 0u) == 0);
    int placed = 0;
    for (int fd = limit / 2; fd < limit; fd++)
        if (dup2(1, fd) == fd)
            placed++;
    printf("2. placed %d of %d\n", placed, limit - limit / 2);
    CHECK(syscall(SYS_close_range, 3u, ~0u, 0u) == 0);
    printf("2. open: %d\n", open_count(limit));
    fflush(stdout);
    if (tiny)
        return 0;

    printf("3. listed: fd %d, fdinfo %d, thread-self fd %d, task %d\n",
           listed("/proc/self/fd"), listed("/proc/self/fdinfo"),
           listed("/proc/thread-self/fd"), listed("/proc/self/task"));
    FILE *st = fopen("/proc/self/status", "r");
    CHECK(st != NULL);
    char line[256];
    int threads = -1;
    while (fgets(line, sizeof line, st))
        if (sscanf(line, "Threads: %d", &threads) == 1)
            break;
    fclose(st);
    printf("3. status: %d threads\n", threads);

    pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int others = 0, signalled = 0, timers = 0, owners = 0;
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        pid_t tid = atoi(e->d_name);
        if (tid <= 0 || tid == self)
            continue;
        others++;
        if (syscall(SYS_tgkill, pid, tid, 0) == 0 || syscall(SYS_tkill, tid, 0) == 0 ||
            kill(tid, 0) == 0)
            signalled++;
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = SIGUSR1;
        ev._sigev_un._tid = tid;
        timer_t t;
        if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &t) == 0)
            timers++;
        struct f_owner_ex owner = {F_OWNER_TID, tid};
        if (fcntl(pipefd[0], F_SETOWN_EX, &owner) == 0)
            owners++;
    }
    closedir(d);
    printf("4. others %d: signalled %d, timers %d, owners %d\n", others, signalled, timers,
           owners);
    puts("done");
    return 0;
}
