/* malloc: a malloc/free/realloc/calloc workout.
 *
 * 200,000 operations on a pool of 4,096 slots with sizes from 1 byte to
 * 64 KiB (and now and then 1-8 MiB, above the mmap threshold), each block
 * filled with a pattern derived from its slot and size and verified before
 * it is freed or resized; realloc must keep the common prefix; calloc must
 * return zeroed memory; aligned_alloc/posix_memalign must honour alignment.
 * Only counts and digests are printed. "count": 30 operations on 16 slots
 * (so blocks are freed and resized too), smaller alignments and a shorter
 * realloc growth.
 */
#include <malloc.h>
#include "common.h"

#define SLOTS 4096

static unsigned char *slot_ptr[SLOTS];
static size_t slot_len[SLOTS];
static unsigned slot_tag[SLOTS];

/* Large blocks are filled and checked at their first and last 256 bytes and
   every 251st byte, which keeps the test fast and still catches a block
   that was moved or overlapped. */
static inline int sampled(size_t i, size_t n) {
    return n <= 512 || i < 256 || i >= n - 256 || i % 251 == 0;
}

static inline unsigned char pattern(unsigned tag, size_t i) {
    return (unsigned char)(tag * 31 + i * 7 + (i >> 8));
}

static void fill(unsigned char *p, size_t n, unsigned tag) {
    size_t i = 0;
    while (i < n) {
        if (sampled(i, n)) {
            p[i] = pattern(tag, i);
            i++;
        } else {
            size_t next = i + 251 - i % 251;
            i = next < n - 256 ? next : n - 256;
        }
    }
}

/* Checks the bytes fill() wrote for a block of length n, up to keep. */
static int verify_prefix(const unsigned char *p, size_t n, size_t keep, unsigned tag) {
    size_t i = 0;
    while (i < keep) {
        if (sampled(i, n)) {
            if (p[i] != pattern(tag, i))
                return 0;
            i++;
        } else {
            size_t next = i + 251 - i % 251;
            i = next < n - 256 ? next : n - 256;
        }
    }
    return 1;
}
#define verify(p, n, tag) verify_prefix(p, n, n, tag)

static size_t pick_size(rng_t *r) {
    uint64_t x = rng_next(r);
    switch (x % 16) {
    case 0: return 1 + (x >> 8) % 16;
    case 1: return (size_t)1 << 20 << ((x >> 8) % 4);   /* 1..8 MiB: mmap */
    case 2: case 3: return 1 + (x >> 8) % 65536;
    default: return 1 + (x >> 8) % 512;
    }
}

int main(int argc, char **argv) {
    rng_t r = {0x1234567887654321ULL};
    int count = count_mode(argc, argv);
    long ops = bench_mode(argc, argv) ? 300000 : count ? 30 : 4000;
    unsigned slots = count ? 16 : SLOTS;
    long mallocs = 0, frees = 0, reallocs = 0, callocs = 0, big = 0;
    uint64_t digest = FNV_INIT;
    for (long op = 0; op < ops; op++) {
        uint64_t x = rng_next(&r);
        unsigned s = x % slots;
        unsigned kind = (x >> 20) % 8;
        if (slot_ptr[s] == NULL) {
            size_t n = pick_size(&r);
            if ((n >> 20) != 0) {
                /* keep big blocks rare */
                if ((x >> 40) % 64 != 0)
                    n = 100;
                else
                    big++;
            }
            if (kind == 0) {
                slot_ptr[s] = calloc(n, 1);
                CHECK(slot_ptr[s] != NULL);
                for (size_t i = 0; i < n; i += 97)
                    CHECK(slot_ptr[s][i] == 0);
                CHECK(slot_ptr[s][n - 1] == 0);
                callocs++;
            } else {
                slot_ptr[s] = malloc(n);
                CHECK(slot_ptr[s] != NULL);
                mallocs++;
            }
            slot_len[s] = n;
            slot_tag[s] = (unsigned)op;
            fill(slot_ptr[s], n, slot_tag[s]);
        } else if (kind < 5) {
            CHECK(verify(slot_ptr[s], slot_len[s], slot_tag[s]));
            digest = fnv1a(slot_ptr[s], slot_len[s] < 64 ? slot_len[s] : 64, digest);
            free(slot_ptr[s]);
            slot_ptr[s] = NULL;
            frees++;
        } else {
            size_t n = pick_size(&r);
            if ((n >> 20) != 0 && (x >> 40) % 64 != 0)
                n = 200;
            unsigned char *q = realloc(slot_ptr[s], n);
            CHECK(q != NULL);
            size_t keep = n < slot_len[s] ? n : slot_len[s];
            CHECK(verify_prefix(q, slot_len[s], keep, slot_tag[s]));
            slot_ptr[s] = q;
            slot_len[s] = n;
            slot_tag[s] = (unsigned)op;
            fill(q, n, slot_tag[s]);
            reallocs++;
        }
    }
    long live = 0;
    for (unsigned s = 0; s < SLOTS; s++) {
        if (slot_ptr[s]) {
            CHECK(verify(slot_ptr[s], slot_len[s], slot_tag[s]));
            free(slot_ptr[s]);
            live++;
        }
    }
    printf("mallocs %ld callocs %ld reallocs %ld frees %ld big %ld live-at-end %ld\n",
           mallocs, callocs, reallocs, frees, big, live);
    printf("digest %016llx\n", (unsigned long long)digest);

    /* alignment */
    size_t max_align = count ? 1024 : 65536;
    for (size_t a = 16; a <= max_align; a *= 4) {
        void *p = aligned_alloc(a, a * 3);
        CHECK(p != NULL && ((uintptr_t)p & (a - 1)) == 0);
        memset(p, 0xab, a * 3);
        free(p);
        void *q = NULL;
        CHECK(posix_memalign(&q, a, 100) == 0 && ((uintptr_t)q & (a - 1)) == 0);
        free(q);
    }
    printf("aligned_alloc/posix_memalign honour 16..%zu\n", max_align);

    /* a block that grows by realloc one byte at a time */
    unsigned char *g = NULL;
    size_t grow = count ? 300 : 5000;
    for (size_t n = 1; n <= grow; n++) {
        g = realloc(g, n);
        CHECK(g != NULL);
        g[n - 1] = (unsigned char)n;
    }
    for (size_t n = 1; n <= grow; n++)
        CHECK(g[n - 1] == (unsigned char)n);
    free(g);
    printf("realloc growth by one byte keeps contents\n");

    /* malloc(0) and free(NULL) */
    void *z = malloc(0);
    printf("malloc(0) is %s\n", z ? "non-null" : "null");
    free(z);
    free(NULL);
    puts("ok");
    return 0;
}
