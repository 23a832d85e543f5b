/* avx2: 256-bit integer and FMA operations and the VEX upper-half rules.
 *
 * vpaddd, vpermd, vpsllvd (counts >= 32 give 0), masked vpgatherdd (lanes
 * with a clear mask keep the destination; the mask register is cleared),
 * vpmaskmovd loads and stores next to a PROT_NONE page (masked-off lanes
 * must not fault), vpshufb (per 128-bit lane), vperm2i128,
 * vinserti128/vextracti128, vpcmpeqb + vpmovmskb, vptest flags, an FMA whose
 * single rounding differs from mul-then-add, and the upper-half rules:
 * VEX.128 zeroes bits 128..255, legacy SSE keeps them, vzeroupper clears them.
 */
#include "rt.h"

TEST_START
    IF_MISSING(7, 0, ebx, 5, no_avx2)       /* AVX2 */
    IF_MISSING(1, 0, ecx, 12, no_avx2)      /* FMA */
    vmovdqu ymm1, [rip + yA]        /* dwords 0..7 */
    vmovdqu ymm2, [rip + yB]        /* dwords 100, 200, .., 800 */
    vpaddd ymm0, ymm1, ymm2
    VY(ymm0)
    SHOWV("vpaddd", 4)
    CHECKQ(0, 0xc900000064)
    CHECKQ(3, 0x327000002c2)
    vpermd ymm0, ymm1, ymm2         /* index vector first: identity */
    VY(ymm0)
    CHECKQ(2, 0x00000258000001f4)
    vmovdqu ymm3, [rip + yRev]
    vpermd ymm0, ymm3, ymm2
    VY(ymm0)
    SHOWV("vpermd reverse", 4)
    CHECKQ(0, 0x000002bc00000320)
    CHECKQ(3, 0x00000064000000c8)
    vmovdqu ymm3, [rip + yCnt]
    vpbroadcastd ymm4, [rip + c80000001]
    vpsllvd ymm0, ymm4, ymm3
    VY(ymm0)
    SHOWV("vpsllvd", 4)
    CHECKQ(0, 0x0000000280000001)
    CHECKQ(1, 0x0000000080000000)
    CHECKQ(2, 0x0000001000000000)
    CHECKQ(3, 0x0000000400000000)

    /* masked gather: even lanes only */
    lea rbx, [rip + squares]
    vmovdqu ymm3, [rip + yIdx]
    vmovdqu ymm5, [rip + yEvenMask]
    vpcmpeqd ymm0, ymm0, ymm0       /* destination starts all-ones */
    vpgatherdd ymm0, [rbx + ymm3 * 4], ymm5
    VY(ymm0)
    SHOWV("vpgatherdd even lanes", 4)
    CHECKQ(0, 0xffffffff000003c1)
    CHECKQ(1, 0xffffffff00000019)
    CHECKQ(2, 0xffffffff00000009)
    CHECKQ(3, 0xffffffff00000001)
    VY(ymm5)
    SHOWV("gather mask afterwards", 4)
    CHECKQ(0, 0)
    CHECKQ(3, 0)
    vpxor xmm8, xmm8, xmm8
    vpxor xmm6, xmm6, xmm6
    vpcmpeqq ymm7, ymm7, ymm7
    vpgatherqq ymm6, [rbx + ymm8 * 8], ymm7   /* all four lanes read squares[0..1] */
    VY(ymm6)
    SHOWV("vpgatherqq index 0", 4)
    CHECKQ(0, 0x0000000100000000)
    CHECKQ(3, 0x0000000100000000)

    /* vpmaskmovd next to an inaccessible page */
    mov eax, 9                      /* mmap(0, 8192, RW, PRIVATE|ANON) */
    xor edi, edi
    mov esi, 8192
    mov edx, 3
    mov r10d, 0x22
    mov r8, -1
    xor r9d, r9d
    syscall
    mov r12, rax
    mov eax, 10                     /* mprotect(second page, PROT_NONE) */
    lea rdi, [r12 + 4096]
    mov esi, 4096
    xor edx, edx
    syscall
    CHECK(rax, 0)
    vmovdqu ymm5, [rip + yLowMask]  /* lanes 0..3 */
    vpmaskmovd [r12 + 4096 - 16], ymm5, ymm2
    mov rax, [r12 + 4096 - 16]
    SHOW("vpmaskmovd store before PROT_NONE", rax)
    CHECK(rax, 0x000000c800000064)
    vpcmpeqd ymm0, ymm0, ymm0
    vpmaskmovd ymm0, ymm5, [r12 + 4096 - 16]
    VY(ymm0)
    SHOWV("vpmaskmovd load (upper lanes zeroed)", 4)
    CHECKQ(1, 0x000001900000012c)
    CHECKQ(2, 0)
    CHECKQ(3, 0)

    /* vpshufb works inside each 128-bit lane */
    vmovdqu ymm3, [rip + yBytes]
    vpshufb ymm0, ymm3, [rip + yZeroIdx]
    VY(ymm0)
    SHOWV("vpshufb index 0 per lane", 4)
    CHECKQ(0, 0)
    CHECKQ(2, 0x1010101010101010)
    vperm2i128 ymm0, ymm1, ymm2, 0x21   /* low = ymm1.high, high = ymm2.low */
    VY(ymm0)
    SHOWV("vperm2i128 0x21", 4)
    CHECKQ(0, 0x0000000500000004)
    CHECKQ(2, 0x000000c800000064)
    vextracti128 xmm0, ymm2, 1
    vinserti128 ymm0, ymm1, xmm0, 0
    VY(ymm0)
    SHOWV("vinserti128(vextracti128)", 4)
    CHECKQ(0, 0x00000258000001f4)

    /* compare + movemask, vptest */
    vpcmpeqb ymm0, ymm3, [rip + yBytes]
    vpmovmskb eax, ymm0
    SHOW("vpcmpeqb equal -> vpmovmskb", rax)
    CHECK(rax, 0xffffffff)
    vptest ymm1, ymm2
    SHOWF("vptest A, B", F_ZF | F_CF)
    CHECKF(F_ZF | F_CF, 0)
    vpxor xmm0, xmm0, xmm0
    vptest ymm0, ymm1
    SHOWF("vptest 0, A", F_ZF | F_CF)
    CHECKF(F_ZF | F_CF, F_ZF)

    /* FMA: one rounding */
    vmovsd xmm0, [rip + d_x]        /* 1 + 2^-30 */
    vmovsd xmm1, [rip + d_negsq]    /* -(1 + 2^-29) */
    vfmadd231sd xmm1, xmm0, xmm0    /* x*x - (1 + 2^-29) = 2^-60 exactly */
    vmovq rax, xmm1
    SHOW("fma residual", rax)
    CHECK(rax, 0x3c30000000000000)
    vmulsd xmm2, xmm0, xmm0
    vaddsd xmm2, xmm2, [rip + d_negsq]
    vmovq rax, xmm2
    SHOW("mul then add", rax)
    CHECK(rax, 0)
    vbroadcastsd ymm3, [rip + d_x]
    vmovapd ymm4, ymm3
    vfmadd213pd ymm4, ymm3, [rip + y_negsq]
    VY(ymm4)
    SHOWV("vfmadd213pd residuals", 4)
    CHECKQ(3, 0x3c30000000000000)

    /* upper halves */
    vpcmpeqd ymm6, ymm6, ymm6
    vpaddd xmm6, xmm6, xmm6         /* VEX.128 zeroes 128..255 */
    VY(ymm6)
    SHOWV("after VEX.128 vpaddd", 4)
    CHECKQ(2, 0)
    CHECKQ(0, 0xfffffffefffffffe)
    vpcmpeqd ymm7, ymm7, ymm7
    paddd xmm7, xmm7                /* legacy SSE keeps 128..255 */
    VY(ymm7)
    SHOWV("after legacy paddd", 4)
    CHECKQ(3, 0xffffffffffffffff)
    CHECKQ(1, 0xfffffffefffffffe)
    vzeroupper
    VY(ymm7)
    SHOWV("after vzeroupper", 4)
    CHECKQ(1, 0xfffffffefffffffe)
    CHECKQ(2, 0)
    CHECKQ(3, 0)
    vzeroall
    VY(ymm7)
    CHECKQ(0, 0)
    SAY("vzeroall")
    TEST_PASS

no_avx2:
    SAY("skipped: this CPU lacks AVX2 or FMA")
    TEST_PASS

.section .rodata
.balign 32
yA:    .long 0, 1, 2, 3, 4, 5, 6, 7
yB:    .long 100, 200, 300, 400, 500, 600, 700, 800
yRev:  .long 7, 6, 5, 4, 3, 2, 1, 0
yCnt:  .long 0, 1, 31, 32, 33, 4, 100, 2
yIdx:  .long 31, 0, 5, 10, 3, 8, 1, 2
yEvenMask: .long -1, 0, -1, 0, -1, 0, -1, 0
yLowMask:  .long -1, -1, -1, -1, 0, 0, 0, 0
yBytes: .fill 16, 1, 0
       .fill 16, 1, 0x10
yZeroIdx: .fill 32, 1, 0
y_negsq: .quad 0xbff0000000800000, 0xbff0000000800000, 0xbff0000000800000, 0xbff0000000800000
c80000001: .long 0x80000001
d_x:   .quad 0x3ff0000000400000
d_negsq: .quad 0xbff0000000800000
.balign 4
squares:
    .set i, 0
    .rept 32
    .long i * i
    .set i, i + 1
    .endr
