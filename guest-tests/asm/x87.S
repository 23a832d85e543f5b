/* x87: the legacy floating-point stack, at 80-bit precision.
 *
 * Constants, arithmetic, fsqrt, transcendental instructions (fsin, fcos,
 * fptan, fpatan, fyl2x, f2xm1, fscale, fprem1), comparisons into EFLAGS and
 * into the status word, the control word's precision and rounding fields,
 * integer and BCD conversion, fxch and stack depth (TOP), fxsave/fxrstor,
 * and MMX aliasing the x87 registers (emms). Each result is printed as
 * its 80-bit pattern "mantissa:sign+exponent".
 */
#include "rt.h"

/* pop st(0) and print it as 80 bits */
.macro PT label
    fstp tbyte ptr [rip + t80]
    movzx eax, word ptr [rip + t80 + 8]
    mov [rip + t80hi], rax
    SAY("\label")
    SHOW("  mantissa", qword ptr [rip + t80])
    SHOW("  sign+exp", qword ptr [rip + t80hi])
.endm

TEST_START
    finit
    fnstcw [rip + cw]
    movzx eax, word ptr [rip + cw]
    SHOW("control word after finit", rax)
    CHECK(rax, 0x37f)
    fldpi
    PT "fldpi"
    CHECK(qword ptr [rip + t80], 0xc90fdaa22168c235)
    fldl2e
    PT "fldl2e"
    fld1
    fld qword ptr [rip + three]
    fdivp st(1), st                 /* 1/3 in 64-bit mantissa */
    PT "1/3"
    CHECK(qword ptr [rip + t80], 0xaaaaaaaaaaaaaaab)
    fld qword ptr [rip + two]
    fsqrt
    PT "sqrt 2"
    CHECK(qword ptr [rip + t80], 0xb504f333f9de6484)
    fld qword ptr [rip + one_rad]
    fsin
    PT "fsin 1"
    fld qword ptr [rip + one_rad]
    fcos
    PT "fcos 1"
    fld qword ptr [rip + one_rad]
    fptan                           /* pushes tan, then 1.0 */
    fstp st(0)
    PT "fptan 1"
    fld1
    fld1
    fpatan                          /* atan(1/1) = pi/4 */
    PT "fpatan(1, 1)"
    fld1
    fld qword ptr [rip + ten]
    fyl2x                           /* 1 * log2(10) */
    PT "fyl2x(10, 1)"
    fld qword ptr [rip + half]
    f2xm1                           /* 2^0.5 - 1 */
    PT "f2xm1 0.5"
    fld qword ptr [rip + three]
    fld1
    fscale                          /* 1 * 2^3 */
    fstp st(1)
    PT "fscale 1, 3"
    fld qword ptr [rip + three]
    fld qword ptr [rip + ten]
    fprem1                          /* 10 rem 3 (nearest) = 1 */
    fstp st(1)
    fistp qword ptr [rip + i64]
    SHOW("fprem1(10, 3)", qword ptr [rip + i64])
    CHECK(qword ptr [rip + i64], 1)

    /* comparisons */
    fld qword ptr [rip + two]
    fld qword ptr [rip + three]     /* st0 = 3, st1 = 2 */
    fcomi st, st(1)
    SHOWF("fcomi 3, 2", F_ZF | F_PF | F_CF)
    CHECKF(F_ZF | F_PF | F_CF, 0)
    fxch
    fcomi st, st(1)
    SHOWF("fcomi 2, 3", F_ZF | F_PF | F_CF)
    CHECKF(F_ZF | F_PF | F_CF, F_CF)
    fcom st(1)
    fnstsw ax
    and eax, 0x4500                 /* C3 C2 C0 */
    SHOW("fcom 2, 3: status C3|C2|C0", rax)
    CHECK(rax, 0x100)
    fstp st(0)
    fstp st(0)
    fld qword ptr [rip + qnan]
    fld1
    fucomip st, st(1)
    SHOWF("fucomip 1, NaN", F_ZF | F_PF | F_CF)
    CHECKF(F_ZF | F_PF | F_CF, F_ZF | F_PF | F_CF)
    fstp st(0)
    fnstsw ax
    shr eax, 11
    and eax, 7
    SHOW("TOP after balanced pushes/pops", rax)
    CHECK(rax, 0)
    fld1
    fld1
    fld1
    fnstsw ax
    shr eax, 11
    and eax, 7
    SHOW("TOP after 3 pushes", rax)
    CHECK(rax, 5)
    fstp st(0)
    fstp st(0)
    fstp st(0)

    /* precision control: 24-bit mantissa */
    mov word ptr [rip + cw], 0x007f
    fldcw [rip + cw]
    fld1
    fld qword ptr [rip + three]
    fdivp st(1), st
    PT "1/3 with PC=24 bits"
    CHECK(qword ptr [rip + t80], 0xaaaaab0000000000)
    /* rounding control: down, toward zero */
    mov word ptr [rip + cw], 0x077f
    fldcw [rip + cw]
    fld qword ptr [rip + m2_5]
    fistp qword ptr [rip + i64]
    SHOW("fistp -2.5 RC=down", qword ptr [rip + i64])
    CHECK(qword ptr [rip + i64], -3)
    mov word ptr [rip + cw], 0x0f7f
    fldcw [rip + cw]
    fld qword ptr [rip + m2_5]
    fistp qword ptr [rip + i64]
    CHECK(qword ptr [rip + i64], -2)
    mov word ptr [rip + cw], 0x037f
    fldcw [rip + cw]
    fld qword ptr [rip + m2_5]
    fistp qword ptr [rip + i64]
    SHOW("fistp -2.5 RC=nearest", qword ptr [rip + i64])
    CHECK(qword ptr [rip + i64], -2)
    fld qword ptr [rip + m2_5]
    fisttp qword ptr [rip + i64]    /* always truncates */
    CHECK(qword ptr [rip + i64], -2)
    fild qword ptr [rip + big]
    fistp qword ptr [rip + i64]
    CHECK(qword ptr [rip + i64], 0x7ffffffffffffc01)
    SAY("fild/fistp 64-bit round trip")
    fild qword ptr [rip + bcdval]
    fbstp tbyte ptr [rip + t80]
    SHOW("fbstp 1234567890 (BCD)", qword ptr [rip + t80])
    CHECK(qword ptr [rip + t80], 0x1234567890)
    fbld tbyte ptr [rip + t80]
    fistp qword ptr [rip + i64]
    CHECK(qword ptr [rip + i64], 1234567890)
    SAY("fbld round trip")

    /* fxsave/fxrstor keep the control word and registers */
    mov word ptr [rip + cw], 0x0e7f
    fldcw [rip + cw]
    fldpi
    fxsave [rip + fxarea]
    finit
    fxrstor [rip + fxarea]
    fnstcw [rip + cw]
    movzx eax, word ptr [rip + cw]
    SHOW("control word after fxrstor", rax)
    CHECK(rax, 0x0e7f)
    movzx eax, byte ptr [rip + fxarea + 4]
    SHOW("abridged tag word in fxsave", rax)
    CHECK(rax, 0x80)
    PT "st0 after fxrstor"
    CHECK(qword ptr [rip + t80], 0xc90fdaa22168c234)   /* fldpi rounded toward zero */
    fninit

    /* MMX aliases the x87 registers */
    movq mm0, [rip + mmx_a]
    paddb mm0, [rip + mmx_b]
    movq [rip + i64], mm0
    SHOW("paddb mm0", qword ptr [rip + i64])
    CHECK(qword ptr [rip + i64], 0x0807060504030200)
    fnstenv [rip + env]
    movzx eax, word ptr [rip + env + 8]
    SHOW("x87 tag word while MMX is in use", rax)
    emms
    fnstenv [rip + env]
    movzx eax, word ptr [rip + env + 8]
    SHOW("x87 tag word after emms", rax)
    CHECK(rax, 0xffff)
    TEST_PASS

.section .rodata
.balign 8
two: .double 2.0
three: .double 3.0
ten: .double 10.0
half: .double 0.5
one_rad: .double 1.0
m2_5: .double -2.5
qnan: .quad 0x7ff8000000000000
big: .quad 0x7ffffffffffffc01
bcdval: .quad 1234567890
mmx_a: .byte 0xff, 1, 2, 3, 4, 5, 6, 7
mmx_b: .byte 1, 1, 1, 1, 1, 1, 1, 1

.data
.balign 16
t80: .skip 16
t80hi: .quad 0
i64: .quad 0
cw: .word 0
.balign 16
env: .skip 32
.balign 16
fxarea: .skip 512
