/* status-threads: /proc/self/status and a thread's own status file
 * (/proc/thread-self/status, /proc/self/task/TID/status) as natively:
 * each names its thread (Pid: the thread's id) and counts the guest's
 * threads only (hotlift serves them with its own threads left out of
 * `Threads:`, and must read each thread's own file, not the process's).
 * The count form (single-stepped) reads nothing: the files' other lines
 * (memory sizes) differ from a native run's, and so would the
 * instructions that parse them, and how long a join waits varies.
 */
#define _GNU_SOURCE
#include "common.h"
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static void show(const char *path, const char *what) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[256];
    int pid = -1, threads = -1;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "Pid: %d", &pid);
        sscanf(line, "Threads: %d", &threads);
    }
    fclose(f);
    printf("%s: names this thread %d, %d threads\n", what,
           pid == (int)syscall(SYS_gettid), threads);
}

static void *second(void *arg) {
    (void)arg;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)syscall(SYS_gettid));
    show("/proc/thread-self/status", "thread, thread-self");
    show(path, "thread, task/TID");
    show("/proc/self/status", "thread, self");
    return 0;
}

int main(int argc, char **argv) {
    if (count_mode(argc, argv))
        return 0;
    show("/proc/self/status", "main, self");
    pthread_t t;
    CHECK(pthread_create(&t, 0, second, 0) == 0);
    CHECK(pthread_join(t, 0) == 0);
    return 0;
}
