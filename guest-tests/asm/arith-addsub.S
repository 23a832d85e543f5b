/* arith-addsub: add/adc/sub/sbb/cmp/inc/dec/neg at 8/16/32/64 bits.
 *
 * Each table row sets rax = a (with junk above the operand width, to catch
 * wrong partial-register merging and 32-bit zero extension), rbx = b and
 * RFLAGS = the input flags, runs one instruction, then prints and checks the
 * whole of rax and all six arithmetic flags (inc/dec must keep CF; adc/sbb
 * run with CF clear and set). The tail checks memory and immediate forms.
 * With an argument (the count form) the rows are checked, not printed.
 */
#include "rt.h"

TEST_START
    SAVE_ARGC
    RUN_TABLE "add al, bl", t_add8, add al, bl
    RUN_TABLE "adc al, bl", t_adc8, adc al, bl
    RUN_TABLE "sub al, bl", t_sub8, sub al, bl
    RUN_TABLE "sbb al, bl", t_sbb8, sbb al, bl
    RUN_TABLE "cmp al, bl", t_cmp8, cmp al, bl
    RUN_TABLE "inc al", t_inc8, inc al
    RUN_TABLE "dec al", t_dec8, dec al
    RUN_TABLE "neg al", t_neg8, neg al
    RUN_TABLE "add ax, bx", t_add16, add ax, bx
    RUN_TABLE "adc ax, bx", t_adc16, adc ax, bx
    RUN_TABLE "sub ax, bx", t_sub16, sub ax, bx
    RUN_TABLE "sbb ax, bx", t_sbb16, sbb ax, bx
    RUN_TABLE "cmp ax, bx", t_cmp16, cmp ax, bx
    RUN_TABLE "inc ax", t_inc16, inc ax
    RUN_TABLE "dec ax", t_dec16, dec ax
    RUN_TABLE "neg ax", t_neg16, neg ax
    RUN_TABLE "add eax, ebx", t_add32, add eax, ebx
    RUN_TABLE "adc eax, ebx", t_adc32, adc eax, ebx
    RUN_TABLE "sub eax, ebx", t_sub32, sub eax, ebx
    RUN_TABLE "sbb eax, ebx", t_sbb32, sbb eax, ebx
    RUN_TABLE "cmp eax, ebx", t_cmp32, cmp eax, ebx
    RUN_TABLE "inc eax", t_inc32, inc eax
    RUN_TABLE "dec eax", t_dec32, dec eax
    RUN_TABLE "neg eax", t_neg32, neg eax
    RUN_TABLE "add rax, rbx", t_add64, add rax, rbx
    RUN_TABLE "adc rax, rbx", t_adc64, adc rax, rbx
    RUN_TABLE "sub rax, rbx", t_sub64, sub rax, rbx
    RUN_TABLE "sbb rax, rbx", t_sbb64, sbb rax, rbx
    RUN_TABLE "cmp rax, rbx", t_cmp64, cmp rax, rbx
    RUN_TABLE "inc rax", t_inc64, inc rax
    RUN_TABLE "dec rax", t_dec64, dec rax
    RUN_TABLE "neg rax", t_neg64, neg rax

    /* Memory destinations and immediates (sign-extended imm8 and imm32). */
    mov rax, 0x7ffffffffffffffe
    mov [rip + mem], rax
    add qword ptr [rip + mem], 1
    SHOWF("add qword [mem], 1", F_ARITH)
    CHECKF(F_ARITH, F_PF)
    CHECK(qword ptr [rip + mem], 0x7fffffffffffffff)
    add qword ptr [rip + mem], -1
    SHOWF("add qword [mem], -1", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_AF)
    CHECK(qword ptr [rip + mem], 0x7ffffffffffffffe)
    lock add dword ptr [rip + mem], 0x12345678
    SHOWF("lock add dword [mem], 0x12345678", F_ARITH)
    CHECK(qword ptr [rip + mem], 0x7fffffff12345676)
    CHECKF(F_ARITH, F_CF | F_AF)
    stc
    adc word ptr [rip + mem + 2], 0x7fff
    SHOWF("adc word [mem+2], 0x7fff (CF=1)", F_ARITH)
    CHECK(qword ptr [rip + mem], 0x7fffffff92345676)
    CHECKF(F_ARITH, F_AF | F_SF | F_OF)
    sub byte ptr [rip + mem + 7], 0x80
    SHOWF("sub byte [mem+7], 0x80", F_ARITH)
    CHECK(qword ptr [rip + mem], 0xffffffff92345676)
    CHECKF(F_ARITH, F_CF | F_PF | F_SF | F_OF)
    mov rax, 5
    cmp rax, -1
    SHOWF("cmp rax, -1 (rax=5)", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_PF | F_AF)
    mov eax, 0x7f
    add al, 1
    SHOWF("add al, 1 (al=0x7f)", F_ARITH)
    CHECKF(F_ARITH, F_AF | F_SF | F_OF)
    SHOW("rax", rax)
    CHECK(rax, 0x80)
    /* sbb reg, reg: the CF-to-mask idiom */
    stc
    sbb rdx, rdx
    SHOW("sbb rdx, rdx (CF=1)", rdx)
    CHECK(rdx, -1)
    clc
    sbb edx, edx
    SHOW("sbb edx, edx (CF=0)", rdx)
    CHECK(rdx, 0)
    /* ah/bh: the high-byte registers */
    mov rax, 0x1111111111117f22
    mov rbx, 0x2222222222220133
    add ah, bh
    SHOWF("add ah, bh", F_ARITH)
    SHOW("rax", rax)
    CHECK(rax, 0x1111111111118022)
    CHECKF(F_ARITH, F_AF | F_SF | F_OF)
    neg bh
    SHOW("neg bh -> rbx", rbx)
    CHECK(rbx, 0x222222222222ff33)
    TEST_PASS

