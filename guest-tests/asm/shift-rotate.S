/* shift-rotate: shl/shr/sar/rol/ror/rcl/rcr by cl at 8/16/32/64 bits,
 * shld/shrd, the shift-by-1 and by-imm encodings, and BMI2 shlx/shrx/sarx/rorx.
 *
 * Table rows use counts 0, 1, 2, 3, width-1, width, width+1, 31, 32, 33,
 * 63, 64, 65 and 200 (the CPU masks them to 5 or 6 bits; rcl/rcr at 8 and
 * 16 bits then rotate modulo 9 and 17). A count of 0 must leave every flag
 * alone. Only architecturally defined flags are checked: OF only for count 1,
 * AF never for shifts, CF not for shl/shr once the count reaches the width;
 * rotates must leave SF/ZF/AF/PF unchanged. flags-undefined prints the rest.
 * With an argument (the count form) the rows are checked, not printed.
 */
#include "rt.h"

TEST_START
    SAVE_ARGC
    RUN_TABLE "shl al, cl", t_shl8, shl al, cl
    RUN_TABLE "shr al, cl", t_shr8, shr al, cl
    RUN_TABLE "sar al, cl", t_sar8, sar al, cl
    RUN_TABLE "rol al, cl", t_rol8, rol al, cl
    RUN_TABLE "ror al, cl", t_ror8, ror al, cl
    RUN_TABLE "rcl al, cl", t_rcl8, rcl al, cl
    RUN_TABLE "rcr al, cl", t_rcr8, rcr al, cl
    RUN_TABLE "shl ax, cl", t_shl16, shl ax, cl
    RUN_TABLE "shr ax, cl", t_shr16, shr ax, cl
    RUN_TABLE "sar ax, cl", t_sar16, sar ax, cl
    RUN_TABLE "rol ax, cl", t_rol16, rol ax, cl
    RUN_TABLE "ror ax, cl", t_ror16, ror ax, cl
    RUN_TABLE "rcl ax, cl", t_rcl16, rcl ax, cl
    RUN_TABLE "rcr ax, cl", t_rcr16, rcr ax, cl
    RUN_TABLE "shl eax, cl", t_shl32, shl eax, cl
    RUN_TABLE "shr eax, cl", t_shr32, shr eax, cl
    RUN_TABLE "sar eax, cl", t_sar32, sar eax, cl
    RUN_TABLE "rol eax, cl", t_rol32, rol eax, cl
    RUN_TABLE "ror eax, cl", t_ror32, ror eax, cl
    RUN_TABLE "rcl eax, cl", t_rcl32, rcl eax, cl
    RUN_TABLE "rcr eax, cl", t_rcr32, rcr eax, cl
    RUN_TABLE "shl rax, cl", t_shl64, shl rax, cl
    RUN_TABLE "shr rax, cl", t_shr64, shr rax, cl
    RUN_TABLE "sar rax, cl", t_sar64, sar rax, cl
    RUN_TABLE "rol rax, cl", t_rol64, rol rax, cl
    RUN_TABLE "ror rax, cl", t_ror64, ror rax, cl
    RUN_TABLE "rcl rax, cl", t_rcl64, rcl rax, cl
    RUN_TABLE "rcr rax, cl", t_rcr64, rcr rax, cl

    /* shift by 1 (D1 encoding) and by imm8 (C1 encoding) */
    mov eax, 0x80000001
    shl eax, 1
    SHOWF("shl eax, 1 (0x80000001)", F_NOAF)
    CHECK(rax, 2)
    CHECKF(F_NOAF, F_CF | F_OF)
    mov rax, -16
    sar rax, 2
    SHOWF("sar rax, 2 (-16)", F_CF | F_ZF | F_SF | F_PF)
    CHECK(rax, -4)
    CHECKF(F_CF | F_ZF | F_SF, F_SF)
    mov ax, 0x8001
    ror ax, 1
    SHOWF("ror ax, 1 (0x8001)", F_CF | F_OF)
    CHECK(rax, 0xffffffffffffc000)
    CHECKF(F_CF | F_OF, F_CF)
    mov byte ptr [rip + mem], 0x81
    rol byte ptr [rip + mem], 1
    SHOWF("rol byte [mem], 1 (0x81)", F_CF | F_OF)
    CHECK(qword ptr [rip + mem], 0x03)
    CHECKF(F_CF | F_OF, F_CF | F_OF)
    shr qword ptr [rip + mem], 1
    SHOWF("shr qword [mem], 1", F_NOAF)
    CHECK(qword ptr [rip + mem], 1)
    CHECKF(F_NOAF, F_CF)

    /* double-precision shifts */
    mov rax, 0x8000000000001234
    mov rbx, 0xf000000000000000
    shld rax, rbx, 4
    SHOW("shld rax, rbx, 4", rax)
    SHOWF("flags", F_CF | F_ZF | F_SF | F_PF)
    CHECK(rax, 0x1234f)
    CHECKF(F_CF | F_ZF | F_SF | F_PF, 0)
    mov eax, 0x12345678
    mov ebx, 0x9abcdef0
    mov cl, 8
    shrd eax, ebx, cl
    SHOW("shrd eax, ebx, cl=8", rax)
    SHOWF("flags", F_CF | F_ZF | F_SF | F_PF)
    CHECK(rax, 0xf0123456)
    CHECKF(F_CF | F_ZF | F_SF | F_PF, F_SF | F_PF)
    mov ax, 0x00ff
    mov bx, 0x8000
    shld ax, bx, 1
    SHOWF("shld ax, bx, 1", F_CF | F_ZF | F_SF | F_OF | F_PF)
    SHOW("rax", rax)
    CHECK(rax, 0xf01201ff)
    CHECKF(F_CF | F_ZF | F_SF | F_OF | F_PF, F_PF)
    mov rax, 0x0123456789abcdef
    mov rbx, rax
    mov cl, 64                  /* masked to 0: nothing changes */
    SETF(F_CF | F_ZF)
    shrd rax, rbx, cl
    SHOWF("shrd rax, rbx, cl=64", F_ARITH)
    CHECK(rax, 0x0123456789abcdef)
    CHECKF(F_ARITH, F_CF | F_ZF)

    /* BMI2: no flags touched, count masked */
    mov rax, 0x8000000000000001
    mov rbx, 65
    SETF(F_ARITH)
    shlx rcx, rax, rbx
    shrx rdx, rax, rbx
    sarx rsi, rax, rbx
    rorx rdi, rax, 4
    SHOWF("after shlx/shrx/sarx/rorx", F_ARITH)
    CHECKF(F_ARITH, F_ARITH)
    SHOW("shlx rcx, rax, 65", rcx)
    SHOW("shrx rdx, rax, 65", rdx)
    SHOW("sarx rsi, rax, 65", rsi)
    SHOW("rorx rdi, rax, 4", rdi)
    CHECK(rcx, 2)
    CHECK(rdx, 0x4000000000000000)
    CHECK(rsi, 0xc000000000000000)
    CHECK(rdi, 0x1800000000000000)
    mov eax, 0x80000001
    mov ebx, 33
    sarx ecx, eax, ebx
    rorx edx, eax, 1
    SHOW("sarx ecx, eax, 33", rcx)
    SHOW("rorx edx, eax, 1", rdx)
    CHECK(rcx, 0xc0000000)
    CHECK(rdx, 0xc0000000)
    TEST_PASS

