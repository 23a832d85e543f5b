/* JIT code in a page the program maps writable and executable (W^X,
 * tests/hostile.rs): it runs, is rewritten and runs again, and the
 * program's own maps shows the page as it asked (rwxp); then it waits
 * for stdin to close, so the test can read the real maps from outside.
 * With "rie" it asks for read and write only, after
 * personality(READ_IMPLIES_EXEC), which makes the kernel add execute to
 * every readable mapping made from then on. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int prot = PROT_READ | PROT_WRITE | PROT_EXEC;
    if (argc > 1 && strcmp(argv[1], "rie") == 0) {
        if (personality(READ_IMPLIES_EXEC) == -1 || !(personality(0xffffffff) & READ_IMPLIES_EXEC))
            return 3;
        prot = PROT_READ | PROT_WRITE;
    }
    unsigned char *p = mmap(0, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char code[] = {0xb8, 42, 0, 0, 0, 0xc3}; /* mov eax, 42; ret */
    memcpy(p, code, sizeof code);
    int r = ((int (*)(void))p)();
    p[1] = 43;
    r += ((int (*)(void))p)();
    char want[32], line[512];
    snprintf(want, sizeof want, "%lx-", (unsigned long)p);
    FILE *f = fopen("/proc/self/maps", "r");
    int shown = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, want, strlen(want)) == 0 && strstr(line, " rwxp "))
            shown = 1;
    fclose(f);
    printf("%d %d\n", r, shown);
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
