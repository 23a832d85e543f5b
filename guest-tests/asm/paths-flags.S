/* paths-flags: a function whose flags are live where `hotlift paths` puts
 * its probes: a branch whose target reads the flags an earlier compare
 * set, flags carried across a call into the resume node, a loop whose
 * header reads the carry its back edge carries (the PAP fold runs there),
 * a jump table whose targets read the flags, and flags returned to the
 * caller. tests/paths.rs profiles `flagfn` with every method; this program
 * checks every result and flag itself, natively and under hotlift.
 */
#include "rt.h"

    .text
/* No flag changes: the flags of the caller come back. */
keep:
    lea rax, [rax + 100]
    ret

/* flagfn(rdi = x, rsi = n): rax = a value built from flags that every
 * probe point must leave alone; returns with the flags of `cmp rdi, 10`. */
    .globl flagfn
    .type flagfn, @function
flagfn:
    xor eax, eax
    cmp rdi, 10
    je 1f
    mov rax, 1              /* no flag change */
1:  jb 2f                   /* reads CF of the cmp, across the edge */
    lea rax, [rax + 2]
    jmp 3f
2:  lea rax, [rax + 4]
3:  call keep               /* flags live across the call ... */
    jo 9f                   /* ... and at the resume node */
    jl 4f
    lea rax, [rax + 8]
4:  /* a loop carrying CF around its back edge */
    mov rcx, rsi
    stc
5:  adc rax, 0              /* reads CF: live at the loop header */
    lea rax, [rax + rax]
    dec rcx                 /* keeps CF */
    jnz 5b
    /* a jump table whose targets read the flags of this compare */
    mov rdx, rdi
    and edx, 3
    cmp rdx, 2
    jmp qword ptr [jt + rdx * 8]
6:  jb 7f
    lea rax, [rax + 16]
    jmp 8f
7:  lea rax, [rax + 32]
8:  cmp rdi, 10             /* the flags the caller checks */
    ret
9:  FAIL("overflow flag from nowhere")
    .size flagfn, . - flagfn

    .section .rodata
    .p2align 3
jt: .quad 6b, 6b, 6b, 6b

    .text
TEST_START
    xor r12d, r12d          /* x */
    xor r14d, r14d          /* sum of results */
next:
    mov rdi, r12
    mov rsi, r12
    and rsi, 7
    inc rsi                 /* 1..8 iterations */
    call flagfn
    /* flags of cmp x, 10 came back */
    jb below
    je equal
    CHECKF(F_CF | F_ZF, 0)
    jmp flags_ok
below:
    CHECKF(F_CF | F_ZF, F_CF)
    jmp flags_ok
equal:
    CHECKF(F_CF | F_ZF, F_ZF)
flags_ok:
    add r14, rax
    inc r12
    cmp r12, 40
    jne next
    SHOWD("sum", r14)
    CHECK(r14, 283456)
    TEST_PASS
