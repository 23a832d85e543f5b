/* trap-ud2: ud2 kills the process with SIGILL.
 * Expected: signal:SIGILL, with the line below printed first. */
#include "rt.h"

TEST_START
    SAY("about to execute ud2")
    ud2
    FAIL("ud2 returned")
