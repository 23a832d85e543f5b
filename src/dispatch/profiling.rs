//! The dispatcher's side of profiling: publishing blocks to the monitor,
//! choosing each block's prologue, pushing syscall records, and writing the
//! profile however the guest ends.
//!
//! I1: every block is pushed to the block table before its code can run, and
//!     its id equals its index in the code index (both under the
//!     translation lock).
//! I2: `finish` runs exactly once, on every way out (exit, exit_group, trap,
//!     fault, hotlift error), after the monitor drained every ring, if
//!     anything reads the profile (a plain `run` does not drain for nobody:
//!     2 ms of a `/bin/true`, 3.6 ms of each python fork child).
//! I3: a profile that cannot be written at the end is said on stderr, and
//!     the process the user ran (its first image, or the images its
//!     `execve`s made; not a forked child, whose status its guest parent
//!     reads) then exits 125 instead of the guest's exit status (it was 0
//!     for `--profile /dev/full`). A guest that dies of a signal still dies
//!     of it.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::module_files::{module_table, prime_module_cache, reading_ahead, settle, unread};
use super::Vm;
use crate::backend::Prologue;
use crate::images::ImageLog;
use crate::ir::{IrBlock, Terminator};
use crate::monitor::{
    BlockMeta, BlockTable, Monitor, MonitorInfo, Ring, SbConfig, SecondTier, Snapshot, ThreadRing,
    Windows, NR_MASK, TAG_SYSCALL, TAG_UNRETIRED, TAG_UNRETIRED_REP,
};
use crate::profile::count_check::CountCheck;
use crate::profile::{Ending, Inputs, ProcessInfo, Profile, Times};
use crate::superblock::build::{BuildConfig, Prebuilder, SbDump};
use crate::superblock::{Builder, Limits, Tier};

/// Most blocks one run may translate (ids are never reused).
pub const BLOCK_CAPACITY: u32 = crate::contract::BLOCK_ID_LIMIT;

/// Profiling state of one guest process (its threads' rings and counters
/// are theirs: [`ThreadProfiling`]).
#[derive(Debug)]
pub struct Profiling {
    pub blocks: Arc<BlockTable>,
    pub monitor: Mutex<Option<Monitor>>,
    /// Monitor settings for the rings of threads to come.
    ring_entries: usize,
    /// What loop counters start from (contract I2).
    loop_limit: u32,
    /// `--count-inline` and `--count-check`: every thread's counter array,
    /// indexed by block id, in the order the threads started (as their
    /// rings).
    inline: Option<Mutex<Vec<Counters>>>,
    /// `--count-check`: counters and ring both.
    count_check: bool,
    started: Mutex<Instant>,
    /// Seconds from hotlift's `main` until the guest's first instruction
    /// ran (0 in a forked child: it began with its parent's set-up done).
    setup_seconds: Mutex<Option<f64>>,
    /// In a forked child: the blocks translated before the fork (ids below
    /// this). The child's profile leaves out those it never ran.
    inherited_blocks: std::sync::atomic::AtomicUsize,
    /// Which process (and which image of it) this profile is of, and where
    /// it goes (process.rs in src/profile).
    pub process: Mutex<ProcessInfo>,
    /// Every image the guest had: program, interpreter, vDSO, libraries
    /// (src/images.rs); the profile's module table. Shared with the
    /// store's pre-building (store/feed.rs I3).
    images: Arc<Mutex<ImageLog>>,
    /// `--store`: read at start, merged at exit (store/run.rs).
    store: Option<crate::store::run::RunStore>,
    pub command_line: Vec<String>,
    /// Print the summary on stderr at the end (`hotlift profile`).
    pub print_summary: AtomicBool,
    /// Set by the one `finish` that does the work (I2).
    finished: Mutex<bool>,
    /// What the monitor shares with path profiling (`hotlift paths`).
    pub paths_shared: Option<Arc<crate::monitor::paths::Shared>>,
    /// What the second tier published (superblock/build.rs I3) and
    /// made (left there at the monitor's end).
    tier: crate::superblock::Slots,
}

/// How long a forked child's monitor stays idle at most (monitor I5): a
/// python child that exits or execs at once lives 1-3 ms natively.
const FORKED_MONITOR_IDLE: std::time::Duration = std::time::Duration::from_millis(10);

