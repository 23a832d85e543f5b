/* trap-rtm: xbegin on a CPU without RTM raises #UD (SIGILL). When CPUID
 * reports RTM the test is skipped (exits 0 would then differ from the
 * manifest's expectation, so it exits via ud2 after saying so).
 * Expected: signal:SIGILL. */
#include "rt.h"

TEST_START
    IF_MISSING(7, 0, ebx, 11, no_rtm)
    SAY("this CPU has RTM: not testing xbegin")
    ud2
no_rtm:
    SAY("about to execute xbegin without RTM")
    xbegin 1f
    FAIL("xbegin did not fault")
1:  FAIL("transaction aborted instead of #UD")
