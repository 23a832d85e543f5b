/* rt.h: macros for the self-checking assembly tests (Intel syntax).
 *
 * Every test includes this file, starts with TEST_START and ends with
 * TEST_PASS. The macros print through the write syscall (unbuffered, so
 * output that precedes a trap is never lost) and never change a general
 * register or RFLAGS, so they can sit between the instruction under test and
 * the check of its flags. Helpers live in rt.S, which is linked into every
 * test.
 *
 *   SAY("text")              print text and a newline
 *   SHOW("label", op)        print "label = 0x..." (op: 64-bit reg or qword mem)
 *   SHOWD("label", op)       same, unsigned decimal
 *   SHOWF("label", mask)     print the current flags selected by mask
 *   CHECK(op, value)         fail unless op (64-bit reg or qword mem) == value
 *   CHECKR(a, b)             fail unless registers a and b are equal
 *   CHECKF(mask, want)       fail unless (RFLAGS & mask) == want
 *   SETF(v)                  RFLAGS := v (through popfq; v is an imm32)
 *   FAIL("why")              print the reason and exit(1)
 *   VX(x) / VY(y) / VZ(z)    store xmm / ymm / zmm into rt_vbuf
 *   SHOWV("label", n)        print the first n qwords of rt_vbuf
 *   CHECKQ(i, value)         CHECK(qword i of rt_vbuf, value)
 *   IF_MISSING(leaf, sub, reg, bit, label)
 *                            jump to label unless CPUID(leaf, sub).reg has
 *                            the bit (reg: eax/ebx/ecx/edx; clobbers flags)
 *   SAVE_ARGC                first thing after TEST_START in a test with a
 *                            count form: remembers argc for PICK
 *   PICK(reg, n, small)      reg := n, or small when the test got an
 *                            argument (the manifest's "count" line: the
 *                            tiny form tests/exact.rs
 *                            single-steps); n and small are immediates
 *
 * CHECK's value is an immediate (any 64-bit number, or `offset label`).
 * Operands of SHOW/CHECK must not be rsp or rsp-based memory (the macros
 * push before reading them). Failures print "FAIL line N: got X want Y" and
 * exit with status 1.
 */
.intel_syntax noprefix

#define F_CF 0x0001
#define F_PF 0x0004
#define F_AF 0x0010
#define F_ZF 0x0040
#define F_SF 0x0080
#define F_DF 0x0400
#define F_OF 0x0800
#define F_ARITH (F_CF | F_PF | F_AF | F_ZF | F_SF | F_OF)
#define F_NOAF (F_CF | F_PF | F_ZF | F_SF | F_OF)

#define TEST_START .text; .globl _start; _start:
#define TEST_PASS SAY("ok"); mov edi, 0; jmp rt_exit

#define SAY(s) say_m s
#define SHOW(label, op) show_m rt_show, label, op
#define SHOWD(label, op) show_m rt_showd, label, op
#define SHOWF(label, mask) showf_m label, (mask)
#define CHECK(op, value) check_m __LINE__, (value), op
#define CHECKR(a, b) checkr_m __LINE__, a, b
#define CHECKF(mask, want) checkf_m (mask), (want), __LINE__
#define SETF(v) push (v); popfq
#define FAIL(why) fail_m why, __LINE__
#define VX(x) movdqu xmmword ptr [rip + rt_vbuf], x
#define VY(y) vmovdqu ymmword ptr [rip + rt_vbuf], y
#define VZ(z) vmovdqu64 zmmword ptr [rip + rt_vbuf], z
#define SHOWV(label, n) showv_m label, (n)
#define IF_MISSING(leaf, sub, reg, bit, label) cpu_has_m leaf, sub, reg, bit, label
#define CHECKQ(i, value) check_m __LINE__, (value), qword ptr [rip + rt_vbuf + 8 * (i)]
#define SAVE_ARGC push rax; mov rax, [rsp + 8]; mov [rip + rt_argc], rax; pop rax
#define PICK(reg, n, small) pick_m reg, (n), (small)

.macro pick_m reg, n, small
    pushfq
    mov \reg, \n
    cmp qword ptr [rip + rt_argc], 1
    jbe .Lrt_pick\@
    mov \reg, \small
.Lrt_pick\@:
    popfq
.endm

/* A string in .rodata; leaves its address in the named register. */
.macro str_m reg, s
    .pushsection .rodata.rt_str, "a"
.Lrt_str\@:
    .asciz "\s"
    .popsection
    lea \reg, [rip + .Lrt_str\@]
.endm

