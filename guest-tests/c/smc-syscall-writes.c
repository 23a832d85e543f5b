/* smc-syscall-writes: syscalls whose results the kernel (or hotlift, for
 * what it answers itself) writes into a page that holds translated code.
 * hotlift write-protects such pages to catch stores; each call must
 * succeed as natively (readlink of /proc/self/exe, answered by hotlift,
 * got EFAULT), the function on the page must keep working, and code
 * written over it by process_vm_writev must run.
 *   readlink, readlinkat, getcwd, process_vm_readv (local buffer),
 *   process_vm_writev (to this process), uname, clock_gettime. */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

typedef int (*fn_t)(void);

static unsigned char *page;

static void call(const char *what) {
    printf("%-20s then f() = %d\n", what, ((fn_t)page)());
}

int main(void) {
    static const unsigned char one[] = {0xb8, 1, 0, 0, 0, 0xc3}; /* mov eax, 1; ret */
    static const unsigned char two[] = {0xb8, 2, 0, 0, 0, 0xc3};
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    memcpy(page, one, sizeof one);
    call("start");
    char *buf = (char *)page + 2048;

    ssize_t n = readlink("/proc/self/exe", buf, 1024);
    printf("readlink: %s\n", n > 0 ? "ok" : strerror(errno));
    call("readlink");
    n = readlinkat(AT_FDCWD, "/proc/self/exe", buf, 1024);
    printf("readlinkat: %s\n", n > 0 ? "ok" : strerror(errno));
    call("readlinkat");
    printf("getcwd: %s\n", getcwd(buf, 1024) ? "ok" : strerror(errno));
    call("getcwd");

    char src[16] = "from a syscall";
    struct iovec local = {buf, sizeof src}, remote = {src, sizeof src};
    n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    printf("process_vm_readv: %zd [%s]\n", n, buf);
    call("process_vm_readv");
    memcpy(src, "written remotely", sizeof src);
    struct iovec from = {src, sizeof src}, to = {buf + 64, sizeof src};
    n = process_vm_writev(getpid(), &from, 1, &to, 1, 0);
    printf("process_vm_writev: %zd [%.16s]\n", n, buf + 64);
    call("process_vm_writev");

    CHECK(uname((struct utsname *)buf) == 0);
    printf("uname: ok\n");
    call("uname");
    /* The syscall itself: the vDSO's clock_gettime retries its read a
     * number of times that depends on timing. */
    CHECK(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (struct timespec *)buf) == 0);
    printf("clock_gettime: ok\n");
    call("clock_gettime");

    /* New code over the function, written by the kernel. */
    struct iovec code = {(void *)two, sizeof two}, over = {page, sizeof two};
    n = process_vm_writev(getpid(), &code, 1, &over, 1, 0);
    printf("process_vm_writev of code: %zd\n", n);
    call("new code");
    return 0;
}
