/* trap-rtm: xbegin where CPUID shows no RTM. CPUs without TSX raise #UD
 * (SIGILL); CPUs whose TSX is switched off (TSX_CTRL) abort the
 * transaction at once: RAX = 0 (all 64 bits), flags unchanged, on at the
 * fallback; xabort outside a transaction does nothing there. Either way the
 * test ends with SIGILL: a ud2 after the abort checks. When CPUID reports
 * RTM the test is skipped (it says so and exits via ud2 too).
 * Expected: signal:SIGILL. */
#include "rt.h"

TEST_START
    IF_MISSING(7, 0, ebx, 11, no_rtm)
    SAY("this CPU has RTM: not testing xbegin")
    ud2
no_rtm:
    SAY("about to execute xbegin without RTM")
    movabs rax, 0x1122334455667788
    SETF(F_CF | F_ZF | 2)
    xbegin 1f
    FAIL("xbegin started a transaction")
1:  CHECKF(F_ARITH, F_CF | F_ZF)
    SAY("xbegin aborted: TSX is switched off on this CPU")
    CHECK(rax, 0)
    xabort 5
    SAY("xabort outside a transaction: no effect")
    ud2
    FAIL("ud2 returned")
