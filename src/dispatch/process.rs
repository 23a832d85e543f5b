//! What the guest threads of one process share: the translation lock and
//! what it guards (guest memory map, brk, code cache), the lock-free parts
//! signal handlers read (code view, write-protected pages, signal
//! dispositions), the registry of threads, and stop-the-world.
//!
//! I1: the code cache, guest memory map and brk change only under
//!     `locked` (the translation lock).
//! I2: a flush (every translation dropped) happens only with every other
//!     guest thread out of translated code: the flushing thread holds the
//!     translation lock and stops the world first ([`Process::stop_world`]).
//!     A thread is out when its registry state is not `IN`; it sets `IN`
//!     (SeqCst) only right before entering translated code and then checks
//!     for a stop request and for a flush it missed, so a thread never
//!     enters code that a flush dropped.
//! I3: a stopped thread that is in translated code is sent [`KICK`]; its
//!     handler moves it out at the next instruction boundary
//!     (signal/mod.rs), where the machine state is exactly the guest's.
//! I4: a stop waits a bounded time ([`STOP_LIMIT`] before a flush,
//!     [`END_STOP_LIMIT`] at the process's end): a thread still in
//!     translated code then is an error that names it, never a hang or a
//!     panic. A flush that cannot stop the world does not happen: the
//!     process ends with hotlift's failure status and its profile
//!     (dispatch/mod.rs `flush`); a process that is ending writes its
//!     profile from what the rings held by then (monitor I1).
//!
//! Usage: threads hold an `Arc<Process>`; `proc.lock()` for the state
//! behind the translation lock.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::profiling::Profiling;
use super::SignalState;
use crate::cache::{CodeCache, CodeView};
use crate::guest_mem::{Brk, GuestMem};
use crate::host::Affinity;
use crate::options::RunOptions;

/// The signal a stopping thread sends the others (I3); hotlift keeps it
/// for itself (README, known limits).
pub const KICK: i32 = 64;

/// Behind the translation lock (I1).
#[derive(Debug)]
pub struct Locked {
    pub mem: GuestMem,
    pub brk: Brk,
    pub cache: CodeCache,
    /// Time the guest threads spent translating blocks (lifting,
    /// emitting, committing), in time stamp counter ticks
    /// ([`crate::clock::ticks`]).
    pub translate_ticks: u64,
    /// Translations kept across runs (kept/mod.rs).
    pub kept: super::kept::Kept,
    /// The blocks forked children made, for the next (forkpath.rs).
    pub fork_paths: super::forkpath::ForkPaths,
}

/// I4: how long a stop before a flush waits for the other threads.
pub const STOP_LIMIT: Duration = Duration::from_secs(60);
/// I4: how long the stop at a process's end waits (a fatal signal from
/// outside ends any number of threads within a second).
pub const END_STOP_LIMIT: Duration = Duration::from_secs(1);

/// I4: a guest thread that stayed in translated code through a stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("guest thread {tid} did not leave translated code within {waited:?} of being asked to")]
pub struct StuckThread {
    pub tid: i32,
    pub waited: Duration,
}

/// Where a registered thread is (I2).
pub const OUT: u32 = 0;
pub const IN: u32 = 1;
pub const GONE: u32 = 2;

/// A guest thread as the others see it.
#[derive(Debug)]
pub struct ThreadEntry {
    pub tid: AtomicI32,
    pub state: AtomicU32,
    /// The code generation the thread last entered: exit sites of that
    /// generation stay readable until it has seen a newer one.
    pub gen: AtomicU64,
}

/// The guest threads of the process and stop-the-world (I2, I3).
#[derive(Debug, Default)]
pub struct Threads {
    list: Mutex<Vec<Arc<ThreadEntry>>>,
    /// A thread wants the world stopped.
    stop: AtomicBool,
    /// Bumped when a stop ends; stopped threads wait on it (futex).
    resumed: AtomicU32,
}

impl Threads {
    pub fn add(&self, tid: i32) -> Arc<ThreadEntry> {
        let e = Arc::new(ThreadEntry {
            tid: AtomicI32::new(tid),
            state: AtomicU32::new(OUT),
            gen: AtomicU64::new(u64::MAX),
        });
        self.lock().push(e.clone());
        e
    }

    /// Is `tid` one of the process's guest threads?
    pub fn has_tid(&self, tid: i32) -> bool {
        self.lock()
            .iter()
            .any(|e| e.tid.load(Ordering::Relaxed) == tid)
    }

