//! The monitor thread: drains every guest thread's ring, classifies each
//! block exit from the block table, and keeps the exact profile tables
//! (design S1).
//!
//! I1: every ring entry is processed exactly once, in order per thread; at
//!     finish the monitor drains every ring completely before returning.
//! I2: the per-entry loop indexes dense tables by `BlockId`; hashing happens
//!     only for indirect edges and call edges.
//! I3: the monitor never runs guest code and never touches a guest thread's
//!     registers; it reads rings and the block table only.
//!
//! Ring entries: a value below `TAG` is a `BlockId`. `TAG_SYSCALL | nr` is
//! followed by three words: result (low, high) and the duration in ns
//! (saturated at 2^32-1). `TAG_REP` is followed by ECX before and after a
//! `rep` string instruction. `TAG_UNRETIRED` is followed by how many of the
//! instructions of the block entered last did not retire (it stopped early).
//! `TAG_UNRETIRED_REP` is the same for a block whose `rep` instruction
//! faulted part way: the `TAG_REP` record before it (closed with ECX at the
//! fault) counts that instruction's completed iterations only.
#![allow(unsafe_code)]

pub mod blocks;
pub mod ring;
mod tables;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

pub use blocks::{BlockMeta, BlockTable, ExitKind};
pub use ring::Ring;
pub use tables::{SyscallStat, Tables};

/// Entries with this bit set are tagged records, not block ids.
pub const TAG: u32 = 0x8000_0000;
/// Bits 31..30 = 10: a syscall record; the number is in the low 30 bits
/// (11 is kept for superblock records).
pub const TAG_SYSCALL: u32 = 0x8000_0000;
pub const NR_MASK: u32 = 0x3fff_ffff;
/// A `rep` string instruction ran: followed by ECX before and ECX after.
pub const TAG_REP: u32 = 0xc000_0001;
/// The block entered last stopped early (a fault, a trap that does not
/// retire, a store into translated code): followed by the number of its
/// counted instructions that did not retire.
pub const TAG_UNRETIRED: u32 = 0xc000_0002;
/// The `rep` string instruction of the last `TAG_REP` record faulted: it
/// retired only its completed iterations (ECX before minus ECX at the
/// fault); followed by the number of counted instructions after it in its
/// block (which did not retire).
pub const TAG_UNRETIRED_REP: u32 = 0xc000_0003;

/// Words that follow a tagged entry.
pub fn record_words(tag: u32) -> usize {
    match tag {
        TAG_REP => 2,
        TAG_UNRETIRED | TAG_UNRETIRED_REP => 1,
        _ => 3,
    }
}

/// One guest thread's ring and where its producer position lives.
#[derive(Debug)]
pub struct ThreadRing {
    pub ring: Ring,
    /// `ThreadCtx::ring_pos` of the thread (written by emitted code).
    pub pos: *const AtomicU64,
    pub tid: i32,
}

// SAFETY: `pos` points into a ThreadCtx that lives until the process exits
// (contexts are never freed while the monitor runs); it is only read
// atomically.
unsafe impl Send for ThreadRing {}
// SAFETY: as above.
unsafe impl Sync for ThreadRing {}

#[derive(Debug)]
struct Shared {
    rings: Mutex<Vec<Arc<ThreadRing>>>,
    blocks: Arc<BlockTable>,
    stop: AtomicBool,
    /// The monitor naps on this futex word when every ring is empty; a
    /// waiting producer and `finish` ring it.
    doorbell: AtomicU32,
}

/// How the monitor ran: pinning, and its own cost.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct MonitorInfo {
    pub pinned: bool,
    pub monitor_core: Option<usize>,
    pub guest_core: Option<usize>,
    pub note: String,
    pub cpu_seconds: f64,
}

/// Handle to the running monitor thread.
#[derive(Debug)]
pub struct Monitor {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<(Tables, f64)>>,
    pub info: MonitorInfo,
}

fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

impl Monitor {
    /// Start the monitor, pinned to a core other than the calling (guest)
    /// thread's when at least two are available.
    pub fn start(blocks: Arc<BlockTable>) -> Monitor {
        let shared = Arc::new(Shared {
            rings: Mutex::new(Vec::new()),
            blocks,
            stop: AtomicBool::new(false),
            doorbell: AtomicU32::new(0),
        });
        // FACTS: get_core_ids reports the calling thread's current mask;
        // read it before pinning anything.
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        let mut info = MonitorInfo::default();
        let (guest_core, monitor_core) = if cores.len() >= 2 {
            (Some(cores[0]), Some(cores[1]))
        } else {
            info.note = format!("unpinned: {} core(s) available to hotlift", cores.len());
            (None, None)
        };
        if let (Some(g), Some(_)) = (guest_core, monitor_core) {
            if core_affinity::set_for_current(g) {
                info.guest_core = Some(g.id);
            }
        }
        let s2 = shared.clone();
        let thread = std::thread::Builder::new()
            .name("hotlift-monitor".into())
            .spawn(move || {
                // Signals sent to the process belong to the guest thread:
                // the monitor must never be the one the kernel picks.
                // SAFETY: blocks signals for this (new) thread only.
                unsafe {
                    let mut all: libc::sigset_t = std::mem::zeroed();
                    libc::sigfillset(&mut all);
                    libc::pthread_sigmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
                }
                let pinned = monitor_core
                    .map(core_affinity::set_for_current)
                    .unwrap_or(false);
                let tables = run(&s2, pinned);
                (tables, thread_cpu_seconds())
            })
            .expect("spawn the monitor thread");
        if let Some(m) = monitor_core {
            info.monitor_core = Some(m.id);
            info.pinned = info.guest_core.is_some();
            if !info.pinned {
                info.note = "unpinned: setting the CPU affinity failed".into();
            }
        }
        Monitor {
            shared,
            thread: Some(thread),
            info,
        }
    }

    /// Register a guest thread's ring.
    pub fn add_ring(&self, ring: Arc<ThreadRing>) {
        let bell = &self.shared.doorbell as *const AtomicU32 as *mut AtomicU32;
        ring.ring.shared.doorbell.store(bell, Ordering::Release);
        self.shared.rings.lock().expect("ring registry").push(ring);
    }

    /// Stop after draining every ring (I1) and hand back the tables.
    pub fn finish(&mut self) -> Tables {
        self.shared.stop.store(true, Ordering::Release);
        ring::ring_doorbell(&self.shared.doorbell);
        let (tables, cpu) = self
            .thread
            .take()
            .expect("monitor finished twice")
            .join()
            .expect("monitor thread");
        self.info.cpu_seconds = cpu;
        tables
    }
}

/// The monitor's loop (S1: it owns its core and polls).
fn run(shared: &Shared, pinned: bool) -> Tables {
    let mut tables = Tables::default();
    let mut idle = 0u32;
    loop {
        let stop = shared.stop.load(Ordering::Acquire);
        let rings: Vec<Arc<ThreadRing>> = shared.rings.lock().expect("ring registry").clone();
        let mut any = false;
        for (t, r) in rings.iter().enumerate() {
            loop {
                // SAFETY: pos points into a live ThreadCtx (ThreadRing).
                let p = unsafe { (*r.pos).load(Ordering::Acquire) };
                // SAFETY: this thread is the ring's only consumer.
                let entries = unsafe { r.ring.take(p) };
                if entries.is_empty() {
                    // take() may have followed the producer into the other
                    // segment: look again once.
                    // SAFETY: as above.
                    let again = unsafe { r.ring.take((*r.pos).load(Ordering::Acquire)) };
                    if again.is_empty() {
                        break;
                    }
                    tables.process(t, again, &shared.blocks);
                    r.ring.release(again.len());
                    any = true;
                    continue;
                }
                let lag = r.ring.lag(p);
                tables.max_lag = tables.max_lag.max(lag);
                tables.process(t, entries, &shared.blocks);
                r.ring.release(entries.len());
                any = true;
            }
        }
        if any {
            idle = 0;
            continue;
        }
        if stop {
            for r in &rings {
                tables.waits += r.ring.shared.waits.load(Ordering::Relaxed);
                tables.wait_ns += r.ring.shared.wait_ns.load(Ordering::Relaxed);
            }
            return tables;
        }
        // S1 polls because the monitor owns its core; but an idle poll that
        // never sleeps takes the core from everything else on the machine
        // (and, unpinned, from the guest). Spin briefly, then nap: the ring
        // holds millions of entries, so a nap costs no waits.
        idle = idle.saturating_add(1);
        let spin = if pinned { 4096 } else { 64 };
        if idle < spin {
            std::hint::spin_loop();
        } else {
            let seen = shared.doorbell.load(Ordering::Acquire);
            if shared.stop.load(Ordering::Acquire) {
                continue;
            }
            let nap = libc::timespec {
                tv_sec: 0,
                tv_nsec: 1_000_000,
            };
            // SAFETY: futex wait on a live atomic word, bounded by `nap`.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    shared.doorbell.as_ptr(),
                    libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                    seen,
                    &nap as *const libc::timespec,
                )
            };
        }
    }
}
