//! hotlift's own threads (the monitor, the profile store's reader and
//! writer): started with every signal blocked, since signals sent to the
//! process belong to the guest threads.
//!
//! T1: while one runs, its thread id is known ([`is_own_tid`]): the guest
//!     cannot name it (syscall/hidden.rs: a signal, timer or owner aimed
//!     at it fails as for a thread that does not exist). A forked child
//!     starts with none ([`forked`]): its parent's are not in it.
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
    let body = move || {
        let _known = Known::register();
        f()
    };
    let spawned = crate::limits::raised(libc::RLIMIT_NPROC, || {
        std::thread::Builder::new().name(name.into()).spawn(body)
    });
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    spawned
}

/// The ids of hotlift's running threads (T1); 0 in a free slot. More
/// threads than slots stay nameable (no more than four run at once).
static OWN_TIDS: [std::sync::atomic::AtomicI32; 8] =
    [const { std::sync::atomic::AtomicI32::new(0) }; 8];

/// T1: the calling thread's id, known until the guard drops (its thread
/// ends, or unwinds).
struct Known(Option<usize>);

impl Known {
    fn register() -> Known {
        use std::sync::atomic::Ordering;
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        Known(OWN_TIDS.iter().position(|s| {
            s.compare_exchange(0, tid, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        }))
    }
}

impl Drop for Known {
    fn drop(&mut self) {
        if let Some(k) = self.0 {
            OWN_TIDS[k].store(0, std::sync::atomic::Ordering::Release);
        }
    }
}

/// T1: is `tid` one of hotlift's own running threads?
pub fn is_own_tid(tid: i32) -> bool {
    tid > 0
        && OWN_TIDS
            .iter()
            .any(|s| s.load(std::sync::atomic::Ordering::Acquire) == tid)
}

/// T1: in a forked child, before it starts threads of its own.
pub fn forked() {
    for s in &OWN_TIDS {
        s.store(0, std::sync::atomic::Ordering::Release);
    }
}
