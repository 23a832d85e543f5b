/* fault-top: loads, stores and a jump at the top of the address space (a
 * NULL pointer with a negative offset: p[-1] of a malloc-style header)
 * fault as natively, each caught by a SIGSEGV handler that reports the
 * fault address and code. hotlift panicked ("range start is greater than
 * range end"): the page after the last one wrapped to 0. */
#include "common.h"

#include <setjmp.h>
#include <signal.h>

struct hdr {
    long size;
    long magic;
};

static sigjmp_buf back;

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    printf("  signal %d code %d addr %p\n", sig, si->si_code, si->si_addr);
    siglongjmp(back, 1);
}

__attribute__((noinline)) static long header_size(void *p) {
    return ((struct hdr *)p)[-1].size;
}

__attribute__((noinline)) static void header_set(void *p, long v) {
    ((struct hdr *)p)[-1].magic = v;
}

int main(void) {
    catch_signal(SIGSEGV, on_segv);
    void *volatile null = NULL;
    if (sigsetjmp(back, 1) == 0) {
        puts("load of NULL[-1]:");
        printf("  read %ld\n", header_size(null));
    }
    if (sigsetjmp(back, 1) == 0) {
        puts("store to NULL[-1]:");
        header_set(null, 7);
    }
    if (sigsetjmp(back, 1) == 0) {
        puts("load from the last byte:");
        printf("  read %d\n", *(volatile char *)~0ul);
    }
    puts("done");
    return 0;
}
