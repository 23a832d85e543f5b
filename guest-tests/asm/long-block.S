/* long-block: straight-line code far longer than any sensible block limit.
 *
 * A 300-instruction block (rol/xor/add mixing two registers), a block of
 * 4,000 instructions with 32-bit operations and stores, and a 1,000
 * instruction flag chain where only the last flags matter. A translator must
 * split these somewhere and resume at the right instruction with the right
 * registers and flags.
 */
#include "rt.h"

TEST_START
    mov rax, 0x0123456789abcdef
    mov rbx, 0x0fedcba987654321
    jmp 1f
1:  .rept 100
    rol rax, 7
    xor rax, rbx
    add rbx, rax
    .endr
    SHOW("300-instruction mix rax", rax)
    SHOW("300-instruction mix rbx", rbx)
    CHECK(rax, 0x7dcab96f11c783d4)
    CHECK(rbx, 0xea605a2234e61425)

    /* x = 3x + 1 (mod 2^32); c += x; the store keeps the last x in memory */
    mov edx, 1
    xor ecx, ecx
    jmp 2f
2:  .rept 1000
    lea edx, [rdx + rdx * 2 + 1]
    add rcx, rdx
    mov [rip + last], edx
    nop
    .endr
    SHOW("4000-instruction block x", rdx)
    SHOW("4000-instruction block sum", rcx)
    CHECK(rdx, 0xbd9488b1)
    CHECK(rcx, 0x1e69c5ecb14)
    CHECK(qword ptr [rip + last], 0xbd9488b1)

    /* a long chain of flag writers; only the last one is observable */
    mov eax, 1
    jmp 3f
3:  .rept 500
    add eax, 1
    sub eax, 1
    .endr
    cmp eax, 2
    SHOWF("flags after 1000 flag writers and cmp 1, 2", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_SF | F_AF | F_PF)
    TEST_PASS

.data
.balign 8
last: .quad 0
