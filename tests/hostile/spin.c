/* 64 threads spinning in translated code until a signal from outside ends
 * the process (tests/hostile.rs). */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile unsigned long sink;

static void *spin(void *arg) {
    unsigned long x = (unsigned long)arg;
    for (;;) {
        x = x * 7 + 1;
        if ((x & 0xfffff) == 0)
            sink = x;
    }
    return 0;
}

int main(void) {
    pthread_t t[64];
    for (long i = 0; i < 64; i++)
        pthread_create(&t[i], 0, spin, (void *)i);
    printf("spinning\n");
    fflush(stdout);
    for (;;)
        pause();
}