/// The monitor `opts` asks for, building superblocks in `shared`'s arena
/// (and stored traces, with `prebuild`: src/store), idle at first for
/// `idle` (monitor I5).
fn start_monitor(
    opts: &crate::options::RunOptions,
    blocks: &Arc<BlockTable>,
    shared: &Arc<crate::cache::CacheShared>,
    prebuild: Option<crate::store::feed::Prebuild>,
    paths: Option<Arc<crate::monitor::paths::Shared>>,
    tier: &crate::superblock::Slots,
    idle: Option<std::time::Duration>,
) -> Option<Monitor> {
    opts.monitor().then(|| {
        let sb = SbConfig {
            enabled: opts.superblocks(),
            block_threshold: opts.sb_threshold,
            edge_threshold: opts.sb_edge_threshold,
            windows: opts.pisat().map(|c| Windows {
                window: c.window,
                interval: c.interval,
            }),
        };
        let builder = opts.superblocks().then(|| {
            let cfg = BuildConfig {
                limits: Limits {
                    max_blocks: opts.sb_max_blocks as usize,
                    max_insns: opts.sb_max_insns,
                    unroll: opts.sb_unroll as usize,
                    min_yield: opts.sb_min_yield,
                    tree_blocks: opts.sb_tree_blocks as usize,
                    tree_share: opts.sb_tree_share,
                    count_loops: !opts.sb_no_loop_counters,
                    loop_limit: opts.sb_loop_limit,
                },
                max_block_insns: opts.max_block_insns as usize,
                dump: opts.dump_superblocks.clone().map(|dir| SbDump {
                    dir,
                    render: crate::profile::dump::render_record,
                }),
                count_check: opts.count_check,
            };
            let builder = Builder::new(cfg, shared.clone(), blocks.clone())
                .with_prebuild(prebuild.map(|p| Box::new(p) as Box<dyn Prebuilder>))
                .with_published(tier.published.clone());
            let outcomes = tier.outcomes.clone();
            Box::new(Tier::new(builder, opts.pisat(), outcomes)) as Box<dyn SecondTier>
        });
        Monitor::start(blocks.clone(), sb, builder, opts.sampling(), paths, idle)
    })
}

/// A thread's `--count-inline` counters (BLOCK_CAPACITY u64s, never freed).
#[derive(Debug, Clone, Copy)]
struct Counters(*mut u64);

// SAFETY: plain memory that lives for the process; read only at finish.
unsafe impl Send for Counters {}

/// One guest thread's side of profiling.
#[derive(Debug, Default)]
pub struct ThreadProfiling {
    pub ring: Option<Arc<ThreadRing>>,
    inline: bool,
}

fn map_counters(cap: usize) -> std::io::Result<*mut u64> {
    let p = crate::anon::map(cap * 8, libc::MAP_NORESERVE)?;
    Ok(p as *mut u64)
}

impl Profiling {
    /// Start what `opts` asks for (the monitor, with superblocks built in
    /// `shared`'s arena).
    pub fn new(
        opts: &crate::options::RunOptions,
        images: ImageLog,
        command_line: Vec<String>,
        shared: &Arc<crate::cache::CacheShared>,
    ) -> std::io::Result<Profiling> {
        let blocks = Arc::new(BlockTable::new(BLOCK_CAPACITY)?);
        let paths_shared = opts.paths.as_ref().map(|c| {
            Arc::new(crate::monitor::paths::Shared {
                reference: c.reference,
                ..Default::default()
            })
        });
        let images = Arc::new(Mutex::new(images));
        let store = crate::store::run::RunStore::start(opts, &images);
        let prebuild = store.as_ref().and_then(|s| s.prebuild(blocks.clone()));
        let tier = crate::superblock::Slots::default();
        let monitor = start_monitor(
            opts,
            &blocks,
            shared,
            prebuild,
            paths_shared.clone(),
            &tier,
            None,
        );
        Ok(Profiling {
            blocks,
            monitor: Mutex::new(monitor),
            ring_entries: opts.ring_entries as usize,
            loop_limit: opts.sb_loop_limit,
            inline: (opts.count_inline || opts.count_check).then(|| Mutex::new(Vec::new())),
            count_check: opts.count_check,
            started: Mutex::new(Instant::now()),
            setup_seconds: Mutex::new(None),
            inherited_blocks: std::sync::atomic::AtomicUsize::new(0),
            images,
            store,
            command_line,
            print_summary: AtomicBool::new(false),
            finished: Mutex::new(false),
            process: Mutex::new(ProcessInfo::program(opts.profile.clone())),
            paths_shared,
            tier,
        })
    }

