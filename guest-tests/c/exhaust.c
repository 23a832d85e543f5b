/* exhaust: a program maps all the address space it can (PROT_NONE,
 * MAP_NORESERVE: no memory is used), then forks, and both processes go
 * on running new code and allocating a little. Under hotlift the forked
 * child's monitor and the parent's copy of its code memory need address
 * space the guest took: hotlift holds some back for itself (anon.rs R1);
 * without it the child's monitor panicked and the parent aborted. How many
 * mappings fit differs between runs, so only what is the same natively is
 * printed. */
#include "common.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int __attribute__((noinline)) work(int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i % 7 == 0 ? i / 7 : i % 3;
    return s;
}

int main(void) {
    unsigned long total = 0;
    int maps = 0;
    for (size_t sz = (size_t)1 << 46; sz >= 4096;) {
        void *p = mmap(NULL, sz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            sz /= 2;
            continue;
        }
        total += sz;
        maps++;
    }
    printf("mapped more than 64 TiB: %d\n", total > (1ul << 46) && maps > 0);
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        printf("child: %d\n", work(1000));
        fflush(stdout);
        _exit(3);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    printf("parent: %d\n", work(2000));
    /* A second fork, from a parent whose code memory was copied once. */
    c = fork();
    CHECK(c >= 0);
    if (c == 0)
        _exit(work(10) & 0x7f);
    CHECK(waitpid(c, &st, 0) == c);
    printf("second child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
