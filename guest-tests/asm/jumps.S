/* jumps: direct and indirect control flow. jmp/call through a register and
 * through memory (absolute and rip-relative), a jump table of absolute
 * addresses and one of 32-bit relative offsets (what gcc emits for PIC
 * switches), ret imm16, a tail call, short and near forms of jcc, and a
 * branch to the very next instruction.
 */
#include "rt.h"

TEST_START
    /* jmp reg */
    lea rax, [rip + 1f]
    jmp rax
    FAIL("jmp rax fell through")
1:  SAY("jmp rax")
    /* jmp [mem] absolute and rip-relative */
    lea rbx, [rip + targets]
    jmp qword ptr [rbx + 8]
    FAIL("jmp [rbx+8] fell through")
t1: SAY("jmp [rbx+8]")
    jmp qword ptr [rip + targets + 16]
    FAIL("jmp [rip+x] fell through")
t2: SAY("jmp [rip+targets+16]")
    mov ecx, 3
    jmp qword ptr [rbx + rcx * 8]
    FAIL("jmp [rbx+rcx*8] fell through")
t3: SAY("jmp [rbx+rcx*8]")

    /* jump table with absolute entries, driven by a loop */
    xor r12d, r12d              /* case index */
    xor r13d, r13d              /* accumulated result */
abs_loop:
    mov rax, r12
    and eax, 3
    jmp qword ptr [abs_table + rax * 8]   /* disp32 absolute, as gcc -fno-pie does */
case0: add r13, 1
    jmp abs_next
case1: add r13, 10
    jmp abs_next
case2: add r13, 100
    jmp abs_next
case3: add r13, 1000
abs_next:
    inc r12
    cmp r12, 10
    jne abs_loop
    SHOWD("absolute jump table sum", r13)
    CHECK(r13, 1 + 10 + 100 + 1000 + 1 + 10 + 100 + 1000 + 1 + 10)

    /* jump table of 32-bit offsets relative to the table (PIC style) */
    xor r12d, r12d
    xor r13d, r13d
rel_loop:
    mov eax, r12d
    and eax, 7
    lea rdx, [rip + rel_table]
    movsxd rax, dword ptr [rdx + rax * 4]
    add rax, rdx
    jmp rax
r0: add r13, 2
    jmp rel_next
r1: imul r13, r13, 3
    jmp rel_next
r2: xor r13, 0x55
    jmp rel_next
r3: sub r13, 7
rel_next:
    inc r12
    cmp r12, 24
    jne rel_loop
    SHOWD("relative jump table result", r13)
    CHECK(r13, 532699)

    /* call reg, call [mem], call [rip+x] */
    xor eax, eax
    lea rdx, [rip + add1]
    call rdx
    call qword ptr [rip + fptr]
    lea rbx, [rip + fptr]
    call qword ptr [rbx]
    SHOWD("three indirect calls to add1", rax)
    CHECK(rax, 3)

    /* ret imm16 pops the arguments */
    mov r12, rsp
    push 11
    push 22
    push 33
    call sum3
    SHOWD("sum3 via ret 24", rax)
    CHECK(rax, 66)
    CHECKR(rsp, r12)
    SAY("rsp restored by ret 24")

    /* tail call: jmp to a function that returns to our caller */
    call tail_caller
    SHOWD("tail call result", rax)
    CHECK(rax, 107)

    /* jcc short (rel8) and near (rel32) forms, taken and not taken */
    xor r13d, r13d
    mov eax, 1
    cmp eax, 1
    je 2f
    or r13, 1
2:  jne 3f
    .byte 0x0f, 0x84            /* je rel32 to 4f, hand-encoded: the near form */
    .long 4f - 3f
3:  or r13, 2
4:  cmp eax, 2
    .byte 0x0f, 0x8c            /* jl rel32 to 5f */
    .long 5f - 6f
6:  or r13, 4
5:  SHOW("jcc forms (want 0)", r13)
    CHECK(r13, 0)

    /* jump to the next instruction, jump over nothing */
    jmp 7f
7:  jmp 8f
8:  call 9f
9:  pop rax
    lea rbx, [rip + 9b]
    CHECKR(rax, rbx)
    SAY("call to next instruction pushes its own address")
    TEST_PASS

add1:
    inc rax
    ret

sum3:
    mov rax, [rsp + 8]
    add rax, [rsp + 16]
    add rax, [rsp + 24]
    ret 24

tail_caller:
    mov eax, 100
    jmp tail_callee
tail_callee:
    add eax, 7
    ret

.section .rodata
.balign 8
targets:  .quad 0, t1, t2, t3
abs_table: .quad case0, case1, case2, case3
rel_table:
    .long r0 - rel_table, r1 - rel_table, r2 - rel_table, r3 - rel_table
    .long r1 - rel_table, r1 - rel_table, r0 - rel_table, r2 - rel_table
.data
fptr: .quad add1
