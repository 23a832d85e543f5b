//! The monitor thread: drains every guest thread's ring, classifies each
//! block exit from the block table, and keeps the exact profile tables
//! (design S1).
//!
//! I1: every ring entry is processed exactly once, in order per thread; at
//!     finish the monitor drains every ring up to where it stood when
//!     `finish` was called (everything the finishing thread pushed, and
//!     what other threads had pushed by then) before returning.
//! I2: the per-entry loop indexes dense tables by `BlockId` (tables/);
//!     hashing happens only when a block's successor misses its two-way
//!     cache and when a call enters a context other than the caller's last.
//! I3: the monitor never runs guest code and never touches a guest thread's
//!     registers; it reads rings and the block table only.
//! I4: asked to pause ([`Monitor::pause`], before a `fork`), the monitor
//!     thread stops at the top of its loop, where it holds no lock and is
//!     inside no one-time initialisation (a lazily built table of a crate
//!     it uses), and stays there until told to go on: a forked child gets
//!     no state half changed by a thread it does not have. A monitor
//!     sleeping on its doorbell (between rounds, or idle) holds nothing
//!     either: a pause takes it as it is (CLAIMED) without waking it, and
//!     it does not leave its nap until given back. One pause at a time.
//! I5: a monitor started idle ([`Monitor::start`] with `idle`: a forked
//!     child's) makes no tables and reads no ring until a ring fills (its
//!     producer rings the doorbell), the end asks for it, or the idle time
//!     has passed; then it goes on as any monitor, from the first entry
//!     (I1). A child that calls `execve` or exits at once costs no tables,
//!     no page of them and no drain: each forked python child's monitor
//!     had been about 7 ms of its fork's 16. A fork of its own does not
//!     end the idleness (I4: it takes the sleeping monitor). Its thread is
//!     born on its starter's core and copies no descriptor table until it
//!     wakes: a thread that had run on another core kept that core in the
//!     process's TLB shoot-downs, and every copy-on-write fault of the
//!     child then interrupted it (about 0.4 ms of each python fork child,
//!     its own start-up included, on a 2-vCPU VM). The child itself then
//!     tends to move to the other core, where a tree's first process
//!     pins its monitor: that monitor naps longer once it finds nothing
//!     ([`IDLE_ROUNDS`]), or a shell's `fork` + `exec` of `/bin/true` took
//!     1.5 ms more. Its time tree places the samples of that first stretch
//!     by interpolation over it (sampler.rs: one interval from the
//!     monitor's start).
//!
//! I6: after a fork (its pause given back) the monitor keeps still for
//!     [`FORK_QUIET_NS`] unless a ring fills or the end comes (the
//!     doorbell moves). A fork write-protects every private page of the
//!     process, and each first write after it is a copy-on-write fault
//!     whose TLB shoot-down interrupts every other core running the
//!     process: the guest's writes after `fork` interrupted a monitor that
//!     was draining, and the monitor's writes to its tables interrupted
//!     the guest (each a VM exit on a VM; 1.4 ms of CPU a python fork, more
//!     than the child cost). A parent that waits for its child lets the
//!     monitor catch up meanwhile, on a core where the process no longer
//!     runs. A `vfork` parent, which runs again only once its child has
//!     called `execve` or ended, asks for the same quiet then
//!     ([`Monitor::keep_still`]).
//! I7: asked to end an id epoch ([`Epochs::end_epoch`]: the guest threads
//!     are out of translated code and every translation is dropped, so
//!     every word naming an old block id is in a ring already), the monitor
//!     drains every ring at the top of its loop, tells the second tier,
//!     folds its tables (tables/epoch.rs I1) and only then says it did: no
//!     id is given again before.
//! I8: the monitor thread allocates from a heap a fork does not copy
//!     (arena.rs), but in [`SecondTier`] (a forked child adopts its log).
//!
//! Ring entries: the words of `crate::contract` (units, tagged records).
#![allow(unsafe_code)]

pub mod calltree;
pub mod hook;
pub mod request;
pub mod ring;
pub mod sampler;
pub mod snapshot;
pub mod tables;
pub mod trace;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::cache::BlockTable;

