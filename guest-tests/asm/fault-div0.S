/* fault-div0: integer division by zero kills the process with SIGFPE.
 * Expected: signal:SIGFPE. */
#include "rt.h"

TEST_START
    SAY("about to divide by zero")
    mov eax, 1
    xor edx, edx
    xor ecx, ecx
    div ecx
    FAIL("div by zero returned")
