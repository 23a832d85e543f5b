/* flags-misc: pushf/popf, lahf/sahf, stc/clc/cmc, std/cld and the ID bit.
 *
 * Checks that popf round-trips every writable user flag (and that bit 1
 * always reads as 1), that the 16-bit pushfw/popfw forms work, that
 * lahf/sahf move exactly SF ZF AF PF CF, and that stc/clc/cmc/std/cld touch
 * only their own flag.
 */
#include "rt.h"

TEST_START
    /* popf then pushf: arithmetic flags and DF come back, bit 1 reads 1 */
    SETF(F_ARITH | F_DF)
    pushfq
    pop rax
    cld
    and rax, 0xcd7
    SHOW("popf all arith+DF -> pushf & 0xcd7", rax)
    CHECK(rax, 0xcd7)
    SETF(0)
    pushfq
    pop rax
    and rax, 0xfff
    SHOW("popf 0 -> pushf & 0xfff", rax)
    CHECK(rax, 0x202)          /* IF (bit 9) always reads 1 in user mode */

    /* the ID flag (bit 21) can be toggled: CPUID is available */
    pushfq
    pop rax
    mov rbx, rax
    xor rax, 0x200000
    push rax
    popfq
    pushfq
    pop rcx
    xor rcx, rbx
    and rcx, 0x200000
    SHOW("ID flag toggles", rcx)
    CHECK(rcx, 0x200000)
    push rbx
    popfq

    /* 16-bit pushfw/popfw */
    SETF(F_CF | F_SF)
    pushfw
    pop ax
    movzx eax, ax
    and eax, 0xcd7
    SHOW("pushfw & 0xcd7", rax)
    CHECK(rax, 0x83)
    mov ax, 0x0845          /* OF ZF PF CF */
    push ax
    popfw
    SHOWF("after popfw 0x845", F_ARITH | F_DF)
    CHECKF(F_ARITH | F_DF, F_OF | F_ZF | F_PF | F_CF)

    /* lahf: AH = SF ZF 0 AF 0 PF 1 CF */
    SETF(F_SF | F_AF | F_CF | F_OF)
    mov eax, 0
    lahf
    SHOW("lahf (SF AF CF OF set)", rax)
    CHECK(rax, 0x9300)
    SETF(F_ZF | F_PF)
    mov rax, 0x1122334455667788
    lahf
    SHOW("lahf (ZF PF set), rest of rax kept", rax)
    CHECK(rax, 0x1122334455664688)
    /* sahf loads SF ZF AF PF CF from AH and keeps OF */
    SETF(F_OF)
    mov ah, 0xd5
    sahf
    SHOWF("sahf ah=0xd5 (OF was set)", F_ARITH)
    CHECKF(F_ARITH, F_ARITH)
    SETF(0)
    mov ah, 0x00
    sahf
    SHOWF("sahf ah=0", F_ARITH)
    CHECKF(F_ARITH, 0)

    /* stc/clc/cmc/std/cld each touch one flag */
    SETF(F_ZF | F_SF)
    stc
    SHOWF("stc", F_ARITH | F_DF)
    CHECKF(F_ARITH | F_DF, F_ZF | F_SF | F_CF)
    cmc
    SHOWF("cmc", F_ARITH | F_DF)
    CHECKF(F_ARITH | F_DF, F_ZF | F_SF)
    cmc
    SHOWF("cmc", F_ARITH | F_DF)
    CHECKF(F_ARITH | F_DF, F_ZF | F_SF | F_CF)
    clc
    SHOWF("clc", F_ARITH | F_DF)
    CHECKF(F_ARITH | F_DF, F_ZF | F_SF)
    std
    SHOWF("std", F_ARITH | F_DF)
    CHECKF(F_ARITH | F_DF, F_ZF | F_SF | F_DF)
    cld
    SHOWF("cld", F_ARITH | F_DF)
    CHECKF(F_ARITH | F_DF, F_ZF | F_SF)

    /* flags survive a call/ret and a push/pop */
    SETF(F_OF | F_PF | F_CF)
    call nothing
    push rax
    pop rax
    lea rax, [rax + 1]
    SHOWF("after call/ret, push/pop, lea", F_ARITH)
    CHECKF(F_ARITH, F_OF | F_PF | F_CF)

    /* flags computed in one block, consumed in the next */
    mov eax, 1
    sub eax, 2
    jmp 1f
1:  jmp 2f
2:  SHOWF("sub 1-2, consumed two jumps later", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_PF | F_AF | F_SF)
    /* flags consumed through popf of a pushf saved much earlier */
    mov eax, 0
    add eax, 0
    pushfq
    mov ecx, 100
3:  add eax, ecx
    dec ecx
    jnz 3b
    popfq
    SHOWF("pushf; loop; popf", F_ARITH)
    CHECKF(F_ARITH, F_ZF | F_PF)
    TEST_PASS

nothing:
    ret
