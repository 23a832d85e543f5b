/* avx512: zmm registers (zmm16-31 too), the mask registers k0-k7 and their
 * instructions, merge and zero masking, embedded broadcast, embedded
 * rounding (all four modes), disp8*N compressed displacements, masked
 * loads/stores next to a PROT_NONE page (fault suppression), compress/
 * expand, permutes, ternary logic, gather/scatter (with colliding indices),
 * and one instruction from each extension this CPU has: CD, DQ, BW, VL,
 * IFMA, VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ, BF16, FP16.
 *
 * The test needs AVX512 F, BW, DQ, VL and CD; the other extensions are
 * checked one by one with CPUID and reported as skipped when absent (the
 * output then differs between machines, never between native and
 * translated runs on one machine).
 */
#include "rt.h"

TEST_START
    IF_MISSING(7, 0, ebx, 16, no_avx512)    /* F */
    IF_MISSING(7, 0, ebx, 17, no_avx512)    /* DQ */
    IF_MISSING(7, 0, ebx, 28, no_avx512)    /* CD */
    IF_MISSING(7, 0, ebx, 30, no_avx512)    /* BW */
    IF_MISSING(7, 0, ebx, 31, no_avx512)    /* VL */
    vmovdqu32 zmm1, [rip + zA]      /* dwords 0..15 */
    vmovdqu32 zmm2, [rip + zB]      /* dwords 0x100, 0x200, .. */
    vpaddd zmm0, zmm1, zmm2
    VZ(zmm0)
    SHOWV("vpaddd zmm", 8)
    CHECKQ(0, 0x20100000100)
    CHECKQ(7, 0x100f00000f0e)
    vmovdqa64 zmm17, zmm1           /* EVEX-only registers */
    vmovdqa64 zmm31, zmm2
    vpaddd zmm24, zmm17, zmm31
    vmovdqa64 zmm0, zmm24
    VZ(zmm0)
    CHECKQ(7, 0x100f00000f0e)
    SAY("zmm17 + zmm31 -> zmm24")

    /* mask register instructions */
    mov eax, 0x5a5a
    kmovw k1, eax
    mov eax, 0x0ff0
    kmovw k2, eax
    kandw k3, k1, k2
    korw k4, k1, k2
    kxorw k5, k1, k2
    kxnorw k6, k1, k2
    knotw k7, k1
    kmovw eax, k3
    SHOW("kandw", rax)
    CHECK(rax, 0x0a50)
    kmovw eax, k4
    SHOW("korw", rax)
    CHECK(rax, 0x5ffa)
    kmovw eax, k5
    SHOW("kxorw", rax)
    CHECK(rax, 0x55aa)
    kmovw eax, k6
    SHOW("kxnorw", rax)
    CHECK(rax, 0xaa55)
    kmovw eax, k7
    SHOW("knotw", rax)
    CHECK(rax, 0xa5a5)
    kshiftlw k3, k1, 4
    kmovw eax, k3
    SHOW("kshiftlw 4", rax)
    CHECK(rax, 0xa5a0)
    kshiftrw k3, k1, 4
    kmovw eax, k3
    CHECK(rax, 0x05a5)
    kaddw k3, k1, k2
    kmovw eax, k3
    SHOW("kaddw", rax)
    CHECK(rax, 0x6a4a)
    kunpckbw k3, k1, k2
    kmovw eax, k3
    SHOW("kunpckbw", rax)
    CHECK(rax, 0x5af0)
    mov eax, 0x1234
    kmovw k0, eax
    kmovw ebx, k0
    CHECK(rbx, 0x1234)
    SAY("k0 as an ordinary mask register")
    mov rax, 0x8000000000000001
    kmovq k3, rax
    kmovq [rip + kmem], k3
    kmovq rbx, k3
    CHECKR(rax, rbx)
    CHECK(qword ptr [rip + kmem], 0x8000000000000001)
    SAY("kmovq to/from GPR and memory")
    kortestw k1, k7
    SHOWF("kortestw k1, ~k1", F_ZF | F_CF)
    CHECKF(F_ZF | F_CF, F_CF)
    kxorw k3, k3, k3
    kortestw k3, k3
    SHOWF("kortestw 0, 0", F_ZF | F_CF)
    CHECKF(F_ZF | F_CF, F_ZF)
    ktestw k1, k7
    SHOWF("ktestw k1, ~k1", F_ZF | F_CF)
    CHECKF(F_ZF | F_CF, F_ZF)

    /* merge and zero masking */
    vpbroadcastd zmm0, [rip + dead]
    vpaddd zmm0{k1}, zmm1, zmm2
    VZ(zmm0)
    SHOWV("vpaddd merge-masked k=0x5a5a", 8)
    CHECKQ(0, 0x2010000dead)
    CHECKQ(2, 0xdead00000504)
    vpaddd zmm0{k1}{z}, zmm1, zmm2
    VZ(zmm0)
    SHOWV("vpaddd zero-masked", 8)
    CHECKQ(0, 0x20100000000)
    CHECKQ(7, 0xf0e)
    /* embedded broadcast */
    vpaddd zmm0, zmm1, dword ptr [rip + seven]{1to16}
    VZ(zmm0)
    SHOWV("vpaddd {1to16}", 8)
    CHECKQ(0, 0x800000007)
    CHECKQ(7, 0x1600000015)
    vpaddq zmm0{k1}{z}, zmm1, qword ptr [rip + seven]{1to8}
    VZ(zmm0)
    SHOWV("vpaddq {1to8} zero-masked", 8)
    CHECKQ(0, 0)
    CHECKQ(1, 0x300000002 + 7)

    /* embedded rounding: lanes 0/1 = +-(1 + 0.75 ulp) */
    vmovups zmm3, [rip + fOnes]
    vmovups zmm4, [rip + fTiny]
    vaddps zmm0, zmm3, zmm4, {rn-sae}
    VZ(zmm0)
    SHOWV("vaddps {rn-sae}", 1)
    CHECKQ(0, 0xbf8000013f800001)
    vaddps zmm0, zmm3, zmm4, {rd-sae}
    VZ(zmm0)
    SHOWV("vaddps {rd-sae}", 1)
    CHECKQ(0, 0xbf8000013f800000)
    vaddps zmm0, zmm3, zmm4, {ru-sae}
    VZ(zmm0)
    SHOWV("vaddps {ru-sae}", 1)
    CHECKQ(0, 0xbf8000003f800001)
    vaddps zmm0, zmm3, zmm4, {rz-sae}
    VZ(zmm0)
    SHOWV("vaddps {rz-sae}", 1)
    CHECKQ(0, 0xbf8000003f800000)
    stmxcsr [rip + mxcsr]
    mov eax, [rip + mxcsr]
    and eax, 0x6000
    SHOW("MXCSR.RC unchanged by embedded rounding", rax)
    CHECK(rax, 0)
    vaddps zmm8, zmm3, zmm4         /* MXCSR rounding: nearest */
    vcvtps2dq zmm0, zmm8, {rd-sae}  /* 1+ulp -> 1, -(1+ulp) -> -2 */
    VZ(zmm0)
    CHECKQ(0, 0xfffffffe00000001)
    SAY("vcvtps2dq {rd-sae}")

    /* ternary logic */
    vmovdqu32 zmm5, [rip + zC]
    vmovdqa64 zmm0, zmm1
    vpternlogd zmm0, zmm2, zmm5, 0x96
    VZ(zmm0)
    SHOWV("vpternlogd 0x96 (xor3)", 8)
    CHECKQ(0, 0x0101030000000100)
    CHECKQ(7, 0x0f0f1f000e0e0100)
    vmovdqa64 zmm0, zmm1
    vpternlogd zmm0, zmm2, zmm5, 0xe8
    VZ(zmm0)
    SHOWV("vpternlogd 0xe8 (majority)", 8)
    CHECKQ(2, 0x40500000404)

    /* compress / expand */
    mov eax, 0x8421
    kmovw k2, eax
    vpxord zmm0, zmm0, zmm0
    vpcompressd zmm0{k2}{z}, zmm1
    VZ(zmm0)
    SHOWV("vpcompressd k=0x8421", 8)
    CHECKQ(0, 0x500000000)
    CHECKQ(1, 0xf0000000a)
    CHECKQ(2, 0)
    mov rax, -1
    mov [rip + cbuf], rax
    mov [rip + cbuf + 8], rax
    mov [rip + cbuf + 16], rax
    vpcompressd [rip + cbuf]{k2}, zmm2     /* writes 4 dwords only */
    SHOW("compress to memory cbuf[0]", qword ptr [rip + cbuf])
    SHOW("compress to memory cbuf[2]", qword ptr [rip + cbuf + 16])
    CHECK(qword ptr [rip + cbuf + 8], 0x100000000b00)
    CHECK(qword ptr [rip + cbuf + 16], -1)
    vpexpandd zmm0{k2}{z}, zmm2
    VZ(zmm0)
    SHOWV("vpexpandd k=0x8421", 8)
    CHECKQ(0, 0x100)
    CHECKQ(2, 0x20000000000)
    CHECKQ(7, 0x40000000000)

    /* two-table permute */
    vmovdqu32 zmm6, [rip + zIdx]
    vmovdqa64 zmm0, zmm1
    vpermt2d zmm0, zmm6, zmm2
    VZ(zmm0)
    SHOWV("vpermt2d", 8)
    CHECKQ(0, 0x800000003)
    CHECKQ(6, 0x400001000)
    valignd zmm0, zmm1, zmm2, 3
    VZ(zmm0)
    SHOWV("valignd 3", 8)
    CHECKQ(0, 0x0000050000000400)
    CHECKQ(7, 0x0000000200000001)
    vextracti64x4 ymm0, zmm2, 1
    VY(ymm0)
    CHECKQ(0, 0xa0000000900)
    SAY("vextracti64x4")

    /* disp8*N: [rbx+64] is disp8=1, [rbx+68] needs disp32 */
    lea rbx, [rip + zA]
    vmovdqu32 zmm0, [rbx + 64]
    VZ(zmm0)
    CHECKQ(0, 0x20000000100)
    vmovdqu32 zmm0, [rbx + 68]
    VZ(zmm0)
    CHECKQ(0, 0x30000000200)
    vpaddd zmm0, zmm1, [rbx + 64]{1to16}   /* broadcast: disp8 scaled by 4 */
    VZ(zmm0)
    CHECKQ(0, 0x0000010100000100)
    SAY("compressed and full displacements")

    /* masked store/load next to an inaccessible page */
    mov eax, 9
    xor edi, edi
    mov esi, 8192
    mov edx, 3
    mov r10d, 0x22
    mov r8, -1
    xor r9d, r9d
    syscall
    mov r12, rax
    mov eax, 10
    lea rdi, [r12 + 4096]
    mov esi, 4096
    xor edx, edx
    syscall
    CHECK(rax, 0)
    mov eax, 0x00ff
    kmovw k4, eax
    vmovdqu32 [r12 + 4096 - 32]{k4}, zmm2
    mov rax, [r12 + 4096 - 8]
    SHOW("masked store up to the PROT_NONE page", rax)
    CHECK(rax, 0x80000000700)
    vpternlogd zmm0, zmm0, zmm0, 0xff
    vmovdqu32 zmm0{k4}{z}, [r12 + 4096 - 32]
    VZ(zmm0)
    SHOWV("masked load up to the PROT_NONE page", 8)
    CHECKQ(3, 0x80000000700)
    CHECKQ(4, 0)
    SAY("fault suppression")

    /* gather / scatter */
    lea rbx, [rip + table]
    vpternlogd zmm7, zmm7, zmm7, 0xff
    kxnorw k5, k5, k5
    vmovdqu32 zmm6, [rip + zIdx]
    vpgatherdd zmm7{k5}, [rbx + zmm6 * 4]
    VZ(zmm7)
    SHOWV("vpgatherdd", 8)
    CHECKQ(0, 0x0000004000000009)
    kmovw eax, k5
    CHECK(rax, 0)
    kxnorw k5, k5, k5
    vmovdqu32 zmm6, [rip + zMod4]
    lea rbx, [rip + sbuf]
    vpscatterdd [rbx + zmm6 * 4]{k5}, zmm1
    SHOW("scatter with colliding indices sbuf[0]", qword ptr [rip + sbuf])
    SHOW("sbuf[1]", qword ptr [rip + sbuf + 8])
    CHECK(qword ptr [rip + sbuf], 0x0000000d0000000c)
    CHECK(qword ptr [rip + sbuf + 8], 0x0000000f0000000e)

    /* compares into masks, mask to vector and back (BW, DQ) */
    vpcmpud k1, zmm1, zmm5, 1       /* lt */
    kmovw eax, k1
    SHOW("vpcmpud lt", rax)
    CHECK(rax, 0xfffe)
    vpcmpeqb k2, zmm1, zmm1
    kmovq rax, k2
    SHOW("vpcmpeqb zmm -> 64-bit mask", rax)
    CHECK(rax, -1)
    vpmovm2d zmm0, k1
    vpmovd2m k3, zmm0
    kmovw eax, k3
    CHECK(rax, 0xfffe)
    SAY("vpmovm2d / vpmovd2m")
    vpaddd ymm0{k1}{z}, ymm1, ymm2  /* VL: 256-bit with a mask */
    VY(ymm0)
    CHECKQ(0, 0x20100000000)
    vpxor xmm0, xmm0, xmm0
    vpaddd xmm0{k1}, xmm1, xmm2
    VZ(zmm0)
    CHECKQ(1, 0x40300000302)
    CHECKQ(2, 0)
    SAY("AVX512VL ymm/xmm with masks, upper bits zeroed")
    mov eax, 77
    vpbroadcastd zmm0, eax
    VZ(zmm0)
    CHECKQ(7, 0x0000004d0000004d)
    vpmullq zmm0, zmm1, zmm2
    VZ(zmm0)
    SHOWV("vpmullq", 2)
    CHECKQ(1, 0x110000000600)

    /* one instruction per extension */
    vmovdqu32 zmm6, [rip + zConf]
    vpconflictd zmm0, zmm6
    VZ(zmm0)
    SHOWV("vpconflictd (CD)", 8)
    CHECKQ(2, 0x500000002)
    CHECKQ(7, 0x800000012)
    vplzcntd zmm0, zmm2
    VZ(zmm0)
    SHOWV("vplzcntd (CD)", 8)
    CHECKQ(0, 0x1600000017)
    IF_MISSING(7, 0, ecx, 14, skip1)
    vpopcntd zmm0, zmm5
    VZ(zmm0)
    SHOWV("vpopcntd (VPOPCNTDQ)", 8)
    CHECKQ(7, 0x100000000c)
    jmp done1
