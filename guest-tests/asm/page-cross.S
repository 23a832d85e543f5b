/* page-cross: code that spans a page boundary.
 *
 * straddle() is placed so that its body starts 20 bytes before a 4 KiB
 * boundary and continues on the next page; inside it a 10-byte movabs
 * itself starts 3 bytes before a second boundary, so one instruction's
 * bytes live on two pages. A loop whose body crosses the boundary runs
 * many times.
 */
#include "rt.h"

TEST_START
    mov ecx, 1000
    xor eax, eax
1:  call straddle
    loop 1b
    SHOW("straddle x1000 rax", rax)
    CHECK(rax, 1000 * 0x1111111111)
    call split_insn
    SHOW("movabs across a page boundary", rax)
    CHECK(rax, 0x8877665544332211)
    mov rax, offset split_movabs
    and eax, 0xfff
    SHOW("split movabs page offset", rax)
    CHECK(rax, 0xffd)
    mov rax, offset straddle
    and eax, 0xfff
    SHOW("straddle page offset", rax)
    CHECK(rax, 0xfec)
    mov rax, offset straddle_loop
    and eax, 0xfff
    SHOW("straddle loop body page offset", rax)
    CHECK(rax, 0xffb)
    TEST_PASS

    .balign 4096
    .skip 4096 - 20
straddle:
    mov edx, 4
    mov rbx, 0x1111111111
straddle_loop:                  /* the loop body crosses the boundary, */
2:  add rax, rbx                /* and so does the sub after this add */
    sub rax, 0x11111111
    sub rax, 0x11111111
    nop
    nop
    add rax, 0x11111111
    add rax, 0x11111111
    sub rax, rbx
    dec edx
    jnz 2b
    add rax, rbx
    ret

    .balign 4096
    .skip 4096 - 3 - 1
split_insn:
    nop
split_movabs:
    movabs rax, 0x8877665544332211
    ret
