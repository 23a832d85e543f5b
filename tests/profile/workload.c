/* Profile exactness workload: loops, nested branches, indirect calls
 * through a table, recursion, a switch, setjmp/longjmp (returns that do
 * not match calls) and a few syscalls. Argument selects how it ends:
 * "exit" (return from main), "exit_group" (_exit), "segv", "abort",
 * "trap" (int3). A second argument sets the main loop's iterations
 * (default 20000). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mix(int a, int b) { return (a * 31) ^ b; }
static int (*ops[3])(int, int) = {add, sub, mix};

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static jmp_buf jb;
static void deep(int n) {
    if (n == 0)
        longjmp(jb, 1);
    deep(n - 1);
}

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "exit";
    int iters = argc > 2 ? atoi(argv[2]) : 20000;
    volatile int acc = 0;
    for (int i = 0; i < iters; i++) {
        if (i % 3 == 0)
            acc += ops[i % 3](acc, i);
        else if (i % 7 == 0)
            acc = ops[(i >> 1) % 3](acc, i);
        switch (i & 7) {
        case 0: acc ^= 1; break;
        case 1: acc += 3; break;
        case 5: acc -= 2; break;
        default: break;
        }
    }
    acc += fib(15);
    for (int k = 0; k < 5; k++)
        if (!setjmp(jb))
            deep(10 + k);
    char buf[64];
    int n = snprintf(buf, sizeof buf, "acc=%d\n", acc);
    write(1, buf, n);
    getpid();
    if (!strcmp(how, "exit_group"))
        _exit(7);
    if (!strcmp(how, "segv"))
        *(volatile int *)0 = 1;
    if (!strcmp(how, "abort"))
        abort();
    if (!strcmp(how, "trap"))
        __asm__ volatile("int3");
    return 3;
}