.section .rodata
.balign 8
t_add8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef002, 0, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef000, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef080, F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef081, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef0ff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef0ff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef002, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef000, F_CF|F_PF|F_ZF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef010, F_AF, F_ARITH)
t_add8_end:
t_adc8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, F_ARITH, 0xdeadbeefcafef001, 0, F_ARITH)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, 0, 0xdeadbeefcafef002, 0, F_ARITH)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef003, F_PF, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef000, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef001, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, 0, 0xdeadbeefcafef080, F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef081, F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef081, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef082, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, 0, 0xdeadbeefcafef0ff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef000, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef0ff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, F_ARITH, 0xdeadbeefcafef000, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, 0, 0xdeadbeefcafef002, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef003, F_CF|F_PF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef000, F_CF|F_PF|F_ZF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, F_ARITH, 0xdeadbeefcafef001, F_CF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, 0, 0xdeadbeefcafef010, F_AF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef011, F_PF|F_AF, F_ARITH)
t_adc8_end:
t_sub8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef0fe, F_SF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef07e, F_PF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef07f, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef001, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef0b5, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef004, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
t_sub8_end:
t_sbb8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, F_ARITH, 0xdeadbeefcafef0ff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef0ff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef0fe, F_SF, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef0fd, F_SF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, 0, 0xdeadbeefcafef07e, F_PF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef07d, F_PF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef07f, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef07e, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, 0, 0xdeadbeefcafef001, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef000, F_PF|F_AF|F_ZF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef0b5, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, F_ARITH, 0xdeadbeefcafef0b4, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, 0, 0xdeadbeefcafef004, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef003, F_CF|F_PF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, F_ARITH, 0xdeadbeefcafef0ff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef0ff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
t_sbb8_end:
t_cmp8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef001, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef0ff, F_SF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef07f, F_PF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef080, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef080, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef05a, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef003, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef080, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef008, F_PF|F_ZF, F_ARITH)
t_cmp8_end:
t_inc8:
    CASE(0xdeadbeefcafef000, 0x0, 0, 0xdeadbeefcafef001, 0, F_ARITH)
    CASE(0xdeadbeefcafef001, 0x0, F_ARITH, 0xdeadbeefcafef002, F_CF, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0x0, 0, 0xdeadbeefcafef000, F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0x0, F_ARITH, 0xdeadbeefcafef080, F_CF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0x0, 0, 0xdeadbeefcafef081, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0x0, F_ARITH, 0xdeadbeefcafef081, F_CF|F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0x0, 0, 0xdeadbeefcafef05b, 0, F_ARITH)
    CASE(0xdeadbeefcafef003, 0x0, F_ARITH, 0xdeadbeefcafef004, F_CF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0x0, 0, 0xdeadbeefcafef081, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0x0, F_ARITH, 0xdeadbeefcafef009, F_CF|F_PF, F_ARITH)