    pub fn remove(&self, e: &Arc<ThreadEntry>) {
        e.state.store(GONE, Ordering::SeqCst);
        self.lock().retain(|x| !Arc::ptr_eq(x, e));
    }

    /// Remove `e`; is it the last thread (threads.rs I3)?
    pub fn remove_is_last(&self, e: &Arc<ThreadEntry>) -> bool {
        let mut list = self.lock();
        e.state.store(GONE, Ordering::SeqCst);
        list.retain(|x| !Arc::ptr_eq(x, e));
        list.is_empty()
    }

    /// After `fork`, in the child: `me` is the only thread (the others
    /// stayed in the parent), and no stop is under way. The registry's
    /// lock is `list`, held across the fork by the forking thread.
    pub fn keep_only(list: &mut Vec<Arc<ThreadEntry>>, me: &Arc<ThreadEntry>, stop: &AtomicBool) {
        list.retain(|x| Arc::ptr_eq(x, me));
        stop.store(false, Ordering::SeqCst);
    }

    /// The registry's lock and stop flag, for a fork (fork.rs).
    pub fn for_fork(&self) -> (MutexGuard<'_, Vec<Arc<ThreadEntry>>>, &AtomicBool) {
        (self.lock(), &self.stop)
    }

    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// The oldest code generation a thread may still hold an exit of.
    pub fn oldest_gen(&self) -> u64 {
        self.lock()
            .iter()
            .map(|e| e.gen.load(Ordering::SeqCst))
            .min()
            .unwrap_or(u64::MAX)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Arc<ThreadEntry>>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// I2: mark `me` in translated code unless a stop is requested; false
    /// (and `me` stays out) when the caller must wait and look again.
    pub fn enter(&self, me: &ThreadEntry) -> bool {
        me.state.store(IN, Ordering::SeqCst);
        if self.stop.load(Ordering::SeqCst) {
            me.state.store(OUT, Ordering::SeqCst);
            self.wait_resumed();
            return false;
        }
        true
    }

    pub fn leave(&self, me: &ThreadEntry) {
        me.state.store(OUT, Ordering::SeqCst);
    }

    fn wait_resumed(&self) {
        while self.stop.load(Ordering::SeqCst) {
            let seen = self.resumed.load(Ordering::SeqCst);
            if !self.stop.load(Ordering::SeqCst) {
                break;
            }
            let t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 1_000_000,
            };
            // SAFETY: futex wait on a live word, bounded by `t`.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.resumed.as_ptr(),
                    libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                    seen,
                    &t as *const libc::timespec,
                )
            };
        }
    }

    /// Stop every other thread (I2, I3) within `limit` (I4); they stay out
    /// until [`Threads::go`].
    pub fn stop_others(&self, me: &ThreadEntry, limit: Duration) -> Result<(), StuckThread> {
        self.stop.store(true, Ordering::SeqCst);
        let start = Instant::now();
        let mut kicked = Instant::now() - Duration::from_secs(1);
        // Kicks queue (a real-time signal): a thread waiting for a core
        // gets one more each round. Kick again only after a pause that
        // doubles, from 200 us up to 20 ms (64 spinning threads on two
        // cores took 2.4 to 6.5 s to stop with a kick every 200 us).
        let mut pause = Duration::from_micros(200);
        loop {
            let others: Vec<Arc<ThreadEntry>> = self
                .lock()
                .iter()
                .filter(|e| !std::ptr::eq(e.as_ref(), me))
                .cloned()
                .collect();
            let running: Vec<&Arc<ThreadEntry>> = others
                .iter()
                .filter(|e| e.state.load(Ordering::SeqCst) == IN)
                .collect();
            if running.is_empty() {
                return Ok(());
            }
            if start.elapsed() >= limit {
                return Err(StuckThread {
                    tid: running[0].tid.load(Ordering::SeqCst),
                    waited: start.elapsed(),
                });
            }
            // Kick again now and then: a thread interrupted in glue steps to
            // an instruction boundary; one that was just entering may need
            // another kick (I3).
            if kicked.elapsed() > pause {
                for e in &running {
                    let tid = e.tid.load(Ordering::SeqCst);
                    // SAFETY: tgkill to a thread of our own process. A
                    // guest's RLIMIT_SIGPENDING must not refuse it
                    // (limits.rs I5).
                    crate::limits::queue_own(|| unsafe {
                        libc::syscall(libc::SYS_tgkill, crate::guest_mem::own_pid(), tid, KICK)
                    });
                }
                kicked = Instant::now();
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            // Most stops end within microseconds; a long one gives the
            // kicked threads this core too.
            if start.elapsed() < Duration::from_micros(200) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// End a stop: every thread may enter translated code again.
    pub fn go(&self) {
        self.stop.store(false, Ordering::SeqCst);
        self.resumed.fetch_add(1, Ordering::SeqCst);
        // SAFETY: futex wake on a live word.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.resumed.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                i32::MAX,
            )
        };
    }
}

/// Why every translation was dropped (the profile's
/// `code_cache_flushes_by_cause`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushCause {
    /// The guest stored into translated code (smc.rs).
    CodeWritten,
    /// Guest memory under translated code was unmapped, remapped or
    /// re-protected.
    CodeChanged,
    /// The code cache was full.
    CacheFull,
    /// The table of write-protected code pages was full (smc.rs).
    ProtectionTableFull,
    /// A syscall was about to write into write-protected code pages.
    SyscallIntoCode,
    /// A forked child starts with no translations.
    Fork,
    /// A thread asked for `PR_TSC_SIGSEGV`: time stamp counter reads trap
    /// from now on (syscall/control.rs C3).
    TscTrapping,
    /// Block ids are given again (epoch.rs).
    IdEpoch,
}

impl FlushCause {
    pub const COUNT: usize = 8;
    pub const ALL: [FlushCause; Self::COUNT] = [
        FlushCause::CodeWritten,
        FlushCause::CodeChanged,
        FlushCause::CacheFull,
        FlushCause::ProtectionTableFull,
        FlushCause::SyscallIntoCode,
        FlushCause::Fork,
        FlushCause::TscTrapping,
        FlushCause::IdEpoch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FlushCause::CodeWritten => "code_written",
            FlushCause::CodeChanged => "code_changed",
            FlushCause::CacheFull => "cache_full",
            FlushCause::ProtectionTableFull => "protection_table_full",
            FlushCause::SyscallIntoCode => "syscall_into_code",
            FlushCause::Fork => "fork",
            FlushCause::TscTrapping => "tsc_trapping",
            FlushCause::IdEpoch => "id_epoch",
        }
    }
}

/// One guest process under translation (module docs).
#[derive(Debug)]
pub struct Process {
    pub opts: RunOptions,
    /// The guest program's canonical path, NUL-terminated (its
    /// `/proc/self/exe`).
    pub exe_path: CString,
    pub locked: Mutex<Locked>,
    pub view: Arc<CodeView>,
    pub protected: super::protected::ProtectedPages,
    /// A store to protected code happened where the guest state could not
    /// be recovered exactly; flush at the next exit (smc.rs I3).
    pub smc_flush_pending: AtomicBool,
    /// Flushes by cause ([`FlushCause`]), for the profile.
    pub flush_causes: [AtomicU64; FlushCause::COUNT],
    /// Returns to the dispatcher by reason, for the profile.
    pub dispatch: DispatchCounts,
    /// Guest signal dispositions.
    pub sig: SignalState,
    /// The CPU affinity the guest sees (syscall/affinity.rs).
    pub affinity: Mutex<Affinity>,
    pub prof: Profiling,
    pub threads: Threads,
    /// The write end of the pipe a vfork parent waits on, in its child
    /// (fork.rs F4), or -1.
    pub vfork_fd: AtomicI32,
    /// Path profiling of one function (`hotlift paths`, paths/engine/mod.rs).
    pub paths: Option<Arc<dyn super::PathProfiler>>,
    /// The resource limits hotlift keeps for the guest (limits.rs).
    pub limits: Mutex<crate::limits::GuestLimits>,
    /// One fork at a time (fork.rs F1).
    pub forking: Mutex<()>,
    /// Block ids used at which the dispatcher next looks at ending the id
    /// epoch (epoch.rs; u32::MAX: never).
    pub epoch_next: std::sync::atomic::AtomicU32,
}

/// The profile's `dispatcher` counts of a process, as its threads add to
/// them (`crate::profile::Dispatcher` says what each is).
#[derive(Debug, Default)]
pub struct DispatchCounts {
    pub entries: AtomicU64,
    pub direct_exits: AtomicU64,
    pub links: AtomicU64,
    pub prelinks: AtomicU64,
    pub indirect_misses: AtomicU64,
    pub syscalls: AtomicU64,
    pub code_writes: AtomicU64,
}

impl DispatchCounts {
    /// One more of `c` (one of this struct's fields).
    #[inline]
    pub fn add(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Start from zero (a forked child's own counts).
    pub fn reset(&self) {
        for c in self.all() {
            c.store(0, Ordering::Relaxed);
        }
    }

    fn all(&self) -> [&AtomicU64; 7] {
        [
            &self.entries,
            &self.direct_exits,
            &self.links,
            &self.prelinks,
            &self.indirect_misses,
            &self.syscalls,
            &self.code_writes,
        ]
    }

    /// The counts now.
    pub fn snapshot(&self) -> crate::profile::Dispatcher {
        let [entries, direct_exits, links, prelinks, indirect_misses, syscalls, code_writes] =
            self.all().map(|c| c.load(Ordering::Relaxed));
        crate::profile::Dispatcher {
            entries,
            direct_exits,
            links,
            prelinks,
            indirect_misses,
            syscalls,
            code_writes,
        }
    }
}

impl Process {
    /// The guest's resource limits as they are now (limits.rs).
    pub fn guest_limits(&self) -> crate::limits::GuestLimits {
        self.limits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The state behind the translation lock (I1).
    pub fn lock(&self) -> MutexGuard<'_, Locked> {
        self.locked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Drop every translation and the write protection that guarded it
    /// (I2: `me` holds `locked`, here as `l`; the others are stopped
    /// first). Nothing is dropped when they cannot be (I4).
    pub fn flush(&self, l: &mut Locked, me: &ThreadEntry) -> Result<(), StuckThread> {
        self.threads.stop_others(me, STOP_LIMIT)?;
        self.flush_stopped(l);
        self.threads.go();
        Ok(())
    }

    /// [`Process::flush`] with the other threads stopped already (and
    /// still stopped after: an id epoch's end, epoch.rs E2).
    pub fn flush_stopped(&self, l: &mut Locked) {
        l.cache.flush(self.threads.oldest_gen());
        self.protected.restore_all();
        self.smc_flush_pending.store(false, Ordering::Release);
    }

    /// After stores into code (smc.rs I6), or before a syscall writes
    /// into the protected `pages` (given back here, I4): drop the
    /// translations on the pages given back since the last flush
    /// (cache/drop.rs), or every one when those pages are not all known or
    /// code shared with a forked process cannot be written; as
    /// [`Process::flush`] otherwise.
    pub fn flush_written(
        &self,
        l: &mut Locked,
        me: &ThreadEntry,
        pages: &[u64],
    ) -> Result<(), StuckThread> {
        self.threads.stop_others(me, STOP_LIMIT)?;
        for &p in pages {
            self.protected.restore(p);
        }
        let dropped = self.protected.take_given_back().and_then(|mut pages| {
            // smc.rs I7: the same memory in another mapping.
            if l.mem.has_views() {
                for p in pages.clone() {
                    for (s, e) in l.mem.twins(p, p + crate::guest_mem::PAGE) {
                        pages.extend((s..e).step_by(crate::guest_mem::PAGE as usize));
                    }
                }
            }
            l.cache.drop_pages(&pages, crate::backend::PATCH_NOP, |id| {
                self.prof.blocks.set_dead(id.0)
            })
        });
        if dropped.is_none() {
            l.cache.flush(self.threads.oldest_gen());
            self.protected.restore_all();
        }
        self.smc_flush_pending.store(false, Ordering::Release);
        self.threads.go();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// I4: a thread that stays in translated code (here: a thread that
    /// blocks the kick and never leaves) ends a stop with an error naming
    /// it once the limit passed; one that leaves lets the stop succeed.
    #[test]
    fn a_stop_is_bounded_and_names_the_thread_that_stayed() {
        let threads = Threads::default();
        // SAFETY: gettid has no preconditions.
        let me = threads.add(unsafe { libc::gettid() });
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let stuck = std::thread::spawn(move || {
            // SAFETY: blocks the kick in this test thread only; a kick
            // sent to it stays pending until the thread ends.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, KICK);
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                tx.send(libc::gettid()).unwrap();
            }
            done_rx.recv().unwrap();
        });
        let tid = rx.recv().unwrap();
        let other = threads.add(tid);
        other.state.store(IN, Ordering::SeqCst);
        let limit = Duration::from_millis(50);
        let began = Instant::now();
        let e = threads.stop_others(&me, limit).unwrap_err();
        assert_eq!(e.tid, tid);
        assert!(e.waited >= limit && began.elapsed() < Duration::from_secs(5));
        assert!(e.to_string().contains(&format!("guest thread {tid} ")));
        // Out of translated code: the stop ends at once.
        threads.leave(&other);
        assert_eq!(threads.stop_others(&me, limit), Ok(()));
        threads.go();
        done_tx.send(()).unwrap();
        stuck.join().unwrap();
    }
}
