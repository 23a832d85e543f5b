/* mmap-reuse: address space a program gives back is still free when it
 * asks for it again, however much memory the translator maps meanwhile.
 *
 * Natively nothing else in the process maps memory behind the program's
 * back, so a range it unmapped, moved away from or shrank stays free, and
 * mmap(NULL) of the same size returns it again (the kernel's top-down
 * search finds the same highest gap). Under a translator, its own threads
 * map memory at any time (rings and stacks for new guest threads, the
 * monitor's tables), and those must not land in the guest's holes. Between
 * giving a range back and asking for it again, the test starts threads:
 * one beforehand puts glibc's thread stack in its cache, so the later ones
 * map nothing natively (their stack is reused), but each one makes
 * hotlift map a ring and a host stack.
 *   1. munmap, then mmap(NULL) of the same size returns the same range;
 *   2. munmap, then MAP_FIXED_NOREPLACE at the same range succeeds;
 *   3. mremap(MREMAP_MAYMOVE) growing: the range moved away from is free;
 *   4. mremap shrinking: the tail given back is free;
 *   5. MAP_FIXED over a range partly mapped, partly given back.
 */
#include "common.h"
#include <pthread.h>
#include <sys/mman.h>

#define MIB (1ul << 20)
#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)

static void *work(void *arg) {
    volatile long s = (long)arg;
    for (long i = 0; i < 1000; i++)
        s += i;
    return NULL;
}

/* Start and join n threads, one after the other. */
static void threads(int n) {
    for (int i = 0; i < n; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, work, (void *)(long)i) == 0);
        CHECK(pthread_join(t, NULL) == 0);
    }
}

static char *map_at(void *at, size_t len, int flags) {
    char *p = mmap(at, len, RW, ANON | flags, -1, 0);
    CHECK(p != MAP_FAILED);
    return p;
}

/* One byte of every page of [p, p+len) is c. */
static void fill(char *p, size_t len, char c) {
    for (size_t i = 0; i < len; i += 4096)
        p[i] = c;
}

/* One byte of every page of [p, p+len) is c. */
static int filled(const char *p, size_t len, char c) {
    for (size_t i = 0; i < len; i += 4096)
        if (p[i] != c)
            return 0;
    return 1;
}

int main(void) {
    threads(1);
    size_t len = 32 * MIB;

    /* 1 */
    char *p = map_at(NULL, len, 0);
    fill(p, len, 1);
    CHECK(munmap(p, len) == 0);
    threads(4);
    char *q = map_at(NULL, len, 0);
    printf("1. mmap(NULL) after munmap: %s\n", q == p ? "the same range" : "elsewhere");
    CHECK(q == p && filled(q, len, 0));

    /* 2 */
    CHECK(munmap(q, len) == 0);
    threads(4);
    q = mmap(p, len, RW, ANON | MAP_FIXED_NOREPLACE, -1, 0);
    printf("2. MAP_FIXED_NOREPLACE after munmap: %s\n", q == p ? "mapped" : "refused");
    CHECK(q == p);

    /* 3 */
    fill(q, len, 3);
    char *r = mremap(q, len, 2 * len, MREMAP_MAYMOVE);
    CHECK(r != MAP_FAILED && r != q);
    CHECK(filled(r, len, 3) && filled(r + len, len, 0));
    threads(4);
    q = mmap(p, len, RW, ANON | MAP_FIXED_NOREPLACE, -1, 0);
    printf("3. the range mremap moved away from: %s\n", q == p ? "free" : "taken");
    CHECK(q == p && filled(q, len, 0));
    CHECK(munmap(q, len) == 0);

    /* 4 */
    char *s = mremap(r, 2 * len, len, 0);
    CHECK(s == r && filled(s, len, 3));
    threads(4);
    q = mmap(r + len, len, RW, ANON | MAP_FIXED_NOREPLACE, -1, 0);
    printf("4. the tail a shrinking mremap gave back: %s\n", q == r + len ? "free" : "taken");
    CHECK(q == r + len && filled(q, len, 0));

    /* 5 */
    CHECK(munmap(r, len) == 0);
    threads(4);
    q = map_at(r + len / 2, len, MAP_FIXED);
    CHECK(q == r + len / 2 && filled(q, len, 0));
    CHECK(filled(r + len + len / 2, len / 2, 0));
    printf("5. MAP_FIXED over a range partly given back: mapped\n");
    CHECK(munmap(r + len / 2, len + len / 2) == 0);

    puts("ok");
    return 0;
}
