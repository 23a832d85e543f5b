/* qsort: qsort and bsearch through function pointers, plus a table of
 * function pointers (a hand-made vtable) called in a loop.
 *
 * Sorts ints, doubles, strings and structs with several comparators
 * (including a stable-by-index one), checks the order, then looks every
 * element up again with bsearch and looks up values that are absent.
 */
#include "common.h"

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int cmp_int_desc(const void *a, const void *b) { return cmp_int(b, a); }
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct rec { int key; int index; char name[12]; };
static int cmp_rec(const void *a, const void *b) {
    const struct rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index - y->index;
}

/* a vtable of shapes */
struct shape;
struct shape_ops {
    const char *name;
    long (*area)(const struct shape *);
    long (*perimeter)(const struct shape *);
};
struct shape { const struct shape_ops *ops; long a, b; };
static long rect_area(const struct shape *s) { return s->a * s->b; }
static long rect_perim(const struct shape *s) { return 2 * (s->a + s->b); }
static long sq_area(const struct shape *s) { return s->a * s->a; }
static long sq_perim(const struct shape *s) { return 4 * s->a; }
static long tri_area(const struct shape *s) { return s->a * s->b / 2; }
static long tri_perim(const struct shape *s) { return s->a + s->b + (s->a > s->b ? s->a : s->b); }
static const struct shape_ops ops[] = {
    {"rect", rect_area, rect_perim},
    {"square", sq_area, sq_perim},
    {"triangle", tri_area, tri_perim},
};

int main(int argc, char **argv) {
    enum { N = 5000 };
    static int ints[N];
    static double dbls[N];
    static struct rec recs[N];
    static char names[N][12];
    static char *strs[N];
    /* "count": 60 elements, fewer probes and calls */
    int count = count_mode(argc, argv);
    int n = count ? 60 : N;
    rng_t r = {42};
    for (int i = 0; i < n; i++) {
        ints[i] = (int)(rng_next(&r) % 100000) - 50000;
        dbls[i] = (double)(int64_t)rng_next(&r) / 1e12;
        snprintf(names[i], sizeof names[i], "n%08x", (unsigned)rng_next(&r));
        strs[i] = names[i];
        recs[i].key = (int)(rng_next(&r) % 100);
        recs[i].index = i;
        memcpy(recs[i].name, names[i], 12);
    }
    qsort(ints, n, sizeof ints[0], cmp_int);
    for (int i = 1; i < n; i++)
        CHECK(ints[i - 1] <= ints[i]);
    printf("ints sorted: min %d median %d max %d\n", ints[0], ints[n / 2], ints[n - 1]);
    int found = 0, absent = 0;
    for (int i = 0; i < n; i++)
        found += bsearch(&ints[i], ints, n, sizeof ints[0], cmp_int) != NULL;
    for (int v = -60000; v < 60000; v += count ? 1501 : 7)
        absent += bsearch(&v, ints, n, sizeof ints[0], cmp_int) == NULL;
    printf("bsearch found %d of %d, %d probes absent\n", found, n, absent);
    CHECK(found == n);
    qsort(ints, n, sizeof ints[0], cmp_int_desc);
    CHECK(ints[0] >= ints[n - 1]);
    printf("descending: first %d last %d\n", ints[0], ints[n - 1]);

    qsort(dbls, n, sizeof dbls[0], cmp_double);
    for (int i = 1; i < n; i++)
        CHECK(dbls[i - 1] <= dbls[i]);
    printf("doubles sorted: min %.6f max %.6f\n", dbls[0], dbls[n - 1]);

    qsort(strs, n, sizeof strs[0], cmp_str);
    for (int i = 1; i < n; i++)
        CHECK(strcmp(strs[i - 1], strs[i]) <= 0);
    printf("strings sorted: first %s last %s\n", strs[0], strs[n - 1]);
    char *key = strs[n * 1234 / N];
    char **hit = bsearch(&key, strs, n, sizeof strs[0], cmp_str);
    CHECK(hit && strcmp(*hit, key) == 0);

    qsort(recs, n, sizeof recs[0], cmp_rec);
    uint64_t h = FNV_INIT;
    for (int i = 0; i < n; i++) {
        if (i)
            CHECK(recs[i - 1].key < recs[i].key ||
                  (recs[i - 1].key == recs[i].key && recs[i - 1].index < recs[i].index));
        h = fnv1a(&recs[i].index, sizeof recs[i].index, h);
    }
    printf("records sorted by (key, index): digest %016llx\n", (unsigned long long)h);

    long total_area = 0, total_perim = 0;
    long rounds = bench_mode(argc, argv) ? 50000000 : count ? 100 : 20000;
    struct shape shapes[3] = {{&ops[0], 3, 4}, {&ops[1], 5, 0}, {&ops[2], 6, 8}};
    for (long i = 0; i < rounds; i++) {
        const struct shape *s = &shapes[i % 3];
        total_area += s->ops->area(s);
        total_perim += s->ops->perimeter(s);
    }
    for (int i = 0; i < 3; i++)
        printf("%s: area %ld perimeter %ld\n", shapes[i].ops->name, shapes[i].ops->area(&shapes[i]),
               shapes[i].ops->perimeter(&shapes[i]));
    printf("virtual calls: total area %ld total perimeter %ld\n", total_area, total_perim);
    puts("ok");
    return 0;
}
