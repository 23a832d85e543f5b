/* string-ops: rep movs/stos, repe/repne cmps/scas and lods at every width,
 * forward and backward (DF=1), with rcx = 0, overlapping copies, and the
 * final rsi/rdi/rcx/flags each form leaves behind.
 *
 * Results are checked against plain byte loops; pointers are printed as
 * offsets from their buffer so the output does not depend on addresses.
 */
#include "rt.h"

/* r8 = src, r9 = dst; print and check rsi/rdi offsets and rcx */
.macro ENDS label, so, do, c
    mov rax, rsi
    sub rax, r8
    mov rbx, rdi
    sub rbx, r9
    SAY("\label")
    SHOW("  rsi-src", rax)
    SHOW("  rdi-dst", rbx)
    SHOW("  rcx", rcx)
    CHECK(rax, \so)
    CHECK(rbx, \do)
    CHECK(rcx, \c)
.endm

TEST_START
    lea r8, [rip + src]
    lea r9, [rip + dst]
    /* fill src with i*7+3 */
    xor ecx, ecx
1:  lea eax, [rcx * 8]
    sub eax, ecx
    add eax, 3
    mov [r8 + rcx], al
    inc ecx
    cmp ecx, 512
    jb 1b

    /* rep movsb/w/d/q forward */
    .irp w, 1, 2, 4, 8
    call clear_dst
    mov rsi, r8
    mov rdi, r9
    mov ecx, 100 / \w + 1
    .if \w == 1
    rep movsb
    .elseif \w == 2
    rep movsw
    .elseif \w == 4
    rep movsd
    .else
    rep movsq
    .endif
    ENDS "rep movs width \w forward", ((100 / \w + 1) * \w), ((100 / \w + 1) * \w), 0
    mov edx, (100 / \w + 1) * \w
    call cmp_src_dst
    CHECK(rax, 0)
    .endr

    /* backward: DF=1, start at the last element */
    .irp w, 1, 2, 4, 8
    call clear_dst
    lea rsi, [r8 + 96]
    lea rdi, [r9 + 96]
    mov ecx, 96 / \w + 1
    std
    .if \w == 1
    rep movsb
    .elseif \w == 2
    rep movsw
    .elseif \w == 4
    rep movsd
    .else
    rep movsq
    .endif
    cld
    ENDS "rep movs width \w backward", (96 - \w * (96 / \w + 1)), (96 - \w * (96 / \w + 1)), 0
    mov edx, 96 + \w
    call cmp_src_dst
    CHECK(rax, 0)
    movzx eax, byte ptr [r9 + 96 + \w]
    CHECK(rax, 0)
    .endr

    /* rcx = 0: nothing moves, pointers stay, flags stay */
    mov rsi, r8
    mov rdi, r9
    xor ecx, ecx
    SETF(F_ZF | F_CF)
    rep movsq
    rep stosb
    repe cmpsb
    repne scasb
    SHOWF("rep with rcx=0 keeps flags", F_ARITH)
    CHECKF(F_ARITH, F_ZF | F_CF)
    ENDS "rep with rcx=0", 0, 0, 0

    /* overlapping forward rep movsb replicates a pattern (memset-like) */
    mov byte ptr [r9], 0xab
    mov byte ptr [r9 + 1], 0xcd
    mov rsi, r9
    lea rdi, [r9 + 2]
    mov ecx, 62
    rep movsb
    SHOW("overlap copy dst[56..63]", qword ptr [r9 + 56])
    CHECK(qword ptr [r9 + 56], 0xcdabcdabcdabcdab)

    /* rep stos at each width, forward and backward */
    call clear_dst
    mov rdi, r9
    mov eax, 0x11
    mov ecx, 3
    rep stosb
    mov eax, 0x2222
    mov ecx, 2
    rep stosw
    mov eax, 0x33333333
    mov ecx, 1
    rep stosd
    mov rax, 0x4444444444444444
    mov ecx, 2
    rep stosq
    mov rax, rdi
    sub rax, r9
    SHOW("stos chain rdi-dst", rax)
    CHECK(rax, 3 + 4 + 4 + 16)
    SHOW("dst[0]", qword ptr [r9])
    CHECK(qword ptr [r9], 0x3322222222111111)
    CHECK(qword ptr [r9 + 8], 0x4444444444333333)
    lea rdi, [r9 + 200]
    mov eax, 0x5a5a
    mov ecx, 4
    std
    rep stosw
    cld
    mov rax, rdi
    sub rax, r9
    SHOW("backward stosw rdi-dst", rax)
    CHECK(rax, 192)
    SHOW("dst[194..201]", qword ptr [r9 + 194])
    CHECK(qword ptr [r9 + 194], 0x5a5a5a5a5a5a5a5a)

    /* repe cmpsb stops at the first difference */
    call copy_src_dst
    xor byte ptr [r9 + 37], 1
    mov rsi, r8
    mov rdi, r9
    mov ecx, 100
    repe cmpsb
    SHOWF("repe cmpsb flags", F_ZF | F_CF)
    ENDS "repe cmpsb stops after byte 37", 38, 38, 62
    CHECKF(F_ZF, 0)
    /* repe cmpsq over equal data runs out with ZF=1 */
    call copy_src_dst
    mov rsi, r8
    mov rdi, r9
    mov ecx, 8
    repe cmpsq
    SHOWF("repe cmpsq equal", F_ZF)
    CHECKF(F_ZF, F_ZF)
    ENDS "repe cmpsq equal", 64, 64, 0
    /* repne cmpsd finds the first equal dword */
    call clear_dst
    mov eax, [r8 + 20]
    mov [r9 + 20], eax
    mov rsi, r8
    mov rdi, r9
    mov ecx, 10
    repne cmpsd
    SHOWF("repne cmpsd", F_ZF)
    CHECKF(F_ZF, F_ZF)
    ENDS "repne cmpsd finds dword 5", 24, 24, 4
    /* backward repe cmpsw */
    call copy_src_dst
    xor byte ptr [r9 + 10], 0x80
    lea rsi, [r8 + 40]
    lea rdi, [r9 + 40]
    mov ecx, 30
    std
    repe cmpsw
    cld
    SHOWF("backward repe cmpsw", F_ZF | F_CF | F_SF)
    ENDS "backward repe cmpsw stops at word 5", 8, 8, 14

    /* repne scasb: strlen */
    lea rdi, [rip + message]
    mov r9, rdi
    xor eax, eax
    mov rcx, -1
    repne scasb
    not rcx
    dec rcx
    SHOWD("strlen via repne scasb", rcx)
    CHECK(rcx, 43)
    /* repe scasd skips a run of equal dwords */
    lea r9, [rip + dst]
    mov rdi, r9
    mov eax, 0x77777777
    mov ecx, 9
    rep stosd
    mov dword ptr [r9 + 36], 0
    mov rdi, r9
    mov ecx, 20
    repe scasd
    mov rax, rdi
    sub rax, r9
    SHOW("repe scasd stopped at offset", rax)
    SHOW("  rcx", rcx)
    CHECK(rax, 40)
    CHECK(rcx, 10)
    /* scasw/scasq without rep, flags like cmp */
    mov word ptr [r9], 5
    mov rdi, r9
    mov eax, 3
    scasw
    SHOWF("scasw 3 - 5", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_SF | F_AF)
    mov rax, [r9 + 8]
    scasq
    CHECKF(F_ZF, F_ZF)

    /* lods at each width, both directions */
    mov rsi, r8
    lodsb
    movzx ebx, al
    lodsw
    movzx ecx, ax
    lodsd
    mov edx, eax
    lodsq
    SHOW("lodsb", rbx)
    SHOW("lodsw", rcx)
    SHOW("lodsd", rdx)
    SHOW("lodsq", rax)
    CHECK(rbx, 0x03)
    CHECK(rcx, 0x110a)
    CHECK(rdx, 0x2d261f18)
    CHECK(rax, 0x655e575049423b34)
    std
    lodsb
    cld
    mov rax, rsi
    sub rax, r8
    CHECK(rax, 14)
    SAY("backward lodsb moves rsi back by one")

    /* stos, cmps and scas at every width in both directions. Element k of
       a buffer of 8 elements holds k + 1; dst is a copy with element 5
       changed. Forward runs start at element 0, backward ones at element 7. */
    .irp w, 1, 2, 4, 8
    .irp dir, 0, 1
    lea r9, [rip + dst]
    xor ecx, ecx
