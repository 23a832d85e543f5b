/* arith-logic: and/or/xor/test/not at 8/16/32/64 bits, plus the idioms a
 * translator tends to special-case (xor r,r; test r,r; and with imm to clear
 * the upper half).
 *
 * Rows check the whole of rax (junk above the operand width) and CF, PF, ZF,
 * SF, OF (AF is undefined after logic ops; not must keep every flag).
 * With an argument (the count form) the rows are checked, not printed.
 */
#include "rt.h"

TEST_START
    SAVE_ARGC
    RUN_TABLE "and al, bl", t_and8, and al, bl
    RUN_TABLE "or al, bl", t_or8, or al, bl
    RUN_TABLE "xor al, bl", t_xor8, xor al, bl
    RUN_TABLE "test al, bl", t_test8, test al, bl
    RUN_TABLE "not al", t_not8, not al
    RUN_TABLE "and ax, bx", t_and16, and ax, bx
    RUN_TABLE "or ax, bx", t_or16, or ax, bx
    RUN_TABLE "xor ax, bx", t_xor16, xor ax, bx
    RUN_TABLE "test ax, bx", t_test16, test ax, bx
    RUN_TABLE "not ax", t_not16, not ax
    RUN_TABLE "and eax, ebx", t_and32, and eax, ebx
    RUN_TABLE "or eax, ebx", t_or32, or eax, ebx
    RUN_TABLE "xor eax, ebx", t_xor32, xor eax, ebx
    RUN_TABLE "test eax, ebx", t_test32, test eax, ebx
    RUN_TABLE "not eax", t_not32, not eax
    RUN_TABLE "and rax, rbx", t_and64, and rax, rbx
    RUN_TABLE "or rax, rbx", t_or64, or rax, rbx
    RUN_TABLE "xor rax, rbx", t_xor64, xor rax, rbx
    RUN_TABLE "test rax, rbx", t_test64, test rax, rbx
    RUN_TABLE "not rax", t_not64, not rax

    /* xor eax, eax zero-extends and sets ZF/PF, clears CF/OF/SF */
    mov rax, -1
    SETF(F_CF | F_OF | F_SF)
    xor eax, eax
    SHOWF("xor eax, eax", F_NOAF)
    CHECK(rax, 0)
    CHECKF(F_NOAF, F_ZF | F_PF)
    /* 32-bit op with a 32-bit result zero-extends even when nothing changes */
    mov rax, 0xffffffff12345678
    and eax, eax
    SHOW("and eax, eax", rax)
    CHECK(rax, 0x12345678)
    mov rax, 0xffffffff12345678
    or eax, 0
    SHOW("or eax, 0", rax)
    CHECK(rax, 0x12345678)
    /* and with sign-extended imm8 */
    mov rax, 0x123456789abcdeff
    and rax, -16
    SHOW("and rax, -16", rax)
    CHECK(rax, 0x123456789abcdef0)
    /* test against memory, byte */
    mov byte ptr [rip + mem], 0x80
    test byte ptr [rip + mem], 0x80
    SHOWF("test byte [mem], 0x80", F_NOAF)
    CHECKF(F_NOAF, F_SF)
    /* lock or / xor on memory */
    lock or qword ptr [rip + mem], 0x100
    lock xor dword ptr [rip + mem], 0x180
    SHOW("mem after lock or/xor", qword ptr [rip + mem])
    CHECK(qword ptr [rip + mem], 0)
    CHECKF(F_NOAF, F_ZF | F_PF)
    /* not on memory keeps flags */
    SETF(F_ARITH)
    not word ptr [rip + mem]
    SHOWF("not word [mem]", F_ARITH)
    CHECKF(F_ARITH, F_ARITH)
    CHECK(qword ptr [rip + mem], 0xffff)
    TEST_PASS

