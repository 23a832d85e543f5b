/* loops: loop, loope, loopne, jrcxz and jecxz (addr32 forms use ecx only).
 *
 * loop decrements rcx without touching flags; loope/loopne also test ZF;
 * jrcxz/jecxz test without decrementing. With rcx = 0 loop runs 2^64 times,
 * so that case is only taken through jrcxz guards.
 */
#include "rt.h"

TEST_START
    /* loop: counts down, flags untouched */
    xor eax, eax
    mov ecx, 10
    SETF(F_CF | F_OF)
1:  lea rax, [rax + rcx]
    loop 1b
    SHOWF("loop keeps flags", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_OF)
    SHOWD("sum 10..1 with loop", rax)
    CHECK(rax, 55)
    CHECK(rcx, 0)

    /* loop uses all 64 bits of rcx */
    mov rcx, 0x100000002
    xor eax, eax
2:  inc eax
    cmp eax, 5
    je 3f
    loop 2b
3:  SHOW("rcx after 4 loops from 0x100000002", rcx)
    CHECK(rcx, 0xfffffffe)

    /* addr32 loop counts in ecx; the write of ecx clears the upper half */
    mov rcx, 0x500000003
    xor eax, eax
4:  inc eax
    addr32 loop 4b
    SHOWD("addr32 loop iterations with ecx=3", rax)
    SHOW("  rcx after", rcx)
    CHECK(rax, 3)
    CHECK(rcx, 0)

    /* loope: continue while ZF=1 and rcx != 0 */
    lea rsi, [rip + data]
    mov ecx, 8
    mov rdi, -1
5:  inc rdi
    cmp byte ptr [rsi + rdi], 7
    loope 5b
    SHOWD("loope stopped at index", rdi)
    SHOWD("  rcx", rcx)
    CHECK(rdi, 3)
    CHECK(rcx, 4)
    /* loopne: continue while ZF=0 and rcx != 0 */
    mov ecx, 8
    mov rdi, -1
6:  inc rdi
    cmp byte ptr [rsi + rdi], 9
    loopne 6b
    SHOWD("loopne stopped at index", rdi)
    SHOWD("  rcx", rcx)
    CHECK(rdi, 5)
    CHECK(rcx, 2)
    /* loopne running out of count */
    mov ecx, 3
    mov rdi, -1
7:  inc rdi
    cmp byte ptr [rsi + rdi], 100
    loopne 7b
    CHECK(rdi, 2)
    CHECK(rcx, 0)
    SAY("loopne ran out after 3")

    /* jrcxz / jecxz */
    xor ecx, ecx
    jrcxz 8f
    FAIL("jrcxz with rcx=0 not taken")
8:  mov rcx, 0x100000000
    jrcxz 9f
    jecxz 10f
    FAIL("jecxz with ecx=0 not taken")
9:  FAIL("jrcxz with rcx=2^32 taken")
10: SAY("jrcxz/jecxz see 64 and 32 bits")
    mov rcx, 1
    jecxz 11f
    jmp 12f
11: FAIL("jecxz with ecx=1 taken")
12:
    /* the guarded-loop idiom */
    xor eax, eax
    xor ecx, ecx
    jrcxz 14f
13: inc eax
    loop 13b
14: CHECK(rax, 0)
    mov ecx, 6
    jrcxz 16f
15: add eax, 2
    loop 15b
16: SHOWD("guarded loop 6 x 2", rax)
    CHECK(rax, 12)
    TEST_PASS

.section .rodata
data: .byte 7, 7, 7, 8, 7, 9, 7, 7
