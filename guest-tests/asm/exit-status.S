/* exit-status: the exit status reaches the parent unchanged (42). */
#include "rt.h"

TEST_START
    SAY("exit-status: exiting with 42 through exit_group")
    mov rax, 0x1122334455667788
    SHOW("rax", rax)
    CHECK(rax, 0x1122334455667788)
    stc
    SHOWF("after stc", F_CF | F_ZF)
    CHECKF(F_CF, F_CF)
    mov edi, 42
    mov eax, 231
    syscall
    ud2
