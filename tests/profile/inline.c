/* Code inlined two deep (tests/dump.rs): the summary and `dump` name
   where each piece was inlined, as addr2line -i does. */
#include <stdio.h>

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x) {
    return x * 2654435761u ^ (x >> 7);
}

static inline __attribute__((always_inline)) unsigned long twice(unsigned long x) {
    return mix(x) + mix(x + 1);
}

int main(void) {
    unsigned long s = 0;
    for (unsigned long i = 0; i < 3000000; i++)
        s += twice(i);
    printf("%lu\n", s);
    return 0;
}
