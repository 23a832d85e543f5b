/* A loop that calls a small function on every iteration, the way `wc`
 * calls getc: each pass of its superblock calls and returns and ends in
 * the calling context it started in, so its passes can be counted
 * instead of pushed (contract I2). Argument: characters (default
 * 1000000). */
#include <stdio.h>
#include <stdlib.h>

struct src {
    const unsigned char *p, *end;
};

__attribute__((noinline)) static int next(struct src *s) {
    return s->p < s->end ? *s->p++ : -1;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    unsigned char *buf = malloc(n);
    for (long i = 0; i < n; i++)
        buf[i] = "ab cd\nef "[i % 9];
    struct src s = {buf, buf + n};
    long words = 0, lines = 0, chars = 0;
    int in = 0, c;
    while ((c = next(&s)) != -1) {
        chars++;
        if (c == '\n')
            lines++;
        if (c == ' ' || c == '\n')
            in = 0;
        else if (!in) {
            in = 1;
            words++;
        }
    }
    printf("%ld %ld %ld\n", lines, words, chars);
    return 0;
}
