/* clock-bench: the cost of reading the time through the vDSO, natively and
 * under hotlift (tools/clock-bench builds and runs it; docs/ARCHITECTURE.md
 * has the figures). Each clock is read N times in a loop (argv[1], default
 * 5,000,000); the time per call is measured with CLOCK_MONOTONIC around
 * the whole loop. Also the raw syscall, for scale: what a hidden vDSO
 * would cost (glibc then falls back to it). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 5000000;
    struct timespec ts;
    struct timeval tv;
    volatile long sink = 0;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink += ts.tv_nsec;
    }
    double t1 = now();
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_REALTIME, &ts);
        sink += ts.tv_nsec;
    }
    double t2 = now();
    for (long i = 0; i < n; i++) {
        gettimeofday(&tv, NULL);
        sink += tv.tv_usec;
    }
    double t3 = now();
    long m = n / 10;
    for (long i = 0; i < m; i++) {
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
        sink += ts.tv_nsec;
    }
    double t4 = now();
    printf("clock_gettime(CLOCK_MONOTONIC) %7.1f ns/call\n", (t1 - t0) * 1e9 / n);
    printf("clock_gettime(CLOCK_REALTIME)  %7.1f ns/call\n", (t2 - t1) * 1e9 / n);
    printf("gettimeofday                   %7.1f ns/call\n", (t3 - t2) * 1e9 / n);
    printf("syscall(SYS_clock_gettime)     %7.1f ns/call\n", (t4 - t3) * 1e9 / m);
    return (int)(sink & 0);
}