.macro say_m s
    pushfq
    push rdi
    str_m rdi, "\s"
    call rt_putsln
    pop rdi
    popfq
.endm

.macro show_m fn, label, op:vararg
    pushfq
    push rdi
    push rsi
    mov rdi, \op
    str_m rsi, "\label"
    call \fn
    pop rsi
    pop rdi
    popfq
.endm

.macro showf_m label, mask
    pushfq
    push rdi
    push rsi
    push rdx
    mov rdi, [rsp + 24]
    str_m rsi, "\label"
    mov edx, \mask
    call rt_showf
    pop rdx
    pop rsi
    pop rdi
    popfq
.endm

.macro check_m line, value, op:vararg
    pushfq
    push rax
    push rdx
    mov rax, \op
    movabs rdx, \value
    cmp rax, rdx
    je .Lrt_ok\@
    mov rsi, rax
    mov edi, \line
    jmp rt_fail
.Lrt_ok\@:
    pop rdx
    pop rax
    popfq
.endm

.macro checkr_m line, a, b
    mov [rip + rt_cmp_a], \a
    mov [rip + rt_cmp_b], \b
    check_m2 \line
.endm

.macro check_m2 line
    pushfq
    push rax
    push rdx
    mov rax, [rip + rt_cmp_a]
    mov rdx, [rip + rt_cmp_b]
    cmp rax, rdx
    je .Lrt_ok\@
    mov rsi, rax
    mov edi, \line
    jmp rt_fail
.Lrt_ok\@:
    pop rdx
    pop rax
    popfq
.endm

.macro checkf_m mask, want, line
    pushfq
    push rax
    push rdx
    mov rax, [rsp + 16]
    and rax, \mask
    mov edx, \want
    cmp rax, rdx
    je .Lrt_ok\@
    mov rsi, rax
    mov edi, \line
    jmp rt_fail
.Lrt_ok\@:
    pop rdx
    pop rax
    popfq
.endm

.macro fail_m why, line
    str_m rsi, "\why"
    mov edi, \line
    jmp rt_fail_msg
.endm

.macro cpu_has_m leaf, sub, reg, bit, missing
    push rax
    push rbx
    push rcx
    push rdx
    mov eax, \leaf
    mov ecx, \sub
    cpuid
    bt \reg, \bit
    pop rdx
    pop rcx
    pop rbx
    pop rax
    jnc \missing
.endm

.macro showv_m label, n
    pushfq
    push rdi
    push rsi
    str_m rdi, "\label"
    mov esi, \n
    call rt_showv
    pop rsi
    pop rdi
    popfq
.endm

/* Table-driven cases. A table is a list of CASE rows; RUN_TABLE executes
 * `insn` once per row with rax = a, rbx = rcx = b, RFLAGS = flags in, then
 * prints the row (rt_case) and checks rax and (RFLAGS & mask). In a count
 * form (SAVE_ARGC and an argument) the rows are checked but not printed:
 * printing costs about twenty times what checking does.
 * Clobbers rax, rbx, rcx, rdx, r12-r15. */
#define CASE(a, b, fin, res, fout, mask) .quad (a), (b), (fin), (res), (fout), (mask)

.macro RUN_TABLE label, table, insn:vararg
    lea r12, [rip + \table]
    lea r13, [rip + \table\()_end]
.Lrt_loop\@:
    mov rax, [r12]
    mov rbx, [r12 + 8]
    mov rcx, rbx
    push qword ptr [r12 + 16]
    popfq
    \insn
    pushfq
    pop r14
    mov r15, rax
    cmp qword ptr [rip + rt_argc], 1
    ja .Lrt_quiet\@
    push rdi
    push rsi
    push rdx
    push rcx
    str_m rdi, "\label"
    mov rsi, r12
    mov rdx, r15
    mov rcx, r14
    call rt_case
    pop rcx
    pop rdx
    pop rsi
    pop rdi
.Lrt_quiet\@:
    cmp r15, [r12 + 24]
    je .Lrt_res_ok\@
    mov rsi, r15
    mov rdx, [r12 + 24]
    mov edi, __LINE__
    jmp rt_fail
.Lrt_res_ok\@:
    mov rax, r14
    and rax, [r12 + 40]
    cmp rax, [r12 + 32]
    je .Lrt_fl_ok\@
    mov rsi, rax
    mov rdx, [r12 + 32]
    mov edi, __LINE__
    jmp rt_fail
.Lrt_fl_ok\@:
    add r12, 48
    cmp r12, r13
    jb .Lrt_loop\@
.endm
