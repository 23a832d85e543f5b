/* gs-prefix-reg: segment-override prefixes on instructions that have no
 * memory operand (or only a stack access) are ignored by the CPU.
 *
 * Compilers and hand-written code sometimes emit them (padding, hints); a
 * translator must not treat them as a TLS access. GS and FS are first set
 * to an unmapped base, so a prefix wrongly applied to the stack would fault.
 * Covers gs/fs mov, add (flags checked), imul, nop, push/pop and a
 * register-to-register xchg, each encoded with .byte.
 */
#include "rt.h"

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002

TEST_START
    mov edi, ARCH_SET_GS
    mov esi, 0x10000                /* canonical, never mapped */
    mov eax, 158
    syscall
    CHECK(rax, 0)

    mov eax, 7
    .byte 0x65, 0x48, 0x89, 0xc7    /* gs mov rdi, rax */
    SHOWD("gs mov rdi, rax", rdi)
    CHECK(rdi, 7)

    mov rdi, -1
    mov eax, 1
    .byte 0x65, 0x48, 0x01, 0xc7    /* gs add rdi, rax */
    SHOWF("gs add rdi, rax (-1 + 1) flags", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_PF | F_AF | F_ZF)
    CHECK(rdi, 0)

    mov eax, 6
    mov ecx, 7
    .byte 0x65, 0x0f, 0xaf, 0xc1    /* gs imul eax, ecx */
    SHOWD("gs imul eax, ecx", rax)
    CHECK(rax, 42)

    .byte 0x65, 0x90                /* gs nop */
    mov rax, 0x1122334455667788
    .byte 0x65, 0x50                /* gs push rax: still on the stack */
    .byte 0x65, 0x5b                /* gs pop rbx */
    SHOW("gs push rax / gs pop rbx", rbx)
    CHECK(rbx, 0x1122334455667788)

    mov edi, ARCH_SET_FS
    mov esi, 0x10000
    mov eax, 158
    syscall
    CHECK(rax, 0)
    mov eax, 3
    mov edx, 4
    .byte 0x64, 0x48, 0x87, 0xd0    /* fs xchg rax, rdx */
    SHOWD("fs xchg rax, rdx: rax", rax)
    CHECK(rax, 4)
    CHECK(rdx, 3)
    .byte 0x64, 0x48, 0x89, 0xc1    /* fs mov rcx, rax */
    CHECK(rcx, 4)
    SAY("fs mov rcx, rax")
    TEST_PASS
