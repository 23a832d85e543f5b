/* fork-cow: code a forked child and its parent both run for the first
 * time after the fork, in strict turns, so that each translates, links
 * and makes hot code at the same places of its code cache as the other
 * (hotlift's code memory is shared after a fork until one of them writes
 * a chunk of it, cache I8: a process that ran a link or a block the other
 * wrote would compute another checksum, or crash).
 *
 *   round 0: parent and child, turns over 16 functions each;
 *   round 1: the same with the roles' function sets swapped;
 *   round 2: the child forks a grandchild and takes turns with it while
 *            the parent runs on alone.
 * Every side then runs its functions again and again (hot: superblocks),
 * and prints a checksum; a parent prints after reaping its child. With
 * an argument (the single-step count form) the hot phase is short.
 */
#include "common.h"
#include <sys/wait.h>
#include <unistd.h>

#define BODY(n)                                                               \
    static __attribute__((noinline)) unsigned f##n(unsigned x) {              \
        for (unsigned i = 0; i < 16 + (n) % 16; i++) {                             \
            if ((x ^ i) & (1u << ((n) % 7)))                                  \
                x = x * (2 * (n) + 3) + i;                                    \
            else                                                              \
                x ^= x >> ((n) % 5 + 1);                                      \
        }                                                                     \
        return x;                                                             \
    }
#define B8(a) BODY(a##0) BODY(a##1) BODY(a##2) BODY(a##3) BODY(a##4) \
    BODY(a##5) BODY(a##6) BODY(a##7)
B8(1) B8(2) B8(3) B8(4) B8(5) B8(6) B8(7) B8(8)

/* Direct calls from one switch, so that links into new code are patched
 * into code translated before the fork. */
static __attribute__((noinline)) unsigned run(int k, unsigned x) {
#define C(n) case n: return f##n(x);
#define C8(a) C(a##0) C(a##1) C(a##2) C(a##3) C(a##4) C(a##5) C(a##6) C(a##7)
    switch (k) {
        C8(1) C8(2) C8(3) C8(4) C8(5) C8(6) C8(7) C8(8)
    }
    return x;
}

/* The i-th function (0..7) of set s (0..3) for side `odd`: f10..f87. */
static int pick(int s, int odd, int i) { return 10 * (2 * s + odd + 1) + i; }

static void must(int ok, const char *what) {
    if (!ok) {
        perror(what);
        _exit(99);
    }
}

static void put(int fd) {
    char b = 1;
    must(write(fd, &b, 1) == 1, "write");
}

static void take(int fd) {
    char b;
    must(read(fd, &b, 1) == 1, "read");
}

static int hot = 60;

/* Take turns with the other side over 8 functions of set `s`: `first`
 * goes first. Then the hot phase. The checksum. */
static unsigned turns(int s, int odd, int first, int in, int out) {
    unsigned x = 0x9e3779b9u * (unsigned)(s + 1) + (unsigned)odd;
    for (int i = 0; i < 8; i++) {
        if (!first)
            take(in);
        x = run(pick(s, odd, i), x);
        put(out);
        if (first)
            take(in);
    }
    for (int r = 0; r < hot; r++)
        for (int i = 0; i < 8; i++)
            x = run(pick(s, odd, i), x + (unsigned)r);
    return x;
}

static int reap(pid_t c) {
    int st;
    must(waitpid(c, &st, 0) == c, "waitpid");
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv) {
    (void)argv;
    if (argc > 1)
        hot = 4;
    /* Before any fork: the switch and a few of its targets are hot. */
    unsigned warm = 1;
    for (int r = 0; r < 300; r++)
        warm = run(10 + r % 2, warm);
    printf("warm %08x\n", warm);
    fflush(stdout);
    for (int round = 0; round < 3; round++) {
        int p2c[2], c2p[2];
        must(pipe(p2c) == 0 && pipe(c2p) == 0, "pipe");
        int s = round == 1 ? 2 : 0;
        pid_t c = fork();
        must(c >= 0, "fork");
        if (c == 0) {
            close(p2c[1]);
            close(c2p[0]);
            if (round < 2) {
                unsigned x = turns(s, 1, 0, p2c[0], c2p[1]);
                printf("round %d child %08x\n", round, x);
                return 0;
            }
            /* Round 2: the child's own turns with a grandchild. */
            put(c2p[1]);
            int a[2], b[2];
            must(pipe(a) == 0 && pipe(b) == 0, "pipe");
            pid_t g = fork();
            must(g >= 0, "fork");
            if (g == 0) {
                unsigned x = turns(3, 1, 0, a[0], b[1]);
                printf("round 2 grandchild %08x\n", x);
                return 0;
            }
            unsigned x = turns(3, 0, 1, b[0], a[1]);
            int st = reap(g);
            printf("round 2 child %08x, grandchild exited %d\n", x, st);
            return 0;
        }
        close(p2c[0]);
        close(c2p[1]);
        unsigned x;
        if (round < 2) {
            x = turns(s, 0, 1, c2p[0], p2c[1]);
        } else {
            take(c2p[0]);
            x = 0;
            for (int r = 0; r < hot; r++)
                for (int i = 0; i < 8; i++)
                    x = run(pick(1, 1, i), x ^ (unsigned)r);
        }
        int st = reap(c);
        printf("round %d parent %08x, child exited %d\n", round, x, st);
        fflush(stdout);
        close(p2c[1]);
        close(c2p[0]);
    }
    return 0;
}
