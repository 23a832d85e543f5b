/* vector-exits: the guest's vector state survives every way translated
 * code leaves for hotlift and comes back.
 *
 * ymm0-15 hold distinct patterns and MXCSR a non-default rounding mode
 * (toward zero, flush-to-zero), then the program makes syscalls, calls
 * code not translated yet (a new block each time: the dispatcher
 * translates it) and jumps through a register to fresh targets; after each
 * round every register and MXCSR are compared with what was put there.
 * Three rounds: with x87 unused (hotlift may save the vector registers
 * without XSAVE), with values on the x87 stack (which must survive too),
 * and after the x87 stack is emptied again.
 */
#include "rt.h"

.macro LOADY
    .irp r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    vmovdqu ymm\r, [rip + pattern + 32 * \r]
    .endr
.endm

.macro STOREY
    .irp r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    vmovdqu [rip + seen + 32 * \r], ymm\r
    .endr
.endm

/* Leave translated code in every way the round covers, 3 times. */
.macro ROUND
    mov r12, 3
1:
    mov eax, 39                     /* getpid */
    syscall
    mov eax, 186                    /* gettid */
    syscall
    lea rbx, [rip + fresh_a]
    call rbx
    lea rbx, [rip + fresh_b]
    call rbx
    lea r14, [rip + 2f]
    lea rbx, [rip + fresh_c]
    jmp rbx
2:
    dec r12
    jnz 1b
    STOREY
    stmxcsr [rip + mxcsr_seen]
    call compare
.endm

TEST_START
    IF_MISSING(1, 0, ecx, 28, no_avx)   /* AVX */
    ldmxcsr [rip + mxcsr_want]
    LOADY
    ROUND
    SAY("x87 unused: ymm0-15 and MXCSR kept")

    fld qword ptr [rip + three]
    fldpi
    LOADY
    ROUND
    fstp qword ptr [rip + x87_a]
    fstp qword ptr [rip + x87_b]
    CHECK(qword ptr [rip + x87_a], 0x400921fb54442d18)
    CHECK(qword ptr [rip + x87_b], 0x4008000000000000)
    SAY("x87 in use: ymm0-15, MXCSR and the x87 stack kept")

    LOADY
    ROUND
    SAY("x87 empty again: ymm0-15 and MXCSR kept")
    mov eax, 0x1f80
    mov [rip + mxcsr_want], eax
    ldmxcsr [rip + mxcsr_want]
    TEST_PASS

no_avx:
    SAY("skipped: this CPU lacks AVX")
    TEST_PASS

/* Every byte of `seen` equals `pattern`, and MXCSR is what was set. */
compare:
    xor ecx, ecx
    lea rsi, [rip + seen]
    lea rdi, [rip + pattern]
3:
    mov rax, [rsi + rcx * 8]
    cmp rax, [rdi + rcx * 8]
    jne 4f
    inc ecx
    cmp ecx, 64
    jb 3b
    mov eax, [rip + mxcsr_seen]
    CHECK(rax, 0xdf80)
    ret
4:
    SHOW("register quadword", rcx)
    FAIL("a vector register changed")

/* Three pieces of code reached through registers: the first round's
 * first pass translates them with the guest's registers live, later
 * passes look them up or leave through the dispatcher. */
fresh_a:
    add r13, 1
    ret
fresh_b:
    add r13, 2
    ret
fresh_c:
    add r13, 3
    jmp r14

.section .rodata
.balign 32
pattern:
    .set i, 0
    .rept 64
    .quad 0x0123456789abcdef ^ (i * 0x1111111111111111) ^ (i << 56)
    .set i, i + 1
    .endr
three: .quad 0x4008000000000000

.data
.balign 32
seen: .fill 512, 1, 0
x87_a: .quad 0
x87_b: .quad 0
/* Round toward zero (RC = 11), flush-to-zero, every exception masked. */
mxcsr_want: .long 0xdf80
mxcsr_seen: .long 0
