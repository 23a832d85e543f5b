/* smc-sigmask: self-modifying code while the guest blocks every signal.
 *
 * A translator that detects stores to translated code through a
 * write-protection fault (SIGSEGV) must get that fault even when the guest
 * has blocked all signals with sigprocmask: the guest's mask governs only
 * the guest's own signals (a hotlift regression). With everything blocked,
 * a function in an RWX page is called, patched by a plain store and called
 * again, then patched and called 100 more times. Finally the mask the guest
 * reads back must be the one it set.
 */
#include "common.h"
#include <signal.h>
#include <sys/mman.h>

typedef int (*fn_t)(void);

int main(void) {
    sigset_t all, cur;
    sigfillset(&all);
    CHECK(sigprocmask(SIG_BLOCK, &all, NULL) == 0);

    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    static const unsigned char code[] = {0xb8, 1, 0, 0, 0, 0xc3}; /* mov eax, 1; ret */
    memcpy(p, code, sizeof code);
    fn_t f = (fn_t)p;
    int a = f();
    p[1] = 2;
    int b = f();
    printf("all signals blocked: first call %d, after patching %d\n", a, b);
    CHECK(a == 1 && b == 2);

    long sum = 0;
    for (int i = 1; i <= 100; i++) {
        p[1] = (unsigned char)i;
        sum += f();
    }
    printf("sum over 100 patched calls: %ld\n", sum);
    CHECK(sum == 5050);

    CHECK(sigprocmask(SIG_SETMASK, NULL, &cur) == 0);
    const int sigs[] = {SIGSEGV, SIGBUS, SIGTRAP, SIGILL, SIGUSR1, SIGALRM, SIGRTMIN};
    static const char *const names[] = {"SIGSEGV", "SIGBUS", "SIGTRAP", "SIGILL",
                                        "SIGUSR1", "SIGALRM", "SIGRTMIN"};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        printf("%s blocked: %d\n", names[i], sigismember(&cur, sigs[i]));
        CHECK(sigismember(&cur, sigs[i]) == 1);
    }
    puts("ok");
    return 0;
}
