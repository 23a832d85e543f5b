/* vfork-fds: a vfork child's descriptors are numbered as natively (its
 * opens take the lowest free numbers: 3, then 4), and closing or
 * replacing any of them does not end its parent's wait early. hotlift
 * waits for the child's execve or end on a pipe of its own, whose ends
 * took the lowest free numbers (the child's second open got 5), and a
 * child's dup2 onto one closed it.
 */
#include "common.h"
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    pid_t pid = vfork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int a = open("/dev/null", O_RDONLY);
        int b = open("/dev/null", O_RDONLY);
        char buf[64];
        int n = snprintf(buf, sizeof buf, "child: %d %d\n", a, b);
        (void)!write(1, buf, (size_t)n);
        /* Every number up to 9 replaced and closed: the parent still waits
         * for the end. */
        for (int fd = 3; fd < 10; fd++) {
            dup2(1, fd);
            close(fd);
        }
        /* Still running when an early parent would print. */
        struct timespec t = {0, 100 * 1000 * 1000};
        nanosleep(&t, 0);
        (void)!write(1, "child: done\n", 12);
        _exit(0);
    }
    /* vfork returns here once the child ended (or called execve). */
    printf("parent: resumed\n");
    fflush(stdout);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
    int c = open("/dev/null", O_RDONLY);
    printf("parent: next descriptor %d\n", c);
    return 0;
}