.section .rodata
.balign 8
t_shl8:
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafef002, F_CF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafef068, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafef008, 0, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff07, 0, 0xdeadbeefcafef000, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff08, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff09, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafef002, F_CF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafef084, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
t_shl8_end:
t_shr8:
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafef040, F_CF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafef016, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafef010, 0, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff07, 0, 0xdeadbeefcafef001, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff08, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff09, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafef040, F_CF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafef061, F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafef000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
t_shr8_end:
t_sar8:
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafef0c0, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafef016, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafef0f0, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff07, 0, 0xdeadbeefcafef0ff, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff08, F_ARITH, 0xdeadbeefcafef0ff, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff09, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafef0ff, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafef0c0, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafef000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafef0e1, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafef0ff, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
t_sar8_end:
t_rol8:
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafef003, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafef069, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafef00c, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff07, 0, 0xdeadbeefcafef061, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff08, F_ARITH, 0xdeadbeefcafef081, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff09, 0, 0xdeadbeefcafef0b4, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafef0c0, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafef003, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafef02d, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafef085, F_CF, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafef081, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rol8_end:
t_ror8:
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafef0c0, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafef096, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafef030, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff07, 0, 0xdeadbeefcafef085, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff08, F_ARITH, 0xdeadbeefcafef081, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff09, 0, 0xdeadbeefcafef02d, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafef003, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafef0c0, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafef0b4, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafef061, F_OF, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafef081, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_ror8_end:
t_rcl8:
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff00, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff01, 0, 0xdeadbeefcafef0b4, F_OF, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafef003, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafef009, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff02, F_ARITH, 0xdeadbeefcafef007, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff03, 0, 0xdeadbeefcafef0d1, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafef00e, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff07, 0, 0xdeadbeefcafef030, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff07, F_ARITH, 0xdeadbeefcafef0e0, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff08, 0, 0xdeadbeefcafef02d, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff08, F_ARITH, 0xdeadbeefcafef0c0, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff09, 0, 0xdeadbeefcafef0c2, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff09, F_ARITH, 0xdeadbeefcafef081, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff1f, 0, 0xdeadbeefcafef0a2, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafef01c, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff20, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff21, 0, 0xdeadbeefcafef0b4, F_OF, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafef003, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafef026, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff3f, F_ARITH, 0xdeadbeefcafef01c, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff40, 0, 0xdeadbeefcafef05a, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafef084, F_CF, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff41, F_ARITH, 0xdeadbeefcafef003, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeffc8, 0, 0xdeadbeefcafef02d, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafef0c0, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rcl8_end:
t_rcr8:
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff00, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff01, 0, 0xdeadbeefcafef02d, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafef0c0, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafef030, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff02, F_ARITH, 0xdeadbeefcafef0e0, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff03, 0, 0xdeadbeefcafef08b, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafef070, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff07, 0, 0xdeadbeefcafef009, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff07, F_ARITH, 0xdeadbeefcafef007, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff08, 0, 0xdeadbeefcafef0b4, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff08, F_ARITH, 0xdeadbeefcafef003, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff09, 0, 0xdeadbeefcafef0c2, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff09, F_ARITH, 0xdeadbeefcafef081, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff1f, 0, 0xdeadbeefcafef045, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafef038, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafef0c2, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff20, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff21, 0, 0xdeadbeefcafef02d, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafef0c0, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafef04c, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff3f, F_ARITH, 0xdeadbeefcafef038, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeff40, 0, 0xdeadbeefcafef05a, 0, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafef081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafef0c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafef061, F_OF, F_ARITH)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeff41, F_ARITH, 0xdeadbeefcafef0c0, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafef05a, 0xdeadbeefcafeffc8, 0, 0xdeadbeefcafef0b4, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafef081, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafef003, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rcr8_end:
t_shl16:
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafe0002, F_CF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafe6968, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafe0408, 0, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff0f, 0, 0xdeadbeefcafe0000, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff10, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff11, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafe0002, F_CF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafe8081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafe8784, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafe0100, F_PF, F_CF|F_PF|F_ZF|F_SF)
t_shl16_end:
t_shr16:
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafe4000, F_CF|F_PF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafe1696, F_CF|F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafe1010, 0, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff0f, 0, 0xdeadbeefcafe0001, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff10, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff11, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafe0000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafe4000, F_CF|F_PF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafe8081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafe61e1, F_PF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafe0080, 0, F_CF|F_PF|F_ZF|F_SF)
t_shr16_end:
t_sar16:
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafec000, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafe1696, F_CF|F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafef010, F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff0f, 0, 0xdeadbeefcafeffff, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff10, F_ARITH, 0xdeadbeefcafeffff, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff11, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafeffff, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafec000, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafe0000, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafe8081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafee1e1, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafeff80, F_SF, F_CF|F_PF|F_ZF|F_SF)
t_sar16_end:
t_rol16:
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafe0003, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafe6969, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafe040c, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff0f, 0, 0xdeadbeefcafe61e1, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff10, F_ARITH, 0xdeadbeefcafe8001, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff11, 0, 0xdeadbeefcafeb4b4, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafec040, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafe0003, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafe2d2d, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafe8081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafe8785, F_CF, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafe0180, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rol16_end:
t_ror16:
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafec000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafe9696, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafe3010, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff0f, 0, 0xdeadbeefcafe8785, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff10, F_ARITH, 0xdeadbeefcafe8001, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff11, 0, 0xdeadbeefcafe2d2d, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafe0103, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafec000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafeb4b4, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafe8081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafe61e1, F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafe0180, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_ror16_end:
t_rcl16:
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff00, F_ARITH, 0xdeadbeefcafe8001, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff01, 0, 0xdeadbeefcafeb4b4, F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafe0103, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafe0f09, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff02, F_ARITH, 0xdeadbeefcafe0007, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff03, 0, 0xdeadbeefcafed2d1, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafe040e, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff0f, 0, 0xdeadbeefcafe30f0, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff0f, F_ARITH, 0xdeadbeefcafee000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff10, 0, 0xdeadbeefcafe2d2d, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff10, F_ARITH, 0xdeadbeefcafec040, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff11, 0, 0xdeadbeefcafec3c2, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff11, F_ARITH, 0xdeadbeefcafe8001, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff1f, 0, 0xdeadbeefcafe8b4b, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafe7010, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff20, F_ARITH, 0xdeadbeefcafe8001, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff21, 0, 0xdeadbeefcafeb4b4, F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafe0103, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafe9878, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff3f, F_ARITH, 0xdeadbeefcafe7000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff40, 0, 0xdeadbeefcafe5a5a, 0, F_ARITH)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafe8081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafe8784, F_CF, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff41, F_ARITH, 0xdeadbeefcafe0003, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeffc8, 0, 0xdeadbeefcafe5a2d, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafe81c0, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rcl16_end:
t_rcr16:
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff00, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff00, F_ARITH, 0xdeadbeefcafe8001, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff01, 0, 0xdeadbeefcafe2d2d, 0, F_ARITH)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff01, F_ARITH, 0xdeadbeefcafec040, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff02, 0, 0xdeadbeefcafe30f0, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff02, F_ARITH, 0xdeadbeefcafee000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff03, 0, 0xdeadbeefcafe8b4b, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff03, F_ARITH, 0xdeadbeefcafe7010, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff0f, 0, 0xdeadbeefcafe0f09, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff0f, F_ARITH, 0xdeadbeefcafe0007, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff10, 0, 0xdeadbeefcafeb4b4, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff10, F_ARITH, 0xdeadbeefcafe0103, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff11, 0, 0xdeadbeefcafec3c2, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff11, F_ARITH, 0xdeadbeefcafe8001, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff1f, 0, 0xdeadbeefcafed2d1, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff1f, F_ARITH, 0xdeadbeefcafe040e, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff20, 0, 0xdeadbeefcafec3c2, 0, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff20, F_ARITH, 0xdeadbeefcafe8001, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff21, 0, 0xdeadbeefcafe2d2d, 0, F_ARITH)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff21, F_ARITH, 0xdeadbeefcafec040, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff3f, 0, 0xdeadbeefcafe1e13, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff3f, F_ARITH, 0xdeadbeefcafe000e, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeff40, 0, 0xdeadbeefcafe5a5a, 0, F_ARITH)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeff40, F_ARITH, 0xdeadbeefcafe8081, F_ARITH, F_ARITH)
    CASE(0xdeadbeefcafec3c2, 0xdeadbeefcafeff41, 0, 0xdeadbeefcafe61e1, F_OF, F_ARITH)
    CASE(0xdeadbeefcafe8001, 0xdeadbeefcafeff41, F_ARITH, 0xdeadbeefcafec000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefcafe5a5a, 0xdeadbeefcafeffc8, 0, 0xdeadbeefcafeb45a, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefcafe8081, 0xdeadbeefcafeffc8, F_ARITH, 0xdeadbeefcafe0380, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rcr16_end:
t_shl32:
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff01, F_ARITH, 0x2, F_CF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x69696968, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff03, F_ARITH, 0x80400, F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff1f, 0, 0x0, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff20, F_ARITH, 0x80000001, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff21, 0, 0xb4b4b4b4, F_PF|F_SF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff1f, F_ARITH, 0x0, F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff21, F_ARITH, 0x2, F_CF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0x0, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff40, F_ARITH, 0x80010080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff41, 0, 0x87878784, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeffc8, F_ARITH, 0x100, F_PF, F_CF|F_PF|F_ZF|F_SF)
t_shl32_end:
t_shr32:
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff01, F_ARITH, 0x40000000, F_CF|F_PF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x16969696, F_CF|F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff03, F_ARITH, 0x10002010, 0, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff1f, 0, 0x1, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff20, F_ARITH, 0x80000001, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff21, 0, 0x2d2d2d2d, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff1f, F_ARITH, 0x1, 0, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff21, F_ARITH, 0x40000000, F_CF|F_PF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0x0, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff40, F_ARITH, 0x80010080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff41, 0, 0x61e1e1e1, F_PF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeffc8, F_ARITH, 0x800000, F_PF, F_CF|F_PF|F_ZF|F_SF)
t_shr32_end:
t_sar32:
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff01, F_ARITH, 0xc0000000, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x16969696, F_CF|F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff03, F_ARITH, 0xf0002010, F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff1f, 0, 0xffffffff, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff20, F_ARITH, 0x80000001, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff21, 0, 0x2d2d2d2d, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff1f, F_ARITH, 0xffffffff, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff21, F_ARITH, 0xc0000000, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0x0, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff40, F_ARITH, 0x80010080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff41, 0, 0xe1e1e1e1, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeffc8, F_ARITH, 0xff800000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
t_sar32_end:
t_rol32:
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff01, F_ARITH, 0x3, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x69696969, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff03, F_ARITH, 0x80404, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff1f, 0, 0x61e1e1e1, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff20, F_ARITH, 0x80000001, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff21, 0, 0xb4b4b4b4, F_OF, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff1f, F_ARITH, 0x40008040, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff21, F_ARITH, 0x3, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0x2d2d2d2d, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff40, F_ARITH, 0x80010080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff41, 0, 0x87878785, F_CF, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeffc8, F_ARITH, 0x180, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rol32_end:
t_ror32:
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff01, F_ARITH, 0xc0000000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x96969696, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff03, F_ARITH, 0x10002010, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff1f, 0, 0x87878785, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff20, F_ARITH, 0x80000001, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff21, 0, 0x2d2d2d2d, 0, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff1f, F_ARITH, 0x20101, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff21, F_ARITH, 0xc0000000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0xb4b4b4b4, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff40, F_ARITH, 0x80010080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff41, 0, 0x61e1e1e1, F_OF, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeffc8, F_ARITH, 0x1800000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_ror32_end:
t_rcl32:
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff00, F_ARITH, 0x80000001, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff01, 0, 0xb4b4b4b4, F_OF, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff01, F_ARITH, 0x20101, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff02, 0, 0xf0f0f09, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff02, F_ARITH, 0x7, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff03, 0, 0xd2d2d2d1, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff03, F_ARITH, 0x80406, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff1f, 0, 0x30f0f0f0, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff1f, F_ARITH, 0xe0000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff20, 0, 0x5a5a5a5a, 0, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff20, F_ARITH, 0x80010080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff21, 0, 0x87878784, F_CF, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff21, F_ARITH, 0x3, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff1f, 0, 0x16969696, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff1f, F_ARITH, 0x60004020, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff20, F_ARITH, 0x80000001, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff21, 0, 0xb4b4b4b4, F_OF, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff21, F_ARITH, 0x20101, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff3f, 0, 0x30f0f0f0, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff3f, F_ARITH, 0xe0000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff40, 0, 0x5a5a5a5a, 0, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff40, F_ARITH, 0x80010080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff41, 0, 0x87878784, F_CF, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff41, F_ARITH, 0x3, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeffc8, 0, 0x5a5a5a2d, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeffc8, F_ARITH, 0x10080c0, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rcl32_end:
t_rcr32:
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff00, F_ARITH, 0x80000001, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff01, 0, 0x2d2d2d2d, 0, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff01, F_ARITH, 0xc0008040, F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff02, 0, 0x30f0f0f0, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff02, F_ARITH, 0xe0000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff03, 0, 0x8b4b4b4b, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff03, F_ARITH, 0x30002010, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff1f, 0, 0xf0f0f09, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff1f, F_ARITH, 0x7, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff20, 0, 0x5a5a5a5a, 0, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff20, F_ARITH, 0x80010080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff21, 0, 0x61e1e1e1, F_OF, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff21, F_ARITH, 0xc0000000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff1f, 0, 0x69696968, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff1f, F_ARITH, 0x40203, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c2, 0, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff20, F_ARITH, 0x80000001, F_ARITH, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff21, 0, 0x2d2d2d2d, 0, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff21, F_ARITH, 0xc0008040, F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff3f, 0, 0xf0f0f09, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff3f, F_ARITH, 0x7, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeff40, 0, 0x5a5a5a5a, 0, F_ARITH)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeff40, F_ARITH, 0x80010080, F_ARITH, F_ARITH)
    CASE(0xdeadbeefc3c3c3c2, 0xdeadbeefcafeff41, 0, 0x61e1e1e1, F_OF, F_ARITH)
    CASE(0xdeadbeef80000001, 0xdeadbeefcafeff41, F_ARITH, 0xc0000000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xdeadbeef5a5a5a5a, 0xdeadbeefcafeffc8, 0, 0xb45a5a5a, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xdeadbeef80010080, 0xdeadbeefcafeffc8, F_ARITH, 0x1800100, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rcr32_end:
t_shl64:
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c3c3c3c3c2, 0, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff01, F_ARITH, 0x2, F_CF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x6969696969696968, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff03, F_ARITH, 0x8000000000400, F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff3f, 0, 0x0, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff40, F_ARITH, 0x8000000000000001, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff41, 0, 0xb4b4b4b4b4b4b4b4, F_PF|F_SF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff1f, F_ARITH, 0x4000000000, F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c200000000, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff21, F_ARITH, 0x200000000, F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0x0, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff40, F_ARITH, 0x8001000000000080, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff41, 0, 0x8787878787878784, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000001, 0xdeadbeefcafeffc8, F_ARITH, 0x100, F_PF, F_CF|F_PF|F_ZF|F_SF)
t_shl64_end:
t_shr64:
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c3c3c3c3c2, 0, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff01, F_ARITH, 0x4000000000000000, F_CF|F_PF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x1696969696969696, F_CF|F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff03, F_ARITH, 0x1000200000000010, 0, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff3f, 0, 0x1, F_CF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff40, F_ARITH, 0x8000000000000001, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff41, 0, 0x2d2d2d2d2d2d2d2d, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff1f, F_ARITH, 0x100020000, F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c3, F_CF|F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff21, F_ARITH, 0x40000000, F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0x0, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff40, F_ARITH, 0x8001000000000080, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff41, 0, 0x61e1e1e1e1e1e1e1, F_PF|F_OF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000001, 0xdeadbeefcafeffc8, F_ARITH, 0x80000000000000, F_PF, F_CF|F_PF|F_ZF|F_SF)
t_shr64_end:
t_sar64:
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c3c3c3c3c2, 0, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff01, F_ARITH, 0xc000000000000000, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x1696969696969696, F_CF|F_PF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff03, F_ARITH, 0xf000200000000010, F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff3f, 0, 0xffffffffffffffff, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff40, F_ARITH, 0x8000000000000001, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff41, 0, 0x2d2d2d2d2d2d2d2d, F_PF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff1f, F_ARITH, 0xffffffff00020000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff20, 0, 0xffffffffc3c3c3c3, F_CF|F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff21, F_ARITH, 0xffffffffc0000000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0x0, F_CF|F_PF|F_ZF, F_CF|F_PF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff40, F_ARITH, 0x8001000000000080, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff41, 0, 0xe1e1e1e1e1e1e1e1, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF|F_OF)
    CASE(0x8000000000000001, 0xdeadbeefcafeffc8, F_ARITH, 0xff80000000000000, F_PF|F_SF, F_CF|F_PF|F_ZF|F_SF)
t_sar64_end:
t_rol64:
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c3c3c3c3c2, 0, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff01, F_ARITH, 0x3, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x6969696969696969, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff03, F_ARITH, 0x8000000000404, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff3f, 0, 0x61e1e1e1e1e1e1e1, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff40, F_ARITH, 0x8000000000000001, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff41, 0, 0xb4b4b4b4b4b4b4b4, F_OF, F_ARITH)
    CASE(0x8001000000000080, 0xdeadbeefcafeff1f, F_ARITH, 0x4040008000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c2c3c3c3c3, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff21, F_ARITH, 0x300000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0x2d2d2d2d2d2d2d2d, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff40, F_ARITH, 0x8001000000000080, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff41, 0, 0x8787878787878785, F_CF, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeffc8, F_ARITH, 0x180, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rol64_end:
t_ror64:
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c3c3c3c3c2, 0, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff01, F_ARITH, 0xc000000000000000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff02, 0, 0x9696969696969696, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff03, F_ARITH, 0x1000200000000010, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff3f, 0, 0x8787878787878785, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff40, F_ARITH, 0x8000000000000001, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff41, 0, 0x2d2d2d2d2d2d2d2d, 0, F_ARITH)
    CASE(0x8001000000000080, 0xdeadbeefcafeff1f, F_ARITH, 0x10100020000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c2c3c3c3c3, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff21, F_ARITH, 0xc0000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff3f, 0, 0xb4b4b4b4b4b4b4b4, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff40, F_ARITH, 0x8001000000000080, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff41, 0, 0x61e1e1e1e1e1e1e1, F_OF, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeffc8, F_ARITH, 0x180000000000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_ror64_end:
t_rcl64:
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c3c3c3c3c2, 0, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff00, F_ARITH, 0x8000000000000001, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff01, 0, 0xb4b4b4b4b4b4b4b4, F_OF, F_ARITH)
    CASE(0x8001000000000080, 0xdeadbeefcafeff01, F_ARITH, 0x2000000000101, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff02, 0, 0xf0f0f0f0f0f0f09, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff02, F_ARITH, 0x7, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff03, 0, 0xd2d2d2d2d2d2d2d1, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff03, F_ARITH, 0x8000000000406, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff3f, 0, 0x30f0f0f0f0f0f0f0, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff3f, F_ARITH, 0xe000000000000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff40, 0, 0x5a5a5a5a5a5a5a5a, 0, F_ARITH)
    CASE(0x8001000000000080, 0xdeadbeefcafeff40, F_ARITH, 0x8001000000000080, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff41, 0, 0x8787878787878784, F_CF, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff41, F_ARITH, 0x3, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff1f, 0, 0x2d2d2d2d16969696, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff1f, F_ARITH, 0x4060004000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff20, 0, 0xc3c3c3c261e1e1e1, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff20, F_ARITH, 0x1c0000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff21, 0, 0xb4b4b4b45a5a5a5a, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff21, F_ARITH, 0x10180010000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff3f, 0, 0x30f0f0f0f0f0f0f0, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff3f, F_ARITH, 0xe000000000000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff40, 0, 0x5a5a5a5a5a5a5a5a, 0, F_ARITH)
    CASE(0x8001000000000080, 0xdeadbeefcafeff40, F_ARITH, 0x8001000000000080, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff41, 0, 0x8787878787878784, F_CF, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff41, F_ARITH, 0x3, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeffc8, 0, 0x5a5a5a5a5a5a5a2d, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeffc8, F_ARITH, 0x1000000000080c0, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rcl64_end:
t_rcr64:
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff00, 0, 0xc3c3c3c3c3c3c3c2, 0, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff00, F_ARITH, 0x8000000000000001, F_ARITH, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff01, 0, 0x2d2d2d2d2d2d2d2d, 0, F_ARITH)
    CASE(0x8001000000000080, 0xdeadbeefcafeff01, F_ARITH, 0xc000800000000040, F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff02, 0, 0x30f0f0f0f0f0f0f0, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff02, F_ARITH, 0xe000000000000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff03, 0, 0x8b4b4b4b4b4b4b4b, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff03, F_ARITH, 0x3000200000000010, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff3f, 0, 0xf0f0f0f0f0f0f09, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff3f, F_ARITH, 0x7, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff40, 0, 0x5a5a5a5a5a5a5a5a, 0, F_ARITH)
    CASE(0x8001000000000080, 0xdeadbeefcafeff40, F_ARITH, 0x8001000000000080, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff41, 0, 0x61e1e1e1e1e1e1e1, F_OF, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff41, F_ARITH, 0xc000000000000000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff1f, 0, 0x69696968b4b4b4b4, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff1f, F_ARITH, 0x20300020000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff20, 0, 0x87878784c3c3c3c3, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff20, F_ARITH, 0x380000000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff21, 0, 0x5a5a5a5a2d2d2d2d, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeff21, F_ARITH, 0x80c0008000, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff3f, 0, 0xf0f0f0f0f0f0f09, F_CF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8000000000000001, 0xdeadbeefcafeff3f, F_ARITH, 0x7, F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeff40, 0, 0x5a5a5a5a5a5a5a5a, 0, F_ARITH)
    CASE(0x8001000000000080, 0xdeadbeefcafeff40, F_ARITH, 0x8001000000000080, F_ARITH, F_ARITH)
    CASE(0xc3c3c3c3c3c3c3c2, 0xdeadbeefcafeff41, 0, 0x61e1e1e1e1e1e1e1, F_OF, F_ARITH)
    CASE(0x8000000000000001, 0xdeadbeefcafeff41, F_ARITH, 0xc000000000000000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_ARITH)
    CASE(0x5a5a5a5a5a5a5a5a, 0xdeadbeefcafeffc8, 0, 0xb45a5a5a5a5a5a5a, 0, F_CF|F_PF|F_AF|F_ZF|F_SF)
    CASE(0x8001000000000080, 0xdeadbeefcafeffc8, F_ARITH, 0x180010000000000, F_CF|F_PF|F_AF|F_ZF|F_SF, F_CF|F_PF|F_AF|F_ZF|F_SF)
t_rcr64_end:

.data
.balign 8
mem: .quad 0
