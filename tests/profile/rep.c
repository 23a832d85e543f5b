#include <stdio.h>

static char a[4096], b[4096];

int main(void)
{
    unsigned long s = 0;
    for (int i = 0; i < 300; i++) {
        char *d = b, *src = a;
        unsigned long n = 1000 + i;
        __asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory"); /* the copy */
        s += b[i];
    }
    printf("%lu\n", s);
    return 0;
}
