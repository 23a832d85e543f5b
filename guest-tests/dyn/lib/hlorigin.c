/* libhlorigin.so: dyn/origin.c is linked against it and finds it through
 * its RUNPATH $ORIGIN/lib, which ld.so expands from /proc/self/exe. */
#include <stdio.h>

const char *hl_origin_greeting(void) { return "hello from libhlorigin.so"; }
