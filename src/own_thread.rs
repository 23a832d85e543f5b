//! hotlift's own threads (the monitor, the profile store's reader and
//! writer): started with every signal blocked, since signals sent to the
//! process belong to the guest threads.
//!
//! A leaf: it uses nothing of the crate, so every layer can start one.
#![allow(unsafe_code)]

/// Start one of hotlift's own threads (the monitor, the store's) born
/// with every signal blocked: signals sent to the process belong to the
/// guest threads, and the kernel must never pick this one, not even in its
/// first instructions. A new thread inherits its creator's mask, which is
/// put back right after.
pub fn spawn_blocked<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    // SAFETY: changes the calling thread's mask and puts it back.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
    }
    // A guest's soft RLIMIT_NPROC counts this thread too (a forked
    // child's monitor could not start and panicked): raised to the hard
    // limit for the spawn (limits.rs I6 keeps the hard one).
    let mut nproc = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: reads this process's limit into a buffer we own.
    let got = unsafe { libc::prlimit64(0, libc::RLIMIT_NPROC, std::ptr::null(), &mut nproc) } == 0;
    let lift = got && nproc.rlim_cur < nproc.rlim_max;
    if lift {
        let high = libc::rlimit64 {
            rlim_cur: nproc.rlim_max,
            rlim_max: nproc.rlim_max,
        };
        // SAFETY: a soft limit up to the hard one, always allowed.
        unsafe { libc::prlimit64(0, libc::RLIMIT_NPROC, &high, std::ptr::null_mut()) };
    }
    let spawned = std::thread::Builder::new().name(name.into()).spawn(f);
    if lift {
        // SAFETY: the limit read above, put back.
        unsafe { libc::prlimit64(0, libc::RLIMIT_NPROC, &nproc, std::ptr::null_mut()) };
    }
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    spawned
}
