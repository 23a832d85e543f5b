/* mapcount: a program splits one mapping into as many kernel mappings as
 * vm.max_map_count allows (mprotect of every other page), then starts a
 * thread (natively refused: no mapping left for its stack), forks, and
 * runs code it writes at run time. Under hotlift a fork needs kernel
 * mappings of its own for its code memory: hotlift keeps some back
 * (anon.rs R1); without them the fork failed in both processes and the
 * child panicked. How many splits fit differs between runs, so it is not
 * printed. */
#include "common.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void *thread_main(void *arg) {
    return arg;
}

int main(void) {
    long n = 70000; /* more than vm.max_map_count's default */
    char *b = mmap(NULL, (size_t)(2 * n + 2) * 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(b != MAP_FAILED);
    long ok = 0;
    int err = 0;
    for (long i = 0; i < n; i++) {
        if (mprotect(b + (2 * i + 1) * 4096, 4096, PROT_READ) != 0) {
            err = errno;
            break;
        }
        ok++;
    }
    printf("split until: %s\n", ok < n ? strerror(err) : "all done");
    pthread_t t;
    int pe = pthread_create(&t, NULL, thread_main, NULL);
    if (pe == 0)
        CHECK(pthread_join(t, NULL) == 0);
    printf("thread: %s\n", pe ? strerror(pe) : "ok");
    fflush(stdout);
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0)
        _exit(3);
    int st;
    CHECK(waitpid(p, &st, 0) == p);
    printf("fork: child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    /* Give some mappings back, then run new code. */
    CHECK(munmap(b, (size_t)(2 * n + 2) * 4096) == 0);
    unsigned char *c =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(c != MAP_FAILED);
    c[0] = 0xb8; /* mov eax, 5; ret */
    int five = 5;
    memcpy(c + 1, &five, 4);
    c[5] = 0xc3;
    printf("code: %d\n", ((int (*)(void))c)());
    return 0;
}
