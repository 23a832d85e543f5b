/* riprel: RIP-relative addressing in every shape a translator must
 * re-target: loads and stores of each width, read-modify-write, operands
 * with an immediate after the displacement (RIP is the end of the whole
 * instruction), lea of data and of code labels compared with absolute
 * addresses, vector loads, and pointer tables built at link time.
 */
#include "rt.h"

TEST_START
    /* loads of each width */
    movzx eax, byte ptr [rip + data + 7]
    SHOW("byte [rip+data+7]", rax)
    CHECK(rax, 0x11)
    movzx eax, word ptr [rip + data + 2]
    SHOW("word [rip+data+2]", rax)
    CHECK(rax, 0x5566)
    mov eax, dword ptr [rip + data + 4]
    SHOW("dword [rip+data+4]", rax)
    CHECK(rax, 0x11223344)
    mov rax, qword ptr [rip + data]
    SHOW("qword [rip+data]", rax)
    CHECK(rax, 0x1122334455667788)
    movsx rax, byte ptr [rip + data + 8]
    SHOW("movsx byte [rip+data+8]", rax)
    CHECK(rax, -2)
    movsxd rax, dword ptr [rip + data + 8]
    SHOW("movsxd dword [rip+data+8]", rax)
    CHECK(rax, -2)

    /* stores with an immediate: the displacement is relative to the end of
       the instruction, after the imm8/imm16/imm32 */
    mov byte ptr [rip + wbuf], 0x5a
    mov word ptr [rip + wbuf + 2], 0x1234
    mov dword ptr [rip + wbuf + 4], 0x89abcdef
    SHOW("wbuf[0] after imm stores", qword ptr [rip + wbuf])
    CHECK(qword ptr [rip + wbuf], 0x89abcdef1234005a)
    mov qword ptr [rip + wbuf + 8], -3
    CHECK(qword ptr [rip + wbuf + 8], -3)
    add qword ptr [rip + wbuf + 8], 0x10
    cmp byte ptr [rip + wbuf + 8], 13
    SHOWF("add qword [rip+x], 0x10; cmp byte [rip+x], 13", F_ZF | F_CF)
    CHECKF(F_ZF, F_ZF)
    cmp word ptr [rip + wbuf + 2], 0x1234
    CHECKF(F_ZF, F_ZF)
    test dword ptr [rip + wbuf + 4], 0x80000000
    SHOWF("test dword [rip+x], 0x80000000", F_ZF | F_SF)
    CHECKF(F_ZF | F_SF, F_SF)
    imul eax, dword ptr [rip + data + 4], 3
    SHOW("imul eax, [rip+data+4], 3", rax)
    CHECK(rax, 0x336699cc)
    shl dword ptr [rip + wbuf + 4], 4
    CHECK(qword ptr [rip + wbuf], 0x9abcdef01234005a)
    rol qword ptr [rip + wbuf], 8
    CHECK(qword ptr [rip + wbuf], 0xbcdef01234005a9a)
    lock inc dword ptr [rip + counter]
    lock xadd dword ptr [rip + counter], eax
    mov eax, [rip + counter]
    SHOW("counter after lock inc/xadd", rax)
    CHECK(rax, 0x336699cd)

    /* lea of data and of code matches the absolute address */
    lea rdi, [rip + data]
    mov rsi, offset data
    SHOW("lea data == offset data", rdi)
    CHECKR(rdi, rsi)
    lea rdi, [rip + code_label]
    mov rsi, offset code_label
    CHECKR(rdi, rsi)
    SAY("lea rdi, [rip+code_label] == offset code_label")
    lea rdi, [rip + _start]
    mov rsi, offset _start
    CHECKR(rdi, rsi)
    SAY("lea [rip+_start] == offset _start")
    /* lea of the current instruction's own end */
    lea rdi, [rip]
here:
    mov rsi, offset here
    CHECKR(rdi, rsi)
    SAY("lea rdi, [rip] == address of next instruction")
    /* code address from lea is callable and jumpable */
    lea rdx, [rip + code_label]
    call rdx
    CHECK(rax, 0xc0de)
    SAY("call through lea'd code address")
    /* the code address read as data: the first bytes of code_label */
    mov eax, dword ptr [rip + code_label]
    SHOW("first 4 bytes of code_label", rax)
    CHECK(rax, 0xc0deb8)

    /* pointer table built by the linker */
    mov rax, [rip + ptrs + 8]
    mov rsi, offset data + 8
    CHECKR(rax, rsi)
    mov rax, [rip + ptrs]
    call rax
    CHECK(rax, 0xc0de)
    SAY("absolute pointers in .data are right")

    /* vector loads and a rip-relative broadcast */
    movdqa xmm0, xmmword ptr [rip + vdata]
    paddd xmm0, xmmword ptr [rip + vdata + 16]
    VX(xmm0)
    SHOWV("paddd [rip+vdata], [rip+vdata+16]", 2)
    CHECKQ(0, 0x0000000600000004)
    CHECKQ(1, 0x0000000a00000008)
    vpbroadcastd ymm1, dword ptr [rip + vdata + 4]
    VY(ymm1)
    SHOWV("vpbroadcastd [rip+vdata+4]", 4)
    CHECKQ(3, 0x0000000200000002)
    pinsrw xmm2, word ptr [rip + data], 7   /* imm8 after the displacement */
    pextrw eax, xmm2, 7
    CHECK(rax, 0x7788)
    SAY("pinsrw xmm2, [rip+data], 7 (imm after disp)")
    IF_MISSING(7, 0, ebx, 16, no_evex)      /* AVX512 F */
    IF_MISSING(7, 0, ebx, 31, no_evex)      /* AVX512 VL */
    vmovdqa xmm0, xmm0          /* clear bits 128 and up */
    vpcmpeqd k1, zmm0, zmmword ptr [rip + vdata] /* EVEX rip-relative */
    kmovw eax, k1
    SHOW("vpcmpeqd k1, zmm0, [rip+vdata]", rax)
    CHECK(rax, 0xff00)
    vpcmpeqd k1, ymm1, dword ptr [rip + vdata + 4]{1to8}
    kmovw eax, k1
    SHOW("vpcmpeqd k1, ymm1, [rip+vdata+4]{1to8}", rax)
    CHECK(rax, 0xff)
    jmp far_data
no_evex:
    SAY("skipped: EVEX rip-relative (this CPU lacks AVX512 F/VL)")

far_data:
    /* far-away data in .bss (the displacement is large) */
    mov qword ptr [rip + big + 1048000], 77
    mov rax, [rip + big + 1048000]
    CHECK(rax, 77)
    SAY("store/load 1 MB into .bss")
    TEST_PASS

code_label:
    mov eax, 0xc0de
    ret

.data
.balign 64
data:   .quad 0x1122334455667788, 0xfffffffffffffffe
vdata:  .long 1, 2, 3, 4, 3, 4, 5, 6
        .skip 32
ptrs:   .quad code_label, data + 8
counter: .long 0
wbuf:   .skip 16

.bss
.balign 4096
big: .skip 1048576
