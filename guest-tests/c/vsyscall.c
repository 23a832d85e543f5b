/* vsyscall: calls into the legacy vsyscall page, as old static binaries
 * make them: gettimeofday at 0xffffffffff600000, time at ...400, getcpu at
 * ...800. Where the kernel keeps the page (vsyscall=xonly, the default) it
 * emulates each call; elsewhere in the page, or with a bad pointer, the
 * caller gets SIGSEGV. Where the kernel has no such page, every call is
 * a SIGSEGV: the output differs between such machines, never between
 * the native run and hotlift's on one. hotlift gave SIGSEGV for every
 * call. */
#define _GNU_SOURCE
#include "common.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define VSYSCALL 0xffffffffff600000ul

typedef long (*gtod_t)(struct timeval *, struct timezone *);
typedef long (*time_t_fn)(time_t *);
typedef long (*getcpu_t)(unsigned *, unsigned *, void *);

static sigjmp_buf back;

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    printf("  signal %d code %d\n", sig, si->si_code);
    siglongjmp(back, 1);
}

static long near(long a, long b) {
    return a - b < 5 && b - a < 5;
}

int main(void) {
    catch_signal(SIGSEGV, on_segv);
    setvbuf(stdout, NULL, _IONBF, 0);
    long now = (long)time(NULL);

    puts("gettimeofday:");
    if (sigsetjmp(back, 1) == 0) {
        struct timeval tv;
        struct timezone tz;
        long r = ((gtod_t)VSYSCALL)(&tv, &tz);
        printf("  returned %ld, near %d, usec ok %d\n", r, (int)near(tv.tv_sec, now),
               tv.tv_usec >= 0 && tv.tv_usec < 1000000);
        r = ((gtod_t)VSYSCALL)(NULL, NULL);
        printf("  with no pointers returned %ld\n", r);
    }
    puts("time:");
    if (sigsetjmp(back, 1) == 0) {
        time_t t = 0;
        long r = ((time_t_fn)(VSYSCALL + 0x400))(&t);
        printf("  returned near %d, stored near %d\n", (int)near(r, now), (int)near(t, now));
        r = ((time_t_fn)(VSYSCALL + 0x400))(NULL);
        printf("  with no pointer near %d\n", (int)near(r, now));
    }
    puts("getcpu:");
    if (sigsetjmp(back, 1) == 0) {
        unsigned cpu = ~0u, node = ~0u;
        long r = ((getcpu_t)(VSYSCALL + 0x800))(&cpu, &node, NULL);
        printf("  returned %ld, cpu ok %d, node ok %d\n", r,
               cpu < (unsigned)sysconf(_SC_NPROCESSORS_CONF), node < 1024);
    }
    puts("a bad pointer:");
    if (sigsetjmp(back, 1) == 0) {
        long r = ((gtod_t)VSYSCALL)((struct timeval *)8, NULL);
        printf("  returned %ld\n", r);
    }
    puts("not an entry:");
    if (sigsetjmp(back, 1) == 0) {
        long r = ((gtod_t)(VSYSCALL + 0x10))(NULL, NULL);
        printf("  returned %ld\n", r);
    }
    puts("done");
    return 0;
}
