/* signal-selfjmp: an endless "jmp ." ended by SIGALRM.
 *
 * setitimer(ITIMER_REAL, 50 ms) with the default SIGALRM action, then a
 * literal jump to itself. The process must die of SIGALRM: a translator
 * that chains the block to itself still has to let the asynchronous signal
 * in (and must not turn it into anything else). Expected: signal:SIGALRM.
 */
#include "rt.h"

TEST_START
    SAY("arming a 50 ms ITIMER_REAL, then jmp .")
    mov eax, 38                 /* setitimer */
    mov edi, 0                  /* ITIMER_REAL */
    lea rsi, [rip + timer]
    xor edx, edx
    syscall
    CHECK(rax, 0)
    mov rcx, 12345
forever:
    jmp forever
    FAIL("left the self-loop")

.data
.balign 8
timer:
    .quad 0, 0                  /* it_interval */
    .quad 0, 50000              /* it_value: 50 ms */
