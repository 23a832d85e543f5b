/* selfmaps: the program's own /proc/self/maps, smaps and numa_maps show
 * its memory as the kernel would, and only its memory (under hotlift: not
 * hotlift's program, heap, code cache or ring).
 *
 * Checks that every maps line parses, lines are sorted and disjoint, main's
 * code is in an executable mapping, a local variable in [stack], grown brk
 * memory in [heap] (one line, grown in steps), a fresh anonymous mapping appears exactly (and is gone
 * after munmap), every file mapping's path exists, no memfd or hotlift
 * mapping is listed, smaps lists the same ranges with their sizes, and
 * pthread_getattr_np (which reads maps for the main thread) gives a stack
 * holding a local.
 */
#include "common.h"
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

struct map {
    unsigned long start, end;
    char perms[5];
    char path[256];
};

static int read_maps(const char *file, struct map *m, int max) {
    FILE *f = fopen(file, "r");
    CHECK(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strchr(line, ':') && !strchr(line, '-'))
            continue; /* smaps detail line */
        struct map x = {0};
        char path[256] = "";
        unsigned long off;
        int got = sscanf(line, "%lx-%lx %4s %lx %*s %*s %255s", &x.start, &x.end, x.perms, &off, path);
        if (got < 4)
            continue; /* smaps "Key: value" lines */
        strcpy(x.path, path);
        if (n < max)
            m[n++] = x;
    }
    fclose(f);
    return n;
}

static const struct map *find(const struct map *m, int n, unsigned long a) {
    for (int i = 0; i < n; i++)
        if (a >= m[i].start && a < m[i].end)
            return &m[i];
    return 0;
}

static struct map maps[4096], smaps[4096];

/* Every range as the kernel prints it, `%08lx-%08lx` (a non-PIE program
 * at 0x400000 reads 00400000-…). */
static int ranges_padded(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    int ok = 1;
    while (fgets(line, sizeof line, f)) {
        char *dash = strchr(line, '-'), *space = strchr(line, ' ');
        if (!dash || !space || dash - line < 8 || space - dash - 1 < 8)
            ok = 0;
    }
    fclose(f);
    return ok;
}

int main(void) {
    int local = 1;
    char *brk0 = sbrk(0);
    CHECK(sbrk(64 << 10) == brk0);
    brk0[0] = 1;
    /* Grown in steps, the heap is still one mapping. */
    for (int i = 0; i < 4; i++)
        CHECK(sbrk(64 << 10) != (void *)-1);
    char *anon = mmap(0, 5 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(anon != MAP_FAILED);
    CHECK(mprotect(anon + 4096, 4096, PROT_NONE) == 0);

    int n = read_maps("/proc/self/maps", maps, 4096);
    printf("maps parsed: %d\n", n > 5);
    int sorted = 1, foreign = 0, paths_ok = 1;
    for (int i = 0; i < n; i++) {
        if (maps[i].start >= maps[i].end || (i > 0 && maps[i].start < maps[i - 1].end))
            sorted = 0;
        if (strstr(maps[i].path, "hotlift") || strstr(maps[i].path, "memfd:"))
            foreign++;
        if (maps[i].path[0] == '/' && access(maps[i].path, F_OK) != 0)
            paths_ok = 0;
    }
    printf("sorted and disjoint: %d\n", sorted);
    printf("foreign mappings: %d\n", foreign);
    printf("file paths exist: %d\n", paths_ok);
    const struct map *code = find(maps, n, (unsigned long)&main);
    printf("main is in an executable mapping: %d\n", code && code->perms[2] == 'x');
    const struct map *st = find(maps, n, (unsigned long)&local);
    printf("a local is in [stack]: %d\n", st && strcmp(st->path, "[stack]") == 0);
    const struct map *hp = find(maps, n, (unsigned long)brk0);
    printf("brk memory is [heap]: %d\n", hp && strcmp(hp->path, "[heap]") == 0 && hp->perms[1] == 'w');
    int heap_lines = 0;
    for (int i = 0; i < n; i++)
        heap_lines += strcmp(maps[i].path, "[heap]") == 0;
    printf("[heap] lines: %d\n", heap_lines);
    printf("ranges padded to 8 digits: %d\n", ranges_padded());
    const struct map *a0 = find(maps, n, (unsigned long)anon);
    const struct map *a1 = find(maps, n, (unsigned long)anon + 4096);
    const struct map *a2 = find(maps, n, (unsigned long)anon + 2 * 4096);
    printf("anonymous mapping split in three: %d %d %d\n",
           a0 && a0->end == (unsigned long)anon + 4096 && strcmp(a0->perms, "rw-p") == 0,
           a1 && a1->start == (unsigned long)anon + 4096 && a1->end == (unsigned long)anon + 8192 &&
               strcmp(a1->perms, "---p") == 0,
           a2 && a2->start == (unsigned long)anon + 8192 && strcmp(a2->perms, "rw-p") == 0);

    int ns = read_maps("/proc/self/smaps", smaps, 4096);
    int same = ns > 0;
    /* smaps lists every maps range (the files are read at different
     * moments: stdio's buffer may have been mapped in between). */
    for (int i = 0; i < n && same; i++)
        if (!find(smaps, ns, maps[i].start))
            same = 0;
    printf("smaps lists the same mappings: %d\n", same);
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512], want[64];
    snprintf(want, sizeof want, "%lx-", (unsigned long)anon + 2 * 4096);
    int size_kb = -1, in = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, want, strlen(want)) == 0)
            in = 1;
        else if (in && sscanf(line, "Size: %d kB", &size_kb) == 1)
            break;
    }
    fclose(f);
    /* At least its three pages (the kernel may merge it with a neighbour). */
    printf("smaps size of the last part: %d\n", size_kb >= 12);
    f = fopen("/proc/self/numa_maps", "r");
    int numa_found = 0;
    snprintf(want, sizeof want, "%lx ", (unsigned long)anon);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, want, strlen(want)) == 0)
            numa_found = 1;
    if (f)
        fclose(f);
    printf("numa_maps lists the mapping: %d\n", numa_found || !f);

    CHECK(munmap(anon, 5 * 4096) == 0);
    n = read_maps("/proc/self/maps", maps, 4096);
    printf("gone after munmap: %d\n", !find(maps, n, (unsigned long)anon) && !find(maps, n, (unsigned long)anon + 8192));

    pthread_attr_t at;
    void *addr;
    size_t size;
    CHECK(pthread_getattr_np(pthread_self(), &at) == 0);
    CHECK(pthread_attr_getstack(&at, &addr, &size) == 0);
    printf("pthread_getattr_np stack holds a local: %d\n",
           (char *)&local >= (char *)addr && (char *)&local < (char *)addr + size);
    return 0;
}