pub use crate::ir::ExitKind;
pub use hook::StreamHook;
pub use request::{Request, Trigger};
pub use ring::Ring;
pub use snapshot::Snapshot;
pub use tables::{EpochEnd, Retired, SbConfig, SyscallStat, Tables, Windows, RETIRED_REF};

pub use crate::contract::{
    record_words, BLOCK_ID_LIMIT, NR_MASK, TAG, TAG_LOOP, TAG_PATH, TAG_REP, TAG_SIGNAL,
    TAG_SIGRETURN, TAG_SYSCALL, TAG_UNRETIRED, TAG_UNRETIRED_REP, UNIT_BASE, UNIT_LIMIT,
};

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
    /// I4: the monitor's state for pauses (RUNNING, PAUSE_ASKED, PAUSED,
    /// NAPPING, CLAIMED below).
    pause: AtomicU32,
    /// I6: the monitor sleeps until this time (monotonic ns; 0: it need
    /// not), unless the doorbell moves from `quiet_bell`.
    quiet_until: AtomicU64,
    quiet_bell: AtomicU32,
    /// I7: the id epoch to end; how many were asked for (so that a round
    /// looks at the lock only then) and how many the monitor ended.
    epoch: Mutex<Option<tables::EpochEnd>>,
    epochs_asked: AtomicU32,
    epochs_ended: AtomicU32,
}

/// I6: how long a monitor keeps still after its process forked.
const FORK_QUIET_NS: u64 = 1_000_000;

impl Shared {
    /// I6: keep still for [`FORK_QUIET_NS`] from now, unless the doorbell
    /// moves.
    fn keep_still(&self) {
        self.quiet_bell
            .store(self.doorbell.load(Ordering::Acquire), Ordering::Release);
        self.quiet_until.store(
            crate::clock::monotonic_ns() + FORK_QUIET_NS,
            Ordering::Release,
        );
    }
}

/// The monitor may be anywhere in its loop.
const RUNNING: u32 = 0;
/// A guest thread wants the monitor still (a `fork`): it stops at the top
/// of its loop.
const PAUSE_ASKED: u32 = 1;
/// The monitor stopped there for the guest thread that asked.
const PAUSED: u32 = 2;
/// The monitor is at a point where it holds nothing and is about to
/// sleep, or sleeping, on its doorbell (between rounds, or idle: I5).
const NAPPING: u32 = 3;
/// A guest thread took a napping monitor as paused, without waking it:
/// it goes on napping, and does not leave its nap until given back.
const CLAIMED: u32 = 4;

/// A paused monitor (I4); it goes on when this is dropped.
#[derive(Debug)]
pub struct Paused {
    shared: Arc<Shared>,
    /// What the monitor goes back to: RUNNING after PAUSED, NAPPING after
    /// CLAIMED.
    back: u32,
}

impl Drop for Paused {
    fn drop(&mut self) {
        // I6: the fork is done; keep still a moment.
        let s = &self.shared;
        s.keep_still();
        s.pause.store(self.back, Ordering::Release);
        futex_wake(&s.pause);
    }
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: futex wake on a live atomic word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        )
    };
}

/// Wait on `word` while it holds `seen`, at most `ns` nanoseconds.
fn futex_wait(word: &AtomicU32, seen: u32, ns: i64) {
    let t = libc::timespec {
        tv_sec: ns / 1_000_000_000,
        tv_nsec: ns % 1_000_000_000,
    };
    // SAFETY: futex wait on a live atomic word, bounded by `t`.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            seen,
            &t as *const libc::timespec,
        )
    };
}

/// The second tier (src/superblock: Pisat's mining, selection, building,
/// review, the store's pre-building): what the monitor thread runs
/// between its drain rounds, on the tables the rounds keep, allocating
/// from the system heap (I8). The consumer calls into it only here; it
/// reaches the tables through their public methods (`add_superblock`…).
pub trait SecondTier: Send {
    /// Before the first round (a forked child's inherited superblocks).
    fn begin(&mut self, tables: &mut Tables);
    /// Between two drain rounds, never after the last.
    fn round(&mut self, tables: &mut Tables);
    /// After the last round, the tables finished: settle, and leave what
    /// it made where its maker reads it.
    fn end(&mut self, tables: &mut Tables);
    /// An id epoch ends (tables/epoch.rs): every superblock is gone, and
    /// block ids will be given again; before the tables fold.
    fn epoch(&mut self, tables: &mut Tables);
}

