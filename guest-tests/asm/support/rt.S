/* rt.S: output and failure helpers shared by the assembly tests.
 *
 * Invariants:
 *  I1. Every rt_* function preserves all general registers and RFLAGS
 *      (rt_fail*, rt_exit do not return). Vector registers are not touched.
 *  I2. Output goes straight to fd 1 with one write syscall per piece, so
 *      nothing is lost when a test dies of a signal right after printing.
 *  I3. Nothing here depends on the load address or on libc.
 *
 * Calling convention (used through the macros in rt.h):
 *   rt_putsln(rdi = zero-terminated string)         text + "\n"
 *   rt_show(rdi = value, rsi = label)                "label = 0x<hex>\n"
 *   rt_showd(rdi = value, rsi = label)               "label = <decimal>\n"
 *   rt_showf(rdi = rflags, rsi = label, rdx = mask)  "label: CF=1 ZF=0 ...\n"
 *   rt_showv(rdi = label, rsi = n)                   n qwords of rt_vbuf
 *   rt_case(rdi = label, rsi = case, rdx = result, rcx = rflags)
 *       one line for a table-driven case {a, b, flags in, result, flags out,
 *       mask} (six qwords at rsi): "label a=A b=B in=[..] -> R [..]";
 *       flags out are printed through the case's mask
 *   rt_fail(edi = line, rsi = got, rdx = want)       never returns, exit(1)
 *   rt_fail_msg(edi = line, rsi = message)           never returns, exit(1)
 *   rt_exit(edi = status)                            exit_group(status)
 */
.intel_syntax noprefix

.macro save_all
    pushfq
    push rax
    push rcx
    push rdx
    push rsi
    push rdi
    push r8
    push r9
    push r10
    push r11
.endm

.macro restore_all
    pop r11
    pop r10
    pop r9
    pop r8
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rax
    popfq
.endm

.text

/* write(1, rdi, rsi); clobbers rax, rcx, rdx, rsi, rdi, r11. */
write_raw:
    mov rdx, rsi
    mov rsi, rdi
    mov edi, 1
    mov eax, 1
    syscall
    ret

/* Print the zero-terminated string at rdi; clobbers like write_raw. */
puts_raw:
    xor esi, esi
1:  cmp byte ptr [rdi + rsi], 0
    je 2f
    inc rsi
    jmp 1b
2:  jmp write_raw

/* Print rdi as minimal hex with a 0x prefix; clobbers like write_raw + r8. */
hex_raw:
    sub rsp, 32
    lea r8, [rsp + 32]
1:  mov eax, edi
    and eax, 15
    lea rcx, [rip + hexdigits]
    mov al, [rcx + rax]
    dec r8
    mov [r8], al
    shr rdi, 4
    jnz 1b
    dec r8
    mov byte ptr [r8], 'x'
    dec r8
    mov byte ptr [r8], '0'
    mov rdi, r8
    lea rsi, [rsp + 32]
    sub rsi, r8
    call write_raw
    add rsp, 32
    ret

/* Print rdi as 16 hex digits; clobbers like write_raw + r8. */
hex16_raw:
    sub rsp, 16
    mov r8, 16
1:  mov eax, edi
    and eax, 15
    lea rcx, [rip + hexdigits]
    mov al, [rcx + rax]
    mov [rsp + r8 - 1], al
    shr rdi, 4
    dec r8
    jnz 1b
    mov rdi, rsp
    mov esi, 16
    call write_raw
    add rsp, 16
    ret

/* Print rdi as unsigned decimal; clobbers like write_raw + r8, r9. */
dec_raw:
    sub rsp, 32
    lea r8, [rsp + 32]
    mov rax, rdi
    mov r9, 10
1:  xor edx, edx
    div r9
    add dl, '0'
    dec r8
    mov [r8], dl
    test rax, rax
    jnz 1b
    mov rdi, r8
    lea rsi, [rsp + 32]
    sub rsi, r8
    call write_raw
    add rsp, 32
    ret

newline_raw:
    lea rdi, [rip + s_nl]
    mov esi, 1
    jmp write_raw

.globl rt_putsln
rt_putsln:
    save_all
    call puts_raw
    call newline_raw
    restore_all
    ret

.globl rt_show
rt_show:
    save_all
    push rdi
    mov rdi, rsi
    call puts_raw
    lea rdi, [rip + s_eq]
    call puts_raw
    pop rdi
    call hex_raw
    call newline_raw
    restore_all
    ret

.globl rt_showd
rt_showd:
    save_all
    push rdi
    mov rdi, rsi
    call puts_raw
    lea rdi, [rip + s_eq]
    call puts_raw
    pop rdi
    call dec_raw
    call newline_raw
    restore_all
    ret

/* Flags in print order: bit number, then a two-letter name. */
.globl rt_showf
rt_showf:
    save_all
    push rbx
    push r12
    push r13
    mov rbx, rdi
    mov r12, rdx
    mov rdi, rsi
    call puts_raw
    lea rdi, [rip + s_colon]
    call puts_raw
    lea r13, [rip + flag_table]
