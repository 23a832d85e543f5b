/* mlockall (tests/hostile/privileges.rs): locks the guest's memory, now
 * and (MCL_FUTURE) a 16 MiB mapping made after, never hotlift's; prints
 * VmLck (KiB) after each step, then after munlockall; and EINVAL for bad
 * flags. Passed through, hotlift's own code cache, rings and tables were
 * locked too (gigabytes resident). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static long vmlck(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmLck: %ld", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

int main(void) {
    printf("bad flags: %s\n", mlockall(0) != 0 && errno == EINVAL ? "EINVAL" : "accepted");
    printf("onfault alone: %s\n",
           mlockall(MCL_ONFAULT) != 0 && errno == EINVAL ? "EINVAL" : "accepted");
    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
        printf("mlockall: %s\n", strerror(errno));
        return 3;
    }
    printf("locked %ld\n", vmlck());
    void *p = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 4;
    printf("after mmap %ld\n", vmlck());
    munlockall();
    printf("unlocked %ld\n", vmlck());
    return 0;
}