1:  lea eax, [rcx + 1]
    .if \w == 1
    mov [r8 + rcx], al
    mov [r9 + rcx], al
    .elseif \w == 2
    mov [r8 + rcx * 2], ax
    mov [r9 + rcx * 2], ax
    .elseif \w == 4
    mov [r8 + rcx * 4], eax
    mov [r9 + rcx * 4], eax
    .else
    mov [r8 + rcx * 8], rax
    mov [r9 + rcx * 8], rax
    .endif
    inc ecx
    cmp ecx, 8
    jb 1b
    mov byte ptr [r9 + 5 * \w], 0x77
    .if \dir
    std
    lea rsi, [r8 + 7 * \w]
    lea rdi, [r9 + 7 * \w]
    .else
    lea rsi, [r8]
    lea rdi, [r9]
    .endif
    mov ecx, 8
    .if \w == 1
    repe cmpsb
    .elseif \w == 2
    repe cmpsw
    .elseif \w == 4
    repe cmpsd
    .else
    repe cmpsq
    .endif
    cld
    SHOWF("repe cmps width \w dir \dir", F_ZF | F_CF)
    CHECKF(F_ZF | F_CF, F_CF)       /* stopped at element 5: src 6 < dst 0x77 */
    .if \dir
    ENDS "  repe cmps stops at element 5", (4 * \w), (4 * \w), 5
    .else
    ENDS "  repe cmps stops at element 5", (6 * \w), (6 * \w), 2
    .endif
    /* repne scas for the value 3 (element 2) */
    mov eax, 3
    .if \dir
    std
    lea rdi, [r9 + 7 * \w]
    .else
    lea rdi, [r9]
    .endif
    mov ecx, 8
    .if \w == 1
    repne scasb
    .elseif \w == 2
    repne scasw
    .elseif \w == 4
    repne scasd
    .else
    repne scasq
    .endif
    cld
    CHECKF(F_ZF, F_ZF)
    mov rsi, r8                     /* not used by scas: keep ENDS happy */
    .if \dir
    ENDS "  repne scas finds element 2", 0, (1 * \w), 2
    .else
    ENDS "  repne scas finds element 2", 0, (3 * \w), 5
    .endif
    /* rep stos of 0x5a.. over elements 1..6 */
    mov rax, 0x5a5a5a5a5a5a5a5a
    .if \dir
    std
    lea rdi, [r9 + 6 * \w]
    .else
    lea rdi, [r9 + 1 * \w]
    .endif
    mov ecx, 6
    .if \w == 1
    rep stosb
    .elseif \w == 2
    rep stosw
    .elseif \w == 4
    rep stosd
    .else
    rep stosq
    .endif
    cld
    .if \dir
    ENDS "  rep stos elements 6..1", 0, (0 * \w), 0
    .else
    ENDS "  rep stos elements 1..6", 0, (7 * \w), 0
    .endif
    movzx eax, byte ptr [r9]
    CHECK(rax, 1)
    movzx eax, byte ptr [r9 + 1 * \w]
    CHECK(rax, 0x5a)
    movzx eax, byte ptr [r9 + 7 * \w - 1]
    CHECK(rax, 0x5a)
    movzx eax, byte ptr [r9 + 7 * \w]
    CHECK(rax, 8)
    .endr
    .endr

    /* movs without rep and with 32-bit address size (addr32: uses esi/edi) */
    lea r9, [rip + dst]
    mov rsi, r8
    mov rdi, r9
    movsq
    movsb
    mov rax, rdi
    sub rax, r9
    CHECK(rax, 9)
    SAY("single movsq + movsb")
    mov esi, offset src             /* non-PIE: fits in 32 bits */
    mov edi, offset dst + 300
    mov ecx, 8
    addr32 rep movsb
    CHECK(rcx, 0)
    mov rax, [r9 + 300]
    mov rbx, [r8]
    CHECKR(rax, rbx)
    SAY("addr32 rep movsb")
    TEST_PASS

/* rax = number of differing bytes in src[0..rdx) vs dst[0..rdx) */
cmp_src_dst:
    push rcx
    xor eax, eax
    xor ecx, ecx
1:  cmp rcx, rdx
    jae 3f
    mov bl, [r8 + rcx]
    cmp bl, [r9 + rcx]
    je 2f
    inc rax
2:  inc rcx
    jmp 1b
3:  pop rcx
    ret

clear_dst:
    xor ecx, ecx
1:  mov byte ptr [r9 + rcx], 0
    inc ecx
    cmp ecx, 512
    jb 1b
    ret

copy_src_dst:
    xor ecx, ecx
1:  mov al, [r8 + rcx]
    mov [r9 + rcx], al
    inc ecx
    cmp ecx, 512
    jb 1b
    ret

.section .rodata
message: .asciz "the quick brown fox jumps over the lazy dog"

.bss
.balign 64
src: .skip 512
dst: .skip 512
