/* tls: thread-local storage in a program without threads.
 *
 * __thread variables (initialised, zero-initialised, arrays, and a large
 * block), their addresses relative to each other (constant), errno (which
 * is TLS in glibc), and the TCB self-pointer at fs:0. Static executables
 * use the local-exec model: every access is an fs-relative load or store
 * with a negative offset, so a translator must keep FS exactly as the guest
 * set it up (arch_prctl during libc start-up).
 */
#include "common.h"
#include <errno.h>
#include <unistd.h>

static __thread int counter = 41;
static __thread long zeroed;
static __thread char name[32] = "initial tls name";
static __thread uint64_t table[1024];
__thread double shared_tls = 2.5;

__attribute__((noinline)) static int *counter_addr(void) { return &counter; }

int main(void) {
    printf("counter %d zeroed %ld name %s shared %.1f\n", counter, zeroed, name, shared_tls);
    counter++;
    zeroed = -1;
    strcpy(name, "changed");
    for (int i = 0; i < 1024; i++)
        table[i] = (uint64_t)i * i;
    uint64_t s = 0;
    for (int i = 0; i < 1024; i++)
        s += table[i];
    printf("after writes: counter %d zeroed %ld name %s table sum %llu\n", counter, zeroed, name,
           (unsigned long long)s);
    CHECK(*counter_addr() == 42);
    long gap = (char *)&table[0] - (char *)&counter;
    printf("tls layout is fixed: %d\n", gap != 0);

    /* fs:0 holds the TCB's own address, and TLS lives just below it */
    uintptr_t tcb;
    __asm__ volatile("mov %%fs:0, %0" : "=r"(tcb));
    uintptr_t var = (uintptr_t)&counter;
    printf("fs:0 self-pointer above the TLS block: %d\n", var < tcb && tcb - var < (1 << 20));

    /* errno is TLS */
    errno = 0;
    CHECK(close(-1) == -1);
    printf("errno after close(-1): %d (EBADF %d)\n", errno, EBADF);
    errno = 1234;
    CHECK(errno == 1234);
    puts("ok");
    return 0;
}
