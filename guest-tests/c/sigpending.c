/* sigpending: a program that sets RLIMIT_SIGPENDING to 0 sees its own
 * queued real-time signals refused (EAGAIN) and standard ones still
 * delivered, as natively, while threads spin and the main thread rewrites
 * code: under hotlift every rewrite stops the spinning threads with a
 * queued signal of its own, which the guest's limit must not refuse (it
 * did: each rewrite waited 60 s and failed, and the profile was cut). */
#include "common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

enum { NWORKERS = 2, ROUNDS = 20 };

static volatile int stop, started;
static volatile sig_atomic_t got_usr1;

static void *worker(void *p) {
    uint64_t h = (uint64_t)(uintptr_t)p + 1, n = 0;
    __atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
    do {
        for (int i = 0; i < 1000; i++)
            h = (h ^ (uint64_t)i) * 1099511628211ull;
        n++;
    } while (!stop);
    return (void *)(uintptr_t)(n > 0 && h != 0);
}

static void on_usr1(int sig) {
    (void)sig;
    got_usr1 = 1;
}

int main(void) {
    struct rlimit zero = {0, 0}, r;
    CHECK(setrlimit(RLIMIT_SIGPENDING, &zero) == 0);
    CHECK(getrlimit(RLIMIT_SIGPENDING, &r) == 0);
    printf("RLIMIT_SIGPENDING soft %llu hard %llu\n", (unsigned long long)r.rlim_cur,
           (unsigned long long)r.rlim_max);

    /* A queued real-time signal to itself, blocked so that it would stay
     * pending: refused at the limit. */
    union sigval v = {.sival_int = 7};
    sigset_t rt, old;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN);
    signal(SIGRTMIN, on_usr1);
    CHECK(sigprocmask(SIG_BLOCK, &rt, &old) == 0);
    errno = 0;
    int rc = sigqueue(getpid(), SIGRTMIN, v);
    printf("sigqueue SIGRTMIN: %d (%s)\n", rc, rc == 0 ? "ok" : strerror(errno));
    sigset_t pending;
    CHECK(sigpending(&pending) == 0);
    printf("SIGRTMIN pending: %d\n", sigismember(&pending, SIGRTMIN));
    CHECK(sigprocmask(SIG_SETMASK, &old, NULL) == 0);
    got_usr1 = 0;
    /* A standard signal is still delivered (only its siginfo may be lost). */
    signal(SIGUSR1, on_usr1);
    CHECK(kill(getpid(), SIGUSR1) == 0);
    printf("SIGUSR1 delivered: %d\n", (int)got_usr1);

    pthread_t t[NWORKERS];
    for (int i = 0; i < NWORKERS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) == 0);
    while (started < NWORKERS)
        sched_yield();
    unsigned char *code =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(code != MAP_FAILED);
    uint32_t (*f)(void) = (uint32_t(*)(void))code;
    uint64_t sum = 0;
    for (int round = 0; round < ROUNDS; round++) {
        /* mov eax, imm32; ret, rewritten in place each round. */
        uint32_t imm = (uint32_t)round * 3;
        code[0] = 0xb8;
        memcpy(code + 1, &imm, 4);
        code[5] = 0xc3;
        sum += f();
    }
    stop = 1;
    int ran = 0;
    for (int i = 0; i < NWORKERS; i++) {
        void *res;
        CHECK(pthread_join(t[i], &res) == 0);
        ran += (int)(uintptr_t)res;
    }
    printf("sum %llu, workers ran %d\n", (unsigned long long)sum, ran);
    CHECK(sum == 3ull * (ROUNDS - 1) * ROUNDS / 2);
    puts("ok");
    return 0;
}
