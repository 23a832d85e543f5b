/* stack-limit: the main thread's stack grows as far as the RLIMIT_STACK
 * the program sets while it runs, as gcc's cc1 raises its own to 64 MiB
 * before compiling. The kernel grows the stack mapping fault by fault up
 * to the soft limit in force at each fault (and leaves at least 128 MiB
 * below it at execve for that), so a limit raised late counts.
 *
 * Default: raise the soft limit to 64 MiB (or the hard limit, if lower:
 * then the test says it skipped) and use 40 MiB of stack in nested 1 MiB
 * frames, touched page by page from the top as a compiler's probes
 * would. "over": set the soft limit to 16 MiB and recurse past it: the
 * program dies of SIGSEGV (the manifest expects it).
 */
#include "common.h"
#include <sys/resource.h>

__attribute__((noinline)) static uint64_t deep(int depth) {
    volatile unsigned char frame[1 << 20];
    for (long i = sizeof frame - 1; i >= 0; i -= 4096)
        frame[i] = (unsigned char)(i ^ depth);
    uint64_t below = depth > 0 ? deep(depth - 1) : 0;
    return below * 31 + frame[0] + frame[sizeof frame - 1];
}

static int set_soft(rlim_t want) {
    struct rlimit r;
    CHECK(getrlimit(RLIMIT_STACK, &r) == 0);
    if (r.rlim_max != RLIM_INFINITY && r.rlim_max < want)
        return 0;
    r.rlim_cur = want;
    CHECK(setrlimit(RLIMIT_STACK, &r) == 0);
    return 1;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "over") == 0) {
        if (!set_soft(16 << 20)) {
            puts("skipped: hard limit below 16 MiB");
            return 0;
        }
        printf("24 MiB under a 16 MiB limit: %llu\n", (unsigned long long)deep(23));
        return 0;
    }
    if (!set_soft(64 << 20)) {
        puts("skipped: hard limit below 64 MiB");
        return 0;
    }
    printf("40 MiB of stack: %llu\n", (unsigned long long)deep(39));
    printf("again: %llu\n", (unsigned long long)deep(39));
    puts("ok");
    return 0;
}
