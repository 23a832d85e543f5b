/* smc-rwx: self-modifying code in a read-write-execute mapping, without
 * mprotect: the only signal that code changed is the store itself.
 *
 * A function in an RWX page is called, its immediate is overwritten by a
 * plain store, and it is called again; a loop patches and calls it 1000
 * times; finally the function's first instruction is replaced by a jump.
 * x86 guarantees that a store to code is seen by the next execution of that
 * code (after a branch), so the native run is the oracle.
 */
#include "rt.h"

TEST_START
    xor edi, edi
    mov esi, 4096
    mov edx, 7                      /* PROT_READ|PROT_WRITE|PROT_EXEC */
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
    call r12
    SHOW("first call", rax)
    CHECK(rax, 1)
    mov dword ptr [r12 + 1], 2
    call r12
    SHOW("after a plain store to the immediate", rax)
    CHECK(rax, 2)

    xor r13d, r13d
    mov r14d, 1
1:  mov [r12 + 1], r14d
    call r12
    add r13, rax
    inc r14d
    cmp r14d, 1000
    jbe 1b
    SHOWD("sum over 1000 patched calls", r13)
    CHECK(r13, 500500)

    /* replace the first instruction by "jmp +4" (eb 04): it skips the rest
       of the mov and the ret, landing on "mov eax, 7; ret" at offset 6 */
    mov byte ptr [r12 + 6], 0xb8
    mov dword ptr [r12 + 7], 7
    mov byte ptr [r12 + 11], 0xc3
    mov word ptr [r12], 0x04eb
    call r12
    SHOW("after replacing the first instruction by a jmp", rax)
    CHECK(rax, 7)
    TEST_PASS

.section .rodata
tmpl:
    mov eax, 1
    ret
tmpl_end:
