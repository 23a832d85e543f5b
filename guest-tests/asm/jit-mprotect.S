/* jit-mprotect: generated code, the way JITs write it.
 *
 * mmap a RW page, copy a small function into it, mprotect it to RX, call
 * it; mprotect back to RW, patch the immediate, RX again, call again: the
 * new code must run (a translator must drop its translation of the page
 * when the protection or contents change). Then munmap, mmap a fresh page
 * at the same address with different code and call it.
 */
#include "rt.h"

.macro MMAP_RW addr, flags
    mov rdi, \addr
    mov esi, 4096
    mov edx, 3
    mov r10d, \flags
    mov r8, -1
    xor r9d, r9d
    mov eax, 9
    syscall
.endm

.macro MPROTECT prot
    mov rdi, r12
    mov esi, 4096
    mov edx, \prot
    mov eax, 10
    syscall
    CHECK(rax, 0)
.endm

TEST_START
    MMAP_RW 0, 0x22
    mov r12, rax
    /* copy template: mov eax, imm32; ret */
    lea rsi, [rip + tmpl]
    lea rcx, [rip + tmpl_end]
    sub rcx, rsi
    mov rdi, r12
    rep movsb
    MPROTECT 5                      /* PROT_READ|PROT_EXEC */
    call r12
    SHOW("generated code returned", rax)
    CHECK(rax, 0x11111111)
    MPROTECT 3
    mov dword ptr [r12 + 1], 0x22222222
    MPROTECT 5
    call r12
    SHOW("after patch + mprotect", rax)
    CHECK(rax, 0x22222222)

    /* patch many times in a loop: sum of the returned values */
    xor r13d, r13d
    mov r14d, 1
1:  MPROTECT 3
    mov [r12 + 1], r14d
    MPROTECT 5
    call r12
    add r13, rax
    inc r14d
    cmp r14d, 100
    jbe 1b
    SHOWD("sum over 100 re-generated functions", r13)
    CHECK(r13, 5050)

    /* unmap, map again at the same address with other code */
    mov rdi, r12
    mov esi, 4096
    mov eax, 11
    syscall
    CHECK(rax, 0)
    MMAP_RW r12, 0x32               /* MAP_FIXED|MAP_PRIVATE|MAP_ANONYMOUS */
    CHECKR(rax, r12)
    mov byte ptr [r12], 0xb8        /* mov eax, 0x33333333 */
    mov dword ptr [r12 + 1], 0x33333333
    mov byte ptr [r12 + 5], 0xc3
    MPROTECT 5
    call r12
    SHOW("fresh mapping at the same address", rax)
    CHECK(rax, 0x33333333)
    TEST_PASS

.section .rodata
tmpl:
    mov eax, 0x11111111
    ret
tmpl_end:
