//! The guest's signal state: dispositions for the whole process (read by
//! the signal handlers of every thread, so in atomics), and per thread
//! what hotlift keeps of its mask and pending set for the signals it
//! never blocks in the kernel (its own fault signals), and its alternate
//! stack.

use std::sync::atomic::{AtomicU64, Ordering};

/// Dispositions: raw `struct kernel_sigaction` per signal (handler, flags,
/// restorer, mask).
#[derive(Debug)]
pub struct SignalState {
    actions: Vec<[AtomicU64; 4]>,
}

impl Default for SignalState {
    fn default() -> Self {
        SignalState {
            actions: (0..65)
                .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
                .collect(),
        }
    }
}

impl SignalState {
    /// The dispositions the guest inherits, as after execve: ignored
    /// signals stay ignored, everything else is default. SIGPIPE is
    /// default unless `also_ignored` (bit `sig - 1`: what a guest image's
    /// `execve` handed over, dispatch/exec.rs) says it is ignored: Rust's
    /// runtime replaced the inherited value before main.
    #[allow(unsafe_code)]
    pub fn inherited(also_ignored: u64) -> SignalState {
        let s = SignalState::default();
        for sig in 1..=64usize {
            if also_ignored & 1 << (sig - 1) != 0 {
                s.actions[sig][0].store(libc::SIG_IGN as u64, Ordering::Release);
                continue;
            }
            if sig == libc::SIGPIPE as usize {
                continue;
            }
            // SAFETY: querying (not changing) a disposition into a zeroed struct.
            let ignored = unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(sig as i32, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
            };
            if ignored {
                s.actions[sig][0].store(libc::SIG_IGN as u64, Ordering::Release);
            }
        }
        s
    }

    pub fn action(&self, sig: usize) -> [u64; 4] {
        std::array::from_fn(|i| self.actions[sig][i].load(Ordering::Acquire))
    }

    /// The handler word of `sig` (SIG_DFL 0, SIG_IGN 1, or an address).
    /// Async-signal-safe.
    pub fn handler(&self, sig: usize) -> u64 {
        self.actions[sig][0].load(Ordering::Acquire)
    }

    pub fn set_action(&self, sig: usize, a: [u64; 4]) {
        for (slot, v) in self.actions[sig].iter().zip(a) {
            slot.store(v, Ordering::Release);
        }
    }
}

/// One thread's signal state that the kernel does not keep for it and its
/// signal handler writes (in its mailbox, mailbox.rs M1; the alternate
/// stack, which only the thread itself sets, is the Vm's).
#[derive(Debug)]
pub struct ThreadSignals {
    /// The guest's blocked bits for the signals hotlift must keep
    /// unblocked (its own fault signals): recorded, never given to the
    /// kernel.
    pub blocked_own: AtomicU64,
    /// Those of them sent while the guest had them blocked: pending until
    /// it unblocks them (set by the signal handler).
    pub pending_own: AtomicU64,
    /// Signals queued for the guest's handlers that hotlift keeps blocked
    /// in the kernel until they are delivered (deliver.rs D1).
    pub held: AtomicU64,
    /// The siginfo of each queued signal (written by the handler), as
    /// words.
    info: Box<[[AtomicU64; 16]; 65]>,
}

/// A signal's siginfo: the kernel's 128 bytes.
pub type SigInfo = [u8; 128];

impl Default for ThreadSignals {
    fn default() -> Self {
        ThreadSignals {
            blocked_own: AtomicU64::new(0),
            pending_own: AtomicU64::new(0),
            held: AtomicU64::new(0),
            info: Box::new(std::array::from_fn(|_| Default::default())),
        }
    }
}

impl ThreadSignals {
    /// Keep the kernel's siginfo of `sig`. Async-signal-safe.
    ///
    /// # Safety
    /// `info` points at 128 readable bytes (the kernel's siginfo).
    #[allow(unsafe_code)]
    pub unsafe fn set_info(&self, sig: usize, info: *const u8) {
        for (i, slot) in self.info[sig].iter().enumerate() {
            // SAFETY: 16 words inside the caller's 128 bytes.
            let w = unsafe { (info as *const u64).add(i).read_unaligned() };
            slot.store(w, Ordering::Relaxed);
        }
    }

    /// The siginfo kept for `sig`.
    pub fn info(&self, sig: usize) -> SigInfo {
        let mut out = [0u8; 128];
        for (chunk, slot) in out.chunks_exact_mut(8).zip(self.info[sig].iter()) {
            chunk.copy_from_slice(&slot.load(Ordering::Relaxed).to_le_bytes());
        }
        out
    }
}
