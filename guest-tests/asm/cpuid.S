/* cpuid: the processor identification a guest sees.
 *
 * Prints the vendor string, the maximum leaves, leaf 1 EAX/ECX/EDX (EBX
 * holds the APIC id of whichever CPU ran the instruction, so only its
 * CLFLUSH line size is printed), leaf 7 subleaves 0 and 1, leaf 0xD
 * (XSAVE sizes), extended leaf 0x80000001 and the brand string. Natively
 * these are fixed for a machine, so a translator must pass CPUID through
 * unchanged. Also checks that CPUID zero-extends its 32-bit results and
 * ignores the upper halves of rax/rcx.
 */
#include "rt.h"

.macro LEAF leaf, sub
    mov eax, \leaf
    mov ecx, \sub
    cpuid
.endm

TEST_START
    mov rax, 0xffffffff00000000     /* upper halves are ignored ... */
    mov rcx, 0xffffffff00000000
    mov rbx, -1
    mov rdx, -1
    cpuid
    mov r12, rax
    shr r12, 32
    mov r13, rbx
    shr r13, 32
    or r12, r13
    mov r13, rdx
    shr r13, 32
    or r12, r13
    mov r13, rcx
    shr r13, 32
    or r12, r13
    CHECK(r12, 0)                   /* ... and results are zero-extended */
    SAY("cpuid zero-extends its outputs")
    SHOW("max basic leaf", rax)
    mov [rip + vendor], ebx
    mov [rip + vendor + 4], edx
    mov [rip + vendor + 8], ecx
    lea rdi, [rip + vendor_label]
    call rt_putsln_nonl
    lea rdi, [rip + vendor]
    call rt_putsln

    LEAF 1, 0
    SHOW("leaf 1 eax (family/model/stepping)", rax)
    SHOW("leaf 1 ecx", rcx)
    SHOW("leaf 1 edx", rdx)
    shr ebx, 8
    and ebx, 0xff
    SHOW("leaf 1 clflush line size (qwords)", rbx)

    LEAF 7, 0
    SHOW("leaf 7.0 eax (max subleaf)", rax)
    SHOW("leaf 7.0 ebx", rbx)
    SHOW("leaf 7.0 ecx", rcx)
    SHOW("leaf 7.0 edx", rdx)
    bt ebx, 5
    setc al
    movzx eax, al
    SHOW("  AVX2", rax)
    bt ebx, 16
    setc al
    movzx eax, al
    SHOW("  AVX512F", rax)
    bt ebx, 11
    setc al
    movzx eax, al
    SHOW("  RTM", rax)
    LEAF 7, 1
    SHOW("leaf 7.1 eax", rax)
    SHOW("leaf 7.1 ebx", rbx)
    SHOW("leaf 7.1 ecx", rcx)
    SHOW("leaf 7.1 edx", rdx)

    LEAF 0xd, 0
    SHOW("leaf 0xd.0 eax (XCR0 supported low)", rax)
    SHOW("leaf 0xd.0 ebx (XSAVE size, enabled features)", rbx)
    SHOW("leaf 0xd.0 ecx (XSAVE size, all features)", rcx)
    LEAF 0xd, 1
    SHOW("leaf 0xd.1 eax", rax)

    LEAF 0x80000000, 0
    SHOW("max extended leaf", rax)
    LEAF 0x80000001, 0
    SHOW("leaf 0x80000001 ecx", rcx)
    SHOW("leaf 0x80000001 edx", rdx)
    lea rdi, [rip + brand]
    mov esi, 0x80000002
1:  mov eax, esi
    xor ecx, ecx
    cpuid
    mov [rdi], eax
    mov [rdi + 4], ebx
    mov [rdi + 8], ecx
    mov [rdi + 12], edx
    add rdi, 16
    inc esi
    cmp esi, 0x80000004
    jbe 1b
    lea rdi, [rip + brand_label]
    call rt_putsln_nonl
    lea rdi, [rip + brand]
    call rt_putsln
    TEST_PASS

/* print the string at rdi without a newline */
rt_putsln_nonl:
    push rax
    push rcx
    push rdx
    push rsi
    push rdi
    push r11
    xor edx, edx
1:  cmp byte ptr [rdi + rdx], 0
    je 2f
    inc rdx
    jmp 1b
2:  mov rsi, rdi
    mov edi, 1
    mov eax, 1
    syscall
    pop r11
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rax
    ret

.section .rodata
vendor_label: .asciz "vendor: "
brand_label: .asciz "brand: "

.bss
vendor: .skip 16
brand: .skip 64
