// hotlift runtime: the switch between Rust and translated code.
// Pulled in by src/runtime.rs with global_asm!; every braced name below is a
// const operand computed with offset_of! on ThreadCtx (never a literal).
// Intel syntax. The contract is in runtime/README.md.

    .text
    .globl hotlift_enter
    .type hotlift_enter,@function
    .p2align 4
// extern "C" fn hotlift_enter(ctx: *mut ThreadCtx)
// rdi = ctx, which is also the GS base of this thread.
hotlift_enter:
    push rbp
    push rbx
    push r12
    push r13
    push r14
    push r15
    sub rsp, 8
    mov [rdi + {HOST_RSP}], rsp
    rdfsbase rax
    mov [rdi + {HOST_FS}], rax
    // Guest vector/x87 state: loaded by hand where hotlift_exit saved it
    // by hand (below), else with xrstor.
    mov r9, [rdi + {XSAVE_PTR}]
    mov r8d, [rdi + {XSAVE_FAST}]
    test r8d, r8d
    jz 5f
    // The image holds SSE and AVX state, PKRU where the CPU has it, and
    // nothing else (x87 in its initial state) ...
    mov eax, 6
    mov edx, 0x206
    cmp r8d, 1
    cmovne eax, edx
    cmp qword ptr [r9 + 512], rax
    jne 5f
    // ... and x87 is in its initial state now (hotlift does not use it).
    mov ecx, 1
    xgetbv
    test al, 1
    jnz 5f
    cmp r8d, 1
    je 6f
    // PKRU is the guest's already (hotlift never writes it).
    xor ecx, ecx
    rdpkru
    cmp eax, [r9 + r8]
    jne 5f
6:
    .irp r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    vmovups xmm\r, [r9 + 160 + 16 * \r]
    vinsertf128 ymm\r, ymm\r, [r9 + 576 + 16 * \r], 1
    .endr
    mov eax, [r9 + 24]
    cmp eax, [rdi + {HOST_MXCSR}]
    je 7f
    ldmxcsr [r9 + 24]
    jmp 7f
5:
    mov eax, [rdi + {XSAVE_MASK}]
    mov edx, [rdi + {XSAVE_MASK} + 4]
    xrstor64 [r9]
7:
    // Guest FS base, then guest RFLAGS (popfq on the host stack).
    mov rax, [rdi + {FS_BASE}]
    wrfsbase rax
    push qword ptr [rdi + {RFLAGS}]
    popfq
    mov rax, [rdi + {GPR} + 0*8]
    mov rcx, [rdi + {GPR} + 1*8]
    mov rdx, [rdi + {GPR} + 2*8]
    mov rbx, [rdi + {GPR} + 3*8]
    mov rbp, [rdi + {GPR} + 5*8]
    mov rsi, [rdi + {GPR} + 6*8]
    mov r8,  [rdi + {GPR} + 8*8]
    mov r9,  [rdi + {GPR} + 9*8]
    mov r10, [rdi + {GPR} + 10*8]
    mov r11, [rdi + {GPR} + 11*8]
    mov r12, [rdi + {GPR} + 12*8]
    mov r13, [rdi + {GPR} + 13*8]
    mov r14, [rdi + {GPR} + 14*8]
    mov r15, [rdi + {GPR} + 15*8]
    mov rsp, [rdi + {GPR} + 4*8]
    mov rdi, [rdi + {GPR} + 7*8]
    jmp qword ptr gs:[{ENTER_TARGET}]
    .globl hotlift_enter_end
hotlift_enter_end:
    .size hotlift_enter, .-hotlift_enter

    .globl hotlift_exit
    .type hotlift_exit,@function
    .p2align 4
// Reached by `jmp gs:[exit_fn]` from translated code, with every guest
// register live and ctx.exit_reason / ctx.exit_arg (and ctx.rip for
// indirect misses) already stored. Returns from hotlift_enter.
hotlift_exit:
    mov gs:[{GPR} + 0*8], rax
    mov gs:[{GPR} + 1*8], rcx
    mov gs:[{GPR} + 2*8], rdx
    mov gs:[{GPR} + 3*8], rbx
    mov gs:[{GPR} + 4*8], rsp
    mov gs:[{GPR} + 5*8], rbp
    mov gs:[{GPR} + 6*8], rsi
    mov gs:[{GPR} + 7*8], rdi
    mov gs:[{GPR} + 8*8], r8
    mov gs:[{GPR} + 9*8], r9
    mov gs:[{GPR} + 10*8], r10
    mov gs:[{GPR} + 11*8], r11
    mov gs:[{GPR} + 12*8], r12
    mov gs:[{GPR} + 13*8], r13
    mov gs:[{GPR} + 14*8], r14
    mov gs:[{GPR} + 15*8], r15
    mov rsp, gs:[{HOST_RSP}]
    pushfq
    pop qword ptr gs:[{RFLAGS}]
    // Host ABI: DF and AC clear.
    push 0x202
    popfq
    rdfsbase rax
    mov gs:[{FS_BASE}], rax
    mov rax, gs:[{HOST_FS}]
    wrfsbase rax
    mov r9, gs:[{XSAVE_PTR}]
    // Where the CPU's state is x87, SSE, AVX and PKRU at most
    // (xsave_fast != 0) and x87 is in its initial state, the registers
    // are stored by hand in XSAVE's standard format: XSAVEOPT and XRSTOR
    // take about 150 ns a round trip on AMD Zen 4 in a VM, the stores
    // and loads about 12, XGETBV 15.
    mov r8d, gs:[{XSAVE_FAST}]
    test r8d, r8d
    jz 5f
    mov ecx, 1
    xgetbv
    test al, 1
    jnz 5f
    .irp r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    vmovups [r9 + 160 + 16 * \r], xmm\r
    vextractf128 [r9 + 576 + 16 * \r], ymm\r, 1
    .endr
    stmxcsr [r9 + 24]
    mov eax, 6
    cmp r8d, 1
    je 6f
    xor ecx, ecx
    rdpkru
    mov [r9 + r8], eax
    mov eax, 0x206