t_inc8_end:
t_dec8:
    CASE(0xdeadbeefcafef000, 0x0, 0, 0xdeadbeefcafef0ff, F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef001, 0x0, F_ARITH, 0xdeadbeefcafef000, F_CF|F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0x0, 0, 0xdeadbeefcafef0fe, F_SF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0x0, F_ARITH, 0xdeadbeefcafef07e, F_CF|F_PF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0x0, 0, 0xdeadbeefcafef07f, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0x0, F_ARITH, 0xdeadbeefcafef07f, F_CF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0x0, 0, 0xdeadbeefcafef059, F_PF, F_ARITH)
    CASE(0xdeadbeefcafef003, 0x0, F_ARITH, 0xdeadbeefcafef002, F_CF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0x0, 0, 0xdeadbeefcafef07f, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0x0, F_ARITH, 0xdeadbeefcafef007, F_CF, F_ARITH)
t_dec8_end:
t_neg8:
    CASE(0xdeadbeefcafef000, 0x0, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafef001, 0x0, F_ARITH, 0xdeadbeefcafef0ff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0x0, 0, 0xdeadbeefcafef001, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0x0, F_ARITH, 0xdeadbeefcafef081, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0x0, 0, 0xdeadbeefcafef080, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0x0, F_ARITH, 0xdeadbeefcafef080, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0x0, 0, 0xdeadbeefcafef0a6, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef003, 0x0, F_ARITH, 0xdeadbeefcafef0fd, F_CF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef080, 0x0, 0, 0xdeadbeefcafef080, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafef008, 0x0, F_ARITH, 0xdeadbeefcafef0f8, F_CF|F_AF|F_SF, F_ARITH)
t_neg8_end:
t_add16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0002, 0, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafe0000, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe8000, F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe8001, F_SF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafeffff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafeffff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafe0002, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe0000, F_CF|F_PF|F_ZF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafe001f, 0, F_ARITH)
t_add16_end:
t_adc16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, F_ARITH, 0xdeadbeefcafe0001, 0, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, 0, 0xdeadbeefcafe0002, 0, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0003, F_PF, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafe0000, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0001, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, 0, 0xdeadbeefcafe8000, F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe8001, F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe8001, F_SF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe8002, F_SF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, 0, 0xdeadbeefcafeffff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafe0000, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafeffff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, F_ARITH, 0xdeadbeefcafe0000, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, 0, 0xdeadbeefcafe0002, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafe0003, F_CF|F_PF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe0000, F_CF|F_PF|F_ZF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, F_ARITH, 0xdeadbeefcafe0001, F_CF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, 0, 0xdeadbeefcafe001f, 0, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafe0020, F_AF, F_ARITH)
t_adc16_end:
t_sub16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafefffe, F_SF, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe7ffe, 0, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe7fff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafe0001, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafeb4b5, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafe0004, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafe0001, F_AF, F_ARITH)
t_sub16_end:
t_sbb16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, F_ARITH, 0xdeadbeefcafeffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafeffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafefffe, F_SF, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafefffd, F_SF, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, 0, 0xdeadbeefcafe7ffe, 0, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe7ffd, 0, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe7fff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe7ffe, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, 0, 0xdeadbeefcafe0001, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_AF|F_ZF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafeb4b5, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, F_ARITH, 0xdeadbeefcafeb4b4, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, 0, 0xdeadbeefcafe0004, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafe0003, F_CF|F_PF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, F_ARITH, 0xdeadbeefcafeffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, 0, 0xdeadbeefcafe0001, F_AF, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_AF|F_ZF, F_ARITH)
t_sbb16_end:
t_cmp16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0001, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafeffff, F_SF, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe7fff, 0, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe8000, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafe8000, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafe5a5a, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafe0003, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe8000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafe0010, F_AF, F_ARITH)
t_cmp16_end:
t_inc16:
    CASE(0xdeadbeefcafe0000, 0x0, 0, 0xdeadbeefcafe0001, 0, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0x0, F_ARITH, 0xdeadbeefcafe0002, F_CF, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0x0, 0, 0xdeadbeefcafe0000, F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0x0, F_ARITH, 0xdeadbeefcafe8000, F_CF|F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0x0, 0, 0xdeadbeefcafe8001, F_SF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0x0, F_ARITH, 0xdeadbeefcafe8001, F_CF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0x0, 0, 0xdeadbeefcafe5a5b, 0, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0x0, F_ARITH, 0xdeadbeefcafe0004, F_CF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0x0, 0, 0xdeadbeefcafe8001, F_SF, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0x0, F_ARITH, 0xdeadbeefcafe0011, F_CF|F_PF, F_ARITH)
