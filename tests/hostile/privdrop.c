/* privdrop: a program run as root that gives up root (tests/hostile.rs).
 *   nproc:  RLIMIT_NPROC lowered (soft and hard) acts on its threads and
 *           forks as natively, and a forked child still runs: hotlift's
 *           child needs a thread of its own (its monitor), which the limit
 *           refused (the child panicked). Root ignores the limit, so the
 *           program takes a user id of its own first (60000 + pid % 5000:
 *           runs at once do not count against each other).
 *   drop:   it takes that user id, forks a child (status 4), exits 6;
 *   chroot: it chroots into an empty directory, forks (3), exits 5.
 * Its profile was lost: hotlift could no longer create it. */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);                                    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void *sleeper(void *arg) {
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int threads(int max) {
    int n = 0;
    for (; n < max; n++) {
        pthread_t t;
        int e = pthread_create(&t, NULL, sleeper, NULL);
        if (e != 0) {
            printf("  thread %d: %s\n", n + 1, strerror(e));
            break;
        }
    }
    return n;
}

static void fork_once(void) {
    fflush(stdout);
    pid_t p = fork();
    if (p < 0) {
        printf("  fork: %s\n", strerror(errno));
        return;
    }
    if (p == 0) {
        printf("  child runs\n");
        fflush(stdout);
        _exit(7);
    }
    int st;
    CHECK(waitpid(p, &st, 0) == p);
    printf("  child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}


static uid_t own_uid(void) {
    return 60000 + (uid_t)(getpid() % 5000);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "drop") == 0 || strcmp(mode, "chroot") == 0) {
        if (mode[0] == 'd') {
            uid_t uid = own_uid();
            CHECK(setgroups(0, NULL) == 0);
            CHECK(setresgid(uid, uid, uid) == 0);
            CHECK(setresuid(uid, uid, uid) == 0);
            printf("dropped: %d\n", getuid() == uid);
        } else {
            char dir[] = "/tmp/hotlift-chroot-XXXXXX";
            CHECK(mkdtemp(dir) != NULL);
            CHECK(chroot(dir) == 0);
            CHECK(chdir("/") == 0);
            puts("in the chroot");
        }
        fflush(stdout);
        pid_t p = fork();
        CHECK(p >= 0);
        if (p == 0)
            _exit(mode[0] == 'd' ? 4 : 3);
        int st;
        CHECK(waitpid(p, &st, 0) == p);
        printf("child status %d\n", WEXITSTATUS(st));
        return mode[0] == 'd' ? 6 : 5;
    }
    struct rlimit rl = {4, 4};
    CHECK(setrlimit(RLIMIT_NPROC, &rl) == 0);
    uid_t uid = own_uid();
    CHECK(setresgid(uid, uid, uid) == 0);
    CHECK(setresuid(uid, uid, uid) == 0);
    CHECK(getrlimit(RLIMIT_NPROC, &rl) == 0);
    printf("limit %ld/%ld\n", (long)rl.rlim_cur, (long)rl.rlim_max);
    printf("two threads: %d\n", threads(2));
    puts("a fork at the limit:");
    fork_once();
    printf("more threads: %d\n", threads(5));
    puts("a fork past the limit:");
    fork_once();
    fflush(stdout);
    _exit(0);
}
