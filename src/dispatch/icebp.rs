//! `int1` (icebp) raises SIGTRAP, but whether it retires first (the
//! signal's rip past it) depends on the CPU and hypervisor: Intel hosts
//! report it past the instruction, this project's AMD (KVM) hosts at it.
//! The guest must see what the host CPU does, so hotlift asks the CPU the
//! first time a guest runs `int1`: a child process executes one and looks
//! at the rip its handler gets.
//!
//! I1: the probe child is a raw `clone` without an exit signal (the guest
//!     gets no SIGCHLD for it) that runs only raw syscalls and its
//!     handler, then `exit_group`s; the parent reaps it with `__WCLONE`.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The address of the probe's `int1`, for its handler.
static PROBE_AT: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_trap(_sig: i32, _info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    // SAFETY: the kernel passes a ucontext_t for an SA_SIGINFO handler.
    let rip =
        unsafe { (*(uc as *const libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RIP as usize] };
    let at = PROBE_AT.load(Ordering::Relaxed);
    let code: i32 = if rip as u64 == at {
        10
    } else if rip as u64 == at + 1 {
        11
    } else {
        12
    };
    // SAFETY: ends the probe child.
    unsafe { libc::syscall(libc::SYS_exit_group, code) };
}

/// Runs in the probe child (I1): never returns.
fn probe_child() -> ! {
    let act: [u64; 4] = [
        on_trap as *const () as usize as u64,
        // x86-64 frames need a restorer; the handler never returns.
        libc::SA_SIGINFO as u64 | crate::strace::SA_RESTORER,
        on_trap as *const () as usize as u64,
        0,
    ];
    let trap = 1u64 << (libc::SIGTRAP - 1);
    // SAFETY: raw syscalls on this (child) process's own state; the
    // `int1` raises SIGTRAP, whose handler ends the process.
    unsafe {
        libc::syscall(libc::SYS_rt_sigaction, libc::SIGTRAP, act.as_ptr(), 0, 8);
        libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_UNBLOCK, &trap, 0, 8);
        std::arch::asm!(
            "lea {t}, [rip + 2f]",
            "mov [{slot}], {t}",
            "2: .byte 0xf1",
            "nop",
            t = out(reg) _,
            slot = in(reg) PROBE_AT.as_ptr(),
        );
        libc::syscall(libc::SYS_exit_group, 13);
    }
    unreachable!("exit_group returned")
}

/// Does `int1` retire on this CPU? (Asked once; if the probe fails, the
/// architectural answer: it is a trap, it retires.)
pub fn retires() -> bool {
    static ANSWER: OnceLock<bool> = OnceLock::new();
    *ANSWER.get_or_init(|| {
        // SAFETY: a fork-like clone without an exit signal (I1); the child
        // runs only probe_child.
        let pid = unsafe { libc::syscall(libc::SYS_clone, 0, 0, 0, 0, 0) };
        if pid == 0 {
            probe_child();
        }
        if pid < 0 {
            return true;
        }
        let mut status = 0;
        // SAFETY: reaps our own child.
        unsafe { libc::waitpid(pid as i32, &mut status, libc::__WCLONE) };
        !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 10)
    })
}
