//! How hotlift's process ends: its own exit statuses (README "Exit
//! status") and dying of a signal as the kernel would kill it, a leaf any
//! layer may name: the dispatcher ends a process that cannot go on with
//! [`EXIT_HOTLIFT_FAILED`] or the guest's fatal signal ([`die_with`])
//! without reaching up into the command line or the signal layer (issue
//! 21), and the command line maps everything else to them.
#![allow(unsafe_code)]

/// hotlift itself failed (the guest's own status is never 125).
pub const EXIT_HOTLIFT_FAILED: i32 = 125;
/// The program exists but cannot be run (as the shell's 126).
pub const EXIT_NOT_RUNNABLE: i32 = 126;
/// The program was not found (as the shell's 127).
pub const EXIT_NOT_FOUND: i32 = 127;
/// `compare`, `diff`, `export`: equivalent, a mismatch, could not run.
pub const EXIT_OK: i32 = 0;
pub const EXIT_MISMATCH: i32 = 1;
pub const EXIT_TOOL_ERROR: i32 = 2;

/// Give signal `sig` its default action (async-signal-safe).
pub fn set_default(sig: i32) {
    // SAFETY: a zeroed sigaction with SIG_DFL is valid; sigaction is
    // async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// Die of `sig` as the kernel would kill the process (same wait status).
pub fn die_with(sig: i32) -> ! {
    set_default(sig);
    // SAFETY: plain signal-mask and kill calls on our own process.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig);
        libc::_exit(128 + sig)
    }
}