1:  movzx ecx, byte ptr [r13]
    cmp cl, 0xff
    je 3f
    bt r12, rcx
    jnc 2f
    /* " XF=" then the bit */
    mov al, [r13 + 1]
    mov [rip + flag_text + 1], al
    mov al, [r13 + 2]
    mov [rip + flag_text + 2], al
    bt rbx, rcx
    setc al
    add al, '0'
    mov [rip + flag_text + 4], al
    lea rdi, [rip + flag_text]
    mov esi, 5
    call write_raw
2:  add r13, 3
    jmp 1b
3:  call newline_raw
    pop r13
    pop r12
    pop rbx
    restore_all
    ret

.globl rt_showv
rt_showv:
    save_all
    push rbx
    push r12
    mov r12, rsi
    call puts_raw
    lea rdi, [rip + s_eq]
    call puts_raw
    xor ebx, ebx
1:  cmp rbx, r12
    jae 2f
    lea rdi, [rip + s_space]
    mov esi, 1
    test rbx, rbx
    jz 3f
    call write_raw
3:  lea rax, [rip + rt_vbuf]
    mov rdi, [rax + 8 * rbx]
    call hex16_raw
    inc rbx
    jmp 1b
2:  call newline_raw
    pop r12
    pop rbx
    restore_all
    ret

/* Print "[XF YF]": the names of the flags set in rdi & rsi. Clobbers like
   write_raw + r8, r9, r10 (write_raw leaves r8-r10 alone). */
flagnames_raw:
    mov r9, rdi
    and r9, rsi
    lea rdi, [rip + s_open]
    mov esi, 1
    call write_raw
    lea r10, [rip + flag_table]
    xor r8d, r8d            /* names printed so far */
1:  movzx ecx, byte ptr [r10]
    cmp cl, 0xff
    je 3f
    bt r9, rcx
    jnc 2f
    test r8, r8
    jz 4f
    lea rdi, [rip + s_space]
    mov esi, 1
    call write_raw
4:  lea rdi, [r10 + 1]
    mov esi, 2
    call write_raw
    inc r8
2:  add r10, 3
    jmp 1b
3:  lea rdi, [rip + s_close]
    mov esi, 1
    jmp write_raw

.globl rt_case
rt_case:
    save_all
    push rbx
    push r12
    push r13
    push r14
    mov rbx, rsi
    mov r12, rdx
    mov r13, rcx
    call puts_raw
    lea rdi, [rip + s_a]
    call puts_raw
    mov rdi, [rbx]
    call hex_raw
    lea rdi, [rip + s_b]
    call puts_raw
    mov rdi, [rbx + 8]
    call hex_raw
    lea rdi, [rip + s_in]
    call puts_raw
    mov rdi, [rbx + 16]
    mov esi, 0x8d5
    call flagnames_raw
    lea rdi, [rip + s_arrow]
    call puts_raw
    mov rdi, r12
    call hex_raw
    lea rdi, [rip + s_space]
    call puts_raw
    mov rdi, r13
    mov rsi, [rbx + 40]
    call flagnames_raw
    call newline_raw
    pop r14
    pop r13
    pop r12
    pop rbx
    restore_all
    ret

.globl rt_fail
rt_fail:
    mov r12, rsi
    mov r13, rdx
    mov ebx, edi
    lea rdi, [rip + s_fail]
    call puts_raw
    mov edi, ebx
    call dec_raw
    lea rdi, [rip + s_got]
    call puts_raw
    mov rdi, r12
    call hex_raw
    lea rdi, [rip + s_want]
    call puts_raw
    mov rdi, r13
    call hex_raw
    call newline_raw
    mov edi, 1
    jmp rt_exit

.globl rt_fail_msg
rt_fail_msg:
    mov r12, rsi
    mov ebx, edi
    lea rdi, [rip + s_fail]
    call puts_raw
    mov edi, ebx
    call dec_raw
    lea rdi, [rip + s_colon]
    call puts_raw
    mov rdi, r12
    call puts_raw
    call newline_raw
    mov edi, 1
    jmp rt_exit

.globl rt_exit
rt_exit:
    mov eax, 231        /* exit_group */
    syscall
    ud2

.section .rodata
hexdigits: .ascii "0123456789abcdef"
s_nl:      .asciz "\n"
s_eq:      .asciz " = "
s_colon:   .asciz ":"
s_space:   .asciz " "
s_fail:    .asciz "FAIL line "
s_got:     .asciz ": got "
s_want:    .asciz " want "
s_open:    .asciz "["
s_close:   .asciz "]"
s_a:       .asciz " a="
s_b:       .asciz " b="
s_in:      .asciz " in="
s_arrow:   .asciz " -> "
flag_table:
    .byte 0
    .ascii "CF"
    .byte 2
    .ascii "PF"
    .byte 4
    .ascii "AF"
    .byte 6
    .ascii "ZF"
    .byte 7
    .ascii "SF"
    .byte 10
    .ascii "DF"
    .byte 11
    .ascii "OF"
    .byte 0xff

.data
flag_text: .ascii " XF=0"

.bss
.balign 64
.globl rt_vbuf
rt_vbuf: .skip 64
.globl rt_cmp_a, rt_cmp_b
rt_cmp_a: .skip 8
rt_cmp_b: .skip 8
.globl rt_argc
rt_argc: .skip 8   /* argc, when the test used SAVE_ARGC (rt.h) */
