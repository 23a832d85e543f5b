/* growsdown: a MAP_GROWSDOWN mapping grows down to a fault below it as the
 * kernel grows it: a load and a store a few pages below, a function
 * recursing on it as its stack (its calls' return-address pushes fault
 * below the mapping), a read() into a buffer below it, and the limits: the
 * guard gap above another mapping and RLIMIT_STACK stop the growth with
 * SIGSEGV.
 */
#include "common.h"
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

#define KIB 1024UL

static sigjmp_buf back;
static volatile int armed;

static void on_segv(int sig) {
    if (!armed) {
        signal(sig, SIG_DFL);
        return;
    }
    armed = 0;
    siglongjmp(back, 1);
}

/* Whether the page of `a` is mapped, probed with
 * madvise (ENOMEM where nothing is mapped): the same instructions in every
 * run, where reading /proc/self/maps would depend on its addresses. */
static int mapped(const char *a) {
    return madvise((void *)((unsigned long)a & ~4095UL), 4096, MADV_NORMAL) == 0;
}

/* The size of a mapping that started at `p` with `len` bytes, as far as
 * it grew down. */
static unsigned long mapping_size(const char *p, unsigned long len) {
    const char *lo = p;
    while (mapped(lo - 4096))
        lo -= 4096;
    return (unsigned long)(p - lo) + len;
}

/* A growsdown mapping of `len` bytes at the top of 8 MiB of free address
 * space (where the kernel would put it next to another mapping, that
 * one's guard gap would stop the growth). */
static char *growsdown(unsigned long len) {
    unsigned long span = 8 * 1024 * KIB;
    char *r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED);
    CHECK(munmap(r, span) == 0);
    char *p = mmap(r + span - len, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(p == r + span - len);
    return p;
}

/* Does touching `p` fault (SIGSEGV caught)? */
static int faults(volatile char *p) {
    if (sigsetjmp(back, 1))
        return 1;
    armed = 1;
    *p = 7;
    armed = 0;
    return 0;
}

static ucontext_t main_ctx, deep_ctx;
static unsigned long depth_sum;

__attribute__((noinline)) static unsigned long deep(unsigned long n) {
    volatile char pad[200];
    pad[0] = (char)n;
    if (n == 0)
        return pad[0];
    return deep(n - 1) + n + pad[0];
}

static void run_deep(void) {
    depth_sum = deep(1000);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sa.sa_flags = SA_NODEFER | SA_ONSTACK;
    stack_t alt = {.ss_sp = malloc(64 * KIB), .ss_size = 64 * KIB};
    CHECK(sigaltstack(&alt, NULL) == 0);
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);

    /* 1. A load and a store below the mapping. */
    char *p = growsdown(64 * KIB);
    p[0] = 1;
    printf("mapped %lu KiB\n", mapping_size(p, 64 * KIB) / KIB);
    volatile char *below = p - 4 * KIB;
    printf("below reads %d\n", below[0]);
    below = p - 40 * KIB;
    below[0] = 9;
    printf("below stores %d, grown to %lu KiB\n", below[0], mapping_size(p, 64 * KIB) / KIB);

    /* 1b. A syscall's buffer below it: the kernel grows it too. */
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    CHECK(write(pfd[1], "grown", 6) == 6);
    char *q = growsdown(64 * KIB);
    ssize_t got = read(pfd[0], q - 8 * KIB, 6);
    printf("read below: %zd \"%s\", grown to %lu KiB\n", got, got > 0 ? q - 8 * KIB : "",
           mapping_size(q, 64 * KIB) / KIB);
    close(pfd[0]);
    close(pfd[1]);

    /* 2. A function recursing on a one-page growsdown mapping as its
     * stack: about 250 KiB of frames, every call's push below the last. */
    char *s = growsdown(4 * KIB);
    CHECK(getcontext(&deep_ctx) == 0);
    deep_ctx.uc_stack.ss_sp = s - 512 * KIB;
    deep_ctx.uc_stack.ss_size = 512 * KIB + 4 * KIB;
    deep_ctx.uc_link = &main_ctx;
    makecontext(&deep_ctx, run_deep, 0);
    CHECK(swapcontext(&main_ctx, &deep_ctx) == 0);
    printf("deep sum %lu, stack grew %d\n", depth_sum, mapping_size(s, 4 * KIB) > 200 * KIB);

    /* 3. The guard gap: an accessible mapping 256 KiB below stops it. */
    char *r = mmap(NULL, 4 * 1024 * KIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(r != MAP_FAILED);
    CHECK(munmap(r, 4 * 1024 * KIB) == 0);
    char *low = mmap(r, 4 * KIB, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(low == r);
    char *g = mmap(r + 256 * KIB, 4 * KIB, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(g == r + 256 * KIB);
    printf("within the guard gap: faults %d\n", faults(g - 4 * KIB));
    /* Made inaccessible, the mapping below no longer stops it. */
    CHECK(mprotect(low, 4 * KIB, PROT_NONE) == 0);
    printf("above a PROT_NONE mapping: faults %d\n", faults(g - 4 * KIB));

    /* 4. RLIMIT_STACK bounds the grown size. */
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_STACK, &rl) == 0);
    rl.rlim_cur = 1024 * KIB;
    CHECK(setrlimit(RLIMIT_STACK, &rl) == 0);
    char *t = growsdown(64 * KIB);
    printf("within RLIMIT_STACK: faults %d\n", faults(t - 512 * KIB));
    printf("past RLIMIT_STACK: faults %d\n", faults(t - 2048 * KIB));
    printf("size %lu KiB\n", mapping_size(t, 64 * KIB) / KIB);
    return 0;
}