skip1:
    SAY("AVX512_VPOPCNTDQ: skipped, not on this CPU")
done1:
    IF_MISSING(7, 0, ecx, 12, skip2)
    vpternlogd zmm7, zmm7, zmm7, 0xff
    vpopcntb zmm0, zmm7
    VZ(zmm0)
    SHOWV("vpopcntb (BITALG)", 1)
    CHECKQ(0, 0x0808080808080808)
    jmp done2
skip2:
    SAY("AVX512_BITALG: skipped, not on this CPU")
done2:
    IF_MISSING(7, 0, ecx, 1, skip3)
    vmovdqu8 zmm6, [rip + zBytesRev]
    vmovdqu8 zmm7, [rip + zBytes]
    vpermb zmm0, zmm6, zmm7
    VZ(zmm0)
    SHOWV("vpermb reverse (VBMI)", 8)
    CHECKQ(0, 0x38393a3b3c3d3e3f)
    jmp done3
skip3:
    SAY("AVX512_VBMI: skipped, not on this CPU")
done3:
    IF_MISSING(7, 0, ecx, 6, skip4)
    vpbroadcastd zmm0, [rip + c12345678]
    vpbroadcastd zmm6, [rip + c9abcdef0]
    vpbroadcastd zmm7, [rip + seven]
    vpaddd zmm7, zmm7, dword ptr [rip + one]{1to16}
    vpshldvd zmm0, zmm6, zmm7
    VZ(zmm0)
    SHOWV("vpshldvd by 8 (VBMI2)", 1)
    CHECKQ(0, 0x3456789a3456789a)
    jmp done4
