/* origin: the program's view of itself. It finds its library through its
 * RUNPATH $ORIGIN/lib (ld.so expands $ORIGIN from /proc/self/exe), finds a
 * resource file next to itself through readlink("/proc/self/exe"), opens
 * /proc/self/exe, and compares AT_EXECFN, argv[0] and the link. Natively
 * all of them name this program, and so must they under hotlift. Run
 * through ld.so (tests/dynlink.rs), they name ld.so, natively too. Its
 * count form ("count") leaves out /proc/PID/exe (see there). */
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

const char *hl_origin_greeting(void);

static const char *base(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int main(int argc, char **argv) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0);
    exe[n] = 0;
    printf("/proc/self/exe names %s\n", base(exe));

    /* The kernel truncates to the buffer, without a NUL. */
    char small[6] = "......";
    CHECK(readlink("/proc/self/exe", small, 5) == 5);
    CHECK(memcmp(small, exe, 5) == 0 && small[5] == '.');
    char at[PATH_MAX], pid[64];
    ssize_t m;
    /* Not in the count form: the pid's decimal digits (4 or 5 of them,
     * pid_max 32768 wraps often) change snprintf's instruction count
     * between the native run and hotlift's (tests/exact.rs). */
    if (!count_mode(argc, argv)) {
        snprintf(pid, sizeof pid, "/proc/%d/exe", (int)getpid());
        m = readlinkat(AT_FDCWD, pid, at, sizeof at - 1);
        CHECK(m == n && memcmp(at, exe, (size_t)n) == 0);
    }
    m = readlink("/proc/thread-self/exe", at, sizeof at - 1);
    CHECK(m == n && memcmp(at, exe, (size_t)n) == 0);

    /* Opening /proc/self/exe opens the program's file. */
    int fd = open("/proc/self/exe", O_RDONLY);
    CHECK(fd >= 0);
    unsigned char magic[4];
    CHECK(read(fd, magic, 4) == 4);
    struct stat a, b;
    CHECK(fstat(fd, &a) == 0 && stat(exe, &b) == 0);
    printf("it opens as an ELF file (%s), the same file: %s\n",
           memcmp(magic, "\177ELF", 4) == 0 ? "yes" : "no",
           a.st_ino == b.st_ino && a.st_dev == b.st_dev ? "yes" : "no");
    close(fd);

    const char *execfn = (const char *)getauxval(AT_EXECFN);
    printf("argv[0] names %s; AT_EXECFN names %s; equal: %s\n", base(argv[0]), base(execfn),
           strcmp(argv[0], execfn) == 0 ? "yes" : "no");
    char real[PATH_MAX];
    CHECK(realpath(argv[0], real) != NULL);
    printf("argv[0] resolves to /proc/self/exe: %s\n", strcmp(real, exe) == 0 ? "yes" : "no");

    /* A resource found next to the program, as programs find theirs. */
    char *slash = strrchr(exe, '/');
    CHECK(slash != NULL);
    *slash = 0;
    char res[PATH_MAX + 64];
    snprintf(res, sizeof res, "%s/share/hotlift-origin.txt", exe);
    FILE *f = fopen(res, "r");
    if (f) {
        char line[256] = "";
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
        printf("resource: %s", line);
    } else {
        printf("resource: not found (%s)\n", strerror(errno));
    }

    /* The library came from $ORIGIN/lib. */
    Dl_info info;
    CHECK(dladdr((void *)hl_origin_greeting, &info) != 0);
    size_t dl = strlen(exe);
    int beside = strncmp(info.dli_fname, exe, dl) == 0;
    printf("%s: loaded from %s%s\n", hl_origin_greeting(), beside ? "$ORIGIN" : "elsewhere: ",
           beside ? info.dli_fname + dl : base(info.dli_fname));
    return 0;
}
