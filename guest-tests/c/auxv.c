/* auxv: what the loader hands a new program: argc/argv/envp and the
 * auxiliary vector.
 *
 * Prints argc, the arguments (argv[0] only by basename), the number of
 * environment entries (never their values) and the auxv values that do not
 * depend on addresses or timing: AT_PAGESZ, AT_PHENT, AT_PHNUM, AT_HWCAP,
 * AT_HWCAP2, AT_CLKTCK, AT_SECURE, AT_UID/EUID/GID/EGID (as "same as
 * getuid()" etc.), AT_FLAGS, AT_BASE (0: no interpreter; for the
 * dynamically linked build, checked to be where ld.so is loaded), AT_PLATFORM.
 * Address-valued entries are checked, not printed: AT_ENTRY is _start,
 * AT_PHDR is this executable's program headers, AT_RANDOM points at 16
 * readable bytes, AT_EXECFN is argv[0]. Prints the auxv keys in order
 * (the kernel's set and order). Also checks the initial stack
 * layout (envp right after argv's NULL, auxv right after envp's NULL) and
 * that /proc/self/exe, /proc/self/cmdline, /proc/self/auxv and the task
 * name (comm) describe this program (cmdline also after the program rewrote argv[1]
 * in place, as setproctitle-style code does).
 */
#include "common.h"
#include <elf.h>
#include <link.h>
#include <libgen.h>
#include <limits.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <unistd.h>

extern char **environ;
extern const Elf64_Ehdr __ehdr_start;
extern void _start(void);

static int yes_no(int c) { return c ? 'y' : 'n'; }

/* The load address of the loaded object whose name contains "ld-linux". */
static int find_ld(struct dl_phdr_info *info, size_t size, void *data) {
    if (strstr(info->dlpi_name, "ld-linux") == NULL)
        return 0;
    *(unsigned long *)data = info->dlpi_addr;
    return 1;
}

