/* setcc-all: all 16 condition codes through setcc, jcc and cmovcc, for all
 * 32 combinations of CF/ZF/SF/OF/PF.
 *
 * For each flag state the three forms each build a 16-bit mask (bit n =
 * condition n taken, in encoding order o no b ae e ne be a s ns p np l ge le
 * g); the masks must agree with each other and with the table. Also checks
 * that cmovcc with a false condition still zero-extends a 32-bit
 * destination, that setcc writes only its byte (ah included), and that AF
 * and DF do not leak into any condition.
 */
#include "rt.h"

#define CCS o, no, b, ae, e, ne, be, a, s, ns, p, np, l, ge, le, g

TEST_START
    lea r12, [rip + states]
    lea r13, [rip + states_end]
next_state:
    /* setcc into one byte each */
    .set i, 0
    .irp cc, CCS
    push qword ptr [r12]
    popfq
    set\cc byte ptr [rip + sbuf + i]
    .set i, i + 1
    .endr
    /* jcc: 1 if taken; mov does not touch flags */
    push qword ptr [r12]
    popfq
    .set i, 0
    .irp cc, CCS
    mov byte ptr [rip + jbuf + i], 0
    j\cc 1f
    jmp 2f
1:  mov byte ptr [rip + jbuf + i], 1
2:
    .set i, i + 1
    .endr
    /* cmovcc: edx = cond ? 1 : 0 */
    push qword ptr [r12]
    popfq
    mov ecx, 1
    .set i, 0
    .irp cc, CCS
    mov edx, 0
    cmov\cc edx, ecx
    mov byte ptr [rip + cbuf + i], dl
    .set i, i + 1
    .endr
    /* fold the byte arrays into masks */
    lea rdi, [rip + sbuf]
    call fold
    mov r14, rax
    lea rdi, [rip + jbuf]
    call fold
    mov r15, rax
    lea rdi, [rip + cbuf]
    call fold
    mov rbx, rax
    mov rdi, [r12]
    mov [rip + cur], rdi
    SHOW("flags", qword ptr [rip + cur])
    SHOW("  setcc mask", r14)
    CHECKR(r14, r15)
    CHECKR(r14, rbx)
    mov rax, [r12 + 8]
    CHECKR(r14, rax)
    add r12, 16
    cmp r12, r13
    jb next_state

    /* AF and DF do not affect any condition */
    SETF(F_AF | F_DF)
    setbe al
    setl ah
    setp bl
    setne bh
    cld
    SHOW("AF|DF: be/l/p/ne bytes", rax)
    CHECK(rbx, 0x100)
    /* setcc writes one byte: the rest of the register stays */
    mov rax, 0x1122334455667788
    SETF(F_ZF)
    sete ah
    setne al
    SHOW("sete ah; setne al", rax)
    CHECK(rax, 0x1122334455660100)
    /* cmovcc r32 with a false condition zero-extends the destination */
    mov rax, -1
    mov ecx, 5
    clc
    cmovc eax, ecx
    SHOW("cmovc eax, ecx (CF=0)", rax)
    CHECK(rax, 0xffffffff)
    /* cmovcc r64 false leaves it, memory source not required to be read */
    mov rax, -1
    stc
    cmovnc rax, qword ptr [rip + sbuf]
    SHOW("cmovnc rax, [mem] (CF=1)", rax)
    CHECK(rax, -1)
    /* cmov 16-bit true merges */
    mov rax, 0x1111111111111111
    mov ecx, 0x2222
    stc
    cmovc ax, cx
    SHOW("cmovc ax, cx (CF=1)", rax)
    CHECK(rax, 0x1111111111112222)
    TEST_PASS

/* rax = sum of byte[rdi + i] << i for i < 16 */
fold:
    xor eax, eax
    mov ecx, 15
1:  movzx edx, byte ptr [rdi + rcx]
    shl eax, 1
    or eax, edx
    dec ecx
    jns 1b
    ret

.section .rodata
.balign 8
states:
    .quad 0x0, 0xaaaa
    .quad 0x4, 0xa6aa
    .quad 0x800, 0x5aa9
    .quad 0x804, 0x56a9
    .quad 0x80, 0x59aa
    .quad 0x84, 0x55aa
    .quad 0x880, 0xa9a9
    .quad 0x884, 0xa5a9
    .quad 0x40, 0x6a5a
    .quad 0x44, 0x665a
    .quad 0x840, 0x5a59
    .quad 0x844, 0x5659
    .quad 0xc0, 0x595a
    .quad 0xc4, 0x555a
    .quad 0x8c0, 0x6959
    .quad 0x8c4, 0x6559
    .quad 0x1, 0xaa66
    .quad 0x5, 0xa666
    .quad 0x801, 0x5a65
    .quad 0x805, 0x5665
    .quad 0x81, 0x5966
    .quad 0x85, 0x5566
    .quad 0x881, 0xa965
    .quad 0x885, 0xa565
    .quad 0x41, 0x6a56
    .quad 0x45, 0x6656
    .quad 0x841, 0x5a55
    .quad 0x845, 0x5655
    .quad 0xc1, 0x5956
    .quad 0xc5, 0x5556
    .quad 0x8c1, 0x6955
    .quad 0x8c5, 0x6555
states_end:

.bss
sbuf: .skip 16
jbuf: .skip 16
cbuf: .skip 16
cur: .skip 8
