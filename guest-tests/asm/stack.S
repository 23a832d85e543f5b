/* stack: push/pop edge cases and stack switching.
 *
 * push rsp pushes the old value; pop rsp loads the popped value; pop [rsp]
 * computes its address after the increment; push/pop of memory operands
 * relative to rsp; 16-bit pushes; enter/leave (with nesting); moving rsp to
 * a private stack and back; and the red zone: data stored below rsp must
 * survive branches, calls' absence, and a syscall untouched.
 */
#include "rt.h"

TEST_START
    mov r12, rsp
    /* push rsp pushes the value before the decrement */
    push rsp
    pop rax
    CHECKR(rax, r12)
    SAY("push rsp pushes the old rsp")
    /* pop rsp: rsp = the popped value */
    lea rax, [rip + alt_stack_top - 64]
    push rax
    pop rsp
    mov rbx, rsp
    lea rax, [rip + alt_stack_top - 64]
    CHECKR(rbx, rax)
    SAY("pop rsp loads the popped value")
    mov rsp, r12

    /* push qword [rsp] and pop qword [rsp] */
    push 0x111
    push 0x222
    push qword ptr [rsp + 8]    /* pushes 0x111 */
    pop rax
    CHECK(rax, 0x111)
    pop qword ptr [rsp]         /* 0x222 overwrites the 0x111 slot */
    mov rax, [rsp]
    SHOW("pop [rsp] stored", rax)
    CHECK(rax, 0x222)
    lea rax, [r12 - 8]
    CHECKR(rsp, rax)
    pop rax
    mov qword ptr [rsp - 24], 0x555     /* sentinel below the next pushes */
    push 0x333
    push 0x444
    pop qword ptr [rsp - 8]     /* address = new rsp - 8: the old 0x444 slot */
    mov rax, [rsp - 8]
    mov rbx, [rsp - 16]         /* read both before SHOW pushes below rsp */
    SHOW("pop [rsp-8] stored", rax)
    CHECK(rax, 0x444)
    SHOW("slot below it kept", rbx)
    CHECK(rbx, 0x555)
    pop rax
    CHECKR(rsp, r12)

    /* push imm8 (sign-extended), imm32, 16-bit push/pop */
    push -5
    pop rax
    CHECK(rax, -5)
    push 0x7fffffff
    pop rax
    CHECK(rax, 0x7fffffff)
    push -0x80000000
    pop rax
    CHECK(rax, 0xffffffff80000000)
    push 0
    add rsp, 4
    pushw 0x1234
    pushw 0x5678
    pop rax
    pushw 0x1122
    pop cx
    movzx ecx, cx
    SHOW("two pushw popped as one qword", rax)
    CHECK(rax, 0x12345678)
    SHOW("pushw popped with pop cx", rcx)
    CHECKR(rsp, r12)
    SAY("16-bit pushes move rsp by 2")

    /* enter/leave */
    mov rbp, 0xbbbb
    enter 32, 0
    lea rax, [r12 - 8]
    CHECKR(rbp, rax)
    lea rax, [r12 - 40]
    CHECKR(rsp, rax)
    leave
    CHECKR(rsp, r12)
    CHECK(rbp, 0xbbbb)
    SAY("enter 32, 0 / leave")
    mov rbp, rsp
    sub rsp, 64
    mov qword ptr [rbp - 8], 0x7777
    enter 16, 2                 /* copies one outer frame slot */
    mov rax, [rsp + 16]         /* the new frame pointer */
    lea rbx, [r12 - 72]
    CHECKR(rax, rbx)
    CHECKR(rbp, rbx)
    mov rax, [rsp + 24]         /* the copied [rbp - 8] */
    SHOW("enter 16, 2 copied [rbp-8]", rax)
    CHECK(rax, 0x7777)
    leave
    mov rsp, r12
    SAY("enter 16, 2 / leave")

    /* switch to a private stack, call through it, switch back */
    mov r13, rsp
    lea rsp, [rip + alt_stack_top]
    call depth5
    mov rax, rsp
    mov rsp, r13
    lea rbx, [rip + alt_stack_top]
    CHECKR(rax, rbx)
    SHOWD("recursion on the private stack", r14)
    CHECK(r14, 5)

    /* red zone: 128 bytes below rsp belong to the program */
    mov ecx, 16
1:  mov rax, rcx
    imul rax, rax, 0x1111
    mov [rsp + rcx * 8 - 136], rax
    loop 1b
    jmp 2f                      /* a block boundary */
2:  mov eax, 39                 /* getpid: a trip through the kernel */
    syscall
    mov rdx, 0
    cmp rax, 0
    jg 3f
    nop
3:  xor esi, esi
    mov ecx, 16
4:  mov rax, rcx
    imul rax, rax, 0x1111
    cmp [rsp + rcx * 8 - 136], rax
    je 5f
    inc rsi
5:  loop 4b
    SHOWD("red-zone slots clobbered", rsi)
    CHECK(rsi, 0)
    TEST_PASS

depth5:
    xor r14d, r14d
    mov ecx, 5
    jmp down
down:
    inc r14
    dec ecx
    jz 1f
    call down
1:  ret

.bss
.balign 16
alt_stack: .skip 8192
alt_stack_top:
