/* bitops: bt/bts/btr/btc (register, immediate and memory forms, including
 * memory bit offsets outside the addressed qword, negative ones too),
 * bsf/bsr, tzcnt/lzcnt/popcnt, BMI1 andn/bextr/blsi/blsmsk/blsr and BMI2
 * bzhi/pdep/pext, bswap.
 *
 * Only defined flags are checked: bt* define CF only (ZF must be kept);
 * bsf/bsr define ZF; tzcnt/lzcnt define CF and ZF; popcnt defines all.
 */
#include "rt.h"

TEST_START
    /* bt reg, reg: offset taken modulo the operand size */
    mov rax, 0x8000000000000010
    mov rbx, 68                 /* 68 mod 64 = 4 */
    SETF(F_ZF)
    bt rax, rbx
    SHOWF("bt rax, 68 (bit 4 set)", F_CF | F_ZF)
    CHECKF(F_CF | F_ZF, F_CF | F_ZF)
    bt eax, 31
    SHOWF("bt eax, 31", F_CF)
    CHECKF(F_CF, 0)
    mov ebx, 0x1f
    bts eax, ebx
    SHOW("bts eax, 31 -> rax", rax)
    SHOWF("  flags", F_CF)
    CHECK(rax, 0x80000010)
    CHECKF(F_CF, 0)
    btr ax, 4
    SHOW("btr ax, 4 -> rax", rax)
    CHECK(rax, 0x80000000)
    CHECKF(F_CF, F_CF)
    btc rax, 63
    SHOW("btc rax, 63 -> rax", rax)
    CHECK(rax, 0x8000000080000000)
    CHECKF(F_CF, 0)

    /* bt mem, reg: the register offset selects any bit in memory */
    lea rdi, [rip + bits + 16]
    mov rbx, 130                /* bits+16+16, bit 2 */
    bts qword ptr [rdi], rbx
    SHOWF("bts [bits+16], 130", F_CF)
    CHECKF(F_CF, 0)
    CHECK(qword ptr [rip + bits + 32], 0x4)
    mov rbx, -1                 /* bit 7 of bits+15 */
    bts qword ptr [rdi], rbx
    SHOWF("bts [bits+16], -1", F_CF)
    CHECKF(F_CF, 0)
    CHECK(qword ptr [rip + bits + 8], 0x8000000000000000)
    mov ebx, -64                /* dword form: bits+16-8, bit 0 */
    btc dword ptr [rdi], ebx
    SHOWF("btc dword [bits+16], -64", F_CF)
    CHECK(qword ptr [rip + bits + 8], 0x8000000000000001)
    mov rbx, -1
    btr qword ptr [rdi], rbx
    SHOWF("btr [bits+16], -1", F_CF)
    CHECKF(F_CF, F_CF)
    CHECK(qword ptr [rip + bits + 8], 1)
    mov bx, 33                  /* word form: bits+16+4, bit 1 */
    bts word ptr [rdi], bx
    CHECK(qword ptr [rip + bits + 16], 0x200000000)
    bt word ptr [rdi], 33       /* imm form: taken modulo 16 -> bit 1 */
    SHOWF("bt word [bits+16], imm 33 (mod 16)", F_CF)
    CHECKF(F_CF, 0)
    lock bts qword ptr [rip + bits + 16], 1
    SHOW("lock bts [bits+16], 1", qword ptr [rip + bits + 16])
    CHECK(qword ptr [rip + bits + 16], 0x200000002)

    /* bsf/bsr */
    mov rax, 0x0000100000000100
    bsf rcx, rax
    bsr rdx, rax
    SHOWF("bsf/bsr flags", F_ZF)
    SHOWD("bsf", rcx)
    SHOWD("bsr", rdx)
    CHECK(rcx, 8)
    CHECK(rdx, 44)
    CHECKF(F_ZF, 0)
    mov eax, 0x80000000
    bsr ecx, eax
    bsf dx, ax
    SHOW("bsr ecx, 0x80000000", rcx)
    CHECK(rcx, 31)
    xor eax, eax
    mov rcx, 0x77
    bsf rcx, rax
    SHOWF("bsf of 0", F_ZF)
    CHECKF(F_ZF, F_ZF)

    /* tzcnt/lzcnt/popcnt */
    mov rax, 0x00f0000000000000
    tzcnt rcx, rax
    SHOWF("tzcnt flags", F_CF | F_ZF)
    SHOWD("tzcnt", rcx)
    CHECK(rcx, 52)
    CHECKF(F_CF | F_ZF, 0)
    lzcnt rdx, rax
    SHOWD("lzcnt", rdx)
    CHECK(rdx, 8)
    xor eax, eax
    tzcnt ecx, eax
    SHOWF("tzcnt of 0", F_CF | F_ZF)
    SHOWD("tzcnt ecx of 0", rcx)
    CHECK(rcx, 32)
    CHECKF(F_CF | F_ZF, F_CF)
    mov ax, 1
    lzcnt cx, ax
    SHOWD("lzcnt cx, 1", rcx)
    CHECKF(F_CF | F_ZF, 0)
    mov ax, 0x8000
    lzcnt cx, ax
    SHOWF("lzcnt cx, 0x8000", F_CF | F_ZF)
    CHECKF(F_CF | F_ZF, F_ZF)
    mov rax, 0xf0f0f0f0f0f0f0f1
    SETF(F_ARITH)
    popcnt rcx, rax
    SHOWD("popcnt", rcx)
    SHOWF("popcnt flags", F_ARITH)
    CHECK(rcx, 33)
    CHECKF(F_ARITH, 0)
    xor eax, eax
    popcnt ecx, eax
    CHECKF(F_ARITH, F_ZF)

    /* BMI1 */
    mov rax, 0xff00ff00ff00ff00
    mov rbx, 0x0ff00ff00ff00ff0
    andn rcx, rax, rbx
    SHOW("andn", rcx)
    SHOWF("andn flags", F_CF | F_ZF | F_SF | F_OF)
    CHECK(rcx, 0x00f000f000f000f0)
    CHECKF(F_CF | F_ZF | F_SF | F_OF, 0)
    mov rax, 0x123456789abcdef0
    mov ebx, 0x0c08             /* start 8, length 12 */
    bextr rcx, rax, rbx
    SHOW("bextr start 8 len 12", rcx)
    CHECK(rcx, 0xcde)
    mov ebx, 0x4038             /* start 56, length 64: runs off the end */
    bextr rcx, rax, rbx
    SHOW("bextr start 56 len 64", rcx)
    CHECK(rcx, 0x12)
    mov rax, 0x0000000000b000
    blsi rcx, rax
    blsmsk rdx, rax
    blsr rsi, rax
    SHOW("blsi", rcx)
    SHOW("blsmsk", rdx)
    SHOW("blsr", rsi)
    SHOWF("blsr flags", F_CF | F_ZF | F_SF | F_OF)
    CHECK(rcx, 0x1000)
    CHECK(rdx, 0x1fff)
    CHECK(rsi, 0xa000)
    CHECKF(F_CF | F_ZF | F_SF | F_OF, 0)
    xor eax, eax
    blsi ecx, eax
    SHOWF("blsi of 0", F_CF | F_ZF)
    CHECKF(F_CF | F_ZF, F_ZF)
    blsr ecx, eax
    SHOWF("blsr of 0", F_CF | F_ZF)
    CHECKF(F_CF | F_ZF, F_CF | F_ZF)

    /* BMI2 */
    mov rax, -1
    mov ebx, 20
    bzhi rcx, rax, rbx
    SHOW("bzhi -1, 20", rcx)
    CHECK(rcx, 0xfffff)
    mov ebx, 0x1ff             /* index 255 > 63: CF=1, no bits cleared */
    bzhi rcx, rax, rbx
    SHOWF("bzhi -1, 255", F_CF)
    CHECK(rcx, -1)
    CHECKF(F_CF, F_CF)
    mov rax, 0x00000000000000ab
    mov rbx, 0xf0f00000000000f0
    pdep rcx, rax, rbx
    SHOW("pdep 0xab into 0xf0f00000000000f0", rcx)
    CHECK(rcx, 0x00a00000000000b0)
    mov rax, 0x123456789abcdef0
    mov rbx, 0xff000000000000ff
    pext rcx, rax, rbx
    SHOW("pext", rcx)
    CHECK(rcx, 0x12f0)
    mov eax, 0xdeadbeef
    mov ebx, 0x80000001
    pext ecx, eax, ebx
    SHOW("pext32", rcx)
    CHECK(rcx, 0x3)

    /* bswap */
    mov rax, 0x0102030405060708
    bswap rax
    SHOW("bswap rax", rax)
    CHECK(rax, 0x0807060504030201)
    bswap eax
    SHOW("bswap eax", rax)
    CHECK(rax, 0x01020304)
    mov r9, 0x1122334455667788
    bswap r9
    CHECK(r9, 0x8877665544332211)
    TEST_PASS

.data
.balign 16
bits: .skip 48
