/* Compiled by tools/bench.list's gcc-c workload (issue 18: a compiler
   driver running cc1 and as, each a short-lived process). */
#include <stdio.h>

int main(void) {
    puts("hello");
    return 0;
}