    /// A guest thread is about to run guest code: the first such call
    /// ends the process's set-up time.
    pub fn entering_guest(&self) {
        let mut s = self.setup_seconds.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            *s = Some(crate::clock::since_born());
        }
    }

    /// After `fork`, in the child (only the calling thread exists): a
    /// profile of its own from here on. The parent's monitor thread is not
    /// in the child; its state is abandoned (never joined, never freed)
    /// and a new monitor starts with empty tables. `monitor` is the
    /// monitor lock, held across the fork. The caller then gives its
    /// thread a new ring or counters ([`Profiling::thread`]).
    pub fn restart_after_fork(
        &self,
        monitor: &mut Option<Monitor>,
        opts: &crate::options::RunOptions,
        shared: &Arc<crate::cache::CacheShared>,
        parent_profile: Option<String>,
    ) {
        if let Some(old) = monitor.take() {
            // Its thread does not exist here: joining would wait forever.
            std::mem::forget(old);
        }
        if let Some(all) = &self.inline {
            // The parent's threads' counters: theirs, not the child's.
            let mut all = all.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::take(&mut *all);
        }
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        *self.setup_seconds.lock().unwrap_or_else(|e| e.into_inner()) = Some(0.0);
        self.inherited_blocks
            .store(self.blocks.len() as usize, Ordering::Release);
        self.print_summary.store(false, Ordering::Release);
        self.process
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .forked(parent_profile);
        // The store: the parent's reader thread did not come along
        // (store/run.rs I6).
        let prebuild = self.store.as_ref().and_then(|s| {
            s.forked();
            s.prebuild(self.blocks.clone())
        });
        crate::monitor::do_not_pin();
        // The parent's published superblocks, in this process's copy of
        // the log, are the new monitor's (fork.rs F2). It starts idle
        // (monitor I5): most children exec or exit within milliseconds.
        *monitor = start_monitor(
            opts,
            &self.blocks,
            shared,
            prebuild,
            self.paths_shared.clone(),
            &self.tier,
            Some(FORKED_MONITOR_IDLE),
        );
    }

    /// Where this image's profile goes (None: nowhere).
    pub fn profile_path(&self) -> Option<std::path::PathBuf> {
        self.process
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .profile_path()
    }

    /// The image log (syscall/mem/mod.rs records mappings in it).
    pub fn images(&self) -> std::sync::MutexGuard<'_, ImageLog> {
        self.images.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Profiling for a new guest thread with context `ctx`: its own ring
    /// (registered with the monitor) or counter array.
    pub fn thread(
        &self,
        ctx: &mut crate::runtime::ThreadCtx,
        tid: i32,
    ) -> std::io::Result<ThreadProfiling> {
        // Counters first, ring second, under the monitor's lock: the two
        // lists stay in the same order.
        let monitor = self.monitor.lock().unwrap_or_else(|e| e.into_inner());
        let inline = if let Some(all) = &self.inline {
            let base = map_counters(BLOCK_CAPACITY as usize)?;
            ctx.inline_counts = base as u64;
            all.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Counters(base));
            true
        } else {
            false
        };
        let Some(m) = monitor.as_ref() else {
            return Ok(ThreadProfiling { ring: None, inline });
        };
        let ring = Ring::new(self.ring_entries)?;
        ctx.ring_pos = ring.start(0);
        ctx.set_loop_limit(self.loop_limit);
        let tr = Arc::new(ThreadRing {
            ring,
            pos: ctx.ring_pos_atomic(),
            tid,
        });
        m.add_ring(tr.clone());
        Ok(ThreadProfiling {
            ring: Some(tr),
            inline,
        })
    }
}