t_inc16_end:
t_dec16:
    CASE(0xdeadbeefcafe0000, 0x0, 0, 0xdeadbeefcafeffff, F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0x0, F_ARITH, 0xdeadbeefcafe0000, F_CF|F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0x0, 0, 0xdeadbeefcafefffe, F_SF, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0x0, F_ARITH, 0xdeadbeefcafe7ffe, F_CF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0x0, 0, 0xdeadbeefcafe7fff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0x0, F_ARITH, 0xdeadbeefcafe7fff, F_CF|F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0x0, 0, 0xdeadbeefcafe5a59, F_PF, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0x0, F_ARITH, 0xdeadbeefcafe0002, F_CF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0x0, 0, 0xdeadbeefcafe7fff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0x0, F_ARITH, 0xdeadbeefcafe000f, F_CF|F_PF|F_AF, F_ARITH)
t_dec16_end:
t_neg16:
    CASE(0xdeadbeefcafe0000, 0x0, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0x0, F_ARITH, 0xdeadbeefcafeffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0x0, 0, 0xdeadbeefcafe0001, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0x0, F_ARITH, 0xdeadbeefcafe8001, F_CF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0x0, 0, 0xdeadbeefcafe8000, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0x0, F_ARITH, 0xdeadbeefcafe8000, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0x0, 0, 0xdeadbeefcafea5a6, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0x0, F_ARITH, 0xdeadbeefcafefffd, F_CF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0x0, 0, 0xdeadbeefcafe8000, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0x0, F_ARITH, 0xdeadbeefcafefff0, F_CF|F_PF|F_SF, F_ARITH)
