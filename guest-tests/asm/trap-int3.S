/* trap-int3: int3 kills the process with SIGTRAP (no handler installed).
 * Expected: signal:SIGTRAP, with the line below printed first. */
#include "rt.h"

TEST_START
    SAY("about to execute int3")
    int3
    FAIL("int3 returned")