/// What the monitor needs to know about a lifted block.
pub fn block_meta(b: &IrBlock) -> BlockMeta {
    let (target, next) = match &b.term {
        Terminator::Jump { target } => (target.0, 0),
        Terminator::Fallthrough { next } => (next.0, 0),
        Terminator::Branch {
            taken, fallthrough, ..
        } => (taken.0, fallthrough.0),
        Terminator::Call { target, return_to } => (target.0, return_to.0),
        Terminator::IndirectCall { return_to, .. } => (0, return_to.0),
        Terminator::Syscall { next } => (next.0, 0),
        Terminator::IndirectJump { .. } | Terminator::Return { .. } | Terminator::Trap { .. } => {
            (0, 0)
        }
    };
    let exit = b.term.kind();
    BlockMeta {
        guest: b.start.0,
        target,
        next,
        guest_len: (b.end.0 - b.start.0) as u32,
        insns: b.guest_insns(),
        exit,
    }
}

impl Vm {
    /// Publish `b` (I1) and choose its prologue. `counted` is false for a
    /// block that must not count (the one-instruction restart after a store
    /// into code, smc.rs). The caller holds the translation lock (so ids
    /// agree with the code index).
    pub(super) fn publish_block(
        &mut self,
        b: &IrBlock,
        counted: bool,
    ) -> Result<Prologue, super::VmError> {
        self.publish_meta(block_meta(b), counted)
    }

    /// [`Vm::publish_block`] of a block known by what the monitor is told
    /// of it (a kept one, kept/place.rs).
    pub(super) fn publish_meta(
        &mut self,
        meta: BlockMeta,
        counted: bool,
    ) -> Result<Prologue, super::VmError> {
        let id = self.proc.prof.blocks.push(meta).ok_or_else(|| {
            super::VmError::Host(format!(
                "more than {BLOCK_CAPACITY} blocks translated in one run"
            ))
        })?;
        assert_eq!(
            id as usize,
            self.proc.view.index.len(),
            "block table and code index disagree on ids"
        );
        Ok(
            match (counted, self.prof.inline, self.prof.ring.is_some()) {
                (false, _, _) => Prologue::None,
                (true, true, true) => Prologue::Both { id },
                (true, true, false) => Prologue::Count { id },
                (true, false, true) => Prologue::Ring { id },
                _ => Prologue::None,
            },
        )
    }

    /// Append a record to this thread's ring from Rust (ring I1, I2).
    pub(crate) fn push_words(&mut self, words: &[u32]) {
        let Some(tr) = self.prof.ring.clone() else {
            return;
        };
        let mut p = self.ctx.ring_pos;
        for &w in words {
            if let Some(seg) = tr.ring.guard_segment(p) {
                p = tr.ring.wrap(seg);
            }
            // SAFETY: p is inside a ring segment the consumer has left.
            unsafe { (p as *mut u32).write_volatile(w) };
            p += 4;
        }
        // SAFETY: ring_pos is the producer position the monitor reads.
        unsafe { (*self.ctx.ring_pos_atomic()).store(p, Ordering::Release) };
    }

    /// The thread left a superblock whose loops are counted (`sb_loop`,
    /// set with `sb_partial`): push the counters and reset them, before
    /// the partial unit (contract I2).
    pub(super) fn push_loop_counters(&mut self) {
        let [hdr, base] = std::mem::take(&mut self.ctx.sb_loop);
        if hdr == 0 {
            return;
        }
        use crate::contract::{TAG_LOOP, TAG_LOOP_PASSES};
        let n = (hdr & 0xff) as usize;
        let limit = self.ctx.loop_limit;
        if self.ctx.loop_left[..n].iter().all(|&c| c == limit) {
            // Nothing counted: no record (contract I2).
            return;
        }
        let mut words = Vec::with_capacity(4 + n);
        // SAFETY: rdtsc has no preconditions.
        let tsc = unsafe { std::arch::x86_64::_rdtsc() };
        words.extend([TAG_LOOP, base, tsc as u32, (tsc >> 32) as u32]);
        for (l, c) in self.ctx.loop_left[..n].iter_mut().enumerate() {
            let passes = limit.wrapping_sub(std::mem::replace(c, limit));
            if passes > 0 {
                words.push(TAG_LOOP_PASSES | (l as u32) << 24 | passes);
            }
        }
        self.push_words(&words);
    }

