/* eof-code: code in a file mapping, past the file's end. A mapping may be
 * longer than its file; a fetch from a page wholly past the end raises
 * SIGBUS (BUS_ADRERR, si_addr the page, RIP there), as a load does.
 *   1. a call into the page past the end of a one-page file (private and
 *      shared mappings of a memfd: a file in /tmp faults the same way,
 *      and its random name would differ between the runs whose profiles
 *      the tests compare);
 *   2. code at the end of the last page that runs on into the next: the
 *      instructions before the page retire (RAX set), then SIGBUS there;
 *   3. the file grown and the code written with pwrite: the page that
 *      faulted now runs;
 *   4. code that ran, then the file cut to nothing by ftruncate: the
 *      next call faults there; grown and written again, it runs.
 * hotlift read the page itself to translate it and died ("internal error:
 * signal 7 at host pc"). */
#define _GNU_SOURCE
#include "common.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

typedef int (*fn_t)(void);

static sigjmp_buf back;
static unsigned char *expect;
static int show_rax;

static void on_bus(int sig, siginfo_t *si, void *ucv) {
    ucontext_t *uc = ucv;
    printf("  signal %s code %d addr-ok %d rip-ok %d", sig == SIGBUS ? "SIGBUS" : "other",
           si->si_code, (unsigned char *)si->si_addr == expect,
           (unsigned char *)uc->uc_mcontext.gregs[REG_RIP] == expect);
    if (show_rax)
        printf(" rax %lld", (long long)uc->uc_mcontext.gregs[REG_RAX]);
    printf("\n");
    siglongjmp(back, 1);
}

static void call(const char *what, unsigned char *code, unsigned char *faults_at) {
    expect = faults_at;
    printf("%s:\n", what);
    if (sigsetjmp(back, 1) == 0) {
        int v = ((fn_t)code)();
        printf("  returned %d\n", v);
    }
}

static void one_file(const char *name, int fd) {
    unsigned char page[4096];
    memset(page, 0x90, sizeof page); /* nop */
    emit_ret(page, 42);
    /* The page's last 5 bytes: mov eax, 7, running on into the next. */
    page[4091] = 0xb8;
    int seven = 7;
    memcpy(page + 4092, &seven, 4);
    CHECK(ftruncate(fd, 0) == 0);
    CHECK(pwrite(fd, page, sizeof page, 0) == (ssize_t)sizeof page);
    int kinds[2] = {MAP_PRIVATE, MAP_SHARED};
    for (int k = 0; k < 2; k++) {
        printf("%s, %s:\n", name, k ? "shared" : "private");
        unsigned char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_EXEC, kinds[k], fd, 0);
        CHECK(m != MAP_FAILED);
        call("1. in the file", m, NULL);
        call("1. past its end", m + 4096, m + 4096);
        call("1. past its end again", m + 4096 + 16, m + 4096 + 16);
        show_rax = 1;
        call("2. running on into the page past the end", m + 4091, m + 4096);
        show_rax = 0;
        CHECK(munmap(m, 3 * 4096) == 0);
    }
    /* 3. */
    unsigned char *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    CHECK(m != MAP_FAILED);
    call("3. before the file grows", m + 4096, m + 4096);
    unsigned char code[6];
    emit_ret(code, 43);
    CHECK(pwrite(fd, code, sizeof code, 4096) == (ssize_t)sizeof code);
    call("3. after", m + 4096, NULL);
    CHECK(munmap(m, 2 * 4096) == 0);
    /* 4. */
    for (int k = 0; k < 2; k++) {
        m = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC, kinds[k], fd, 0);
        CHECK(m != MAP_FAILED);
        call("4. before the file is cut", m, NULL);
        CHECK(ftruncate(fd, 0) == 0);
        call("4. after", m, m);
        CHECK(ftruncate(fd, 4096) == 0);
        emit_ret(code, 44 + k);
        CHECK(pwrite(fd, code, sizeof code, 0) == (ssize_t)sizeof code);
        call("4. grown again", m, NULL);
        CHECK(munmap(m, 2 * 4096) == 0);
    }
}

int main(void) {
    catch_signal(SIGBUS, on_bus);
    setvbuf(stdout, NULL, _IONBF, 0);

    int fd = memfd_create("eof-code", 0);
    CHECK(fd >= 0);
    one_file("memfd", fd);
    close(fd);
    puts("done");
    return 0;
}
