//! hotlift's own threads (the monitor, the profile store's reader and
//! writer): started with every signal blocked, since signals sent to the
//! process belong to the guest threads.
//!
//! It uses only limits.rs, a leaf, so every layer can start one.
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
    let spawned = crate::limits::raised(libc::RLIMIT_NPROC, || {
        std::thread::Builder::new().name(name.into()).spawn(f)
    });
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    spawned
}