skip4:
    SAY("AVX512_VBMI2: skipped, not on this CPU")
done4:
    IF_MISSING(7, 0, ecx, 11, skip5)
    vpternlogd zmm6, zmm6, zmm6, 0xff
    vpbroadcastd zmm7, [rip + bytes01]
    vpxord zmm0, zmm0, zmm0
    vpdpbusd zmm0, zmm6, zmm7
    VZ(zmm0)
    SHOWV("vpdpbusd (VNNI)", 1)
    CHECKQ(0, 0x000003fc000003fc)
    jmp done5
skip5:
    SAY("AVX512_VNNI: skipped, not on this CPU")
done5:
    IF_MISSING(7, 0, ebx, 21, skip6)
    vpbroadcastq zmm6, [rip + q52max]
    vpbroadcastq zmm7, [rip + q2]
    vpxorq zmm0, zmm0, zmm0
    vpmadd52luq zmm0, zmm6, zmm7
    VZ(zmm0)
    SHOWV("vpmadd52luq (IFMA)", 1)
    CHECKQ(0, 0x000ffffffffffffe)
    jmp done6
skip6:
    SAY("AVX512_IFMA: skipped, not on this CPU")
done6:
    IF_MISSING(7, 1, eax, 5, skip7)
    vbroadcastss zmm6, [rip + f2]
    vbroadcastss zmm7, [rip + f1]
    vcvtne2ps2bf16 zmm0, zmm6, zmm7
    VZ(zmm0)
    SHOWV("vcvtne2ps2bf16 (BF16)", 8)
    CHECKQ(0, 0x3f803f803f803f80)
    CHECKQ(7, 0x4000400040004000)
    jmp done7
