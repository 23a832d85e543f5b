/* wordfreq: string processing - split text into words, lower-case them,
 * count them in an open-addressing hash table, sort by frequency and print
 * the top 15. With "-" it reads stdin; otherwise it generates text from a
 * fixed vocabulary. Short form: 100 KB generated. "bench": 30 MB.
 * "count": 512 bytes.
 */
#include <ctype.h>
#include "common.h"

struct entry { char *word; long count; };
static struct entry *table;
static size_t cap, used;

static uint64_t hash_word(const char *s, size_t n) { return fnv1a(s, n, FNV_INIT); }

static void grow(void);
static void add_word(const char *w, size_t n) {
    if (used * 2 >= cap)
        grow();
    size_t i = hash_word(w, n) & (cap - 1);
    while (table[i].word) {
        if (strlen(table[i].word) == n && memcmp(table[i].word, w, n) == 0) {
            table[i].count++;
            return;
        }
        i = (i + 1) & (cap - 1);
    }
    table[i].word = strndup(w, n);
    table[i].count = 1;
    used++;
}

static void grow(void) {
    struct entry *old = table;
    size_t oldcap = cap;
    cap = cap ? cap * 2 : 1024;
    table = calloc(cap, sizeof *table);
    CHECK(table != NULL);
    used = 0;
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].word) {
            size_t j = hash_word(old[i].word, strlen(old[i].word)) & (cap - 1);
            while (table[j].word)
                j = (j + 1) & (cap - 1);
            table[j] = old[i];
            used++;
        }
    }
    free(old);
}

static int by_count(const void *a, const void *b) {
    const struct entry *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->word, y->word);
}

static long process(const char *text, size_t len) {
    char word[64];
    size_t n = 0;
    long words = 0;
    for (size_t i = 0; i <= len; i++) {
        unsigned char ch = i < len ? (unsigned char)text[i] : ' ';
        if (isalpha(ch) || (n > 0 && ch == '\'')) {
            if (n < sizeof word)
                word[n++] = (char)tolower(ch);
        } else if (n > 0) {
            add_word(word, n);
            words++;
            n = 0;
        }
    }
    return words;
}

static const char *vocab[] = {
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "translation", "block", "cache",
    "register", "flag", "branch", "indirect", "return", "address", "guest", "host", "native", "oracle",
    "byte", "for", "and", "of", "to", "in", "is", "it", "that", "Signal", "Syscall", "Trace", "Profile",
};

int main(int argc, char **argv) {
    char *text;
    size_t len = 0;
    if (argc > 1 && strcmp(argv[1], "-") == 0) {
        size_t cap_text = 1 << 16;
        text = malloc(cap_text);
        size_t got;
        while ((got = fread(text + len, 1, cap_text - len, stdin)) > 0) {
            len += got;
            if (len == cap_text)
                text = realloc(text, cap_text *= 2);
        }
        printf("read %zu bytes from stdin\n", len);
    } else {
        size_t want = bench_mode(argc, argv) ? (30u << 20) : count_mode(argc, argv) ? 512 : (100u << 10);
        text = malloc(want + 64);
        rng_t r = {11};
        const size_t nv = sizeof vocab / sizeof vocab[0];
        while (len < want) {
            uint64_t x = rng_next(&r);
            /* a skewed distribution: low indices are frequent */
            size_t k = (size_t)((x % nv) * ((x >> 32) % nv) / nv);
            const char *w = vocab[k];
            size_t wl = strlen(w);
            memcpy(text + len, w, wl);
            len += wl;
            text[len++] = (x >> 20) % 11 == 0 ? '\n' : ((x >> 24) % 7 == 0 ? ',' : ' ');
        }
        printf("generated %zu bytes\n", len);
    }
    long words = process(text, len);
    struct entry *list = malloc(sizeof *list * (used ? used : 1));
    size_t k = 0;
    for (size_t i = 0; i < cap; i++)
        if (table[i].word)
            list[k++] = table[i];
    qsort(list, k, sizeof *list, by_count);
    printf("%ld words, %zu distinct\n", words, k);
    for (size_t i = 0; i < k && i < 15; i++)
        printf("%8ld %s\n", list[i].count, list[i].word);
    puts("ok");
    return 0;
}
