/* regex: POSIX regular expressions from glibc (regcomp/regexec), both
 * basic and extended syntax, with subexpression offsets - a large state
 * machine with many indirect calls and data-dependent branches - and
 * fnmatch/glob-style matching.
 */
#include "common.h"
#include <fnmatch.h>
#include <regex.h>

static void try(const char *pattern, int flags, const char *text) {
    regex_t re;
    int rc = regcomp(&re, pattern, flags);
    if (rc != 0) {
        char err[128];
        regerror(rc, &re, err, sizeof err);
        printf("regcomp(%s) failed: %s\n", pattern, err);
        return;
    }
    regmatch_t m[4];
    rc = regexec(&re, text, 4, m, 0);
    printf("/%s/ on \"%s\": ", pattern, text);
    if (rc == REG_NOMATCH) {
        printf("no match\n");
    } else {
        for (int i = 0; i < 4 && m[i].rm_so >= 0; i++)
            printf("[%d] %d-%d \"%.*s\" ", i, (int)m[i].rm_so, (int)m[i].rm_eo,
                   (int)(m[i].rm_eo - m[i].rm_so), text + m[i].rm_so);
        printf("\n");
    }
    regfree(&re);
}

int main(int argc, char **argv) {
    /* "count": every regcomp costs 30,000-120,000 instructions, so only
       the basic-syntax, case-folding, class and error cases, and less
       generated text */
    int count = count_mode(argc, argv);
    if (!count) {
        try("([a-z]+)@([a-z]+)\\.com", REG_EXTENDED, "mail bob@example.com now");
        try("^([0-9]{3})-([0-9]{4})$", REG_EXTENDED, "555-1234");
        try("^([0-9]{3})-([0-9]{4})$", REG_EXTENDED, "555-12345");
    }
    try("a\\(b*\\)c", 0, "xxabbbbc");
    if (!count)
        try("(a|ab)(c|bcd)(d*)", REG_EXTENDED, "abcd");
    try("colou?r", REG_EXTENDED | REG_ICASE, "The COLOR red");
    try("[[:digit:]]+[[:space:]]*[[:alpha:]]+", REG_EXTENDED, "  42   apples");
    if (!count)
        try("(x+x+)+y", REG_EXTENDED, "xxxxxxxxxxxxxxxxxxxxy");
    try("[", REG_EXTENDED, "unbalanced");

    /* many matches over generated text */
    regex_t re;
    CHECK(regcomp(&re, "([a-f]+)([0-9]+)", REG_EXTENDED) == 0);
    char text[4096];
    size_t tlen = count ? 48 : sizeof text;
    rng_t r = {3};
    for (size_t i = 0; i < tlen - 1; i++) {
        uint64_t x = rng_next(&r) % 20;
        text[i] = x < 6 ? (char)('a' + x) : x < 16 ? (char)('0' + x - 6) : ' ';
    }
    text[tlen - 1] = 0;
    regmatch_t m[3];
    const char *p = text;
    int matches = 0;
    uint64_t h = FNV_INIT;
    while (regexec(&re, p, 3, m, 0) == 0) {
        matches++;
        h = fnv1a(p + m[0].rm_so, (size_t)(m[0].rm_eo - m[0].rm_so), h);
        p += m[0].rm_eo;
    }
    regfree(&re);
    printf("%d matches over generated text, digest %016llx\n", matches, (unsigned long long)h);

    const char *names[] = {"main.c", "Makefile", "guest_diff.rs", ".hidden", "a/b/c.S", "README.md"};
    const char *pats[] = {"*.c", "*.[cS]", "[A-Z]*", "*", "a/*/c.S", "*_*.rs"};
    for (int i = 0; i < 6; i++) {
        printf("%-8s:", pats[i]);
        for (int j = 0; j < 6; j++)
            if (fnmatch(pats[i], names[j], FNM_PERIOD) == 0)
                printf(" %s", names[j]);
        printf("\n");
    }
    puts("ok");
    return 0;
}
