/* brk-shrink-code: code in the brk heap does not survive the heap shrinking.
 *
 * The heap is grown by two pages, a page of it is made RWX, a function is
 * written there and called (returns 1). Then brk shrinks the heap below
 * that page and grows it again: the page comes back fresh, zero-filled and
 * read-write but not executable. Calling the old address must fault with
 * SIGSEGV; a translator that kept its translation of the page would return
 * 1 again. Expected: signal:SIGSEGV.
 */
#include "rt.h"

TEST_START
    xor edi, edi
    mov eax, 12                     /* brk(0): the current break */
    syscall
    mov r12, rax
    lea rdi, [r12 + 0x2000]
    mov eax, 12
    syscall
    lea rbx, [r12 + 0x2000]
    CHECKR(rax, rbx)
    lea r13, [r12 + 0xfff]
    and r13, -4096                  /* a whole page inside the new heap */
    mov rdi, r13
    mov esi, 4096
    mov edx, 7
    mov eax, 10                     /* mprotect(RWX) */
    syscall
    CHECK(rax, 0)
    mov dword ptr [r13], 0x000001b8 /* mov eax, 1 */
    mov word ptr [r13 + 4], 0xc300  /* (imm high byte 0) ret */
    call r13
    SHOWD("code in the heap returns", rax)
    CHECK(rax, 1)

    mov rdi, r12                    /* shrink: the code page is unmapped */
    mov eax, 12
    syscall
    CHECKR(rax, r12)
    lea rdi, [r12 + 0x2000]         /* grow again: a fresh RW page */
    mov eax, 12
    syscall
    lea rbx, [r12 + 0x2000]
    CHECKR(rax, rbx)
    mov rax, [r13]
    SHOW("first qword of the regrown page", rax)
    CHECK(rax, 0)
    SAY("calling the old code address (must fault)")
    call r13
    FAIL("non-executable heap page ran")
