/* arith-muldiv: mul/imul (one, two and three operands), div/idiv at every
 * width, mulx, and the quotient/remainder rules (truncation toward zero).
 *
 * MD sets rax, rdx and rbx (junk above the operand width), runs one
 * instruction, prints rax, rdx and CF/OF, and checks all three (only CF and
 * OF are defined after multiplies; no flag is defined after divides).
 * Division faults are tested in fault-div0.
 */
#include "rt.h"

.macro MD label, a, d, s, ra, rd, fout, mask, insn:vararg
    movabs rax, \a
    movabs rdx, \d
    movabs rbx, \s
    \insn
    SAY("\label")
    SHOW("  rax", rax)
    SHOW("  rdx", rdx)
    SHOWF("  flags", \mask)
    CHECK(rax, \ra)
    CHECK(rdx, \rd)
    CHECKF(\mask, \fout)
.endm

TEST_START
    MD "mul bl (0x10*0x10)", 0xdeadbeefcafef010, 0x5555555555555555, 0x7777777777777710, 0xdeadbeefcafe0100, 0x5555555555555555, F_CF | F_OF, F_CF | F_OF, mul bl
    MD "mul bl (0xff*0xff)", 0xdeadbeefcafef0ff, 0x5555555555555555, 0x77777777777777ff, 0xdeadbeefcafefe01, 0x5555555555555555, F_CF | F_OF, F_CF | F_OF, mul bl
    MD "mul bl (0x7f*0x2)", 0xdeadbeefcafef07f, 0x5555555555555555, 0x7777777777777702, 0xdeadbeefcafe00fe, 0x5555555555555555, 0, F_CF | F_OF, mul bl
    MD "mul bl (0x80*0xff)", 0xdeadbeefcafef080, 0x5555555555555555, 0x77777777777777ff, 0xdeadbeefcafe7f80, 0x5555555555555555, F_CF | F_OF, F_CF | F_OF, mul bl
    MD "imul bl (0x10*0x10)", 0xdeadbeefcafef010, 0x5555555555555555, 0x7777777777777710, 0xdeadbeefcafe0100, 0x5555555555555555, F_CF | F_OF, F_CF | F_OF, imul bl
    MD "imul bl (0xff*0xff)", 0xdeadbeefcafef0ff, 0x5555555555555555, 0x77777777777777ff, 0xdeadbeefcafe0001, 0x5555555555555555, 0, F_CF | F_OF, imul bl
    MD "imul bl (0x7f*0x2)", 0xdeadbeefcafef07f, 0x5555555555555555, 0x7777777777777702, 0xdeadbeefcafe00fe, 0x5555555555555555, F_CF | F_OF, F_CF | F_OF, imul bl
    MD "imul bl (0x80*0xff)", 0xdeadbeefcafef080, 0x5555555555555555, 0x77777777777777ff, 0xdeadbeefcafe0080, 0x5555555555555555, F_CF | F_OF, F_CF | F_OF, imul bl
    MD "mul bx (0x100*0x100)", 0xdeadbeefcafe0100, 0x5555555555555555, 0x7777777777770100, 0xdeadbeefcafe0000, 0x5555555555550001, F_CF | F_OF, F_CF | F_OF, mul bx
    MD "mul bx (0xffff*0xffff)", 0xdeadbeefcafeffff, 0x5555555555555555, 0x777777777777ffff, 0xdeadbeefcafe0001, 0x555555555555fffe, F_CF | F_OF, F_CF | F_OF, mul bx
    MD "mul bx (0x7fff*0xffff)", 0xdeadbeefcafe7fff, 0x5555555555555555, 0x777777777777ffff, 0xdeadbeefcafe8001, 0x5555555555557ffe, F_CF | F_OF, F_CF | F_OF, mul bx
    MD "mul bx (0x3*0x5)", 0xdeadbeefcafe0003, 0x5555555555555555, 0x7777777777770005, 0xdeadbeefcafe000f, 0x5555555555550000, 0, F_CF | F_OF, mul bx
    MD "imul bx (0x100*0x100)", 0xdeadbeefcafe0100, 0x5555555555555555, 0x7777777777770100, 0xdeadbeefcafe0000, 0x5555555555550001, F_CF | F_OF, F_CF | F_OF, imul bx
    MD "imul bx (0xffff*0xffff)", 0xdeadbeefcafeffff, 0x5555555555555555, 0x777777777777ffff, 0xdeadbeefcafe0001, 0x5555555555550000, 0, F_CF | F_OF, imul bx
    MD "imul bx (0x7fff*0xffff)", 0xdeadbeefcafe7fff, 0x5555555555555555, 0x777777777777ffff, 0xdeadbeefcafe8001, 0x555555555555ffff, 0, F_CF | F_OF, imul bx
    MD "imul bx (0x3*0x5)", 0xdeadbeefcafe0003, 0x5555555555555555, 0x7777777777770005, 0xdeadbeefcafe000f, 0x5555555555550000, 0, F_CF | F_OF, imul bx
    MD "mul ebx (0x10000*0x10000)", 0xdeadbeef00010000, 0x5555555555555555, 0x7777777700010000, 0x0, 0x1, F_CF | F_OF, F_CF | F_OF, mul ebx
    MD "mul ebx (0xffffffff*0xffffffff)", 0xdeadbeefffffffff, 0x5555555555555555, 0x77777777ffffffff, 0x1, 0xfffffffe, F_CF | F_OF, F_CF | F_OF, mul ebx
    MD "mul ebx (0x80000000*0x2)", 0xdeadbeef80000000, 0x5555555555555555, 0x7777777700000002, 0x0, 0x1, F_CF | F_OF, F_CF | F_OF, mul ebx
    MD "mul ebx (0x7*0xfffffff9)", 0xdeadbeef00000007, 0x5555555555555555, 0x77777777fffffff9, 0xffffffcf, 0x6, F_CF | F_OF, F_CF | F_OF, mul ebx
    MD "imul ebx (0x10000*0x10000)", 0xdeadbeef00010000, 0x5555555555555555, 0x7777777700010000, 0x0, 0x1, F_CF | F_OF, F_CF | F_OF, imul ebx
    MD "imul ebx (0xffffffff*0xffffffff)", 0xdeadbeefffffffff, 0x5555555555555555, 0x77777777ffffffff, 0x1, 0x0, 0, F_CF | F_OF, imul ebx
    MD "imul ebx (0x80000000*0x2)", 0xdeadbeef80000000, 0x5555555555555555, 0x7777777700000002, 0x0, 0xffffffff, F_CF | F_OF, F_CF | F_OF, imul ebx
    MD "imul ebx (0x7*0xfffffff9)", 0xdeadbeef00000007, 0x5555555555555555, 0x77777777fffffff9, 0xffffffcf, 0xffffffff, 0, F_CF | F_OF, imul ebx
    MD "mul rbx (0x100000000*0x100000000)", 0x100000000, 0x5555555555555555, 0x100000000, 0x0, 0x1, F_CF | F_OF, F_CF | F_OF, mul rbx
    MD "mul rbx (0xffffffffffffffff*0xffffffffffffffff)", 0xffffffffffffffff, 0x5555555555555555, 0xffffffffffffffff, 0x1, 0xfffffffffffffffe, F_CF | F_OF, F_CF | F_OF, mul rbx
    MD "mul rbx (0x8000000000000000*0xffffffffffffffff)", 0x8000000000000000, 0x5555555555555555, 0xffffffffffffffff, 0x8000000000000000, 0x7fffffffffffffff, F_CF | F_OF, F_CF | F_OF, mul rbx
    MD "mul rbx (0x2dfdc1c35*0x181cd)", 0x2dfdc1c35, 0x5555555555555555, 0x181cd, 0x454f749ae4b71, 0x0, 0, F_CF | F_OF, mul rbx
    MD "imul rbx (0x100000000*0x100000000)", 0x100000000, 0x5555555555555555, 0x100000000, 0x0, 0x1, F_CF | F_OF, F_CF | F_OF, imul rbx
    MD "imul rbx (0xffffffffffffffff*0xffffffffffffffff)", 0xffffffffffffffff, 0x5555555555555555, 0xffffffffffffffff, 0x1, 0x0, 0, F_CF | F_OF, imul rbx
    MD "imul rbx (0x8000000000000000*0xffffffffffffffff)", 0x8000000000000000, 0x5555555555555555, 0xffffffffffffffff, 0x8000000000000000, 0x0, F_CF | F_OF, F_CF | F_OF, imul rbx
    MD "imul rbx (0x2dfdc1c35*0x181cd)", 0x2dfdc1c35, 0x5555555555555555, 0x181cd, 0x454f749ae4b71, 0x0, 0, F_CF | F_OF, imul rbx
    MD "imul ax, bx (0x3*0x5)", 0xdeadbeefcafe0003, 0x3333, 0x1212121212120005, 0xdeadbeefcafe000f, 0x3333, 0, F_CF | F_OF, imul ax, bx
    MD "imul ax, bx (0x7fff*0x2)", 0xdeadbeefcafe7fff, 0x3333, 0x1212121212120002, 0xdeadbeefcafefffe, 0x3333, F_CF | F_OF, F_CF | F_OF, imul ax, bx
    MD "imul ax, bx (0xffff*0xffff)", 0xdeadbeefcafeffff, 0x3333, 0x121212121212ffff, 0xdeadbeefcafe0001, 0x3333, 0, F_CF | F_OF, imul ax, bx
    MD "imul ax, bx, -3 (bx=0x7)", 0xdeadbeefcafe0000, 0x3333, 0x1212121212120007, 0xdeadbeefcafeffeb, 0x3333, 0, F_CF | F_OF, imul ax, bx, -3
    MD "imul ax, bx, 100 (bx=0x3e8)", 0xdeadbeefcafe0000, 0x3333, 0x12121212121203e8, 0xdeadbeefcafe86a0, 0x3333, F_CF | F_OF, F_CF | F_OF, imul ax, bx, 100
    MD "imul ax, bx, -1 (bx=0x8000)", 0xdeadbeefcafe0000, 0x3333, 0x1212121212128000, 0xdeadbeefcafe8000, 0x3333, F_CF | F_OF, F_CF | F_OF, imul ax, bx, -1
    MD "imul ax, bx, 127 (bx=0x1234)", 0xdeadbeefcafe0000, 0x3333, 0x1212121212121234, 0xdeadbeefcafe07cc, 0x3333, F_CF | F_OF, F_CF | F_OF, imul ax, bx, 127
    MD "imul eax, ebx (0x3*0x5)", 0xdeadbeef00000003, 0x3333, 0x1212121200000005, 0xf, 0x3333, 0, F_CF | F_OF, imul eax, ebx
    MD "imul eax, ebx (0x7fffffff*0x2)", 0xdeadbeef7fffffff, 0x3333, 0x1212121200000002, 0xfffffffe, 0x3333, F_CF | F_OF, F_CF | F_OF, imul eax, ebx
    MD "imul eax, ebx (0xffffffff*0xffffffff)", 0xdeadbeefffffffff, 0x3333, 0x12121212ffffffff, 0x1, 0x3333, 0, F_CF | F_OF, imul eax, ebx
    MD "imul eax, ebx, -3 (ebx=0x7)", 0xdeadbeef00000000, 0x3333, 0x1212121200000007, 0xffffffeb, 0x3333, 0, F_CF | F_OF, imul eax, ebx, -3
    MD "imul eax, ebx, 100 (ebx=0x3e8)", 0xdeadbeef00000000, 0x3333, 0x12121212000003e8, 0x186a0, 0x3333, 0, F_CF | F_OF, imul eax, ebx, 100
    MD "imul eax, ebx, -1 (ebx=0x80000000)", 0xdeadbeef00000000, 0x3333, 0x1212121280000000, 0x80000000, 0x3333, F_CF | F_OF, F_CF | F_OF, imul eax, ebx, -1
    MD "imul eax, ebx, 127 (ebx=0x1234)", 0xdeadbeef00000000, 0x3333, 0x1212121200001234, 0x907cc, 0x3333, 0, F_CF | F_OF, imul eax, ebx, 127
    MD "imul rax, rbx (0x3*0x5)", 0x3, 0x3333, 0x5, 0xf, 0x3333, 0, F_CF | F_OF, imul rax, rbx
    MD "imul rax, rbx (0x7fffffffffffffff*0x2)", 0x7fffffffffffffff, 0x3333, 0x2, 0xfffffffffffffffe, 0x3333, F_CF | F_OF, F_CF | F_OF, imul rax, rbx
    MD "imul rax, rbx (0xffffffffffffffff*0xffffffffffffffff)", 0xffffffffffffffff, 0x3333, 0xffffffffffffffff, 0x1, 0x3333, 0, F_CF | F_OF, imul rax, rbx
    MD "imul rax, rbx, -3 (rbx=0x7)", 0x0, 0x3333, 0x7, 0xffffffffffffffeb, 0x3333, 0, F_CF | F_OF, imul rax, rbx, -3
    MD "imul rax, rbx, 100 (rbx=0x3e8)", 0x0, 0x3333, 0x3e8, 0x186a0, 0x3333, 0, F_CF | F_OF, imul rax, rbx, 100
    MD "imul rax, rbx, -1 (rbx=0x8000000000000000)", 0x0, 0x3333, 0x8000000000000000, 0x8000000000000000, 0x3333, F_CF | F_OF, F_CF | F_OF, imul rax, rbx, -1
    MD "imul rax, rbx, 127 (rbx=0x1234)", 0x0, 0x3333, 0x1234, 0x907cc, 0x3333, 0, F_CF | F_OF, imul rax, rbx, 127
    MD "div bl (0x3e8/0x7)", 0xdeadbeefcafe03e8, 0x4444, 0x7777777777777707, 0xdeadbeefcafe068e, 0x4444, 0, 0, div bl
    MD "idiv bl (0xff9c/0x7)", 0xdeadbeefcafeff9c, 0x4444, 0x7777777777777707, 0xdeadbeefcafefef2, 0x4444, 0, 0, idiv bl
    MD "idiv bl (0x64/0xf9)", 0xdeadbeefcafe0064, 0x4444, 0x77777777777777f9, 0xdeadbeefcafe02f2, 0x4444, 0, 0, idiv bl
    MD "div bx (0x12345678/0x2345)", 0xdeadbeefcafe5678, 0x4444444444441234, 0x7777777777772345, 0xdeadbeefcafe8422, 0x444444444444134e, 0, 0, div bx
    MD "idiv bx (0xfffe7960/0x12c)", 0xdeadbeefcafe7960, 0x444444444444fffe, 0x777777777777012c, 0xdeadbeefcafefeb3, 0x444444444444ff9c, 0, 0, idiv bx
    MD "div ebx (0x123456789abc/0x10001)", 0xdeadbeef56789abc, 0x4444444400001234, 0x7777777700010001, 0x12344444, 0x5678, 0, 0, div ebx
    MD "idiv ebx (0xfffffffffffffffb/0x2)", 0xdeadbeeffffffffb, 0x44444444ffffffff, 0x7777777700000002, 0xfffffffe, 0xffffffff, 0, 0, idiv ebx
    MD "idiv ebx (0x7/0xfffffffe)", 0xdeadbeef00000007, 0x4444444400000000, 0x77777777fffffffe, 0xfffffffd, 0x1, 0, 0, idiv ebx
    MD "div rbx (0x10000000000000000000003039/0xfffffffffffffff1)", 0x3039, 0x1000000000, 0xfffffffffffffff1, 0x1000000000, 0xf000003039, 0, 0, div rbx
    MD "idiv rbx (0xfffffff360d3632fb98b1215c0000000/0xe8d4a51000)", 0xb98b1215c0000000, 0xfffffff360d3632f, 0xe8d4a51000, 0xf21f494c589c0000, 0x0, 0, 0, idiv rbx
    MD "div rbx (0x4d/0xffffffffffffffff)", 0x4d, 0x0, 0xffffffffffffffff, 0x0, 0x4d, 0, 0, div rbx

    /* mulx: rdx * src -> hi:lo, flags untouched */
    mov rdx, 0xfedcba9876543210
    mov rbx, 0x10
    SETF(F_CF | F_ZF)
    mulx rcx, rsi, rbx
    SHOW("mulx hi", rcx)
    SHOW("mulx lo", rsi)
    SHOWF("mulx flags", F_ARITH)
    CHECK(rcx, 0xf)
    CHECK(rsi, 0xedcba98765432100)
    CHECKF(F_ARITH, F_CF | F_ZF)
    mov edx, 0xffffffff
    mov ebx, 0xffffffff
    mulx eax, ecx, ebx
    SHOW("mulx eax", rax)
    SHOW("mulx ecx", rcx)
    CHECK(rax, 0xfffffffe)
    CHECK(rcx, 1)
    /* mul with a memory operand */
    mov qword ptr [rip + mem], 1000000007
    mov rax, 1000000009
    mul qword ptr [rip + mem]
    SHOW("mul qword [mem]", rax)
    CHECK(rax, 1000000016000000063)
    CHECK(rdx, 0)
    TEST_PASS

.data
.balign 8
mem: .quad 0
