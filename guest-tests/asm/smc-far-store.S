/* smc-far-store: translated code stores into its own page through a
 * RIP-relative operand, then leaves its block by a direct jump.
 *
 * The functions run from an RWX mmap page, which lies far (more than 2 GiB)
 * from anything a translator allocates, so a RIP-relative operand cannot be
 * re-encoded as one and its address must be materialised. Because the page
 * holds translated code, a translator that write-protects code pages sees
 * the store fault inside translated code and must resume it exactly (a
 * hotlift regression: a store into its own protected page followed by a
 * direct block exit). Cases:
 *   1. store to a data word in the same page, jmp, load it back;
 *   2. the same after the store's immediate was patched from outside;
 *   3. store into the immediate of the instruction the jmp lands on (the
 *      next block must run the new bytes);
 *   4. case 3 after its stored value was patched from outside.
 */
#include "rt.h"

TEST_START
    xor edi, edi
    mov esi, 4096
    mov edx, 7                      /* PROT_READ|PROT_WRITE|PROT_EXEC */
    mov r10d, 0x22                  /* MAP_PRIVATE|MAP_ANONYMOUS */
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
    SHOWD("store to own page, direct jmp, load", rax)
    CHECK(rax, 5)
    mov eax, [r12 + d - tmpl]
    CHECK(rax, 5)
    mov dword ptr [r12 + d - tmpl], 0
    mov dword ptr [r12 + imm1 - 4 - tmpl], 6
    call r12
    SHOWD("after patching the stored value", rax)
    CHECK(rax, 6)

    lea r13, [r12 + f2 - tmpl]
    call r13
    SHOWD("store into the next block's immediate, direct jmp", rax)
    CHECK(rax, 9)
    mov dword ptr [r12 + imm2 - 4 - tmpl], 11
    call r13
    SHOWD("after patching the stored value", rax)
    CHECK(rax, 11)
    TEST_PASS

.section .rodata
tmpl:
    mov dword ptr [rip + d], 5
imm1:
    jmp 1f
1:  mov eax, [rip + d]
    ret
f2:
    mov dword ptr [rip + 2f + 1], 9     /* the imm32 of "mov eax, 1" below */
imm2:
    jmp 2f
2:  mov eax, 1
    ret
d:  .long 0
tmpl_end:
