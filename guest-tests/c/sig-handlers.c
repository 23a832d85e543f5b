/* sig-handlers: guest signal handlers, the frames they get and the
 * context they return to.
 *
 * siginfo from raise/kill/sigqueue; sa_mask (a signal raised in a handler
 * waits for it), SA_NODEFER (it nests), SA_RESETHAND; the mask inside a
 * handler; sigaltstack with SA_ONSTACK (the handler's locals are on it,
 * sigaltstack reports SS_ONSTACK there); vector and FPU state saved around
 * a handler that clobbers it (xmm8, MXCSR, the x87 control word) and the
 * handler starting with the initial MXCSR; a handler that changes the
 * interrupted RAX in its ucontext; siglongjmp out of a handler (the mask
 * comes back); sigsuspend; queued real-time signals delivered in order
 * with their values; sigwaitinfo; a SIGSEGV sent with kill to a handler;
 * a timer signal interrupting a loop that makes no syscall; a blocking
 * read interrupted by a SIGALRM handler goes on with SA_RESTART and fails
 * with EINTR without it (another thread starts the timer once the reader
 * sleeps in the kernel, then writes); a signal sent to the process runs
 * in the one thread that does not block it. Those last three depend on
 * timing and are left out of the count form.
 */
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int order[16], norder;
static volatile int info_ok, depth, maxdepth, resets, rt_values[8], nrt;
static volatile int mask_has_self, mask_has_other;

static void note(int v) { order[norder++] = v; }

static void on(int sig, void (*fn)(int, siginfo_t *, void *), int flags, int also_block) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    if (also_block) sigaddset(&sa.sa_mask, also_block);
    CHECK(sigaction(sig, &sa, NULL) == 0);
}

static void h_info(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    info_ok = sig == SIGUSR1 && si->si_signo == SIGUSR1 && si->si_pid == getpid()
              && si->si_uid == getuid();
    note(si->si_code == SI_TKILL ? 1 : si->si_code == SI_USER ? 2 : 99);
}

static void h_usr2(int sig, siginfo_t *si, void *uc) { (void)sig; (void)si; (void)uc; note(20); }

static void h_outer(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)si; (void)uc;
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    mask_has_self = sigismember(&cur, SIGUSR1);
    mask_has_other = sigismember(&cur, SIGUSR2);
    note(10);
    raise(SIGUSR2); /* blocked by sa_mask: runs after this handler */
    note(11);
}

static void h_nodefer(int sig, siginfo_t *si, void *uc) {
    (void)si; (void)uc;
    depth++;
    if (depth > maxdepth) maxdepth = depth;
    if (depth < 3) raise(sig);
    depth--;
}

static void h_reset(int sig, siginfo_t *si, void *uc) { (void)sig; (void)si; (void)uc; resets++; }

static char altstack[65536] __attribute__((aligned(16)));
static volatile int on_alt, alt_flags;
static void h_alt(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)si; (void)uc;
    char local;
    on_alt = &local >= altstack && &local < altstack + sizeof altstack;
    stack_t cur;
    sigaltstack(NULL, &cur);
    alt_flags = cur.ss_flags;
}

static volatile unsigned handler_mxcsr;
static void h_clobber(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)si; (void)uc;
    unsigned m;
    __asm__ volatile("stmxcsr %0" : "=m"(m));
    handler_mxcsr = m;
    unsigned short cw = 0x7f;
    unsigned z = 0x7f80; /* round toward zero, all masked */
    __asm__ volatile("ldmxcsr %0\n\tfldcw %1\n\tpcmpeqb %%xmm8, %%xmm8" ::"m"(z), "m"(cw) : "xmm8");
}

static void h_rax(int sig, siginfo_t *si, void *ucv) {
    (void)sig; (void)si;
    ucontext_t *uc = ucv;
    uc->uc_mcontext.gregs[REG_RAX] = 4242;
}

static sigjmp_buf jb;
static void h_jump(int sig, siginfo_t *si, void *uc) { (void)si; (void)uc; siglongjmp(jb, sig); }

static void h_rt(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)uc;
    rt_values[nrt++] = si->si_value.sival_int * 10 + (si->si_code == SI_QUEUE);
}

static volatile int segv_code = -1;
static void h_segv(int sig, siginfo_t *si, void *uc) { (void)sig; (void)uc; segv_code = si->si_code; }

static volatile int ticks;
static void h_tick(int sig, siginfo_t *si, void *uc) { (void)sig; (void)si; (void)uc; ticks++; }

static int pfd[2];
static pid_t reader_tid;

/* State letter of thread `tid` of this process ('S': asleep). */
static char thread_state(pid_t tid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return '?';
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return '?';
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] && p[2] ? p[2] : '?';
}

