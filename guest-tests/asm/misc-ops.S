/* misc-ops: sign/zero extension, partial registers, exchange and compare-
 * exchange (with their flags and accumulator updates), xadd, adcx/adox,
 * movbe, xlat, lea in all its shapes (including 32- and 16-bit address and
 * operand sizes, which wrap), multi-byte nops, endbr64, pause, fences,
 * prefetch, and rdrand (only its success flag; the value is random).
 */
#include "rt.h"

TEST_START
    /* cbw / cwde / cdqe / cwd / cdq / cqo */
    mov rax, 0x1111111111111180
    cbw
    SHOW("cbw", rax)
    CHECK(rax, 0x111111111111ff80)
    cwde
    SHOW("cwde", rax)
    CHECK(rax, 0xffffff80)
    cdqe
    SHOW("cdqe", rax)
    CHECK(rax, -128)
    mov rdx, 0x5555555555555555
    mov eax, 0x8000
    cwd
    SHOW("cwd -> rdx", rdx)
    CHECK(rdx, 0x555555555555ffff)
    mov eax, 0x7fffffff
    cdq
    SHOW("cdq -> rdx", rdx)
    CHECK(rdx, 0)
    mov rax, -5
    cqo
    CHECK(rdx, -1)
    SAY("cqo")

    /* movsx / movzx / movsxd, partial writes */
    mov rbx, 0x00000000000080ff
    movsx eax, bl
    CHECK(rax, 0xffffffff)
    movsx rax, bx
    CHECK(rax, 0xffffffffffff80ff)
    movzx eax, bh
    CHECK(rax, 0x80)
    movsx ax, bh
    CHECK(rax, 0xff80)
    mov ecx, 0x80000000
    movsxd rcx, ecx
    CHECK(rcx, 0xffffffff80000000)
    SAY("movsx/movzx/movsxd")
    mov rax, -1
    mov al, 0
    CHECK(rax, 0xffffffffffffff00)
    mov ah, 0x12
    CHECK(rax, 0xffffffffffff1200)
    mov ax, 0x3456
    CHECK(rax, 0xffffffffffff3456)
    mov eax, 0x789a
    CHECK(rax, 0x789a)
    mov r8, -1
    mov r8b, 1
    mov r9, -1
    mov r9w, 2
    mov r10, -1
    mov r10d, 3
    CHECK(r8, 0xffffffffffffff01)
    CHECK(r9, 0xffffffffffff0002)
    CHECK(r10, 3)
    mov rsi, -1
    mov sil, 0x44                   /* REX: sil, not dh */
    CHECK(rsi, 0xffffffffffffff44)
    SAY("partial register writes (al, ah, ax, eax, r8b, r9w, r10d, sil)")

    /* xchg */
    mov rax, 1
    mov rbx, 2
    xchg rax, rbx
    CHECK(rax, 2)
    CHECK(rbx, 1)
    mov rax, -1
    mov ecx, 5
    xchg eax, ecx                   /* both zero-extended */
    CHECK(rax, 5)
    CHECK(rcx, 0xffffffff)
    mov qword ptr [rip + mem], 10
    mov rax, 20
    xchg [rip + mem], rax
    CHECK(rax, 10)
    CHECK(qword ptr [rip + mem], 20)
    mov rax, -1
    xchg eax, eax                   /* 87 c0: clears the upper half (not a nop) */
    SHOW("xchg eax, eax", rax)
    CHECK(rax, 0xffffffff)
    mov rax, -1
    nop                             /* 90: the real nop */
    CHECK(rax, -1)
    SAY("xchg forms")

    /* cmpxchg: success sets ZF and stores; failure loads the accumulator */
    mov qword ptr [rip + mem], 100
    mov rax, 100
    mov rbx, 200
    lock cmpxchg [rip + mem], rbx
    SHOWF("cmpxchg success", F_ARITH)
    CHECKF(F_ARITH, F_ZF | F_PF)
    CHECK(qword ptr [rip + mem], 200)
    mov rax, 100
    lock cmpxchg [rip + mem], rbx
    SHOWF("cmpxchg failure", F_ARITH)
    CHECKF(F_ZF | F_CF, F_CF)
    CHECK(rax, 200)
    mov rax, -1
    mov ecx, 7
    mov edx, 7
    cmpxchg ecx, edx                /* eax != ecx: eax := ecx, zero-extended */
    SHOW("cmpxchg ecx, edx failure -> rax", rax)
    CHECK(rax, 7)
    mov rax, 0x1111111111111111
    mov ecx, 0x11111111
    mov edx, 0x22
    cmpxchg ecx, edx                /* success: rax untouched */
    CHECK(rax, 0x1111111111111111)
    CHECK(rcx, 0x22)
    SAY("cmpxchg 32-bit success leaves rax")

    /* cmpxchg8b / cmpxchg16b */
    mov qword ptr [rip + pair], 1
    mov qword ptr [rip + pair + 8], 2
    mov eax, 1
    xor edx, edx
    mov ebx, 0xaaaa
    mov ecx, 0xbbbb
    lock cmpxchg8b [rip + pair]
    SHOWF("cmpxchg8b success", F_ZF)
    CHECKF(F_ZF, F_ZF)
    CHECK(qword ptr [rip + pair], 0x0000bbbb0000aaaa)
    mov rax, 0x0000bbbb0000aaaa
    mov rdx, 2
    mov rbx, 0x1234
    mov rcx, 0x5678
    lock cmpxchg16b [rip + pair]
    SHOWF("cmpxchg16b success", F_ZF)
    CHECKF(F_ZF, F_ZF)
    CHECK(qword ptr [rip + pair + 8], 0x5678)
    xor eax, eax
    xor edx, edx
    lock cmpxchg16b [rip + pair]
    SHOWF("cmpxchg16b failure", F_ZF)
    CHECKF(F_ZF, 0)
    CHECK(rax, 0x1234)
    CHECK(rdx, 0x5678)

    /* xadd */
    mov qword ptr [rip + mem], 5
    mov rax, 3
    lock xadd [rip + mem], rax
    CHECK(rax, 5)
    CHECK(qword ptr [rip + mem], 8)
    mov eax, 0xffffffff
    mov ebx, 1
    xadd eax, ebx
    SHOWF("xadd eax=0xffffffff, 1", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_ZF | F_PF | F_AF)
    CHECK(rbx, 0xffffffff)

    /* adcx uses and sets only CF; adox only OF */
    mov rax, -1
    mov rbx, 1
    SETF(F_OF | F_ZF)
    adcx rax, rbx
    SHOWF("adcx -1 + 1", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_OF | F_ZF)
    CHECK(rax, 0)
    mov rax, -1
    SETF(F_CF)
    adox rax, rbx
    SHOWF("adox -1 + 1", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_OF)
    mov rax, 10
    SETF(F_OF)
    adox rax, rbx
    CHECK(rax, 12)
    SAY("adox adds the OF carry-in")

    /* movbe */
    mov rax, 0x0102030405060708
    movbe [rip + mem], rax
    CHECK(qword ptr [rip + mem], 0x0807060504030201)
    movbe ecx, [rip + mem]
    CHECK(rcx, 0x01020304)
    SAY("movbe")

    /* xlat */
    lea rbx, [rip + xtable]
    mov rax, 0x1111111111111103
    xlatb
    SHOW("xlat [rbx+3]", rax)
    CHECK(rax, 0x11111111111111d3)

    /* lea shapes */
    mov rbx, 0x1000
    mov rcx, 0x10
    lea rax, [rbx + rcx * 8 + 0x7]
    CHECK(rax, 0x1087)
    lea rax, [rcx * 4]
    CHECK(rax, 0x40)
    lea eax, [rbx + rcx - 0x2000]   /* 32-bit result wraps */
    SHOW("lea eax, [rbx+rcx-0x2000]", rax)
    CHECK(rax, 0xfffff010)
    mov rbx, 0x1fffffff0
    lea rax, [ebx + 0x20]           /* addr32: computed in 32 bits */
    SHOW("lea rax, [ebx+0x20]", rax)
    CHECK(rax, 0x10)
    mov rax, -1
    lea ax, [rcx + 0xffff]          /* 16-bit operand: merges */
    SHOW("lea ax, [rcx+0xffff]", rax)
    CHECK(rax, 0xffffffffffff000f)
    mov rbp, 0x100
    lea rax, [rbp]                  /* rbp base needs a disp8 of 0 */
    CHECK(rax, 0x100)
    mov r13, 0x200
    lea rax, [r13 + r13 * 2]
    CHECK(rax, 0x600)
    mov r12, 0x300
    lea rax, [r12 - 1]              /* r12 base needs a SIB */
    CHECK(rax, 0x2ff)
    SAY("lea forms")

    /* nops, hints and fences */
    SETF(F_CF | F_ZF)
    mov rax, 0x77
    .byte 0x0f, 0x1f, 0x00                                  /* nop [rax] */
    .byte 0x0f, 0x1f, 0x44, 0x00, 0x00                      /* nop [rax+rax+0] */
    .byte 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0       /* cs nop word [...] */
    .byte 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0
    endbr64
    pause
    lfence
    mfence
    sfence
    prefetcht0 [rip + mem]
    prefetchnta [rip + mem]
    prefetchw [rip + mem]
    SHOWF("after nops and fences", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_ZF)
    CHECK(rax, 0x77)

    /* rdrand: CF=1 on success; the value is not printed */
    IF_MISSING(1, 0, ecx, 30, no_rdrand)
    mov ecx, 100
1:  rdrand rax
    jc 2f
    loop 1b
    FAIL("rdrand failed 100 times")
2:  SAY("rdrand succeeded")
no_rdrand:
    TEST_PASS

.section .rodata
xtable: .byte 0xd0, 0xd1, 0xd2, 0xd3, 0xd4

.data
.balign 16
mem: .quad 0
.balign 16
pair: .quad 0, 0
