/* vdso: the vDSO is the program's to protect and unmap (hotlift calls it
 * too, so it must keep its own): time() through a vDSO made
 * PROT_NONE faults (SIGSEGV, caught), works again once it is r-x again,
 * and faults for good once the vDSO is unmapped; the program's view of
 * its maps loses the line. time(), not clock_gettime(): the vDSO answers
 * it without a retry loop, so the instruction count is the same each run.
 */
#include "common.h"
#include <setjmp.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>

static sigjmp_buf back;

static void on_segv(int sig) {
    (void)sig;
    siglongjmp(back, 1);
}

static int time_faults(void) {
    if (sigsetjmp(back, 1))
        return 1;
    CHECK(time(NULL) > 0);
    return 0;
}

static int maps_show_vdso(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    int seen = 0;
    while (fgets(line, sizeof line, f))
        seen |= strstr(line, "[vdso]") != NULL;
    fclose(f);
    return seen;
}

int main(void) {
    unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
    CHECK(vdso != 0);
    /* Its size: the maps line. */
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    unsigned long s = 0, e = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "[vdso]"))
            CHECK(sscanf(line, "%lx-%lx", &s, &e) == 2);
    fclose(f);
    CHECK(s == vdso && e > s);
    CHECK(signal(SIGSEGV, on_segv) != SIG_ERR);

    printf("before: time() faults %d, maps show it %d\n", time_faults(), maps_show_vdso());
    CHECK(mprotect((void *)s, e - s, PROT_NONE) == 0);
    printf("PROT_NONE: time() faults %d\n", time_faults());
    CHECK(mprotect((void *)s, e - s, PROT_READ | PROT_EXEC) == 0);
    printf("r-x again: time() faults %d\n", time_faults());
    CHECK(munmap((void *)s, e - s) == 0);
    printf("unmapped: time() faults %d, maps show it %d\n", time_faults(), maps_show_vdso());
    return 0;
}