.section .rodata
.balign 8
t_and8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef003, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef080, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef008, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_and8_end:
t_or8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef0ff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef07f, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef081, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef0ff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef0ff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef0ff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef080, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef008, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_or8_end:
t_xor8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef0fe, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef07e, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef081, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef0ff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef0ff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef0fc, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_xor8_end:
t_test8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef0ff, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef07f, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef080, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef080, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef05a, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef003, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef080, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef008, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_test8_end:
t_not8:
    CASE(0xdeadbeefcafef000, 0xcc99e89750422e00, 0, 0xdeadbeefcafef0ff, 0, F_ARITH)
    CASE(0xdeadbeefcafef001, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef0fe, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0ff, 0xcc99e89750422e01, 0, 0xdeadbeefcafef000, 0, F_ARITH)
    CASE(0xdeadbeefcafef07f, 0xcc99e89750422e01, F_ARITH, 0xdeadbeefcafef080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e01, 0, 0xdeadbeefcafef07f, 0, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e7f, F_ARITH, 0xdeadbeefcafef07f, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xcc99e89750422ea5, 0, 0xdeadbeefcafef0a5, 0, F_ARITH)
    CASE(0xdeadbeefcafef003, 0xcc99e89750422eff, F_ARITH, 0xdeadbeefcafef0fc, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef080, 0xcc99e89750422e80, 0, 0xdeadbeefcafef07f, 0, F_ARITH)
    CASE(0xdeadbeefcafef008, 0xcc99e89750422e08, F_ARITH, 0xdeadbeefcafef0f7, F_ARITH, F_ARITH)
t_not8_end:
t_and16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafe0001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafe0003, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe8000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_and16_end:
t_or16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafeffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe7fff, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe8001, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafeffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafeffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafeffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe8000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafe001f, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_or16_end:
t_xor16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafefffe, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe7ffe, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe8001, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafeffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafeffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafefffc, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafe001f, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_xor16_end:
t_test16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe0001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafeffff, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe7fff, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe8000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafe8000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafe5a5a, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafe0003, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe8000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafe0010, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_test16_end:
t_not16:
    CASE(0xdeadbeefcafe0000, 0xcc99e89750420000, 0, 0xdeadbeefcafeffff, 0, F_ARITH)
    CASE(0xdeadbeefcafe0001, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafefffe, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafeffff, 0xcc99e89750420001, 0, 0xdeadbeefcafe0000, 0, F_ARITH)
    CASE(0xdeadbeefcafe7fff, 0xcc99e89750420001, F_ARITH, 0xdeadbeefcafe8000, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750420001, 0, 0xdeadbeefcafe7fff, 0, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750427fff, F_ARITH, 0xdeadbeefcafe7fff, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xcc99e8975042a5a5, 0, 0xdeadbeefcafea5a5, 0, F_ARITH)
    CASE(0xdeadbeefcafe0003, 0xcc99e8975042ffff, F_ARITH, 0xdeadbeefcafefffc, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe8000, 0xcc99e89750428000, 0, 0xdeadbeefcafe7fff, 0, F_ARITH)
    CASE(0xdeadbeefcafe0010, 0xcc99e8975042000f, F_ARITH, 0xdeadbeefcafeffef, F_ARITH, F_ARITH)
