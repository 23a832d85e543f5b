/* strings: glibc's string and memory functions over many lengths and
 * alignments, checked against simple byte loops.
 *
 * glibc selects AVX2 or EVEX (AVX-512) versions of these at start-up
 * through ifuncs and CPUID; they read past the end of strings within a
 * page, use masked loads near page ends, and rely on vzeroupper. Buffers
 * are placed so that strings end right before an inaccessible page, which
 * is where those implementations are most delicate. "count": lengths 0,
 * 1, 3, 7, ..., 127 at three alignments, and 9 KiB instead of 1 MiB for
 * the large copies (above glibc's rep movsb threshold on CPUs with fast
 * short rep movsb, 2,112 bytes), with a digest of its first 256 bytes.
 */
#include "common.h"
#include <sys/mman.h>
#include <unistd.h>

static size_t ref_strlen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }
static int sgn(int x) { return (x > 0) - (x < 0); }
static int ref_memcmp(const unsigned char *a, const unsigned char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}
static int ref_strcmp(const unsigned char *a, const unsigned char *b) {
    for (;; a++, b++) {
        if (*a != *b) return *a < *b ? -1 : 1;
        if (!*a) return 0;
    }
}
static int ref_strncmp(const unsigned char *a, const unsigned char *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
        if (!a[i]) return 0;
    }
    return 0;
}
static const char *ref_strchr(const char *s, int c) {
    for (;; s++) {
        if (*s == (char)c) return s;
        if (!*s) return NULL;
    }
}
static const char *ref_strrchr(const char *s, int c) {
    const char *r = NULL;
    for (;; s++) {
        if (*s == (char)c) r = s;
        if (!*s) return r;
    }
}
static const char *ref_strstr(const char *h, const char *n) {
    size_t ln = ref_strlen(n);
    for (; *h; h++)
        if (strncmp(h, n, ln) == 0) return h;
    return ln == 0 ? h : NULL;
}

static long checks;
#define EXPECT(c) do { checks++; CHECK(c); } while (0)