/// How the monitor ran: pinning, and its own cost.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
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
    thread: Option<JoinHandle<(Snapshot, f64, bool)>>,
    pub info: MonitorInfo,
}

/// Whether this process pins its guest thread and its monitor to cores
/// of their own. Only a tree's first process does: the processes of a
/// tree (a pipeline's stages, `make -j`'s compilers) run at once, and each
/// pinning its guest to the same first core ran them all there (a
/// five-stage busybox pipeline, paired medians of 5: 2.32 s pinned each,
/// 2.06 s unpinned; 0.46 s natively; Intel Xeon model 207). Cleared by a
/// forked child and by the image an `execve` starts.
static PIN: AtomicBool = AtomicBool::new(true);

/// This process is not a tree's first: its monitor is not pinned.
pub fn do_not_pin() {
    PIN.store(false, Ordering::Release);
}

impl Monitor {
    /// Start the monitor, pinned to a core other than the calling (guest)
    /// thread's when at least two are available and this is a tree's
    /// first process ([`PIN`]); `sampling` (None: off) is
    /// for the time tree (sampler.rs), `paths` for path profiling of one
    /// function (a [`StreamHook`], src/paths/collect.rs).
    pub fn start(
        blocks: Arc<BlockTable>,
        sb: SbConfig,
        tier: Option<Box<dyn SecondTier>>,
        sampling: Option<sampler::SampleConfig>,
        paths: Option<Box<dyn StreamHook>>,
        idle: Option<std::time::Duration>,
    ) -> Monitor {
        let shared = Arc::new(Shared {
            rings: Mutex::new(Vec::new()),
            blocks,
            stop: AtomicBool::new(false),
            doorbell: AtomicU32::new(0),
            pause: AtomicU32::new(0),
            quiet_until: AtomicU64::new(0),
            quiet_bell: AtomicU32::new(0),
            epoch: Mutex::new(None),
            epochs_asked: AtomicU32::new(0),
            epochs_ended: AtomicU32::new(0),
        });
        // FACTS: get_core_ids reports the calling thread's current mask;
        // read it before pinning anything.
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        let mut info = MonitorInfo::default();
        let (guest_core, monitor_core) = if !PIN.load(Ordering::Acquire) {
            info.note = "unpinned: a process of a tree started by another".into();
            (None, None)
        } else if cores.len() >= 2 {
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
        // One core for the guest and the monitor: each nap's end takes
        // the core from the guest (below).
        let nap = if cores.len() < 2 {
            SHARED_CORE_BACKOFF_NS
        } else {
            BACKOFF_NS
        };
        let s2 = shared.clone();
        // I5: an idle monitor is born on the starter's core (it inherits
        // its mask, given back to the starter at once).
        let idle = idle.map(|time| Idle {
            time,
            widen: stay_here(),
        });
        let widen = idle.as_ref().and_then(|i| i.widen.clone());
        // Born with every signal blocked: they belong to the guest threads.
        let thread = crate::own_thread::spawn_blocked("hotlift-monitor", move || {
            // Its malloc arena grown once, not a page at a time: python
            // -c pass 0.958, with a profile 0.953 (paired medians of 30,
            // AMD EPYC).
            crate::anon::reserve_arena(8 << 20);
            let pinned = monitor_core
                .map(core_affinity::set_for_current)
                .unwrap_or(false);
            let tables = run(&s2, sb, tier, sampling, paths, nap, idle);
            (tables, crate::clock::thread_cpu_seconds(), pinned)
        });
        if let Some(mask) = &widen {
            mask.apply_to_current();
        }
        let thread = thread.expect("spawn the monitor thread");
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

    /// I4: wait until the monitor thread is between rounds, holding
    /// nothing (no lock, no one-time initialisation half done), and keep
    /// it there until the result is dropped: a `fork` copies it so. A
    /// napping monitor is taken as it is, without waking it (a fork used
    /// to wait 0.1 ms, and up to 2, for a sleeping monitor to wake, answer
    /// and wake it in turn); one pause at a time.
    pub fn pause(&self) -> Paused {
        let s = &self.shared;
        let gone = || self.thread.as_ref().is_none_or(|t| t.is_finished());
        loop {
            let cur = s.pause.load(Ordering::Acquire);
            let (to, back) = match cur {
                NAPPING => (CLAIMED, NAPPING),
                RUNNING => (PAUSE_ASKED, RUNNING),
                // Another thread's pause: wait until it is given back.
                _ => {
                    futex_wait(&s.pause, cur, 1_000_000);
                    continue;
                }
            };
            if s.pause
                .compare_exchange(cur, to, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            if to == PAUSE_ASKED {
                ring::ring_doorbell(&s.doorbell);
                while s.pause.load(Ordering::Acquire) != PAUSED && !gone() {
                    futex_wait(&s.pause, PAUSE_ASKED, 1_000_000);
                }
            }
            return Paused {
                shared: s.clone(),
                back,
            };
        }
    }

    /// I6: the guest thread goes on after a `vfork` child let it (its
    /// copy-on-write faults come now, not at the fork): keep still.
    pub fn keep_still(&self) {
        self.shared.keep_still();
    }

    /// What ends an id epoch (I7), held without the monitor's handle.
    pub fn epochs(&self) -> Epochs {
        Epochs(self.shared.clone())
    }

    /// Stop after draining every ring (I1) and hand back their exact profile.
    pub fn finish(&mut self) -> Snapshot {
        self.shared.stop.store(true, Ordering::Release);
        ring::ring_doorbell(&self.shared.doorbell);
        let (tables, cpu, pinned) = self
            .thread
            .take()
            .expect("monitor finished twice")
            .join()
            .expect("monitor thread");
        self.info.cpu_seconds = cpu;
        if self.info.pinned && !pinned {
            self.info.pinned = false;
            self.info.note = "unpinned: setting the monitor's CPU affinity failed".into();
        }
        tables
    }
}

/// A monitor's id epochs (I7).
#[derive(Debug)]
pub struct Epochs(Arc<Shared>);

impl Epochs {
    /// I7: end an id epoch: the monitor takes every word pushed so far,
    /// folds what it knows by block id (tables/epoch.rs) and says so; false
    /// when it did not within `limit` (or it is finishing).
    pub fn end_epoch(&self, end: tables::EpochEnd, limit: std::time::Duration) -> bool {
        let s = &self.0;
        let before = s.epochs_ended.load(Ordering::Acquire);
        *s.epoch.lock().unwrap_or_else(|e| e.into_inner()) = Some(end);
        s.epochs_asked.fetch_add(1, Ordering::AcqRel);
        ring::ring_doorbell(&s.doorbell);
        let until = std::time::Instant::now() + limit;
        while s.epochs_ended.load(Ordering::Acquire) == before {
            if s.stop.load(Ordering::Acquire) || std::time::Instant::now() >= until {
                return false;
            }
            futex_wait(&s.epochs_ended, before, 1_000_000);
        }
        true
    }
}

/// Entries a drain round must find for the monitor to go straight on to
/// the next round; with fewer it has caught up and backs off (below).
const BATCH: usize = 4096;
/// How long a monitor that has caught up waits before it looks again.
const BACKOFF_NS: i64 = 50_000;
/// The same for a monitor that shares its one core with the guest: each
/// wake-up takes the core from the guest (a context switch and the
/// monitor's tables through the guest's caches), and a producer facing a
/// full segment rings the doorbell anyway. `taskset -c 0 hotlift run`,
/// paired medians of 5 against 50 µs (AMD EPYC): c-matmul 0.90, c-sort
/// 0.92, `c-nest 6 1` 0.90, c-recursion 0.97, c-switch 0.98; 10 ms was no
/// better than 2 (1.01–1.06).
const SHARED_CORE_BACKOFF_NS: i64 = 2_000_000;
/// Rounds in a row that found nothing before the monitor naps longer
/// ([`IDLE_NAP_NS`]): its process is blocked or sleeping (a shell waiting
/// for its child, a parent in `waitpid`). A monitor waking every 50 µs
/// took the core from whatever else ran there (the child, on a tree's
/// first process's monitor's core: a shell's `/bin/true` was switched
/// out 50 times). A producer facing a full segment rings the doorbell
/// anyway; the first round after the guest goes on starts up to a nap
/// late.
const IDLE_ROUNDS: u32 = 20;
const IDLE_NAP_NS: i64 = 1_000_000;
/// The longest nap of a monitor whose rings trickle (a round finds some
/// entries, fewer than [`BATCH`]): its next nap is as long as its rings
/// take to fill a batch at the rate the last nap saw, up to this, below
/// the time tree's default period (1 ms) so that a sample's interval
/// (sampler.rs) stays within it. Eight guest threads on two cores whose
/// counted loops push a record every few µs had the monitor wake every
/// 50 µs: a context switch on a guest's core each time (3,347 switches
/// against 972 without the monitor, 16 % more CPU; c-threads).
const TRICKLE_NAP_NS: i64 = 400_000;
/// Most entries of one ring a round processes before the builder gets a
/// turn (except in the last round, I1): a monitor that has fallen far
/// behind (an interpreter's indirect edges) still builds what was asked
/// for, and stored traces whose blocks just appeared, within a fraction of
/// a millisecond.
const ROUND_LIMIT: usize = 1 << 15;

/// The monitor's loop (S1: it owns its core and polls).
///
/// Polling has a price the design does not mention: the producer position
/// lives in the guest thread's context, which every block prologue writes,
/// and each read by the monitor takes that cache line away from the guest
/// core (a cross-core miss on the guest's next block). So the monitor
/// reads a ring's position once per drain round, and when a round finds
/// little it waits `backoff_ns` (`BACKOFF_NS`, or `SHARED_CORE_BACKOFF_NS`
/// on a core shared with the guest: a futex wait on the doorbell, which a
/// producer facing a full segment rings) instead of spinning. The ring is
/// far larger than what a guest produces in that time.
fn run(
    shared: &Shared,
    sb: SbConfig,
    mut tier: Option<Box<dyn SecondTier>>,
    sampling: Option<sampler::SampleConfig>,
    paths: Option<Box<dyn StreamHook>>,
    backoff_ns: i64,
    idle: Option<Idle>,
) -> Snapshot {
    // I8 (not with a path profiler: the guest's threads share its tables).
    let _heap = crate::arena::Scope::set(paths.is_none());
    // The sampler's clock starts with the monitor, idle or not (I5).
    let sampler = sampler::Sampler::new(sampling);
    if let Some(i) = &idle {
        wait_idle(shared, i.time);
        // I5: awake, it runs where its starter could.
        if let Some(mask) = &i.widen {
            mask.apply_to_current();
        }
    }
    // Files it writes (`--dump-superblocks`, a monitor record) take no
    // descriptor number from the guest's next `open`; if the kernel
    // refuses, it shares the table as before. (An idle monitor copies the
    // table only once awake, I5.)
    let _ = crate::host::private_fd_table();
    let mut tables = Tables::new(sb);
    // A forked child's monitor (started idle, I5) meets its parent's
    // blocks far apart. Any other may start after the guest published
    // blocks (a thread starting late on a busy machine): it meets them in
    // order, as they run (it was taken for a child's, and every entry it
    // made took a write fault after the first pass had read its zero
    // page: 1.5 ms of a 17 ms `/bin/true`).
    if idle.is_some() && !shared.blocks.is_empty() {
        tables.meets_blocks_apart();
    }
    trace::start(&sb);
    if let Some(t) = tier.as_mut() {
        t.begin(&mut tables);
    }
    tables.sampler = sampler;
    tables.paths = paths;
    let mut empty = 0u32;
    let mut nap_ns = backoff_ns;
    loop {
        // I4: here the monitor holds nothing.
        pause_point(shared);
        let asked = shared.epochs_asked.load(Ordering::Acquire)
            != shared.epochs_ended.load(Ordering::Relaxed);
        let end = asked
            .then(|| {
                shared
                    .epoch
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
            })
            .flatten();
        if let Some(end) = end {
            end_epoch(shared, &mut tables, tier.as_deref_mut(), &end);
            continue;
        }
        if keep_still(shared) {
            continue;
        }
        let stop = shared.stop.load(Ordering::Acquire);
        let rings: Vec<Arc<ThreadRing>> = shared.rings.lock().expect("ring registry").clone();
        let mut found = 0usize;
        let limit = if stop { usize::MAX } else { ROUND_LIMIT };
        for (t, r) in rings.iter().enumerate() {
            found += drain(&mut tables, t, r, &shared.blocks, limit);
        }
        if let Some(t) = tier.as_mut().filter(|_| !stop) {
            t.round(&mut tables);
        }
        // Stop was seen before this round read the producer positions: the
        // round drained all pushed before `finish` (I1), not what follows.
        if stop {
            for r in &rings {
                tables.waits += r.ring.shared.waits.load(Ordering::Relaxed);
                tables.wait_ns += r.ring.shared.wait_ns.load(Ordering::Relaxed);
            }
            tables.finish();
            trace::end(shared.blocks.published(), tables.totals());
            tables.thread_tids = rings.iter().map(|r| r.tid).collect();
            if let Some(mut t) = tier {
                t.end(&mut tables);
            }
            tables.mark_ran(&shared.blocks);
            shared.blocks.set_ran_complete();
            return tables.snapshot();
        }
        if found >= BATCH {
            empty = 0;
            nap_ns = backoff_ns;
            continue;
        }
        if found == 0 {
            empty = empty.saturating_add(1);
            tables.make_ahead(&shared.blocks); // tables/ahead.rs A2
        } else {
            empty = 0;
            nap_ns = trickle_nap(nap_ns, found, backoff_ns);
        }
        let seen = shared.doorbell.load(Ordering::Acquire);
        if shared.stop.load(Ordering::Acquire) {
            continue;
        }
        let ns = if empty >= IDLE_ROUNDS {
            backoff_ns.max(IDLE_NAP_NS)
        } else {
            nap_ns
        };
        nap(shared, seen, ns);
    }
}

/// I7: every ring drained (the guest threads are out of translated code:
/// all they pushed is there), the second tier told, the tables folded.
fn end_epoch(
    shared: &Shared,
    tables: &mut Tables,
    tier: Option<&mut (dyn SecondTier + '_)>,
    end: &tables::EpochEnd,
) {
    let rings: Vec<Arc<ThreadRing>> = shared.rings.lock().expect("ring registry").clone();
    for (t, r) in rings.iter().enumerate() {
        drain(tables, t, r, &shared.blocks, usize::MAX);
    }
    if let Some(t) = tier {
        t.epoch(tables);
    }
    tables.end_epoch(end);
    trace::epoch(end);
    shared.epochs_ended.fetch_add(1, Ordering::AcqRel);
    futex_wake(&shared.epochs_ended);
}

/// The nap after one of `last` ns that was followed by a round finding
/// `found` entries (fewer than a batch, more than none): long enough for
/// a batch at that rate, from `backoff` up to [`TRICKLE_NAP_NS`] (or
/// `backoff` when it is longer: one core shared with the guest).
fn trickle_nap(last: i64, found: usize, backoff: i64) -> i64 {
    let want = last.saturating_mul(BATCH as i64) / found.max(1) as i64;
    want.clamp(backoff, TRICKLE_NAP_NS.max(backoff))
}

/// An idle start (I5): for how long, and the mask its starter had when it
/// was born on the starter's core (None: it was not pinned there).
#[derive(Debug, Clone)]
struct Idle {
    time: std::time::Duration,
    widen: Option<crate::host::Affinity>,
}

/// Pin the calling thread to the core it is on; its mask before, to give
/// back (None: one core only, or the mask does not hold the core it runs
/// on, and nothing changed).
fn stay_here() -> Option<crate::host::Affinity> {
    let old = crate::host::Affinity::current();
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).ok()?;
    let cores: u32 = old.mask.iter().map(|b| b.count_ones()).sum();
    let here_allowed = old
        .mask
        .get(cpu / 8)
        .is_some_and(|b| b & 1 << (cpu % 8) != 0);
    if cores < 2 || !here_allowed {
        return None;
    }
    let mut here = vec![0u8; old.mask.len()];
    here[cpu / 8] = 1 << (cpu % 8);
    crate::host::Affinity { mask: here }.apply_to_current();
    Some(old)
}

/// I4 at the top of the loop: stop while a guest thread that asked for a
/// pause holds it.
fn pause_point(shared: &Shared) {
    if shared.pause.load(Ordering::Acquire) == PAUSE_ASKED {
        shared.pause.store(PAUSED, Ordering::Release);
        futex_wake(&shared.pause);
        while shared.pause.load(Ordering::Acquire) == PAUSED {
            futex_wait(&shared.pause, PAUSED, 10_000_000);
        }
    }
}

/// I6: after a fork, nap until the quiet time is over, unless a producer
/// or the end rang the doorbell since the fork began (then the quiet is
/// over too); whether it napped.
fn keep_still(shared: &Shared) -> bool {
    let until = shared.quiet_until.load(Ordering::Acquire);
    if until == 0 {
        return false;
    }
    let now = crate::clock::monotonic_ns();
    let seen = shared.quiet_bell.load(Ordering::Acquire);
    if now >= until
        || shared.stop.load(Ordering::Acquire)
        || shared.doorbell.load(Ordering::Acquire) != seen
    {
        shared.quiet_until.store(0, Ordering::Release);
        return false;
    }
    nap(shared, seen, (until - now) as i64);
    true
}

/// Sleep on the doorbell (which still holds `seen`) for at most `ns`,
/// holding nothing: a pause may take the monitor meanwhile without
/// waking it (I4), and it leaves its nap only once given back. Returns at
/// once when a pause was asked for (the caller's next pause point takes
/// it).
fn nap(shared: &Shared, seen: u32, ns: i64) {
    if shared
        .pause
        .compare_exchange(RUNNING, NAPPING, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    futex_wait(&shared.doorbell, seen, ns);
    loop {
        match shared
            .pause
            .compare_exchange(NAPPING, RUNNING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return,
            Err(cur) => futex_wait(&shared.pause, cur, 10_000_000),
        }
    }
}

/// I5: return once a ring has filled or the stop is asked for (each
/// rings the doorbell), or `d` has passed. A fork meanwhile takes the
/// idle monitor as paused (I4) without ending its idleness: a shell's
/// monitor stays idle across the children it forks.
fn wait_idle(shared: &Shared, d: std::time::Duration) {
    let until = std::time::Instant::now() + d;
    let seen = shared.doorbell.load(Ordering::Acquire);
    loop {
        pause_point(shared);
        let asked =
            shared.stop.load(Ordering::Acquire) || shared.doorbell.load(Ordering::Acquire) != seen;
        let left = until.saturating_duration_since(std::time::Instant::now());
        if asked || left.is_zero() {
            return;
        }
        nap(shared, seen, left.as_nanos().min(999_999_999) as i64);
    }
}

/// Process what ring `r` (guest thread `t`) holds up to the producer
/// position read once here (I1), or about `limit` entries of it; returns
/// the number of entries.
fn drain(
    tables: &mut Tables,
    t: usize,
    r: &ThreadRing,
    blocks: &BlockTable,
    limit: usize,
) -> usize {
    // SAFETY: pos points into a live ThreadCtx (ThreadRing).
    let p = unsafe { (*r.pos).load(Ordering::Acquire) };
    let lag = r.ring.lag(p);
    tables.max_lag = tables.max_lag.max(lag);
    tables.sampler.checkpoint(t, lag);
    let mut n = 0;
    loop {
        if n >= limit {
            return n;
        }
        // SAFETY: this thread is the ring's only consumer, and p is a
        // position the producer published.
        let entries = unsafe { r.ring.take(p) };
        let entries = &entries[..entries.len().min(limit - n)];
        if entries.is_empty() {
            // take() may have followed the producer into its segment
            // without returning entries: look once more at the same p.
            // SAFETY: as above.
            let again = unsafe { r.ring.take(p) };
            if again.is_empty() {
                return n;
            }
            trace::batch(t, again);
            tables.process(t, again, blocks);
            r.ring.release(again.len());
            n += again.len();
            continue;
        }
        trace::batch(t, entries);
        tables.process(t, entries, blocks);
        r.ring.release(entries.len());
        n += entries.len();
    }
}

#[cfg(test)]
mod tests;