    /// The block the thread left before its end ran as far as it got: its
    /// `PARTIAL` word (contract I3).
    pub(super) fn push_partial_block(&mut self) {
        if let Some(b) = self.partial_block.take() {
            let w = crate::contract::block_word(b, crate::contract::PARTIAL);
            self.push_words(&[w]);
        }
    }

    /// Tell the monitor that `n` counted instructions of the code whose
    /// exit word came last did not retire (monitor `TAG_UNRETIRED`).
    pub fn record_unretired(&mut self, n: u32) {
        if n > 0 {
            self.push_words(&[TAG_UNRETIRED, n]);
        }
    }

    /// Tell the monitor which counted instructions did not retire when the
    /// guest faulted fatally: the faulting one and the rest of its block,
    /// except the iterations a faulting `rep` string instruction completed
    /// (its open `TAG_REP` record is closed with ECX at the fault).
    ///
    /// Order matters: the ECX word closes an open `TAG_REP` record first,
    /// then a superblock's partial record closes its pass, then the
    /// unretired count.
    pub(super) fn record_fault(&mut self) {
        let partial = std::mem::take(&mut self.ctx.sb_partial);
        let Some((loc, rcx)) = self.fault.take() else {
            if partial != 0 {
                self.push_loop_counters();
                self.push_words(&[partial]);
            }
            self.push_partial_block();
            return;
        };
        let in_rep = !loc.exact && loc.rep_ring;
        if in_rep {
            // A fault inside a ring-bracketed rep (past its ECX-before
            // words).
            self.push_words(&[rcx as u32]);
        }
        if partial != 0 {
            self.push_loop_counters();
            self.push_words(&[partial]);
        }
        self.push_partial_block();
        if !loc.counted {
            return;
        }
        let after = self.proc.view.counted_after(loc);
        if in_rep {
            self.push_words(&[TAG_UNRETIRED_REP, after]);
        } else {
            self.record_unretired(after + 1);
        }
    }

    /// Record a finished syscall for the monitor.
    pub fn record_syscall(&mut self, nr: u64, ret: i64, nanos: u64) {
        let r = ret as u64;
        self.push_words(&[
            TAG_SYSCALL | (nr.min(NR_MASK as u64) as u32),
            r as u32,
            (r >> 32) as u32,
            nanos.min(u32::MAX as u64) as u32,
        ]);
    }

    /// Drain the monitor and write the profile (I2). Safe to call more than
    /// once, from any thread; only the first call does anything.
    pub fn finish(&mut self, ending: Ending) {
        // The process is ending: the other threads stop where they are
        // (out of translated code, as exit_group would have them), so the
        // profile is one consistent picture. They are never resumed. One
        // that does not stop in time is named, and the profile written
        // from what the rings held by then (process.rs I4).
        let limit = super::process::END_STOP_LIMIT;
        if let Err(e) = self.proc.threads.stop_others(&self.entry, limit) {
            eprintln!("hotlift: {e}: the profile holds what the rings held then");
        }
        self.proc.finish(ending);
    }
}

impl super::process::Process {
    /// Drain the monitor and write the profile (I2). The process hotlift
    /// was asked to run, exiting when `hotlift paths` never found its
    /// function, exits 125 instead (cli/mod.rs: a bad option), the error
    /// said (dispatch/paths/mod.rs); so does one whose profile could not be
    /// written (I3).
    pub fn finish(&self, ending: Ending) {
        // kept/mod.rs K3. Not if a thread stopped holding the translation
        // lock (a fatal signal in the dispatcher): what it was doing is
        // not finished.
        let entries = match self.locked.try_lock() {
            Ok(mut l) => l.kept.take_entries(),
            Err(_) => Vec::new(),
        };
        super::kept::Kept::write(entries);
        let exit = matches!(ending, Ending::Exit { .. });
        let failed = self.finish_once(ending);
        if exit && (failed.missing || failed.unwritten) {
            let process = self.prof.process.lock().unwrap_or_else(|e| e.into_inner());
            if (failed.missing && process.began == "program")
                || (failed.unwritten && !process.descendant())
            {
                // SAFETY: _exit has no preconditions; the profile is
                // written, or said to be unwritable (I3).
                unsafe { libc::_exit(crate::status::EXIT_HOTLIFT_FAILED) }
            }
        }
    }

