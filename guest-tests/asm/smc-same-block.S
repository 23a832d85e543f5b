/* smc-same-block: a store that modifies an instruction later in the same
 * straight-line block, with no branch in between.
 *
 * The code runs from an RWX copy. Its first instruction stores a new
 * immediate into the "mov eax, imm32" two instructions later; the CPU
 * detects the self-modification and executes the new bytes. This is the
 * hardest case for a block translator (the block's translation is already
 * running); it is kept separate so that failures are easy to attribute.
 */
#include "rt.h"

TEST_START
    xor edi, edi
    mov esi, 4096
    mov edx, 7
    mov r10d, 0x22
    mov r8, -1
    xor r9d, r9d
    mov eax, 9
    syscall
    mov r12, rax
    lea rsi, [rip + tmpl]
    lea rcx, [rip + tmpl_end]
    sub rcx, rsi
    mov rdi, r12
    rep movsb
    mov ebx, 0x5678
    call r12
    SHOW("value loaded by the modified instruction", rax)
    CHECK(rax, 0x5678)
    mov ebx, 0x9abc
    call r12
    CHECK(rax, 0x9abc)
    SAY("second run with another value")
    TEST_PASS

.section .rodata
tmpl:                               /* position-independent: runs from the copy */
    lea rdi, [rip + tmpl_mov]
    mov [rdi + 1], ebx              /* patch the immediate below */
    nop
tmpl_mov:
    mov eax, 0x1234
    ret
tmpl_end:
