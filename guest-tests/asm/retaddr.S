/* retaddr: programs that look at and rewrite return addresses.
 *
 * A translator that pushes host addresses, or that assumes every call
 * returns to the instruction after it, fails here: the callee reads its
 * return address and compares it with the label after the call; the
 * "call $+5; pop" and "call over inline data; pop" PIC tricks; a callee that
 * rewrites its return address; push label; ret as an indirect jump; a call
 * that never returns (pop + jmp back).
 */
#include "rt.h"

TEST_START
    /* the callee sees the address of the instruction after the call */
    call check_ret
after_call:
    SHOW("return address seen by callee", rax)
    CHECK(rax, offset after_call)

    /* call $+5; pop */
    call 1f
1:  pop rax
    SHOW("call $+5; pop", rax)
    CHECK(rax, offset 1b)
    .byte 0xe8                  /* the literal encoding: e8 00 00 00 00 */
    .long 0
2:  pop rax
    CHECK(rax, offset 2b)
    SAY("e8 00000000; pop gives its own address")

    /* call over inline data: the return address points at a string */
    call 3f
    .asciz "inline string after a call"
3:  pop rdi
    call rt_putsln
    mov rax, rdi
    SHOW("inline string address", rax)
    CHECK(rax, offset 3b - 27)

    /* the callee rewrites its return address */
    call redirect
    FAIL("returned to the original address")
redirected:
    SAY("callee redirected its return")

    /* push label; ret */
    push offset 4f
    ret
    FAIL("push; ret fell through")
4:  SAY("push label; ret")
    lea rax, [rip + 5f]
    push rax
    ret
    FAIL("push rax; ret fell through")
5:  SAY("push rax; ret")

    /* a call that never returns: the callee pops and jumps back */
    mov r12, rsp
    call no_return
back_from_no_return:
    CHECKR(rsp, r12)
    SHOW("no_return saw", rax)
    CHECK(rax, offset back_from_no_return)

    /* ret to a return address that was called twice (same site, two stacks) */
    xor r13d, r13d
    mov ecx, 5
6:  call count
    loop 6b
    SHOWD("calls from one site in a loop", r13)
    CHECK(r13, 5)

    /* return address arithmetic: skip a 2-byte instruction after the call */
    call skip2
    jmp 7f                      /* 2 bytes, skipped */
    SAY("skip2 skipped the jmp")
    jmp 8f
7:  FAIL("skip2 returned to the jmp")
8:
    TEST_PASS

check_ret:
    mov rax, [rsp]
    ret

redirect:
    mov qword ptr [rsp], offset redirected
    ret

no_return:
    pop rax
    jmp back_from_no_return

count:
    inc r13
    ret

skip2:
    add qword ptr [rsp], 2
    ret
