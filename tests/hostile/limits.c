/* Guests that turn process-wide controls against the process they run in
 * (tests/hostile.rs): each mode lowers a limit or installs a control, then
 * does what needs it, printing with write(2) only (no stdio buffer to
 * allocate under RLIMIT_AS 0).
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#define PR_GET_MDWE 66
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif

static void say(const char *s) { (void)!write(1, s, strlen(s)); }

static void say_result(const char *what, long rc) {
    say(what);
    say(rc == 0 ? ": ok\n" : errno == EINVAL ? ": EINVAL\n" : errno == ENOSYS ? ": ENOSYS\n" : ": other\n");
}

static void lower(int resource, rlim_t to) {
    struct rlimit r = {to, to};
    if (setrlimit(resource, &r) != 0)
        _exit(99);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "seccomp") == 0) {
        say_result("PR_SET_SECCOMP strict", prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0));
        say_result("seccomp filter", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (void *)0));
        long m = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
        say(m == 0 ? "PR_GET_SECCOMP: 0\n" : "PR_GET_SECCOMP: not 0\n");
        /* Still free to make any syscall. */
        say(getppid() > 0 ? "getppid works\n" : "getppid failed\n");
        return 3;
    }
    if (strcmp(mode, "sud") == 0) {
        /* Natively the next syscall, made with the selector at BLOCK from
         * outside the (empty) allowed range, raises SIGSYS. */
        static volatile char selector = 0;
        say_result("PR_SET_SYSCALL_USER_DISPATCH",
                   prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &selector));
        selector = 1;
        say("still making syscalls\n");
        return 4;
    }
    if (strcmp(mode, "setmm") == 0) {
        /* The kernel's record of the layout is hotlift's process's: its
         * /proc/self/cmdline would read wherever this points. */
        static char args[64];
        say_result("PR_SET_MM", prctl(PR_SET_MM, PR_SET_MM_ARG_START, (unsigned long)args, 0, 0));
        return 0;
    }
    if (strcmp(mode, "mdwe") == 0) {
        say_result("PR_SET_MDWE", prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0));
        say(prctl(PR_GET_MDWE, 0, 0, 0, 0) == 0 ? "PR_GET_MDWE: 0\n" : "PR_GET_MDWE: not 0\n");
        pid_t pid = fork();
        if (pid == 0)
            _exit(5);
        int st;
        say(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 5
                ? "child exited 5\n"
                : "fork failed\n");
        return 0;
    }
    if (strcmp(mode, "mapfiles") == 0) {
        /* Every entry of /proc/self/map_files the program can open (a
         * privileged one can: it is the mapped object itself) is a range of
         * its own /proc/self/maps, as natively; opened relative to the
         * directory, as a listing does, and by its absolute name. */
        static unsigned long lo[4096], hi[4096];
        int n = 0;
        FILE *m = fopen("/proc/self/maps", "r");
        char line[512];
        while (m && n < 4096 && fgets(line, sizeof line, m))
            if (sscanf(line, "%lx-%lx", &lo[n], &hi[n]) == 2)
                n++;
        if (m)
            fclose(m);
        DIR *d = opendir("/proc/self/map_files");
        int outside = 0, own = 0;
        struct dirent *e;
        while (d && (e = readdir(d))) {
            unsigned long a, b;
            if (sscanf(e->d_name, "%lx-%lx", &a, &b) != 2)
                continue;
            char abs[128], other[160];
            snprintf(abs, sizeof abs, "/proc/self/map_files/%s", e->d_name);
            int fd = openat(dirfd(d), e->d_name, O_RDONLY), fd2 = open(abs, O_RDONLY);
            char target[256];
            int linked = readlink(abs, target, sizeof target) > 0;
            /* Other names of the same entry, for writing too: a memory
             * object (an unlinked file: the code cache's) opens by none. */
            static const char *const names[] = {"/proc//self", "/proc/./self",
                                                "/proc/self/root/proc/self"};
            for (int k = 0; k < 3; k++) {
                snprintf(other, sizeof other, "%s/map_files/%s", names[k], e->d_name);
                int f = open(other, k == 0 ? O_RDWR : O_RDONLY);
                struct stat st;
                if (f >= 0 && fstat(f, &st) == 0 && st.st_nlink == 0)
                    linked = 1;
                if (f >= 0)
                    close(f);
            }
            if (fd < 0 && fd2 < 0 && !linked)
                continue;
            int in = 0;
            for (int i = 0; i < n; i++)
                in |= lo[i] <= a && b <= hi[i];
            if (in)
                own = 1;
            else
                outside++;
            if (fd >= 0)
                close(fd);
            if (fd2 >= 0)
                close(fd2);
        }
        printf("map_files entries outside its maps that open: %d\n", outside);
        printf("its own file mappings there: %s\n", own ? "open" : "none open");
        /* Its maps by other names show what /proc/self/maps shows. */
        static const char *const maps[] = {"/proc//self/maps", "/proc/./self/maps",
                                           "/proc/self/root/proc/self/maps",
                                           "/proc/self/task/../maps"};
        int differ = 0;
        for (int k = 0; k < 4; k++) {
            FILE *f = fopen(maps[k], "r");
            int lines = 0;
            while (f && fgets(line, sizeof line, f))
                lines += strchr(line, '-') != 0;
            if (f)
                fclose(f);
            differ += lines != n;
        }
        printf("its maps by other names that differ: %d\n", differ);
        return 0;
    }
    if (strcmp(mode, "chdir") == 0) {
        /* The working directory is the process's too: a relative
         * --profile must not follow the guest there. */
        if (mkdir("elsewhere", 0700) != 0 || chdir("elsewhere") != 0)
            return 98;
        say("moved\n");
        return 0;
    }
    if (strcmp(mode, "parent-fsize0") == 0 || strcmp(mode, "parent-nofile0") == 0) {
        /* A child lowers its parent's limit, hard limit included. */
        int resource = mode[7] == 'f' ? RLIMIT_FSIZE : RLIMIT_NOFILE;
        pid_t parent = getpid(), pid = fork();
        if (pid == 0) {
            struct rlimit r = {0, 0};
            _exit(prlimit(parent, resource, &r, 0) == 0 ? 5 : 6);
        }
        int st;
        say(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 5
                ? "the child lowered it\n"
                : "the child failed\n");
        return 0;
    }
    if (strcmp(mode, "nofile0") == 0) {
        lower(RLIMIT_NOFILE, 0);
        say("no descriptors left\n");
        return 0;
    }
    if (strcmp(mode, "fsize0") == 0) {
        lower(RLIMIT_FSIZE, 0);
        say("not written if stdout is a file\n");
        return 0;
    }
    if (strcmp(mode, "as0-fork") == 0) {
        lower(RLIMIT_AS, 0);
        lower(RLIMIT_NOFILE, 0);
        pid_t pid = fork();
        if (pid < 0) {
            say("fork failed\n");
            return 1;
        }
        if (pid == 0) {
            say("child runs\n");
            _exit(5);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid)
            return 2;
        say(WIFEXITED(st) && WEXITSTATUS(st) == 5 ? "child exited 5\n" : "child failed\n");
        return 0;
    }
    return 64;
}
