/* selfloop: blocks that branch to themselves.
 *
 * "1: dec rcx; jnz 1b", "1: loop 1b" (a one-instruction block whose only
 * successor besides the fall-through is itself), a jrcxz-guarded loop, and
 * a literal jmp-to-self (eb fe) sitting behind a register test that is
 * taken a million times (the endless loop itself is signal-selfjmp). A
 * translator that chains a block to itself must still count, exit and keep
 * registers right. Each loop runs long enough to be worth chaining; with
 * an argument (the count form) the loops run a thousandth as long.
 */
#include "rt.h"

TEST_START
    SAVE_ARGC
    PICK(rcx, 3000000, 3000)
    mov eax, 0
1:  dec rcx
    jnz 1b
    SHOW("dec/jnz self-loop rcx", rcx)
    CHECK(rcx, 0)

    PICK(rcx, 5000001, 5001)
1:  loop 1b
    CHECK(rcx, 0)
    SAY("loop-to-itself finished")

    /* jrcxz out; dec; jmp back to the jrcxz */
    PICK(rcx, 2000000, 2000)
2:  jrcxz 3f
    lea rcx, [rcx - 1]
    jmp 2b
3:  CHECK(rcx, 0)
    SAY("jrcxz-guarded jmp loop finished")

    /* A literal jmp-to-self, entered only when r8 says so. The byte at
       selfjmp is "jmp selfjmp"; r8 = 0 so the guard skips it; then the loop
       around it executes 1,000,000 times with the guard taken. */
    xor r8d, r8d
    PICK(r9, 1000000, 1000)
4:  test r8, r8
    jz 5f
selfjmp:
    jmp selfjmp
5:  dec r9d
    jnz 4b
    SHOW("guard counter", r9)
    CHECK(r9, 0)
    SAY("jmp-to-self guarded by a register was never entered")

    /* a self-loop whose body carries data through the iterations */
    mov ecx, 1000
    xor eax, eax
    mov edx, 1
6:  add eax, edx
    add edx, 2
    dec ecx
    jnz 6b
    SHOWD("sum of the first 1000 odd numbers", rax)
    CHECK(rax, 1000000)
    TEST_PASS