6:
    // XSTATE_BV: SSE and AVX (and PKRU) held, x87 initial.
    mov qword ptr [r9 + 512], rax
    jmp 2f
5:
    mov eax, gs:[{XSAVE_MASK}]
    mov edx, gs:[{XSAVE_MASK} + 4]
    xsaveopt64 [r9]
    // x87 and MXCSR as the host ABI wants them, each only where the guest
    // left them otherwise (both are slow on AMD Zen 4: they and the save
    // were about a fifth of a syscall's round trip): x87 in its initial
    // state has XSTATE_BV bit 0 clear.
    test byte ptr [r9 + 512], 1
    jz 2f
    fninit
2:
    mov rcx, r9
    mov eax, [rcx + 24]
    cmp eax, gs:[{HOST_MXCSR}]
    je 3f
    ldmxcsr gs:[{HOST_MXCSR}]
3:
    vzeroupper
    add rsp, 8
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbx
    pop rbp
    ret
    .size hotlift_exit, .-hotlift_exit

    .globl hotlift_signal_entry
    .type hotlift_signal_entry,@function
    .p2align 4
// sa_sigaction for host signals (SA_SIGINFO|SA_ONSTACK). Translated code
// runs with the guest FS base, and even errno is FS-relative: switch to
// hotlift's FS base (found through GS) before any Rust, put the interrupted
// one back after. A thread without a ThreadCtx has GS base 0: then FS is
// already hotlift's and is left alone.
// rdi = signo, rsi = siginfo, rdx = ucontext.
hotlift_signal_entry:
    push rbx
    push r12
    sub rsp, 8
    rdgsbase rax
    test rax, rax
    jz 1f
    rdfsbase rbx
    mov r12, gs:[{HOST_FS}]
    wrfsbase r12
    call qword ptr [rip + {RUST_HANDLER}]
    wrfsbase rbx
    add rsp, 8
    pop r12
    pop rbx
    ret
1:
    call qword ptr [rip + {RUST_HANDLER}]
    add rsp, 8
    pop r12
    pop rbx
    ret
    .size hotlift_signal_entry, .-hotlift_signal_entry

    .globl hotlift_restore_rt
    .type hotlift_restore_rt,@function
    .p2align 4
// sa_restorer of hotlift's handlers installed with the raw rt_sigaction
// (signals 32 and 33, which the host C library refuses to install).
hotlift_restore_rt:
    mov eax, 15
    syscall
    ud2
    .size hotlift_restore_rt, .-hotlift_restore_rt

    .globl hotlift_guest_syscall
    .type hotlift_guest_syscall,@function
    .p2align 4
// extern "C" fn hotlift_guest_syscall(nr: u64, args: *const [u64; 6]) -> i64
// A guest syscall passed through to the kernel, interruptible by a signal
// that must end the guest or run a guest handler: the handler (src/signal)
// rewrites a thread it interrupts between `_check` and `_insn` (inclusive:
// `_insn` is also where the kernel leaves a syscall it will restart) to
// return -EINTR from `_done`, and the pending flag and the queued signals
// are checked before the syscall, so a signal can never leave the thread
// blocked in the kernel. Only guest threads (GS base = their context)
// call it.
hotlift_guest_syscall:
    mov rax, rdi
    mov r11, rsi
    mov rdi, [r11]
    mov rsi, [r11 + 8]
    mov rdx, [r11 + 16]
    mov r10, [r11 + 24]
    mov r8,  [r11 + 32]
    mov r9,  [r11 + 40]
    // RCX = 0 until the syscall instruction runs (it sets RCX to the
    // return address): how the handler tells a syscall about to run from
    // one the kernel rewound to restart, both at `_insn`.
    xor ecx, ecx
    .globl hotlift_guest_syscall_check
hotlift_guest_syscall_check:
    cmp dword ptr [rip + {PENDING}], 0
    jne 1f
    cmp qword ptr gs:[{SIG_QUEUED}], 0
    jne 2f
    .globl hotlift_guest_syscall_insn
hotlift_guest_syscall_insn:
    syscall
    .globl hotlift_guest_syscall_done
hotlift_guest_syscall_done:
    ret
1:
    mov rax, -{EINTR}
    ret
2:
    // A signal for a guest handler is queued: the syscall runs after it.
    mov dword ptr gs:[{SYS_RESTART}], 1
    mov rax, -{EINTR}
    ret
    .size hotlift_guest_syscall, .-hotlift_guest_syscall
