/* code-file-write: code run from a private mapping of a file, then the
 * file written with write(2) and friends. A private mapping's pages that
 * the process never wrote are the file's page cache: natively the next
 * call runs the new bytes, so translations of the old ones are stale.
 *   1. a memfd mapped read+exec from its own (read-write) descriptor,
 *      written with pwrite, write after lseek, writev and pwritev;
 *   2. a file in the working directory, opened read-write before it is
 *      mapped from a second, read-only descriptor; written through the
 *      first, and through a dup of it;
 *   3. the same file opened for writing again after it was mapped, by
 *      name, and written there;
 *   4. a file a child process made, mapped from a read-only descriptor
 *      (this process never had it open for writing), then opened
 *      write-only and written.
 * hotlift ran the first translation every time (only shared mappings'
 * files were followed). */
#define _GNU_SOURCE
#include "common.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*fn_t)(void);

static void call(const char *what, fn_t f) {
    /* Twice: the second runs the translation the first made. */
    int a = f();
    int b = f();
    printf("%-34s %d %d\n", what, a, b);
}

static fn_t map_code(int fd) {
    void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    CHECK(p != MAP_FAILED);
    return (fn_t)p;
}

static void write_at(int fd, int v) {
    unsigned char code[8] = {0};
    emit_ret(code, v);
    CHECK(pwrite(fd, code, sizeof code, 0) == (ssize_t)sizeof code);
}

/* The code of file `name`, mapped from a read-only descriptor (closed
 * again: the mapping stays). */
static fn_t map_named(const char *name) {
    int fd = open(name, O_RDONLY);
    CHECK(fd >= 0);
    fn_t f = map_code(fd);
    close(fd);
    return f;
}

/* Open `name` write-only, write `mov eax, v; ret` at its start. */
static void write_named(const char *name, int v) {
    int fd = open(name, O_WRONLY);
    CHECK(fd >= 0);
    write_at(fd, v);
    close(fd);
}

static void one_page(int fd, int v) {
    unsigned char page[4096];
    memset(page, 0xcc, sizeof page);
    emit_ret(page, v);
    CHECK(pwrite(fd, page, sizeof page, 0) == (ssize_t)sizeof page);
}

static void memfd_case(void) {
    unsigned char code[8] = {0};
    puts("1. memfd, mapped from its own descriptor");
    int m = memfd_create("code", 0);
    CHECK(m >= 0);
    one_page(m, 1);
    fn_t f = map_code(m);
    call("first", f);
    write_at(m, 2);
    call("pwrite", f);
    CHECK(lseek(m, 0, SEEK_SET) == 0);
    emit_ret(code, 3);
    CHECK(write(m, code, sizeof code) == (ssize_t)sizeof code);
    call("write after lseek", f);
    emit_ret(code, 4);
    struct iovec iov[2] = {{code, 3}, {code + 3, 5}};
    CHECK(lseek(m, 0, SEEK_SET) == 0);
    CHECK(writev(m, iov, 2) == (ssize_t)sizeof code);
    call("writev", f);
    emit_ret(code, 5);
    CHECK(pwritev(m, iov, 2, 0) == (ssize_t)sizeof code);
    call("pwritev", f);
}

static void file_case(void) {
    puts("2. a file opened read-write, mapped from a read-only one");
    int rw = open("code.bin", O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(rw >= 0);
    one_page(rw, 11);
    fn_t g = map_named("code.bin");
    call("first", g);
    write_at(rw, 12);
    call("pwrite through the first", g);
    int d = dup(rw);
    CHECK(d >= 0);
    write_at(d, 13);
    call("pwrite through a dup", g);
    close(d);
    close(rw);

    puts("3. opened for writing again after the mapping");
    write_named("code.bin", 14);
    call("pwrite", g);
    unlink("code.bin");
}

static void late_case(void) {
    puts("4. mapped before any write access, then opened write-only");
    /* Made by a child process: this one never opened it for writing. */
    pid_t kid = fork();
    CHECK(kid >= 0);
    if (kid == 0) {
        int c = open("other.bin", O_RDWR | O_CREAT | O_TRUNC, 0600);
        CHECK(c >= 0);
        one_page(c, 21);
        close(c);
        _exit(0);
    }
    int st;
    CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    fn_t h = map_named("other.bin");
    call("first", h);
    write_named("other.bin", 22);
    call("pwrite", h);
    unlink("other.bin");
}

/* With an argument, one case alone (1, 2 with 3, or 4): hotlift looks at
 * writes once any case's code was mapped, so each way of getting there
 * runs in a process of its own too (manifest). */
int main(int argc, char **argv) {
    int only = argc > 1 ? atoi(argv[1]) : 0;
    if (only == 0 || only == 1)
        memfd_case();
    if (only == 0 || only == 2)
        file_case();
    if (only == 0 || only == 4)
        late_case();
    puts("ok");
    return 0;
}
