/* smc-double-map: code written through a second mapping of the same
 * memory, as a double-mapped JIT does (a memfd mapped writable for its
 * stores and executable for running), and through the file itself
 * (write, pwrite, pwritev). Each new function must run, however the views
 * come and go:
 *   1. writable view first, executable second, stores through the first;
 *   2. executable view first, code run, then a writable view mapped;
 *   3. a read-only view made writable by mprotect after code ran;
 *   4. pwrite, write after lseek, pwritev into the memfd;
 *   5. two executable views of the same page, one writable view;
 *   6. views at a file offset other than 0 (the second page);
 *   7. 200 rewrites in a loop.
 * hotlift ran the first translation for ever (README's known limits). */
#define _GNU_SOURCE
#include "common.h"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

typedef int (*fn_t)(void);

static int run(unsigned char *rx) {
    return ((fn_t)rx)();
}

int main(void) {
    int fd = memfd_create("jit", 0);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, 2 * 4096) == 0);
    unsigned char code[6];

    /* 1. */
    unsigned char *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    unsigned char *rx = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    CHECK(rw != MAP_FAILED && rx != MAP_FAILED);
    emit_ret(rw, 1);
    printf("1. %d", run(rx));
    emit_ret(rw, 2);
    printf(" %d\n", run(rx));
    CHECK(munmap(rw, 4096) == 0);

    /* 2. */
    emit_ret(code, 3);
    CHECK(pwrite(fd, code, 6, 0) == 6);
    printf("2. %d", run(rx));
    rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(rw != MAP_FAILED);
    emit_ret(rw, 4);
    printf(" %d\n", run(rx));
    CHECK(munmap(rw, 4096) == 0);

    /* 3. */
    unsigned char *ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(ro != MAP_FAILED);
    printf("3. %d", run(rx));
    CHECK(mprotect(ro, 4096, PROT_READ | PROT_WRITE) == 0);
    emit_ret(ro, 5);
    printf(" %d\n", run(rx));
    CHECK(munmap(ro, 4096) == 0);

    /* 4. */
    emit_ret(code, 6);
    CHECK(pwrite(fd, code, 6, 0) == 6);
    printf("4. %d", run(rx));
    emit_ret(code, 7);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    CHECK(write(fd, code, 6) == 6);
    printf(" %d", run(rx));
    emit_ret(code, 8);
    struct iovec iov = {code, 6};
    CHECK(pwritev(fd, &iov, 1, 0) == 6);
    printf(" %d\n", run(rx));

    /* 5. */
    unsigned char *rx2 = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(rx2 != MAP_FAILED && rw != MAP_FAILED);
    printf("5. %d %d", run(rx), run(rx2));
    emit_ret(rw, 9);
    printf(" %d %d\n", run(rx), run(rx2));

    /* 6. */
    unsigned char *rw2 = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096);
    unsigned char *rx3 = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 4096);
    CHECK(rw2 != MAP_FAILED && rx3 != MAP_FAILED);
    emit_ret(rw2 + 64, 10);
    printf("6. %d", run(rx3 + 64));
    emit_ret(rw2 + 64, 11);
    printf(" %d (first page still %d)\n", run(rx3 + 64), run(rx));

    /* 7. */
    long sum = 0;
    for (int i = 0; i < 200; i++) {
        emit_ret(rw + 128, i);
        sum += run(rx + 128);
    }
    printf("7. %ld (expect %d)\n", sum, 199 * 200 / 2);
    CHECK(sum == 199 * 200 / 2);
    return 0;
}
