/* trap-hlt: hlt is privileged; in user mode it raises #GP, which Linux
 * delivers as SIGSEGV. Expected: signal:SIGSEGV. */
#include "rt.h"

TEST_START
    SAY("about to execute hlt")
    hlt
    FAIL("hlt returned")