int main(int argc, char **argv, char **envp) {
    printf("argc %d\n", argc);
    char *a0 = strdup(argv[0]);
    printf("argv[0] basename %s\n", basename(a0));
    for (int i = 1; i < argc; i++)
        printf("argv[%d] %s\n", i, argv[i]);
    CHECK(argv[argc] == NULL);
    int envc = 0;
    while (envp[envc])
        envc++;
    printf("envc %d\n", envc);
    printf("envp follows argv: %c\n", yes_no(envp == argv + argc + 1));
    printf("environ == envp: %c\n", yes_no(environ == envp));

    /* auxv follows envp's NULL */
    Elf64_auxv_t *av = (Elf64_auxv_t *)(envp + envc + 1);
    int n = 0, saw_null_terminator = 0;
    char keys[64 * 4] = "", *k = keys;
    for (; n < 64; n++) {
        k += sprintf(k, " %lu", (unsigned long)av[n].a_type);
        if (av[n].a_type == AT_NULL) {
            saw_null_terminator = 1;
            break;
        }
        if (av[n].a_type == AT_HWCAP)
            printf("AT_HWCAP (raw auxv) %#lx\n", av[n].a_un.a_val);
        else    /* glibc replaces AT_HWCAP with its own x86 bits; the rest match */
            CHECK(getauxval(av[n].a_type) == av[n].a_un.a_val);
    }
    printf("auxv keys in order:%s\n", keys);
    printf("auxv found after envp, terminated: %c\n", yes_no(saw_null_terminator));

    printf("AT_PAGESZ %lu\n", getauxval(AT_PAGESZ));
    printf("AT_PHENT %lu\n", getauxval(AT_PHENT));
    printf("AT_PHNUM %lu (ELF header says %u)\n", getauxval(AT_PHNUM), __ehdr_start.e_phnum);
    CHECK(getauxval(AT_PHNUM) == __ehdr_start.e_phnum);
    printf("getauxval(AT_HWCAP) %#lx\n", getauxval(AT_HWCAP));
    printf("AT_HWCAP2 %#lx\n", getauxval(AT_HWCAP2));
    printf("AT_CLKTCK %lu\n", getauxval(AT_CLKTCK));
    printf("AT_SECURE %lu\n", getauxval(AT_SECURE));
    printf("AT_FLAGS %lu\n", getauxval(AT_FLAGS));
    unsigned long at_base = getauxval(AT_BASE), ld = 0;
    if (at_base == 0) {
        printf("AT_BASE %lu\n", at_base);
    } else {
        dl_iterate_phdr(find_ld, &ld);
        printf("AT_BASE == ld.so's load address: %c\n", yes_no(at_base == ld));
    }
    printf("AT_UID == getuid: %c, AT_EUID == geteuid: %c, AT_GID == getgid: %c, AT_EGID == getegid: %c\n",
           yes_no(getauxval(AT_UID) == getuid()), yes_no(getauxval(AT_EUID) == geteuid()),
           yes_no(getauxval(AT_GID) == getgid()), yes_no(getauxval(AT_EGID) == getegid()));
    const char *plat = (const char *)getauxval(AT_PLATFORM);
    printf("AT_PLATFORM %s\n", plat ? plat : "(none)");

    printf("AT_ENTRY == _start: %c\n", yes_no(getauxval(AT_ENTRY) == (unsigned long)&_start));
    unsigned long phdr = (unsigned long)&__ehdr_start + __ehdr_start.e_phoff;
    printf("AT_PHDR == program headers of this executable: %c\n", yes_no(getauxval(AT_PHDR) == phdr));
    const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
    CHECK(rnd != NULL);
    unsigned sum = 0;
    for (int i = 0; i < 16; i++)
        sum += rnd[i];  /* readable; the bytes themselves are random */
    printf("AT_RANDOM non-null and 16 bytes readable: %c\n", yes_no(sum <= 16 * 255));
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    printf("AT_EXECFN == argv[0]: %c\n", yes_no(execfn && strcmp(execfn, argv[0]) == 0));

    /* /proc/self/exe names this program; comm is its basename (15 chars) */
    char exe[PATH_MAX], real[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(len > 0);
    exe[len] = 0;
    CHECK(realpath(argv[0], real) != NULL);
    printf("/proc/self/exe == realpath(argv[0]): %c\n", yes_no(strcmp(exe, real) == 0));
    char comm[17] = {0};
    CHECK(prctl(PR_GET_NAME, comm) == 0);
    char want[16] = {0};
    strncpy(want, basename(a0), 15);
    printf("comm == first 15 chars of basename(argv[0]): %c\n", yes_no(strcmp(comm, want) == 0));
    free(a0);

    /* /proc/self/cmdline: the argument strings, NUL-separated */
    char want_cmd[4096], got_cmd[4096];
    size_t wn = 0;
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]) + 1;
        CHECK(wn + l <= sizeof want_cmd);
        memcpy(want_cmd + wn, argv[i], l);
        wn += l;
    }
    for (int round = 0; round < 2; round++) {
        FILE *f = fopen("/proc/self/cmdline", "r");
        CHECK(f != NULL);
        size_t gn = fread(got_cmd, 1, sizeof got_cmd, f);
        fclose(f);
        printf("/proc/self/cmdline == argv%s: %c\n", round ? " (rewritten)" : "",
               yes_no(gn == wn && memcmp(got_cmd, want_cmd, wn) == 0));
        if (argc > 1 && argv[1][0]) {
            argv[1][0] = 'X';
            want_cmd[strlen(argv[0]) + 1] = 'X';
        }
    }

    /* /proc/self/auxv: the vector on the initial stack, AT_NULL included */
    size_t an = 0;
    while (av[an].a_type != AT_NULL) an++;
    an++;
    Elf64_auxv_t got_av[64];
    FILE *fa = fopen("/proc/self/auxv", "r");
    CHECK(fa != NULL);
    size_t gav = fread(got_av, 1, sizeof got_av, fa);
    fclose(fa);
    printf("/proc/self/auxv == the initial stack's auxv: %c\n",
           yes_no(gav == an * sizeof *av && memcmp(got_av, av, gav) == 0));
    puts("ok");
    return 0;
}
