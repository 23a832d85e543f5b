/* threads-robust: a thread started by the plain clone syscall (what glibc
 * falls back to when clone3 returns ENOSYS), with CLONE_PARENT_SETTID and
 * CLONE_CHILD_CLEARTID waking its parent, and a robust mutex whose owner
 * dies holding it (the kernel walks the dead thread's robust list: the
 * next locker gets EOWNERDEAD, makes it consistent, and it works again).
 * Every printed value is deterministic. */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int clone_ran;
static volatile pid_t child_tid = -1, parent_seen_tid = -1;

/* Runs on the clone thread with the parent's TLS: no errno, no stdio. */
static int clone_main(void *arg) {
    clone_ran = *(int *)arg + 1;
    return 0;
}

static void plain_clone_thread(void) {
    enum { STACK = 64 * 1024 };
    static char stack[STACK] __attribute__((aligned(16)));
    int arg = 41;
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                CLONE_SYSVSEM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    pid_t tid = clone(clone_main, stack + STACK, flags, &arg, &parent_seen_tid, NULL, &child_tid);
    CHECK(tid > 0);
    /* CLONE_CHILD_CLEARTID: the tid word goes to 0 and is woken at exit. */
    for (;;) {
        pid_t t = child_tid;
        if (t == 0)
            break;
        syscall(SYS_futex, &child_tid, FUTEX_WAIT, t, NULL, NULL, 0);
    }
    printf("clone thread ran: %d, parent tid word set: %d\n", clone_ran,
           parent_seen_tid == tid);
}

static pthread_mutex_t robust;

static void *die_holding(void *arg) {
    CHECK(pthread_mutex_lock(&robust) == 0);
    return arg; /* ends with the mutex held */
}

static void robust_mutex(void) {
    pthread_mutexattr_t a;
    CHECK(pthread_mutexattr_init(&a) == 0);
    CHECK(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) == 0);
    CHECK(pthread_mutex_init(&robust, &a) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, die_holding, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    int r = pthread_mutex_lock(&robust);
    printf("lock after the owner died: %s\n", r == EOWNERDEAD ? "EOWNERDEAD" : "other");
    CHECK(pthread_mutex_consistent(&robust) == 0);
    CHECK(pthread_mutex_unlock(&robust) == 0);
    r = pthread_mutex_lock(&robust);
    printf("lock once consistent: %d\n", r);
    CHECK(pthread_mutex_unlock(&robust) == 0);
}

int main(void) {
    plain_clone_thread();
    robust_mutex();
    puts("ok");
    return 0;
}
