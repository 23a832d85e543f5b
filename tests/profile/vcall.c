/* A loop calling through a table of three functions in turn (a hand-made
 * vtable): one indirect call site with three hot targets, each returning
 * to the same place. Argument: the iterations (default 1000000). */
#include <stdio.h>
#include <stdlib.h>

static long sq(long x) { return x * x; }
static long twice(long x) { return 2 * x; }
static long neg(long x) { return -x; }
/* volatile: each call loads its target, as a vtable call does. */
static long (*volatile fns[3])(long) = {sq, twice, neg};

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000, acc = 0;
    for (long i = 0; i < n; i++)
        acc += fns[i % 3](i & 0xff);
    printf("acc=%ld\n", acc);
    return 0;
}
