//! How the host CPU runs RTM's `xbegin`: CPUs without TSX raise #UD, and
//! CPUs whose TSX is switched off (`TSX_CTRL`, the kernel's `tsx=off`)
//! abort every transaction at once with status 0 while CPUID shows no RTM,
//! so CPUID alone cannot tell the two apart. hotlift asks the CPU once, in
//! a child process, the first time a guest uses `xbegin`, `xend` or
//! `xabort`.
//!
//! I1: a CPU whose CPUID shows RTM counts as [`Host::Aborts`]: hotlift
//!     aborts every transaction there (an abort is always a legal outcome
//!     of `xbegin`, and transactional execution of translated code is not
//!     supported: README, known limits).
//! I2: the probe changes nothing in hotlift's process: the child shares no
//!     memory with it and sends no signal when it ends.
#![allow(unsafe_code)]

use std::sync::OnceLock;

/// What `xbegin` does on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// #UD (SIGILL): no TSX.
    Undefined,
    /// Every transaction aborts (or hotlift aborts it, I1).
    Aborts,
}

/// This host's behaviour, probed once.
pub fn host() -> Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    *HOST.get_or_init(probe)
}

fn probe() -> Host {
    if std::arch::x86_64::__cpuid_count(7, 0).ebx & (1 << 11) != 0 {
        return Host::Aborts;
    }
    // SAFETY: a new process (no CLONE_VM: a copy of this one) with no exit
    // signal (I2); the child only makes raw syscalls and runs `xbegin`.
    let pid = unsafe { libc::syscall(libc::SYS_clone, 0u64, 0u64, 0u64, 0u64, 0u64) };
    if pid == 0 {
        // SAFETY: the child: SIGILL back to its default action and
        // unblocked (hotlift's handler is for hotlift's process), then
        // `xbegin` with its fallback at the next instruction; EAX stays
        // 0xffffffff only if a transaction started, which `xend` commits.
        unsafe {
            let dfl = [libc::SIG_DFL as u64, 0, 0, 0];
            libc::syscall(
                libc::SYS_rt_sigaction,
                libc::SIGILL,
                dfl.as_ptr(),
                0u64,
                8u64,
            );
            let ill = 1u64 << (libc::SIGILL - 1);
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_UNBLOCK,
                &ill,
                0u64,
                8u64,
            );
            std::arch::asm!(
                "mov eax, -1",
                ".byte 0xc7, 0xf8, 0, 0, 0, 0", // xbegin to the next instruction
                "cmp eax, -1",
                "jne 2f",
                ".byte 0x0f, 0x01, 0xd5", // xend
                "2:",
                out("eax") _,
            );
            libc::syscall(libc::SYS_exit_group, 0);
        }
    }
    if pid < 0 {
        return Host::Undefined;
    }
    let mut status = 0;
    // SAFETY: waits for the child just made.
    let r = unsafe { libc::waitpid(pid as i32, &mut status, libc::__WALL) };
    if r == pid as i32 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Host::Aborts
    } else {
        Host::Undefined
    }
}
