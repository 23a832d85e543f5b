/* fault-null: a store to address 0 kills the process with SIGSEGV.
 * Expected: signal:SIGSEGV. */
#include "rt.h"

TEST_START
    SAY("about to store to address 0")
    xor eax, eax
    mov qword ptr [rax], 1
    FAIL("store to 0 returned")
