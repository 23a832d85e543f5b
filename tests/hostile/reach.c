/* Told addresses of hotlift's own memory on stdin (one hex address a line,
 * tests/hostile.rs reads them from outside), aims syscalls at each and
 * prints what they returned: every one must fail as where nothing is
 * mapped, and hotlift must go on and write its profile.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static const char *err(long rc) {
    if (rc >= 0)
        return "succeeded";
    return errno == EFAULT ? "EFAULT" : errno == ENOMEM ? "ENOMEM" : errno == EIO ? "EIO" : strerror(errno);
}

int main(void) {
    printf("ready\n");
    fflush(stdout);
    int zero = open("/dev/zero", O_RDONLY);
    int mem = open("/proc/self/mem", O_RDONLY);
    char line[64];
    int n = 0;
    while (fgets(line, sizeof line, stdin)) {
        char *p = (char *)strtoul(line, 0, 16);
        n++;
        printf("target %d:", n);
        printf(" read %s", err(read(zero, p, 4096)));
        printf(" write %s", err(write(1, p, 16)));
        struct iovec v = {p, 64};
        printf(" readv %s", err(readv(zero, &v, 1)));
        /* Its own mem file reads memory by address, whatever maps it. */
        char got[64];
        printf(" mem pread %s", err(pread(mem, got, sizeof got, (off_t)(long)p)));
        lseek(mem, (off_t)(long)p, SEEK_SET);
        struct iovec into = {got, sizeof got};
        printf(" mem readv %s", err(readv(mem, &into, 1)));
        /* Its own process's memory through process_vm_*: hotlift's is not
         * the guest's on either side. */
        char buf[64];
        struct iovec mine = {buf, sizeof buf};
        printf(" process_vm_readv %s", err(process_vm_readv(getpid(), &mine, 1, &v, 1, 0)));
        printf(" process_vm_writev %s", err(process_vm_writev(getpid(), &mine, 1, &v, 1, 0)));
        /* The syscall, not the vDSO: that one is a plain store (README). */
        printf(" clock_gettime %s", err(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, p)));
        printf(" pipe %s", err(pipe((int *)p)));
        printf(" madvise %s", err(madvise(p, 4096, MADV_DONTNEED)));
        printf(" mlock %s", err(mlock(p, 4096)));
        printf(" msync %s", err(msync(p, 4096, MS_ASYNC)));
        /* Calls hotlift answers itself, writing the old state back. */
        printf(" rt_sigaction %s", err(syscall(SYS_rt_sigaction, SIGUSR1, 0, p, 8)));
        printf(" rt_sigprocmask %s", err(syscall(SYS_rt_sigprocmask, SIG_BLOCK, 0, p, 8)));
        printf(" sigaltstack %s", err(syscall(SYS_sigaltstack, 0, p)));
        printf(" arch_prctl %s", err(syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, p)));
        /* Results a control call writes, a futex's second word. */
        printf(" prctl_get_name %s", err(prctl(PR_GET_NAME, p, 0, 0, 0)));
        printf(" prctl_pdeathsig %s", err(prctl(PR_GET_PDEATHSIG, p, 0, 0, 0)));
        int word = 0;
        printf(" futex_wake_op %s\n",
               err(syscall(SYS_futex, &word, 5 /* FUTEX_WAKE_OP */, 1, 1, p, 0)));
        fflush(stdout);
    }
    /* The guest's own memory on both sides works. */
    char from[8] = "copied", to[8] = "";
    struct iovec f = {from, sizeof from}, t = {to, sizeof to};
    long got = process_vm_readv(getpid(), &t, 1, &f, 1, 0);
    printf("%d targets, process_vm_readv of its own memory: %ld %s, still running\n", n, got, to);
    return 0;
}
