/* rlimits: resource limits a program sets on itself act as natively (and,
 * under hotlift, never cost hotlift its own files or memory).
 *
 * RLIMIT_NOFILE lowered: open() fails with EMFILE at the limit, and the
 * limit reads back as set; raising the hard limit again is EPERM without
 * the privilege (not checked: the tests may run as root) and a soft limit
 * above the hard one EINVAL. RLIMIT_FSIZE lowered with SIGXFSZ ignored: a
 * write stops at the limit, the next one fails with EFBIG. RLIMIT_AS and
 * RLIMIT_DATA lowered: a large malloc, mmap and sbrk fail, a small one
 * works. A fork after all that works and the child sees the same limits.
 * With "die", a write past RLIMIT_FSIZE with SIGXFSZ at its default ends
 * the process. With "exec", children lowering RLIMIT_NOFILE to 0 or
 * RLIMIT_AS to 1 MiB run /bin/true, whose ld.so then fails (127); with
 * "exec-self" a child with RLIMIT_AS 256 KiB runs this program again, which
 * fails in execve (SIGSEGV) where it is static and larger than that.
 */
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *name, int resource) {
    struct rlimit r;
    CHECK(getrlimit(resource, &r) == 0);
    printf("%s: soft %lld hard %lld\n", name, r.rlim_cur == RLIM_INFINITY ? -1LL : (long long)r.rlim_cur,
           r.rlim_max == RLIM_INFINITY ? -1LL : (long long)r.rlim_max);
}

/* A child that lowers `resource` to `value` and runs /bin/true (linked
 * dynamically: ld.so fails to open or map libc, 127) or this program
 * (argv0; built static, the kernel's execve itself fails: SIGSEGV), and
 * how it ended. */
static void exec_limited(const char *what, int resource, rlim_t value, const char *prog) {
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        /* ld.so's message names the program: stderr goes to stdout. */
        dup2(1, 2);
        struct rlimit r = {value, resource == RLIMIT_AS ? value : 1024};
        CHECK(setrlimit(resource, &r) == 0);
        execl(prog, "limited", "x", (char *)0);
        printf("execve failed: errno %d\n", errno);
        _exit(99);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    if (WIFEXITED(st))
        printf("%s: exec'd child exited %d\n", what, WEXITSTATUS(st));
    else
        printf("%s: exec'd child killed by signal %d\n", what, WTERMSIG(st));
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "x") == 0)
        return 0;
    if (argc > 1 && strcmp(argv[1], "exec") == 0) {
        fflush(stdout);
        exec_limited("RLIMIT_NOFILE 0, /bin/true", RLIMIT_NOFILE, 0, "/bin/true");
        exec_limited("RLIMIT_AS 1 MiB, /bin/true", RLIMIT_AS, 1 << 20, "/bin/true");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "exec-self") == 0) {
        exec_limited("RLIMIT_AS 256 KiB, itself", RLIMIT_AS, 256 << 10, "/proc/self/exe");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "die") == 0) {
        int fd = open("big", O_CREAT | O_WRONLY | O_TRUNC, 0600);
        CHECK(fd >= 0);
        struct rlimit f = {10, 10};
        CHECK(setrlimit(RLIMIT_FSIZE, &f) == 0);
        printf("writing 20 bytes past a 10-byte limit\n");
        fflush(stdout);
        (void)!write(fd, "01234567890123456789", 20);
        (void)!write(fd, "more", 4);
        printf("not reached\n");
        return 0;
    }
    /* Descriptors: 0, 1, 2 are open; a limit of 5 leaves two more. */
    struct rlimit n = {5, 5};
    CHECK(setrlimit(RLIMIT_NOFILE, &n) == 0);
    show("RLIMIT_NOFILE", RLIMIT_NOFILE);
    int opened = 0, err = 0, fds[10];
    for (int i = 0; i < 10; i++) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0) {
            err = errno;
            break;
        }
        fds[opened++] = fd;
    }
    printf("opened %d more, then %s\n", opened, err == EMFILE ? "EMFILE" : "?");
    while (opened > 0)
        close(fds[--opened]);
    struct rlimit bad = {6, 5};
    errno = 0;
    int rc = setrlimit(RLIMIT_NOFILE, &bad);
    printf("soft above hard: %d %s\n", rc, errno == EINVAL ? "EINVAL" : "?");
    struct rlimit p = {0, 0};
    CHECK(prlimit(0, RLIMIT_NOFILE, 0, &p) == 0);
    printf("prlimit reads %lld %lld\n", (long long)p.rlim_cur, (long long)p.rlim_max);

    /* File size, SIGXFSZ ignored. */
    signal(SIGXFSZ, SIG_IGN);
    int fd = open("out", O_CREAT | O_WRONLY | O_TRUNC, 0600);
    CHECK(fd >= 0);
    struct rlimit f = {100, 100};
    CHECK(setrlimit(RLIMIT_FSIZE, &f) == 0);
    show("RLIMIT_FSIZE", RLIMIT_FSIZE);
    char buf[150];
    memset(buf, 'x', sizeof buf);
    ssize_t w1 = write(fd, buf, sizeof buf);
    errno = 0;
    ssize_t w2 = write(fd, buf, 10);
    printf("writes: %zd, then %zd %s\n", w1, w2, errno == EFBIG ? "EFBIG" : "?");
    close(fd);

    /* Address space and data. */
    struct rlimit as = {1ULL << 30, 1ULL << 30};
    CHECK(setrlimit(RLIMIT_AS, &as) == 0);
    show("RLIMIT_AS", RLIMIT_AS);
    void *big = mmap(0, 2ULL << 30, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("2 GiB mmap: %s\n", big == MAP_FAILED && errno == ENOMEM ? "ENOMEM" : "mapped");
    void *small = mmap(0, 64 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("64 MiB mmap: %s\n", small != MAP_FAILED ? "mapped" : "failed");
    CHECK(small != MAP_FAILED && munmap(small, 64 << 20) == 0);
    struct rlimit d = {256 << 20, 256 << 20};
    CHECK(setrlimit(RLIMIT_DATA, &d) == 0);
    show("RLIMIT_DATA", RLIMIT_DATA);
    void *w = mmap(0, 512 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("512 MiB writable mmap: %s\n", w == MAP_FAILED && errno == ENOMEM ? "ENOMEM" : "mapped");
    void *r = mmap(0, 512 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("512 MiB read-only mmap: %s\n", r != MAP_FAILED ? "mapped" : "failed");
    CHECK(r != MAP_FAILED && munmap(r, 512 << 20) == 0);
    errno = 0;
    void *s = sbrk(512 << 20);
    printf("512 MiB sbrk: %s\n", s == (void *)-1 && errno == ENOMEM ? "ENOMEM" : "grew");
    s = sbrk(1 << 20);
    printf("1 MiB sbrk: %s\n", s != (void *)-1 ? "grew" : "failed");
    char *m = malloc(100 << 20);
    printf("100 MiB malloc: %s\n", m ? "ok" : "NULL");
    free(m);

    /* A fork with all of that. */
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        show("child RLIMIT_NOFILE", RLIMIT_NOFILE);
        show("child RLIMIT_AS", RLIMIT_AS);
        fflush(stdout);
        _exit(7);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
