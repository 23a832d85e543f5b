/* sse: a cross-section of SSE, SSE2, SSSE3, SSE4.1 and SSE4.2.
 *
 * Integer lanes (add, multiply, shuffle, align, compare+movemask, saturating
 * add/pack, sad, madd, avg), ptest and pcmpistri flags, crc32, blendv with
 * its implicit xmm0, insert/extract, scalar and packed double/single math,
 * comisd/ucomisd flags including the unordered case, MXCSR rounding control
 * and sticky exception flags, maskmovdqu (implicit rdi) and non-temporal
 * stores. Results are printed as qwords (low first) and checked.
 */
#include "rt.h"

TEST_START
    movdqa xmm1, [rip + vA]         /* bytes 00..0f */
    movdqa xmm2, [rip + vB]         /* bytes f0..ff */

    movdqa xmm0, xmm1
    paddd xmm0, xmm2
    VX(xmm0)
    SHOWV("paddd", 2)
    CHECKQ(0, 0xfefcfaf8f6f4f2f0)
    CHECKQ(1, 0x0f0d0b0807050300)
    movdqa xmm0, xmm1
    pmulld xmm0, xmm2
    VX(xmm0)
    SHOWV("pmulld", 2)
    CHECKQ(0, 0x22619bd0a6d1f000)
    CHECKQ(1, 0x9aa1b3d01e5187c0)
    movdqa xmm0, xmm1
    pshufb xmm0, [rip + vRev]
    VX(xmm0)
    SHOWV("pshufb reverse", 2)
    CHECKQ(0, 0x08090a0b0c0d0e0f)
    CHECKQ(1, 0x0001020304050607)
    movdqa xmm0, xmm1
    pshufb xmm0, xmm2               /* every control byte has bit 7 set */
    VX(xmm0)
    CHECKQ(0, 0)
    CHECKQ(1, 0)
    pshufd xmm0, xmm1, 0x1b
    VX(xmm0)
    SHOWV("pshufd 0x1b", 2)
    CHECKQ(0, 0x0b0a09080f0e0d0c)
    movdqa xmm0, xmm2
    palignr xmm0, xmm1, 4
    VX(xmm0)
    SHOWV("palignr 4", 2)
    CHECKQ(0, 0x0b0a090807060504)
    CHECKQ(1, 0xf3f2f1f00f0e0d0c)
    movdqa xmm0, xmm1
    psadbw xmm0, xmm2
    VX(xmm0)
    SHOWV("psadbw", 2)
    CHECKQ(0, 0x780)
    CHECKQ(1, 0x780)
    movdqa xmm0, xmm1
    pmaddwd xmm0, xmm2
    VX(xmm0)
    SHOWV("pmaddwd", 2)
    CHECKQ(0, 0xff952594ffcdade4)
    movdqa xmm0, xmm1
    pavgb xmm0, xmm2
    VX(xmm0)
    SHOWV("pavgb", 2)
    CHECKQ(1, 0x8786858483828180)
    movdqa xmm0, xmm1
    paddusb xmm0, xmm2
    VX(xmm0)
    SHOWV("paddusb", 2)
    CHECKQ(0, 0xfefcfaf8f6f4f2f0)
    CHECKQ(1, 0xffffffffffffffff)
    movdqa xmm0, [rip + vDw1]
    packssdw xmm0, [rip + vDw2]
    VX(xmm0)
    SHOWV("packssdw", 2)
    CHECKQ(0, 0xfffb000580007fff)
    CHECKQ(1, 0x800080007fff7fff)

    /* compare + movemask */
    movdqa xmm0, xmm1
    pcmpeqb xmm0, [rip + vHalf]
    pmovmskb eax, xmm0
    SHOW("pcmpeqb+pmovmskb", rax)
    CHECK(rax, 0x00ff)
    movdqa xmm0, xmm2
    pcmpgtb xmm0, xmm1              /* signed: f0..ff are negative */
    pmovmskb eax, xmm0
    CHECK(rax, 0)
    movmskps eax, xmm2
    CHECK(rax, 0xf)
    SAY("pcmpgtb signed, movmskps sign bits")

    /* ptest: ZF = (a & b) == 0, CF = (~a & b) == 0 */
    ptest xmm1, xmm2
    SHOWF("ptest A, B", F_ARITH)
    CHECKF(F_ARITH, 0)
    pxor xmm3, xmm3
    ptest xmm3, xmm1
    SHOWF("ptest 0, A", F_ARITH)
    CHECKF(F_ARITH, F_ZF)
    ptest xmm1, xmm1
    SHOWF("ptest A, A", F_ARITH)
    CHECKF(F_ARITH, F_CF)

    /* pcmpistri: index of the first byte of a string found in a set */
    movdqu xmm4, [rip + set_digits]
    movdqu xmm5, [rip + text]
    pcmpistri xmm4, xmm5, 0x00      /* unsigned bytes, equal any, least index */
    SHOWF("pcmpistri flags", F_CF | F_ZF | F_SF | F_OF)
    SHOWD("first digit at", rcx)
    CHECK(rcx, 6)
    CHECKF(F_CF | F_ZF | F_SF, F_CF | F_ZF | F_SF)

    /* crc32 */
    mov eax, 0xffffffff
    mov rbx, 0x0123456789abcdef
    crc32 rax, rbx
    SHOW("crc32 q", rax)
    CHECK(rax, 0x9a4f27dc)
    xor eax, eax
    mov bl, 0x61
    crc32 eax, bl
    SHOW("crc32 b", rax)
    CHECK(rax, 0x93ad1061)

    /* blendvps: implicit xmm0 mask */
    movaps xmm0, [rip + vMask]
    movaps xmm6, xmm1
    blendvps xmm6, xmm2
    VX(xmm6)
    SHOWV("blendvps", 2)
    CHECKQ(0, 0xf7f6f5f403020100)
    CHECKQ(1, 0x0f0e0d0cfbfaf9f8)
    movdqa xmm6, xmm1
    pblendw xmm6, xmm2, 0x81
    VX(xmm6)
    SHOWV("pblendw 0x81", 2)
    CHECKQ(0, 0x070605040302f1f0)
    CHECKQ(1, 0xfffe0d0c0b0a0908)

    /* insert / extract */
    mov rax, 0x1122334455667788
    pinsrq xmm7, rax, 1
    pextrq rbx, xmm7, 1
    CHECK(rbx, 0x1122334455667788)
    pextrb ecx, xmm1, 13
    CHECK(rcx, 13)
    pinsrd xmm7, ecx, 0
    movd edx, xmm7
    CHECK(rdx, 13)
    movq rdx, xmm1
    CHECK(rdx, 0x0706050403020100)
    SAY("pinsrq/pextrq/pextrb/pinsrd/movd/movq")

    /* floating point */
    movsd xmm0, [rip + d_two]
    sqrtsd xmm0, xmm0
    movq rax, xmm0
    SHOW("sqrtsd 2.0", rax)
    CHECK(rax, 0x3ff6a09e667f3bcd)
    movapd xmm0, [rip + d_pair]     /* 1.5, -2.25 */
    mulpd xmm0, [rip + d_pair]
    VX(xmm0)
    SHOWV("mulpd (1.5,-2.25)^2", 2)
    CHECKQ(0, 0x4002000000000000)   /* 2.25 */
    CHECKQ(1, 0x4014400000000000)   /* 5.0625 */
    movaps xmm0, [rip + f_quad]     /* 1, NaN, -0, 3 */
    movaps xmm3, [rip + f_quad2]    /* 2, 1, 0, NaN */
    minps xmm0, xmm3                /* min returns the second operand on NaN or equal */
    VX(xmm0)
    SHOWV("minps with NaN and signed zeros", 2)
    CHECKQ(0, 0x3f8000003f800000)
    CHECKQ(1, 0x7fc0000000000000)
    cvtsi2sd xmm0, qword ptr [rip + i_big]
    movq rax, xmm0
    SHOW("cvtsi2sd 2^53+1 (rounds)", rax)
    CHECK(rax, 0x4340000000000000)
    movsd xmm0, [rip + d_neg_half]
    cvttsd2si rax, xmm0
    cvtsd2si rbx, xmm0
    SHOW("cvttsd2si -2.5", rax)
    SHOW("cvtsd2si -2.5 (nearest even)", rbx)
    CHECK(rax, -2)
    CHECK(rbx, -2)
    roundsd xmm1, xmm0, 1           /* toward -inf */
    cvttsd2si rax, xmm1
    CHECK(rax, -3)
    movsd xmm0, [rip + d_huge]
    cvttsd2si eax, xmm0             /* out of range: integer indefinite */
    SHOW("cvttsd2si 1e20 -> int32", rax)
    CHECK(rax, 0x80000000)

    /* comisd / ucomisd: ZF PF CF, OF SF AF cleared */
    movsd xmm0, [rip + d_two]
    movsd xmm1, [rip + d_pair]
    SETF(F_ARITH)
    comisd xmm0, xmm1
    SHOWF("comisd 2.0, 1.5", F_ARITH)
    CHECKF(F_ARITH, 0)
    comisd xmm1, xmm0
    SHOWF("comisd 1.5, 2.0", F_ARITH)
    CHECKF(F_ARITH, F_CF)
    ucomisd xmm0, xmm0
    SHOWF("ucomisd 2.0, 2.0", F_ARITH)
    CHECKF(F_ARITH, F_ZF)
    movsd xmm1, [rip + d_nan]
    ucomisd xmm0, xmm1
    SHOWF("ucomisd 2.0, NaN", F_ARITH)
    CHECKF(F_ARITH, F_ZF | F_PF | F_CF)

    /* MXCSR: rounding control and sticky flags */
    stmxcsr [rip + saved_mxcsr]
    mov eax, [rip + saved_mxcsr]
    and eax, 0xffc0                 /* drop the sticky flags raised above */
    SHOW("MXCSR control bits at start", rax)
    CHECK(rax, 0x1f80)
    mov dword ptr [rip + tmp_mxcsr], 0x1f80 | 0x6000   /* round toward zero */
    ldmxcsr [rip + tmp_mxcsr]
    movsd xmm0, [rip + d_neg_half]
    cvtsd2si rax, xmm0
    SHOW("cvtsd2si -2.5 with RC=toward zero", rax)
    CHECK(rax, -2)
    mov dword ptr [rip + tmp_mxcsr], 0x1f80 | 0x2000   /* round down */
    ldmxcsr [rip + tmp_mxcsr]
    cvtsd2si rax, xmm0
    CHECK(rax, -3)
    movsd xmm0, [rip + d_one]
    divsd xmm0, [rip + d_three]     /* inexact: sets PE (bit 5) */
    stmxcsr [rip + tmp_mxcsr]
    mov eax, [rip + tmp_mxcsr]
    SHOW("MXCSR after 1/3 rounding down", rax)
    CHECK(rax, 0x3fa0)
    movq rax, xmm0
    SHOW("1/3 rounded down", rax)
    CHECK(rax, 0x3fd5555555555555)
    mov dword ptr [rip + tmp_mxcsr], 0x1f80
    ldmxcsr [rip + tmp_mxcsr]

    /* maskmovdqu stores the bytes selected by the mask to [rdi] */
    lea rdi, [rip + out]
    movdqa xmm0, xmm2
    movdqa xmm3, [rip + vMask]      /* byte 7 and bytes 8..14 selected */
    maskmovdqu xmm0, xmm3
    SHOW("maskmovdqu out[0]", qword ptr [rip + out])
    SHOW("maskmovdqu out[1]", qword ptr [rip + out + 8])
    CHECK(qword ptr [rip + out], 0xf700000000000000)
    CHECK(qword ptr [rip + out + 8], 0x00fefdfcfbfaf9f8)
    /* movntdq + sfence */
    movdqa xmm1, [rip + vA]
    movntdq [rip + out + 16], xmm1
    sfence
    CHECK(qword ptr [rip + out + 24], 0x0f0e0d0c0b0a0908)
    SAY("movntdq + sfence")
    TEST_PASS

