/* The guest's own /proc/self/mem (tests/hostile.rs): opened for writing by
 * any name it has, it is refused under hotlift (natively: opened); opened
 * for reading, it reads the guest's own memory as natively, a short read
 * where a range runs into an unmapped page and EIO at one. Then another
 * process's mem file (a child's), which hotlift refuses, and its own
 * read through the descriptor a forked child inherited, which is the
 * parent's there: printed last, since natively the first depends on the
 * machine's ptrace policy and the second reads the parent's memory.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *opened(int fd) {
    if (fd >= 0) {
        close(fd);
        return "opened";
    }
    return errno == EACCES ? "EACCES" : strerror(errno);
}

static const char *got(long rc) {
    static char b[32];
    if (rc >= 0) {
        snprintf(b, sizeof b, "%ld", rc);
        return b;
    }
    return errno == EIO ? "EIO" : strerror(errno);
}

int main(int argc, char **argv) {
    char link[256];
    snprintf(link, sizeof link, "%s.link", argc > 1 ? argv[1] : "/tmp/procmem");
    unlink(link);
    if (symlink("/proc/self/mem", link) != 0)
        return 9;
    printf("/proc/self/mem for writing: %s\n", opened(open("/proc/self/mem", O_RDWR)));
    printf("a link to it for writing: %s\n", opened(open(link, O_WRONLY)));
    int self = open("/proc/self", O_RDONLY | O_DIRECTORY);
    printf("mem relative to /proc/self for writing: %s\n", opened(openat(self, "mem", O_RDWR)));
    struct open_how how = {.flags = O_RDWR};
    printf("openat2 for writing: %s\n",
           opened(syscall(SYS_openat2, AT_FDCWD, "/proc/thread-self/mem", &how, sizeof how)));
    int mem = open(link, O_RDONLY);
    printf("a link to it for reading: %s\n", mem >= 0 ? "opened" : strerror(errno));
    char again[64];
    snprintf(again, sizeof again, "/proc/self/fd/%d", mem);
    printf("its descriptor reopened for writing: %s\n", opened(open(again, O_RDWR)));
    unlink(link);

    /* Its own memory, by every kind of read. */
    static char from[16] = "copied";
    char to[16] = "";
    printf("pread of its own data: %s %s\n", got(pread(mem, to, 7, (off_t)(long)from)), to);
    memset(to, 0, sizeof to);
    lseek(mem, (off_t)(long)from, SEEK_SET);
    struct iovec v[2] = {{to, 3}, {to + 3, 4}};
    printf("readv: %s %s\n", got(readv(mem, v, 2)), to);
    /* Two pages, the second unmapped: a read of both stops at the gap. */
    char *two = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(two, 'x', 4096);
    munmap(two + 4096, 4096);
    static char big[8192];
    printf("a range running into an unmapped page: %s\n", got(pread(mem, big, 8192, (off_t)(long)two)));
    struct iovec w[2] = {{big, 4000}, {big + 4000, 4192}};
    printf("preadv of the same: %s\n", got(preadv(mem, w, 2, (off_t)(long)two)));
    printf("the unmapped page: %s\n", got(pread(mem, big, 16, (off_t)(long)(two + 4096))));
    lseek(mem, (off_t)(long)(two + 4096), SEEK_SET);
    printf("read there: %s\n", got(read(mem, big, 16)));
    printf("write through the reading one: %s\n", got(pwrite(mem, "zz", 2, (off_t)(long)from)));
    /* openat2 of its maps: the guest's view, as open gives. */
    struct open_how ro = {.flags = O_RDONLY};
    int maps = syscall(SYS_openat2, AT_FDCWD, "/proc/self/maps", &ro, sizeof ro);
    int hotlift = 0;
    FILE *mf = maps >= 0 ? fdopen(maps, "r") : 0;
    char line[512];
    while (mf && fgets(line, sizeof line, mf))
        hotlift += strstr(line, "/hotlift\n") != 0; /* its program */
    printf("openat2 of its maps shows hotlift: %s\n", !mf ? "failed" : hotlift ? "yes" : "no");
    if (mf)
        fclose(mf);
    fflush(stdout);

    /* Another process's: a child waiting on a pipe. */
    int p[2];
    if (pipe(p) != 0)
        return 8;
    pid_t kid = fork();
    if (kid == 0) {
        char c;
        close(p[1]);
        (void)!read(p[0], &c, 1);
        _exit(0);
    }
    char other[64];
    snprintf(other, sizeof other, "/proc/%d/mem", (int)kid);
    printf("a child's mem file for reading: %s\n", opened(open(other, O_RDONLY)));
    close(p[1]);
    waitpid(kid, 0, 0);
    /* The reading descriptor, inherited: in a forked child it is its
     * parent's file (natively it reads the parent's memory). */
    fflush(stdout);
    kid = fork();
    if (kid == 0) {
        memset(to, 0, sizeof to);
        printf("a forked child reading through it: %s %s\n", got(pread(mem, to, 7, (off_t)(long)from)), to);
        fflush(stdout);
        _exit(0);
    }
    waitpid(kid, 0, 0);
    return 0;
}