t_neg16_end:
t_add32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0x2, 0, F_ARITH)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0x0, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0x80000000, F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0x80000001, F_SF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0xffffffff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0xffffffff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0x2, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0x0, F_CF|F_PF|F_ZF|F_OF, F_ARITH)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0x1f, 0, F_ARITH)
t_add32_end:
t_adc32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, F_ARITH, 0x1, 0, F_ARITH)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, 0, 0x2, 0, F_ARITH)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0x3, F_PF, F_ARITH)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0x0, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, F_ARITH, 0x1, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, 0, 0x80000000, F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0x80000001, F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0x80000001, F_SF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, F_ARITH, 0x80000002, F_SF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, 0, 0xffffffff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0x0, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0xffffffff, F_PF|F_SF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, F_ARITH, 0x0, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, 0, 0x2, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0x3, F_CF|F_PF|F_AF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0x0, F_CF|F_PF|F_ZF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, F_ARITH, 0x1, F_CF|F_OF, F_ARITH)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, 0, 0x1f, 0, F_ARITH)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0x20, F_AF, F_ARITH)
t_adc32_end:
t_sub32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0xfffffffe, F_SF, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0x7ffffffe, 0, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0x7fffffff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0x1, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0xb4b4b4b5, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0x4, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0x1, F_AF, F_ARITH)
t_sub32_end:
t_sbb32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, F_ARITH, 0xffffffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0xffffffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0xfffffffe, F_SF, F_ARITH)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, F_ARITH, 0xfffffffd, F_SF, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, 0, 0x7ffffffe, 0, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0x7ffffffd, 0, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0x7fffffff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, F_ARITH, 0x7ffffffe, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, 0, 0x1, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0x0, F_PF|F_AF|F_ZF|F_OF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0xb4b4b4b5, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, F_ARITH, 0xb4b4b4b4, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, 0, 0x4, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0x3, F_CF|F_PF|F_AF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, F_ARITH, 0xffffffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, 0, 0x1, F_AF, F_ARITH)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0x0, F_PF|F_AF|F_ZF, F_ARITH)
t_sbb32_end:
t_cmp32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0xdeadbeef00000000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0xdeadbeef00000001, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0xdeadbeefffffffff, F_SF, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0xdeadbeef7fffffff, 0, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0xdeadbeef80000000, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0xdeadbeef80000000, F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0xdeadbeef5a5a5a5a, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0xdeadbeef00000003, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0xdeadbeef80000000, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0xdeadbeef00000010, F_AF, F_ARITH)
t_cmp32_end:
t_inc32:
    CASE(0xdeadbeef00000000, 0x0, 0, 0x1, 0, F_ARITH)
    CASE(0xdeadbeef00000001, 0x0, F_ARITH, 0x2, F_CF, F_ARITH)
    CASE(0xdeadbeefffffffff, 0x0, 0, 0x0, F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0x0, F_ARITH, 0x80000000, F_CF|F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0x0, 0, 0x80000001, F_SF, F_ARITH)
    CASE(0xdeadbeef80000000, 0x0, F_ARITH, 0x80000001, F_CF|F_SF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0x0, 0, 0x5a5a5a5b, 0, F_ARITH)
    CASE(0xdeadbeef00000003, 0x0, F_ARITH, 0x4, F_CF, F_ARITH)
    CASE(0xdeadbeef80000000, 0x0, 0, 0x80000001, F_SF, F_ARITH)
    CASE(0xdeadbeef00000010, 0x0, F_ARITH, 0x11, F_CF|F_PF, F_ARITH)
t_inc32_end:
t_dec32:
    CASE(0xdeadbeef00000000, 0x0, 0, 0xffffffff, F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeef00000001, 0x0, F_ARITH, 0x0, F_CF|F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeefffffffff, 0x0, 0, 0xfffffffe, F_SF, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0x0, F_ARITH, 0x7ffffffe, F_CF, F_ARITH)
    CASE(0xdeadbeef80000000, 0x0, 0, 0x7fffffff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0x0, F_ARITH, 0x7fffffff, F_CF|F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0x0, 0, 0x5a5a5a59, F_PF, F_ARITH)
    CASE(0xdeadbeef00000003, 0x0, F_ARITH, 0x2, F_CF, F_ARITH)
    CASE(0xdeadbeef80000000, 0x0, 0, 0x7fffffff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0xdeadbeef00000010, 0x0, F_ARITH, 0xf, F_CF|F_PF|F_AF, F_ARITH)
t_dec32_end:
t_neg32:
    CASE(0xdeadbeef00000000, 0x0, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xdeadbeef00000001, 0x0, F_ARITH, 0xffffffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeefffffffff, 0x0, 0, 0x1, F_CF|F_AF, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0x0, F_ARITH, 0x80000001, F_CF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeef80000000, 0x0, 0, 0x80000000, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef80000000, 0x0, F_ARITH, 0x80000000, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0x0, 0, 0xa5a5a5a6, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeef00000003, 0x0, F_ARITH, 0xfffffffd, F_CF|F_AF|F_SF, F_ARITH)
    CASE(0xdeadbeef80000000, 0x0, 0, 0x80000000, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0xdeadbeef00000010, 0x0, F_ARITH, 0xfffffff0, F_CF|F_PF|F_SF, F_ARITH)
t_neg32_end:
t_add64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0x1, 0x1, F_ARITH, 0x2, 0, F_ARITH)
    CASE(0xffffffffffffffff, 0x1, 0, 0x0, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x8000000000000000, F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x1, 0, 0x8000000000000001, F_SF, F_ARITH)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0xffffffffffffffff, F_PF|F_SF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0xffffffffffffffff, F_PF|F_SF, F_ARITH)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0x2, F_CF|F_AF, F_ARITH)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x0, F_CF|F_PF|F_ZF|F_OF, F_ARITH)
    CASE(0x10, 0xf, F_ARITH, 0x1f, 0, F_ARITH)