    /// Read the files of the images mapped so far on a thread of their
    /// own while the guest runs (F7), when the profile will name them.
    pub fn read_files_ahead(&self) {
        let prof = &self.prof;
        let named = prof.profile_path().is_some()
            || prof.print_summary.load(Ordering::Acquire)
            || self.opts.perf_map
            || self.paths.is_some();
        if !named {
            return;
        }
        let core = prof
            .monitor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.info.monitor_core);
        super::module_files::read_ahead(&prof.images().records, core);
    }

    /// [`Self::finish`]'s work, done once.
    fn finish_once(&self, ending: Ending) -> Failed {
        let prof = &self.prof;
        let mut finished = prof.finished.lock().unwrap_or_else(|e| e.into_inner());
        if *finished {
            return Failed::default();
        }
        *finished = true;
        // The guest's limits must not cost its profile (limits.rs I1).
        crate::limits::lift();
        let ending_at = std::time::Instant::now();
        let summary = prof.print_summary.load(Ordering::Acquire);
        let path = prof.profile_path();
        let written = path.is_some() || summary || self.opts.perf_map;
        if !(written || self.paths.is_some() || prof.count_check || prof.store.is_some()) {
            return Failed::default();
        }
        let monitor = std::thread::scope(|s| {
            // The files' facts (symbols, the program's hash) do not depend
            // on the monitor's tables: what the read-ahead (F7) has not
            // read is read while the monitor drains, on the core the guest
            // has left (python's are 15 ms, its drain 20 to 80 ms).
            // module_table below finds them read. Only files not read yet:
            // a forked child finds its parent's (F6), and starting a
            // thread to find them read cost it more than the looking.
            let records = if written || self.paths.is_some() {
                unread(&prof.images().records)
            } else {
                Vec::new()
            };
            if !records.is_empty() || reading_ahead() {
                // No thread (a guest that lowered RLIMIT_NPROC): read them
                // after the drain, as before.
                let _ = std::thread::Builder::new()
                    .name("hotlift-files".into())
                    .spawn_scoped(s, move || {
                        settle();
                        prime_module_cache(&records)
                    });
            }
            prof.monitor
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut()
                .map(|m| (m.finish(), m.info.clone()))
        });
        // The second tier left what it made when the monitor finished.
        let tier = prof
            .tier
            .outcomes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let records = tier.as_ref().map_or(&[][..], |o| &o.records[..]);
        let inline_counts = |n: usize| -> Vec<Vec<u64>> {
            let Some(all) = &prof.inline else {
                return Vec::new();
            };
            all.lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                // SAFETY: each array holds BLOCK_CAPACITY zero-initialised
                // u64s; threads still running may add to them, which only
                // makes those reads approximate.
                .map(|c| unsafe { std::slice::from_raw_parts(c.0, n) }.to_vec())
                .collect()
        };
        let (snapshot, info, counting) = if let Some((t, info)) = monitor {
            (t, info, "ring")
        } else if let Some(all) = &prof.inline {
            let n = prof.blocks.len() as usize;
            let mut counts = vec![0u64; n];
            for c in all.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                // SAFETY: each array holds BLOCK_CAPACITY zero-initialised
                // u64s; threads still running may add to them, which only
                // makes those reads approximate.
                let part = unsafe { std::slice::from_raw_parts(c.0, n) };
                for (a, b) in counts.iter_mut().zip(part) {
                    *a += b;
                }
            }
            (
                Snapshot::from_counts(&counts, n),
                MonitorInfo::default(),
                "inline",
            )
        } else if self.opts.perf_map {
            // --no-monitor: nothing counted, but the perf map needs only
            // the translations and the blocks' names.
            (
                Snapshot::from_counts(&[], prof.blocks.len() as usize),
                MonitorInfo::default(),
                "none",
            )
        } else {
            return Failed::default();
        };
        let missing = self.paths.as_ref().is_some_and(|p| {
            let (_, modules) = module_table(&prof.images());
            p.report(&snapshot, prof.blocks.published(), &modules)
        });
        let count_check = prof
            .count_check
            .then(|| CountCheck::of(&snapshot, &inline_counts(prof.blocks.len() as usize)));
        // The store merges after the profile is written (store/run.rs I1).
        let merge = || {
            if let Some(s) = &prof.store {
                s.merge_at_exit(&snapshot, records, &prof.images());
            }
        };
        if !written {
            merge();
            return Failed {
                missing,
                unwritten: false,
            };
        }
        let drained_at = std::time::Instant::now();
        let (binary, modules) = module_table(&prof.images());
        let ring_capacity = if counting == "ring" {
            crate::monitor::ring::capacity_for(prof.ring_entries)
        } else {
            0
        };
        // The translation lock may be held by a thread that stopped for
        // good (the process is ending): do not wait for it. Held through
        // the build, not copied: a forked python child copied its parent's
        // 38,000 translations (900 KB of fresh pages) to list the few
        // hundred it ran.
        let locked = self.locked.try_lock().ok();
        let (translations, translate_ticks, kept_blocks) = match &locked {
            Some(l) => (&l.translations[..], l.translate_ticks, l.kept.placed),
            None => (&[][..], 0, 0),
        };
        let setup = prof
            .setup_seconds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or(0.0);
        let first_image = prof.process.lock().unwrap_or_else(|e| e.into_inner()).began == "program";
        let profile = Profile::build(Inputs {
            snapshot: &snapshot,
            tier: tier.as_ref(),
            blocks: prof.blocks.published(),
            binary,
            modules,
            command_line: prof.command_line.clone(),
            options: self.opts.for_profile(),
            counting,
            monitor: info.clone(),
            ending,
            times: Times {
                wall_seconds: prof
                    .started
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .elapsed()
                    .as_secs_f64(),
                process_cpu_seconds: process_cpu_seconds(),
                monitor_cpu_seconds: info.cpu_seconds,
                setup_seconds: setup,
                // A forked child's marks are its parent's (0 set-up); the
                // CPU clock an `execve` does not reset holds the image
                // before's run.
                startup: if setup > 0.0 {
                    let mut u = crate::profile::Startup::measured();
                    if !first_image {
                        u.before_main_cpu_seconds = 0.0;
                    }
                    u
                } else {
                    Default::default()
                },
                translation_seconds: crate::clock::ticks_seconds(translate_ticks),
                drain_seconds: (drained_at - ending_at).as_secs_f64(),
                profile_seconds: 0.0,
            },
            ring_capacity,
            // This process's own flushes (a forked child's generation
            // goes on from its parent's).
            flushes: self
                .flush_causes
                .iter()
                .map(|n| n.load(std::sync::atomic::Ordering::Relaxed))
                .sum(),
            translations,
            inherited_blocks: prof.inherited_blocks.load(Ordering::Acquire),
            kept_blocks,
        });
        drop(locked);
        let mut profile = profile;
        profile.times.profile_seconds = drained_at.elapsed().as_secs_f64();
        profile.count_check = count_check;
        profile.code_cache_flushes_by_cause = super::process::FlushCause::ALL
            .iter()
            .map(|&c| {
                let n = self.flush_causes[c as usize].load(std::sync::atomic::Ordering::Relaxed);
                (c.name(), n)
            })
            .collect();
        profile.dispatcher = self.dispatch.snapshot();
        profile.store = prof.store.as_ref().map(|s| s.report(records));
        profile.process = Some(
            prof.process
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        );
        let unwritten = path.as_ref().is_some_and(|path| {
            profile
                .write_json(path)
                .map_err(|e| {
                    eprintln!(
                        "hotlift: cannot write the profile to {}: {e}",
                        path.display()
                    );
                })
                .is_err()
        });
        if summary || self.opts.perf_map {
            crate::profile::summary::at_exit(&profile, summary, self.opts.perf_map);
        }
        merge();
        // The process ends next: its memory goes with it, without
        // 100,000 frees of a python start-up's records.
        std::mem::forget(profile);
        Failed { missing, unwritten }
    }
}

/// What went wrong at the end that changes the exit status.
#[derive(Default)]
struct Failed {
    /// `hotlift paths` never found its function (dispatch/paths/mod.rs).
    missing: bool,
    /// The profile could not be written (I3).
    unwritten: bool,
}

fn process_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