.section .rodata
.balign 16
vA:    .byte 0x00,0x01,0x02,0x03,0x04,0x05,0x06,0x07,0x08,0x09,0x0a,0x0b,0x0c,0x0d,0x0e,0x0f
vB:    .byte 0xf0,0xf1,0xf2,0xf3,0xf4,0xf5,0xf6,0xf7,0xf8,0xf9,0xfa,0xfb,0xfc,0xfd,0xfe,0xff
vRev:  .byte 15,14,13,12,11,10,9,8,7,6,5,4,3,2,1,0
vHalf: .byte 0,1,2,3,4,5,6,7,0,0,0,0,0,0,0,0
vMask: .long 0, 0x80000000, 0xffffffff, 0x7fffffff
vDw1:  .long 70000, -70000, 5, -5
vDw2:  .long 32767, 32768, -32768, -32769
d_pair: .double 1.5, -2.25
f_quad: .float 1.0
        .long 0x7fc00000
        .long 0x80000000
        .float 3.0
f_quad2: .float 2.0, 1.0, 0.0
        .long 0x7fc00000
d_two: .double 2.0
d_one: .double 1.0
d_three: .double 3.0
d_neg_half: .double -2.5
d_huge: .double 1e20
d_nan: .quad 0x7ff8000000000000
i_big: .quad 9007199254740993
set_digits: .asciz "0123456789"
       .skip 5
text:  .asciz "abcdef7ghij"
       .skip 4

.data
.balign 16
out: .skip 32
saved_mxcsr: .long 0
tmp_mxcsr: .long 0