t_add64_end:
t_adc64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0x0, 0x0, F_ARITH, 0x1, 0, F_ARITH)
    CASE(0x1, 0x1, 0, 0x2, 0, F_ARITH)
    CASE(0x1, 0x1, F_ARITH, 0x3, F_PF, F_ARITH)
    CASE(0xffffffffffffffff, 0x1, 0, 0x0, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0xffffffffffffffff, 0x1, F_ARITH, 0x1, F_CF|F_AF, F_ARITH)
    CASE(0x7fffffffffffffff, 0x1, 0, 0x8000000000000000, F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x8000000000000001, F_AF|F_SF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x1, 0, 0x8000000000000001, F_SF, F_ARITH)
    CASE(0x8000000000000000, 0x1, F_ARITH, 0x8000000000000002, F_SF, F_ARITH)
    CASE(0x8000000000000000, 0x7fffffffffffffff, 0, 0xffffffffffffffff, F_PF|F_SF, F_ARITH)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0x0, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0xffffffffffffffff, F_PF|F_SF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, F_ARITH, 0x0, F_CF|F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0x3, 0xffffffffffffffff, 0, 0x2, F_CF|F_AF, F_ARITH)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0x3, F_CF|F_PF|F_AF, F_ARITH)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x0, F_CF|F_PF|F_ZF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x8000000000000000, F_ARITH, 0x1, F_CF|F_OF, F_ARITH)
    CASE(0x10, 0xf, 0, 0x1f, 0, F_ARITH)
    CASE(0x10, 0xf, F_ARITH, 0x20, F_AF, F_ARITH)
t_adc64_end:
t_sub64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0x1, 0x1, F_ARITH, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0xffffffffffffffff, 0x1, 0, 0xfffffffffffffffe, F_SF, F_ARITH)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x7ffffffffffffffe, 0, F_ARITH)
    CASE(0x8000000000000000, 0x1, 0, 0x7fffffffffffffff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0x1, F_AF|F_OF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0xb4b4b4b4b4b4b4b5, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0x4, F_CF|F_AF, F_ARITH)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0x10, 0xf, F_ARITH, 0x1, F_AF, F_ARITH)
t_sub64_end:
t_sbb64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0x0, 0x0, F_ARITH, 0xffffffffffffffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0x1, 0x1, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0x1, 0x1, F_ARITH, 0xffffffffffffffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xffffffffffffffff, 0x1, 0, 0xfffffffffffffffe, F_SF, F_ARITH)
    CASE(0xffffffffffffffff, 0x1, F_ARITH, 0xfffffffffffffffd, F_SF, F_ARITH)
    CASE(0x7fffffffffffffff, 0x1, 0, 0x7ffffffffffffffe, 0, F_ARITH)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x7ffffffffffffffd, 0, F_ARITH)
    CASE(0x8000000000000000, 0x1, 0, 0x7fffffffffffffff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x1, F_ARITH, 0x7ffffffffffffffe, F_AF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x7fffffffffffffff, 0, 0x1, F_AF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0x0, F_PF|F_AF|F_ZF|F_OF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0xb4b4b4b4b4b4b4b5, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, F_ARITH, 0xb4b4b4b4b4b4b4b4, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0x3, 0xffffffffffffffff, 0, 0x4, F_CF|F_AF, F_ARITH)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0x3, F_CF|F_PF|F_AF, F_ARITH)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0x8000000000000000, 0x8000000000000000, F_ARITH, 0xffffffffffffffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0x10, 0xf, 0, 0x1, F_AF, F_ARITH)
    CASE(0x10, 0xf, F_ARITH, 0x0, F_PF|F_AF|F_ZF, F_ARITH)
