/* A vfork parent waiting for a child that neither calls execve nor ends
 * soon, until a signal from outside ends the process (tests/hostile.rs):
 * natively the parent dies of it at once. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    printf("spinning\n");
    fflush(stdout);
    if (vfork() == 0) {
        struct timespec t = {30, 0};
        nanosleep(&t, 0);
        _exit(0);
    }
    return 0;
}