static void *interrupt_then_write(void *arg) {
    (void)arg;
    /* The timer's SIGALRM goes to the process: only the reader takes it. */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    int asleep = 0;
    /* Asleep for 20 ms in a row: in the read, not passing through. */
    for (int i = 0; i < 20000 && asleep < 20; i++) {
        asleep = thread_state(reader_tid) == 'S' ? asleep + 1 : 0;
        usleep(1000);
    }
    struct itimerval once = {.it_value = {0, 1000}};
    setitimer(ITIMER_REAL, &once, NULL);
    usleep(50000);
    CHECK(write(pfd[1], "late", 4) == 4);
    return NULL;
}

static void interrupted_read(int flags) {
    on(SIGALRM, h_tick, flags, 0);
    CHECK(pipe(pfd) == 0);
    reader_tid = (pid_t)syscall(SYS_gettid);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, interrupt_then_write, NULL) == 0);
    char buf[8];
    ticks = 0;
    errno = 0;
    ssize_t n = read(pfd[0], buf, 4);
    int e = errno;
    pthread_join(t, NULL);
    printf("read with%s SA_RESTART: %zd, EINTR %d, handler ran %d\n", flags ? "" : "out", n,
           e == EINTR, ticks);
    close(pfd[0]);
    close(pfd[1]);
}

static volatile pid_t handled_by;
static void h_who(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)si; (void)uc;
    handled_by = (pid_t)syscall(SYS_gettid);
}

static pid_t worker_tid;
static int ready[2], gate[2];
static void *unblocked_worker(void *arg) {
    (void)arg;
    sigset_t u;
    sigemptyset(&u);
    sigaddset(&u, SIGUSR2);
    pthread_sigmask(SIG_UNBLOCK, &u, NULL);
    worker_tid = (pid_t)syscall(SYS_gettid);
    CHECK(write(ready[1], "r", 1) == 1);
    char c;
    while (read(gate[0], &c, 1) < 0 && errno == EINTR) {}
    return NULL;
}

/* A signal sent to the process goes to the thread that does not block it. */
static void process_signal_to_unblocked_thread(void) {
    on(SIGUSR2, h_who, SA_RESTART, 0);
    sigset_t b;
    sigemptyset(&b);
    sigaddset(&b, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &b, NULL);
    CHECK(pipe(ready) == 0 && pipe(gate) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, unblocked_worker, NULL) == 0);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    kill(getpid(), SIGUSR2);
    for (int i = 0; i < 5000 && !handled_by; i++) usleep(1000);
    CHECK(write(gate[1], "g", 1) == 1);
    pthread_join(t, NULL);
    printf("process-directed signal handled by the thread that does not block it: %d\n",
           handled_by == worker_tid);
    pthread_sigmask(SIG_UNBLOCK, &b, NULL);
    close(ready[0]);
    close(ready[1]);
    close(gate[0]);
    close(gate[1]);
}

static void print_order(const char *what) {
    printf("%s:", what);
    for (int i = 0; i < norder; i++) printf(" %d", order[i]);
    printf("\n");
    norder = 0;
}

int main(int argc, char **argv) {
    /* The count form leaves out the parts whose instruction counts depend
       on timing (the busy loop, the reader waiting for a thread). */
    int timed = !count_mode(argc, argv);

    /* siginfo of raise (tgkill) and kill */
    on(SIGUSR1, h_info, 0, 0);
    raise(SIGUSR1);
    kill(getpid(), SIGUSR1);
    print_order("raise, kill codes");
    printf("siginfo pid/uid right: %d\n", info_ok);

    /* sa_mask: USR2 raised inside the USR1 handler waits for it */
    on(SIGUSR1, h_outer, 0, SIGUSR2);
    on(SIGUSR2, h_usr2, 0, 0);
    raise(SIGUSR1);
    print_order("nested order");
    printf("handler mask has USR1 %d, USR2 %d\n", mask_has_self, mask_has_other);
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    printf("after the handler: USR1 blocked %d\n", sigismember(&cur, SIGUSR1));

    /* SA_NODEFER nests; SA_RESETHAND runs once */
    on(SIGUSR1, h_nodefer, SA_NODEFER, 0);
    raise(SIGUSR1);
    printf("SA_NODEFER depth %d\n", maxdepth);
    on(SIGWINCH, h_reset, SA_RESETHAND, 0);
    raise(SIGWINCH);
    raise(SIGWINCH); /* default action now: ignored */
    struct sigaction now;
    sigaction(SIGWINCH, NULL, &now);
    printf("SA_RESETHAND ran %d, now default %d\n", resets, now.sa_handler == SIG_DFL);

    /* sigaltstack */
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0);
    on(SIGUSR2, h_alt, SA_ONSTACK, 0);
    raise(SIGUSR2);
    stack_t back;
    sigaltstack(NULL, &back);
    printf("on the alternate stack %d, flags there %d, after %d\n", on_alt, alt_flags,
           back.ss_flags);

    /* vector and FPU state around a handler that clobbers it */
    on(SIGUSR1, h_clobber, 0, 0);
    unsigned up = 0x5f80; /* round up */
    unsigned short cw_before = 0x27f, cw_after = 0;
    unsigned mx_after = 0;
    uint64_t x8[2] = {0x1122334455667788ull, 0x99aabbccddeeff00ull}, x8_after[2];
    long tid = syscall(SYS_gettid);
    __asm__ volatile(
        "ldmxcsr %[up]\n\t"
        "fldcw %[cwb]\n\t"
        "movdqu %[x8], %%xmm8\n\t"
        "mov %[nr], %%eax\n\t"
        "mov %[pid], %%rdi\n\t"
        "mov %[tid], %%rsi\n\t"
        "mov %[sig], %%edx\n\t"
        "syscall\n\t"
        "movdqu %%xmm8, %[x8a]\n\t"
        "stmxcsr %[mxa]\n\t"
        "fnstcw %[cwa]\n\t"
        : [x8a] "=m"(x8_after), [mxa] "=m"(mx_after), [cwa] "=m"(cw_after)
        : [up] "m"(up), [cwb] "m"(cw_before), [x8] "m"(x8), [nr] "i"(SYS_tgkill),
          [pid] "r"((long)getpid()), [tid] "r"(tid), [sig] "i"(SIGUSR1)
        : "rax", "rcx", "rdx", "rdi", "rsi", "r11", "xmm8", "memory");
    unsigned dflt = 0x1f80;
    unsigned short dcw = 0x37f;
    __asm__ volatile("ldmxcsr %0\n\tfldcw %1" ::"m"(dflt), "m"(dcw));
    printf("handler started with MXCSR %#x\n", handler_mxcsr & 0xffc0);
    printf("after it: xmm8 kept %d, MXCSR %#x, x87 CW %#x\n",
           x8_after[0] == x8[0] && x8_after[1] == x8[1], mx_after & 0xffc0, cw_after);

    /* the handler changes the interrupted RAX (the syscall's result) */
    on(SIGUSR1, h_rax, 0, 0);
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"((long)SYS_tgkill), "D"((long)getpid()), "S"(tid), "d"((long)SIGUSR1)
                     : "rcx", "r11", "memory");
    printf("tgkill returned %ld after the handler set RAX\n", r);

    /* siglongjmp out of a handler restores the mask */
    on(SIGUSR1, h_jump, 0, 0);
    int v = sigsetjmp(jb, 1);
    if (v == 0) {
        raise(SIGUSR1);
        puts("not reached");
    }
    sigprocmask(SIG_BLOCK, NULL, &cur);
    printf("siglongjmp from handler of %d, USR1 blocked %d\n", v, sigismember(&cur, SIGUSR1));

    /* sigsuspend: a blocked pending signal runs in it */
    on(SIGUSR1, h_info, 0, 0);
    sigset_t b, empty;
    sigemptyset(&b);
    sigaddset(&b, SIGUSR1);
    sigemptyset(&empty);
    sigprocmask(SIG_BLOCK, &b, NULL);
    kill(getpid(), SIGUSR1);
    print_order("while blocked");
    errno = 0;
    int s = sigsuspend(&empty);
    int e = errno;
    print_order("sigsuspend ran");
    printf("sigsuspend = %d, EINTR %d\n", s, e == EINTR);
    sigprocmask(SIG_UNBLOCK, &b, NULL);

    /* real-time signals queue, in order, with their values */
    on(SIGRTMIN + 1, h_rt, 0, 0);
    sigset_t rt;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN + 1);
    sigprocmask(SIG_BLOCK, &rt, NULL);
    for (int i = 1; i <= 4; i++) sigqueue(getpid(), SIGRTMIN + 1, (union sigval){.sival_int = i});
    sigprocmask(SIG_UNBLOCK, &rt, NULL);
    printf("real-time values:");
    for (int i = 0; i < nrt; i++) printf(" %d", rt_values[i]);
    printf("\n");

    /* sigwaitinfo takes a blocked signal without its handler */
    sigprocmask(SIG_BLOCK, &b, NULL);
    raise(SIGUSR1);
    siginfo_t wi;
    int w = sigwaitinfo(&b, &wi);
    printf("sigwaitinfo = %d, code SI_TKILL %d\n", w, wi.si_code == SI_TKILL);
    print_order("handler during sigwaitinfo");
    sigprocmask(SIG_UNBLOCK, &b, NULL);

    /* a fault signal sent with kill goes to its handler too */
    on(SIGSEGV, h_segv, 0, 0);
    kill(getpid(), SIGSEGV);
    printf("SIGSEGV from kill: code SI_USER %d\n", segv_code == SI_USER);

    if (!timed) return 0;

    /* a timer interrupts a loop without syscalls */
    on(SIGALRM, h_tick, SA_RESTART, 0);
    struct itimerval it = {.it_interval = {0, 2000}, .it_value = {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    volatile unsigned long spin = 0;
    while (ticks < 5) spin++;
    struct itimerval off = {0};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("timer ticks seen by a busy loop: %d\n", ticks >= 5);

    interrupted_read(SA_RESTART);
    interrupted_read(0);
    process_signal_to_unblocked_thread();
    return 0;
}
