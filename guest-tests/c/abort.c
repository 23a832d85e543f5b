/* abort: abort() raises SIGABRT with the default action: the process dies
 * of the signal (glibc blocks nothing else, raises with tgkill, and would
 * retry with the signal unblocked). Output written to stderr before abort
 * must appear. Expected: signal:SIGABRT.
 */
#include "common.h"

int main(void) {
    fprintf(stderr, "about to abort\n");
    printf("stdout line flushed before abort\n");
    fflush(stdout);
    abort();
}
