/* Three threads each rewriting a function in an RWX page of their own and
 * calling it ten times a rewrite (argv[1] rewrites), while the main thread
 * forks children that exit at once: id epochs (dispatch/epoch.rs) end
 * under all of it. Its output is each thread's sum and the forks seen. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static long n;
static long sums[3];

static void *work(void *arg) {
    long t = (long)arg;
    unsigned char *page = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        exit(1);
    long sum = 0;
    for (long i = 0; i < n; i++) {
        /* mov eax, imm32; ret */
        unsigned char code[8] = {0xb8, 0, 0, 0, 0, 0xc3, 0x90, 0x90};
        int v = (int)((i * (t + 1)) & 0xffff);
        memcpy(code + 1, &v, 4);
        memcpy(page, code, sizeof code);
        int (*f)(void) = (int (*)(void))page;
        for (int k = 0; k < 10; k++)
            sum += f();
    }
    sums[t] = sum;
    return 0;
}

int main(int argc, char **argv) {
    n = argc > 1 ? atol(argv[1]) : 1000;
    pthread_t th[3];
    for (long t = 0; t < 3; t++)
        pthread_create(&th[t], 0, work, (void *)t);
    int forks = 0;
    for (int k = 0; k < 20; k++) {
        pid_t p = fork();
        if (p == 0)
            _exit(7);
        int st;
        if (waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 7)
            forks++;
        usleep(2000);
    }
    for (int t = 0; t < 3; t++)
        pthread_join(th[t], 0);
    for (int t = 0; t < 3; t++)
        printf("thread %d: %ld\n", t, sums[t]);
    printf("forks: %d\n", forks);
    return 0;
}
