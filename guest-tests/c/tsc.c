/* tsc: prctl(PR_SET_TSC) makes rdtsc and rdtscp fault for the thread that
 * asked (and threads and children it makes after), as the kernel does.
 *
 * PR_GET_TSC starts at PR_TSC_ENABLE; after PR_TSC_SIGSEGV an rdtsc and an
 * rdtscp deliver SIGSEGV (si_code SI_KERNEL, si_addr 0) with RIP at the
 * instruction, which the handler steps over (2 and 3 bytes), leaving its
 * own marks in RAX/RDX; a thread made now inherits the mode, a thread made
 * before keeps its own (its rdtsc runs); a forked child inherits it;
 * PR_TSC_ENABLE gives the counter back, and a bad mode is EINVAL.
 */
#include "common.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

extern char rdtsc_at[], rdtscp_at[];

static volatile int traps, bad_info, bad_rip;

static void on_segv(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    greg_t *rip = &uc->uc_mcontext.gregs[REG_RIP];
    if (si->si_code != SI_KERNEL || si->si_addr != 0)
        bad_info++;
    if (*rip == (greg_t)rdtsc_at)
        *rip += 2;
    else if (*rip == (greg_t)rdtscp_at)
        *rip += 3;
    else {
        bad_rip++;
        _exit(9);
    }
    uc->uc_mcontext.gregs[REG_RAX] = 0x1234;
    uc->uc_mcontext.gregs[REG_RDX] = 0;
    traps++;
}

/* RDX:RAX of an rdtsc (or the handler's marks); one copy of each label. */
__attribute__((noinline)) static uint64_t read_tsc(void) {
    uint64_t lo, hi;
    __asm__ volatile("rdtsc_at: rdtsc" : "=a"(lo), "=d"(hi));
    return hi << 32 | lo;
}

__attribute__((noinline)) static uint64_t read_tscp(void) {
    uint64_t lo, hi, aux;
    __asm__ volatile("rdtscp_at: rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
    return hi << 32 | lo;
}

static int mode(void) {
    int m = -1;
    CHECK(prctl(PR_GET_TSC, &m, 0, 0, 0) == 0);
    return m;
}

static pthread_barrier_t go;

static void *early_thread(void *arg) {
    (void)arg;
    pthread_barrier_wait(&go); /* the main thread has set SIGSEGV mode */
    int m = mode();
    uint64_t t = read_tsc();
    printf("early thread: mode %d, rdtsc %s\n", m, t != 0x1234 ? "ran" : "trapped");
    return 0;
}

static void *late_thread(void *arg) {
    (void)arg;
    int before = traps;
    uint64_t t = read_tsc();
    printf("late thread: mode %d, rdtsc %s\n", mode(),
           t == 0x1234 && traps == before + 1 ? "trapped" : "ran");
    return 0;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(SIGSEGV, &sa, 0) == 0);
    printf("mode at start: %d\n", mode());
    uint64_t a = read_tsc(), b = read_tsc();
    printf("rdtsc runs: %d\n", b >= a && a != 0x1234);

    pthread_t early, late;
    CHECK(pthread_barrier_init(&go, 0, 2) == 0);
    CHECK(pthread_create(&early, 0, early_thread, 0) == 0);
    CHECK(prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) == 0);
    printf("mode after PR_TSC_SIGSEGV: %d\n", mode());
    pthread_barrier_wait(&go);
    CHECK(pthread_join(early, 0) == 0);

    uint64_t t = read_tsc();
    printf("rdtsc: %s\n", t == 0x1234 ? "trapped" : "ran");
    t = read_tscp();
    printf("rdtscp: %s\n", t == 0x1234 ? "trapped" : "ran");
    for (int i = 0; i < 100; i++)
        t += read_tsc() & 1;
    printf("100 more: %d traps in all\n", traps);

    CHECK(pthread_create(&late, 0, late_thread, 0) == 0);
    CHECK(pthread_join(late, 0) == 0);

    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int before = traps;
        uint64_t c = read_tsc();
        printf("child: mode %d, rdtsc %s\n", mode(), c == 0x1234 && traps == before + 1 ? "trapped" : "ran");
        fflush(stdout);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);

    errno = 0;
    int bad = prctl(PR_SET_TSC, 7, 0, 0, 0);
    printf("bad mode: %d %s\n", bad, errno == EINVAL ? "EINVAL" : "?");
    CHECK(prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0) == 0);
    printf("mode after PR_TSC_ENABLE: %d\n", mode());
    a = read_tsc();
    b = read_tscp();
    printf("counter back: %d; %d traps, bad info %d, bad rip %d\n", b >= a && a != 0x1234, traps,
           bad_info, bad_rip);
    return 0;
}
