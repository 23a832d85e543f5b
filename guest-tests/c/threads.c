/* threads: 8 POSIX threads with a mutex, a condition variable, a barrier
 * and thread-local storage; every printed value is deterministic (sums and
 * hashes that do not depend on the interleaving). "bench": each thread's
 * hash loop runs 40,000,000 times instead of 20,000 (all cores busy). */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

enum { NTHREADS = 8 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t barrier;
static uint64_t shared_sum;
static int turn;          /* whose turn in the ping-pong */
static int rounds;
static int work_n = 20000;
static __thread uint64_t tls_counter = 7;
static __thread char tls_name[16];

struct arg {
    int id;
    uint64_t result;
    uint64_t tls_seen;
};

static uint64_t work(int id, int n) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)id;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)(i * (id + 1));
        h *= 1099511628211ull;
    }
    return h;
}

static void *thread_main(void *p) {
    struct arg *a = p;
    snprintf(tls_name, sizeof tls_name, "worker-%d", a->id);
    tls_counter += (uint64_t)a->id;
    a->result = work(a->id, work_n);
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lock);
        shared_sum += (uint64_t)a->id + 1;
        pthread_mutex_unlock(&lock);
    }
    pthread_barrier_wait(&barrier);
    /* Threads 0 and 1 play ping-pong through the condition variable. */
    if (a->id < 2) {
        for (int r = 0; r < 200; r++) {
            pthread_mutex_lock(&lock);
            while (turn != a->id)
                pthread_cond_wait(&turn_cv, &lock);
            rounds++;
            turn = 1 - a->id;
            pthread_cond_broadcast(&turn_cv);
            pthread_mutex_unlock(&lock);
        }
    }
    pthread_barrier_wait(&barrier);
    CHECK(strncmp(tls_name, "worker-", 7) == 0 && tls_name[7] == '0' + a->id);
    a->tls_seen = tls_counter;
    return (void *)(uintptr_t)(a->id * 10);
}

static volatile int spinning;

static void *spinner(void *p) {
    (void)p;
    volatile uint64_t n = 0;
    spinning = 1;
    for (;;)
        n++;
    return NULL;
}

static void *sleeper(void *p) {
    (void)p;
    int fds[2];
    char c;
    CHECK(pipe(fds) == 0);
    for (;;)
        read(fds[0], &c, 1);
    return NULL;
}

int main(int argc, char **argv) {
    if (bench_mode(argc, argv))
        work_n = 40000000;
    pthread_t t[NTHREADS];
    struct arg args[NTHREADS];
    CHECK(pthread_barrier_init(&barrier, NULL, NTHREADS) == 0);
    snprintf(tls_name, sizeof tls_name, "main");
    for (int i = 0; i < NTHREADS; i++) {
        args[i].id = i;
        CHECK(pthread_create(&t[i], NULL, thread_main, &args[i]) == 0);
    }
    for (int i = 0; i < NTHREADS; i++) {
        void *ret;
        CHECK(pthread_join(t[i], &ret) == 0);
        CHECK((uintptr_t)ret == (uintptr_t)(i * 10));
        printf("thread %d: work %016llx tls %llu\n", i, (unsigned long long)args[i].result,
               (unsigned long long)args[i].tls_seen);
    }
    printf("shared sum %llu (expect %d)\n", (unsigned long long)shared_sum,
           1000 * NTHREADS * (NTHREADS + 1) / 2);
    printf("ping-pong rounds %d\n", rounds);
    printf("main tls %s %llu\n", tls_name, (unsigned long long)tls_counter);
    CHECK(shared_sum == 1000ull * NTHREADS * (NTHREADS + 1) / 2);
    CHECK(rounds == 400);
    /* Leave with threads still running: one spinning in its own code, one
     * blocked in a syscall; returning from main ends them all. */
    CHECK(pthread_create(&t[0], NULL, spinner, NULL) == 0);
    CHECK(pthread_create(&t[1], NULL, sleeper, NULL) == 0);
    while (!spinning)
        sched_yield();
    puts("ok");
    return 0;
}
