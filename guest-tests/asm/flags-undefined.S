/* flags-undefined: what this CPU leaves in the flags the manual calls
 * "undefined", and in the destination of bsf/bsr with a zero source.
 *
 * Nothing is checked (the values are model-specific); every value is
 * printed, so under translation they must match the native run byte for
 * byte. A translator that runs guest instructions natively gets this for
 * free; one that recomputes flags lazily must reproduce the hardware. Each
 * case runs with all flags clear and all flags set beforehand.
 */
#include "rt.h"

/* Run one instruction twice from the same register state (set up by the
   lines before U), once with all flags clear and once with all set. */
.macro U label, insn:vararg
    .irp r, rax, rbx, rcx, rdx, r8
    mov [rip + save_\r], \r
    .endr
    SETF(0)
    \insn
    SHOWF("\label (in 0)", F_ARITH)
    .irp r, rax, rbx, rcx, rdx, r8
    mov \r, [rip + save_\r]
    .endr
    SETF(F_ARITH)
    \insn
    SHOWF("\label (in all)", F_ARITH)
.endm

TEST_START
    mov rax, 0x123456789abcdef1
    mov rbx, 0x0fedcba987654321
    mov ecx, 5
    mov rdx, rax
    U "and rdx, rbx (AF)", and rdx, rbx
    mov rdx, rax
    U "xor edx, ebx (AF)", xor edx, ebx
    U "test al, 0x10 (AF)", test al, 0x10
    mov rax, 0x123456789abcdef1
    U "mul rbx (SF ZF AF PF)", mul rbx
    U "imul ecx, ebx (SF ZF AF PF)", imul ecx, ebx
    U "imul r8, rbx, 3", imul r8, rbx, 3
    mov eax, 3
    mov ecx, 5
    U "mul cl small", mul cl
    mov rax, 0x123456789abcdef1
    xor edx, edx
    U "div rbx (all)", div rbx
    mov eax, -77
    cdq
    mov ecx, 5
    U "idiv ecx (all)", idiv ecx
    mov eax, 0x70000001
    U "shl eax, 3 (OF AF)", shl eax, 3
    mov eax, 0x80000001
    U "shr eax, 7 (OF AF)", shr eax, 7
    mov eax, 0x80000001
    U "sar eax, 2 (OF AF)", sar eax, 2
    mov eax, 0xff
    mov cl, 9
    U "shl al, 9 (CF OF AF)", shl al, cl
    mov eax, 0xffff
    mov cl, 17
    U "shr ax, 17 (CF OF AF)", shr ax, cl
    mov eax, 0x01
    mov cl, 8
    U "shl al, 8 (OF AF)", shl al, cl
    mov eax, 0x80000001
    U "rol eax, 4 (OF)", rol eax, 4
    mov rax, 0x8000000000000001
    U "rcr rax, 3 (OF)", rcr rax, 3
    mov eax, 0x80000001
    U "shld eax, ebx, 5 (OF AF)", shld eax, ebx, 5
    mov eax, 0x80000001
    mov cl, 40
    U "shrd eax, ebx, 40 masked 8 (OF AF)", shrd eax, ebx, cl
    mov eax, 0x1234
    mov ebx, 0x5678
    mov cl, 20
    U "shld ax, bx, 20 (count > 16)", shld ax, bx, cl
    SHOW("  shld ax, bx, 20 -> rax (result undefined)", rax)
    mov rax, 8
    U "bt rax, 3 (OF SF AF PF)", bt rax, 3
    mov rax, 0
    U "bts rax, 0 (OF SF AF PF)", bts rax, 0
    mov rax, 0x80
    U "bsf rdx, rax (CF OF SF AF PF)", bsf rdx, rax
    xor eax, eax
    U "bsr rdx, 0 (all but ZF)", bsr rdx, rax
    mov rax, 0x80
    U "lzcnt (OF SF AF PF)", lzcnt rdx, rax
    mov rax, 0x80
    U "tzcnt (OF SF AF PF)", tzcnt rdx, rax
    mov rax, 5
    U "andn (AF PF)", andn rdx, rax, rbx
    mov eax, 0x0404
    U "bextr (SF AF PF)", bextr rdx, rbx, rax
    mov rax, 0x30
    U "blsi (AF PF)", blsi rdx, rax
    mov eax, 7
    U "bzhi (AF PF)", bzhi rdx, rbx, rax
    xor eax, eax
    mov [rip + buf], rax
    mov [rip + buf + 8], rax
    xor edx, edx
    xor ecx, ecx
    xor ebx, ebx
    U "cmpxchg16b (only ZF defined)", cmpxchg16b [rip + buf]
    mov rbx, 0x0fedcba987654321
    mov rax, 0xff
    U "popcnt (defined: control)", popcnt rdx, rax

    /* destination of bsf/bsr with a zero source (Intel: undefined;
       in practice unchanged, including the upper half for 32-bit forms) */
    mov rdx, 0x1122334455667788
    xor eax, eax
    bsf rdx, rax
    SHOW("bsf rdx, 0 -> rdx", rdx)
    mov rdx, 0x1122334455667788
    bsr edx, eax
    SHOW("bsr edx, 0 -> rdx", rdx)
    mov rdx, 0x1122334455667788
    bsf dx, ax
    SHOW("bsf dx, 0 -> rdx", rdx)
    TEST_PASS

.data
.balign 16
buf: .skip 16
save_rax: .quad 0
save_rbx: .quad 0
save_rcx: .quad 0
save_rdx: .quad 0
save_r8: .quad 0
