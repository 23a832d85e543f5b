/* fexec: programs run through a descriptor, as fexecve and
 * execveat(AT_EMPTY_PATH) run them: this program copied into a memfd
 * (close-on-exec: the kernel opens the program first), an unlinked copy
 * of it, a #! script in a memfd (its interpreter gets /dev/fd/N), and the
 * same script close-on-exec (the kernel refuses: ENOENT).
 */
#include "common.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int copy_self(int fd) {
    int in = open("/proc/self/exe", O_RDONLY);
    CHECK(in >= 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        CHECK(write(fd, buf, n) == n);
    close(in);
    return fd;
}

/* Run `fd` with argv {name, arg} in a child; its status. */
static void run(const char *what, int fd, const char *arg) {
    fflush(stdout);
    pid_t c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        char *args[] = {"fexec", (char *)arg, NULL};
        fexecve(fd, args, environ);
        printf("   %s: fexecve failed: %s\n", what, errno == ENOENT ? "ENOENT" : "other");
        fflush(stdout);
        _exit(9);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c);
    printf("   %s: exited %d\n", what, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        puts("   child running");
        return 3;
    }
    puts("memfd copy of this program:");
    run("memfd", copy_self(memfd_create("self", MFD_CLOEXEC)), "child");
    puts("unlinked copy:");
    int fd = open("copy", O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0700);
    CHECK(fd >= 0);
    copy_self(fd);
    close(fd);
    fd = open("copy", O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0 && unlink("copy") == 0);
    run("unlinked", fd, "child");
    close(fd);
    puts("script in a memfd:");
    const char script[] = "#!/bin/sh\necho \"   script $0\"\n";
    fd = memfd_create("script", 0);
    CHECK(write(fd, script, sizeof script - 1) == (ssize_t)sizeof script - 1);
    run("script", fd, "x");
    close(fd);
    puts("the same, close-on-exec:");
    fd = memfd_create("script", MFD_CLOEXEC);
    CHECK(write(fd, script, sizeof script - 1) == (ssize_t)sizeof script - 1);
    run("script close-on-exec", fd, "x");
    return 0;
}