t_sbb64_end:
t_cmp64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0x1, 0x1, F_ARITH, 0x1, F_PF|F_ZF, F_ARITH)
    CASE(0xffffffffffffffff, 0x1, 0, 0xffffffffffffffff, F_SF, F_ARITH)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x7fffffffffffffff, 0, F_ARITH)
    CASE(0x8000000000000000, 0x1, 0, 0x8000000000000000, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0x8000000000000000, F_AF|F_OF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0x5a5a5a5a5a5a5a5a, F_CF|F_SF|F_OF, F_ARITH)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0x3, F_CF|F_AF, F_ARITH)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x8000000000000000, F_PF|F_ZF, F_ARITH)
    CASE(0x10, 0xf, F_ARITH, 0x10, F_AF, F_ARITH)
t_cmp64_end:
t_inc64:
    CASE(0x0, 0x0, 0, 0x1, 0, F_ARITH)
    CASE(0x1, 0x0, F_ARITH, 0x2, F_CF, F_ARITH)
    CASE(0xffffffffffffffff, 0x0, 0, 0x0, F_PF|F_AF|F_ZF, F_ARITH)
    CASE(0x7fffffffffffffff, 0x0, F_ARITH, 0x8000000000000000, F_CF|F_PF|F_AF|F_SF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x0, 0, 0x8000000000000001, F_SF, F_ARITH)
    CASE(0x8000000000000000, 0x0, F_ARITH, 0x8000000000000001, F_CF|F_SF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0x0, 0, 0x5a5a5a5a5a5a5a5b, 0, F_ARITH)
    CASE(0x3, 0x0, F_ARITH, 0x4, F_CF, F_ARITH)
    CASE(0x8000000000000000, 0x0, 0, 0x8000000000000001, F_SF, F_ARITH)
    CASE(0x10, 0x0, F_ARITH, 0x11, F_CF|F_PF, F_ARITH)
t_inc64_end:
t_dec64:
    CASE(0x0, 0x0, 0, 0xffffffffffffffff, F_PF|F_AF|F_SF, F_ARITH)
    CASE(0x1, 0x0, F_ARITH, 0x0, F_CF|F_PF|F_ZF, F_ARITH)
    CASE(0xffffffffffffffff, 0x0, 0, 0xfffffffffffffffe, F_SF, F_ARITH)
    CASE(0x7fffffffffffffff, 0x0, F_ARITH, 0x7ffffffffffffffe, F_CF, F_ARITH)
    CASE(0x8000000000000000, 0x0, 0, 0x7fffffffffffffff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x0, F_ARITH, 0x7fffffffffffffff, F_CF|F_PF|F_AF|F_OF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0x0, 0, 0x5a5a5a5a5a5a5a59, F_PF, F_ARITH)
    CASE(0x3, 0x0, F_ARITH, 0x2, F_CF, F_ARITH)
    CASE(0x8000000000000000, 0x0, 0, 0x7fffffffffffffff, F_PF|F_AF|F_OF, F_ARITH)
    CASE(0x10, 0x0, F_ARITH, 0xf, F_CF|F_PF|F_AF, F_ARITH)
t_dec64_end:
t_neg64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_ARITH)
    CASE(0x1, 0x0, F_ARITH, 0xffffffffffffffff, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0xffffffffffffffff, 0x0, 0, 0x1, F_CF|F_AF, F_ARITH)
    CASE(0x7fffffffffffffff, 0x0, F_ARITH, 0x8000000000000001, F_CF|F_AF|F_SF, F_ARITH)
    CASE(0x8000000000000000, 0x0, 0, 0x8000000000000000, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0x8000000000000000, 0x0, F_ARITH, 0x8000000000000000, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0x0, 0, 0xa5a5a5a5a5a5a5a6, F_CF|F_PF|F_AF|F_SF, F_ARITH)
    CASE(0x3, 0x0, F_ARITH, 0xfffffffffffffffd, F_CF|F_AF|F_SF, F_ARITH)
    CASE(0x8000000000000000, 0x0, 0, 0x8000000000000000, F_CF|F_PF|F_SF|F_OF, F_ARITH)
    CASE(0x10, 0x0, F_ARITH, 0xfffffffffffffff0, F_CF|F_PF|F_SF, F_ARITH)
t_neg64_end:

.data
.balign 8
mem: .quad 0