int main(int argc, char **argv) {
    int count = count_mode(argc, argv);
    long page = sysconf(_SC_PAGESIZE);
    /* two pages: the second is inaccessible */
    unsigned char *region = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(region != MAP_FAILED);
    CHECK(mprotect(region + page, page, PROT_NONE) == 0);
    unsigned char *end = region + page;
    static unsigned char a[1200], b[1200], c[1200];

    for (size_t len = 0; len <= 160; len += count ? len + 1 : 1) {
        for (size_t align = 0; align < 64; align += count ? 29 : (len < 40 ? 1 : 13)) {
            /* strlen/strchr/strrchr on a string ending at the page end */
            char *s = (char *)end - len - 1;
            for (size_t i = 0; i < len; i++)
                s[i] = (char)('a' + (i * 7 + align) % 26);
            s[len] = 0;
            EXPECT(strlen(s) == len);
            EXPECT(strchr(s, 'q') == ref_strchr(s, 'q'));
            EXPECT(strchr(s, 0) == s + len);
            EXPECT(strrchr(s, 'e') == ref_strrchr(s, 'e'));
            EXPECT(memchr(s, 'z', len) == (len ? (void *)ref_strchr(s, 'z') : NULL) ||
                   (ref_strchr(s, 'z') == NULL && memchr(s, 'z', len) == NULL));
            EXPECT(strnlen(s, len + 5) == len);
            EXPECT(rawmemchr(s, 0) == s + len);

            /* memcpy/memmove/memset/memcmp at this alignment */
            unsigned char *src = a + align, *dst = b + (align * 5) % 64;
            for (size_t i = 0; i < len; i++)
                src[i] = (unsigned char)(i * 13 + len);
            memset(b, 0x55, sizeof b);
            memcpy(dst, src, len);
            EXPECT(ref_memcmp(dst, src, len) == 0);
            EXPECT(dst[len] == 0x55 && (dst == b || dst[-1] == 0x55));
            EXPECT(memcmp(dst, src, len) == 0);
            if (len) {
                dst[len / 2] ^= 0x80;
                EXPECT(sgn(memcmp(dst, src, len)) == ref_memcmp(dst, src, len));
                EXPECT(sgn(memcmp(src, dst, len)) == ref_memcmp(src, dst, len));
            }
            memset(dst, (int)len, len);
            for (size_t i = 0; i < len; i++)
                EXPECT(dst[i] == (unsigned char)len);
            /* overlapping memmove both ways */
            for (size_t i = 0; i < len + 32; i++)
                c[i] = (unsigned char)i;
            memmove(c + 7, c, len);
            for (size_t i = 0; i < len; i++)
                EXPECT(c[i + 7] == (unsigned char)i);
            for (size_t i = 0; i < len + 32; i++)
                c[i] = (unsigned char)i;
            memmove(c, c + 9, len);
            for (size_t i = 0; i < len; i++)
                EXPECT(c[i] == (unsigned char)(i + 9));

            /* strcmp/strncmp: strings ending at the page end */
            char *t = (char *)b + align;
            memcpy(t, s, len + 1);
            EXPECT(strcmp(s, t) == 0);
            EXPECT(strncmp(s, t, len + 10) == 0);
            if (len) {
                t[len - 1] = 'A';
                EXPECT(sgn(strcmp(s, t)) == ref_strcmp((unsigned char *)s, (unsigned char *)t));
                EXPECT(sgn(strcmp(t, s)) == ref_strcmp((unsigned char *)t, (unsigned char *)s));
                EXPECT(sgn(strncmp(s, t, len - 1)) == 0);
                EXPECT(sgn(strncmp(s, t, len)) == ref_strncmp((unsigned char *)s, (unsigned char *)t, len));
                t[len - 1] = (char)0xff;   /* signedness: compared as unsigned char */
                EXPECT(sgn(strcmp(s, t)) == -1);
            }
            /* strstr with a needle taken from the middle */
            if (len > 8) {
                char needle[9];
                memcpy(needle, s + len / 2, 4);
                needle[4] = 0;
                EXPECT(strstr(s, needle) == ref_strstr(s, needle));
                needle[3] = '#';
                EXPECT(strstr(s, needle) == NULL);
            }
            /* strcpy / strcat / stpcpy */
            char *d = (char *)c + align;
            strcpy(d, s);
            EXPECT(strcmp(d, s) == 0);
            char *e = stpcpy(d, s);
            EXPECT(e == d + len);
            strcat(d, "xyz");
            EXPECT(strlen(d) == len + 3);
        }
    }
    printf("string/memory checks passed: %ld\n", checks);

    /* large copies (rep movsb and the unrolled vector loops) */
    size_t big = count ? 9u << 10 : 1u << 20;
    unsigned char *p = malloc(big), *q = malloc(big);
    CHECK(p && q);
    for (size_t i = 0; i < big; i++)
        p[i] = (unsigned char)(i * 2654435761u >> 13);
    memcpy(q, p, big);
    CHECK(memcmp(p, q, big) == 0);
    memmove(q + 1, q, big - 1);
    CHECK(q[1] == p[0] && q[big - 1] == p[big - 2]);
    memset(q, 0, big);
    CHECK(q[big / 2] == 0 && q[big - 1] == 0);
    printf("%zu KiB memcpy/memcmp/memmove/memset ok, digest %016llx\n", big >> 10,
           (unsigned long long)fnv1a(p, count ? 256 : big, FNV_INIT));
    free(p);
    free(q);

    /* the classic helpers */
    char buf[64] = "The Quick Brown Fox";
    printf("strspn %zu strcspn %zu strpbrk %s\n", strspn(buf, "ThQe "), strcspn(buf, "xyz"),
           strpbrk(buf, "kw"));
    char *save, *tok;
    char list[] = "a,bb,,ccc,dddd";
    int ntok = 0;
    for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        printf("token %d: %s\n", ntok++, tok);
    printf("strcasecmp %d strncasecmp %d\n", sgn(strcasecmp("HeLLo", "hello")),
           sgn(strncasecmp("abcD", "ABCe", 4)));
    char *dup = strdup(buf);
    printf("strdup %s, strndup %s\n", dup, strndup(buf, 9));
    free(dup);
    printf("memmem %s\n", (char *)memmem(buf, strlen(buf), "Brown", 5));
    puts("ok");
    return 0;
}