t_not16_end:
t_and32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0x1, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0x1, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0x1, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0x3, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0x80000000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_and32_end:
t_or32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0x1, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0xffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0x7fffffff, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0x80000001, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0xffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0xffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0xffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0x80000000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0x1f, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_or32_end:
t_xor32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0xfffffffe, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0x7ffffffe, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0x80000001, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0xffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0xffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0xfffffffc, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0x1f, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_xor32_end:
t_test32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0xdeadbeef00000000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0xdeadbeef00000001, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0xdeadbeefffffffff, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0xdeadbeef7fffffff, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0xdeadbeef80000000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0xdeadbeef80000000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0xdeadbeef5a5a5a5a, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0xdeadbeef00000003, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0xdeadbeef80000000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0xdeadbeef00000010, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_test32_end:
t_not32:
    CASE(0xdeadbeef00000000, 0xcc99e89700000000, 0, 0xffffffff, 0, F_ARITH)
    CASE(0xdeadbeef00000001, 0xcc99e89700000001, F_ARITH, 0xfffffffe, F_ARITH, F_ARITH)
    CASE(0xdeadbeefffffffff, 0xcc99e89700000001, 0, 0x0, 0, F_ARITH)
    CASE(0xdeadbeef7fffffff, 0xcc99e89700000001, F_ARITH, 0x80000000, F_ARITH, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89700000001, 0, 0x7fffffff, 0, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e8977fffffff, F_ARITH, 0x7fffffff, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xcc99e897a5a5a5a5, 0, 0xa5a5a5a5, 0, F_ARITH)
    CASE(0xdeadbeef00000003, 0xcc99e897ffffffff, F_ARITH, 0xfffffffc, F_ARITH, F_ARITH)
    CASE(0xdeadbeef80000000, 0xcc99e89780000000, 0, 0x7fffffff, 0, F_ARITH)
    CASE(0xdeadbeef00000010, 0xcc99e8970000000f, F_ARITH, 0xffffffef, F_ARITH, F_ARITH)
t_not32_end:
t_and64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x1, 0x1, F_ARITH, 0x1, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xffffffffffffffff, 0x1, 0, 0x1, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x1, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x1, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0x3, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x8000000000000000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x10, 0xf, F_ARITH, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_and64_end:
t_or64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x1, 0x1, F_ARITH, 0x1, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xffffffffffffffff, 0x1, 0, 0xffffffffffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x7fffffffffffffff, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x1, 0, 0x8000000000000001, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0xffffffffffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0xffffffffffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0xffffffffffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x8000000000000000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x10, 0xf, F_ARITH, 0x1f, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_or64_end:
t_xor64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x1, 0x1, F_ARITH, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xffffffffffffffff, 0x1, 0, 0xfffffffffffffffe, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x7ffffffffffffffe, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x1, 0, 0x8000000000000001, F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0xffffffffffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0xffffffffffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0xfffffffffffffffc, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x10, 0xf, F_ARITH, 0x1f, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_xor64_end:
t_test64:
    CASE(0x0, 0x0, 0, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x1, 0x1, F_ARITH, 0x1, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xffffffffffffffff, 0x1, 0, 0xffffffffffffffff, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x7fffffffffffffff, 0, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x1, 0, 0x8000000000000000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0x8000000000000000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0x5a5a5a5a5a5a5a5a, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0x3, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x8000000000000000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x10, 0xf, F_ARITH, 0x10, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF|F_OF)
t_test64_end:
t_not64:
    CASE(0x0, 0x0, 0, 0xffffffffffffffff, 0, F_ARITH)
    CASE(0x1, 0x1, F_ARITH, 0xfffffffffffffffe, F_ARITH, F_ARITH)
    CASE(0xffffffffffffffff, 0x1, 0, 0x0, 0, F_ARITH)
    CASE(0x7fffffffffffffff, 0x1, F_ARITH, 0x8000000000000000, F_ARITH, F_ARITH)
    CASE(0x8000000000000000, 0x1, 0, 0x7fffffffffffffff, 0, F_ARITH)
    CASE(0x8000000000000000, 0x7fffffffffffffff, F_ARITH, 0x7fffffffffffffff, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xa5a5a5a5a5a5a5a5, 0, 0xa5a5a5a5a5a5a5a5, 0, F_ARITH)
    CASE(0x3, 0xffffffffffffffff, F_ARITH, 0xfffffffffffffffc, F_ARITH, F_ARITH)
    CASE(0x8000000000000000, 0x8000000000000000, 0, 0x7fffffffffffffff, 0, F_ARITH)
    CASE(0x10, 0xf, F_ARITH, 0xffffffffffffffef, F_ARITH, F_ARITH)
t_not64_end:

.data
.balign 8
mem: .quad 0