skip7:
    SAY("AVX512_BF16: skipped, not on this CPU")
done7:
    IF_MISSING(7, 0, edx, 23, skip8)
    vpbroadcastw zmm6, [rip + h1]
    vaddph zmm0, zmm6, zmm6
    VZ(zmm0)
    SHOWV("vaddph 1+1 (FP16)", 1)
    CHECKQ(0, 0x4000400040004000)
    jmp done8
skip8:
    SAY("AVX512_FP16: skipped, not on this CPU")
done8:
    vzeroupper
    TEST_PASS

no_avx512:
    SAY("skipped: this CPU lacks AVX512 F/BW/DQ/VL/CD")
    TEST_PASS

.section .rodata
.balign 64
zA:    .long 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
zB:    .long 0x100, 0x200, 0x300, 0x400, 0x500, 0x600, 0x700, 0x800
       .long 0x900, 0xa00, 0xb00, 0xc00, 0xd00, 0xe00, 0xf00, 0x1000
zC:    .set i, 0
       .rept 16
       .long i * 0x01010101
       .set i, i + 1
       .endr
zIdx:  .long 3, 8, 13, 18, 23, 28, 1, 6, 11, 16, 21, 26, 31, 4, 9, 14
zMod4: .long 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3
zConf: .long 1, 2, 1, 3, 2, 1, 4, 4, 5, 6, 7, 8, 9, 1, 2, 3
fOnes: .float 1.0, -1.0
       .fill 14, 4, 0
fTiny: .long 0x33c00000, 0xb3c00000     /* 0.75 ulp of 1.0f */
       .fill 14, 4, 0
zBytes: .set i, 0
       .rept 64
       .byte i
       .set i, i + 1
       .endr
zBytesRev: .set i, 63
       .rept 64
       .byte i
       .set i, i - 1
       .endr
table: .set i, 0
       .rept 32
       .long i * i
       .set i, i + 1
       .endr
dead:  .long 0xdead
seven: .quad 7
one:   .long 1
c12345678: .long 0x12345678
c9abcdef0: .long 0x9abcdef0
bytes01: .long 0x01010101
q52max: .quad 0x000fffffffffffff
q2:    .quad 2
f1:    .float 1.0
f2:    .float 2.0
h1:    .word 0x3c00

.data
.balign 64
cbuf: .skip 64
sbuf: .skip 64
kmem: .quad 0
mxcsr: .long 0
