//! The dispatcher's side of profiling: publishing blocks to the monitor,
//! choosing each block's prologue, pushing syscall records, and writing the
//! profile however the guest ends.
//!
//! I1: every block's id is reserved in the block table (cache/blocks.rs
//!     I1) before its code is emitted, so before it can run (under the
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

mod end;
mod inline;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{PathProfiler, Vm};
use crate::backend::Prologue;
use crate::cache::{BlockMeta, BlockTable};
use crate::images::ImageLog;
use crate::ir::{IrBlock, Terminator};
use crate::monitor::{
    Monitor, Ring, SbConfig, SecondTier, ThreadRing, Windows, NR_MASK, TAG_SYSCALL, TAG_UNRETIRED,
    TAG_UNRETIRED_REP,
};
use crate::profile::{Ending, ProcessInfo};
use crate::superblock::build::{BuildConfig, Prebuilder, SbDump};
use crate::superblock::{Builder, Limits, Tier};

/// Most block ids one id epoch may use (dispatch/epoch.rs).
pub const BLOCK_CAPACITY: u32 = crate::contract::BLOCK_ID_LIMIT;

/// Profiling state of one guest process (its threads' rings and counters
/// are theirs: [`ThreadProfiling`]).
#[derive(Debug)]
pub struct Profiling {
    /// The process's block table (`CodeView::blocks`, the same one): the
    /// monitor it starts, a forked child's included, reads it.
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
    /// The counters of ended id epochs (inline.rs).
    inline_folded: Mutex<inline::InlineFolded>,
    started: Mutex<Instant>,
    /// Seconds from hotlift's `main` until the guest's first instruction
    /// ran (0 in a forked child: it began with its parent's set-up done).
    setup_seconds: Mutex<Option<f64>>,
    /// In a forked child: the blocks translated before the fork (ids below
    /// this; none once an id epoch ended since). The child's profile leaves
    /// out those it never ran.
    pub(crate) inherited_blocks: std::sync::atomic::AtomicUsize,
    /// In a forked child: the block sequence number at the fork (images.rs
    /// I2): its own translations are those after it.
    inherited_seq: std::sync::atomic::AtomicU64,
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
    /// Path profiling (`hotlift paths`), which gives each monitor its
    /// collector.
    paths: Option<Arc<dyn PathProfiler>>,
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
    paths: Option<&Arc<dyn PathProfiler>>,
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
                warmup: opts.sb_warmup,
            };
            let builder = Builder::new(cfg, shared.clone(), blocks.clone())
                .with_prebuild(prebuild.map(|p| Box::new(p) as Box<dyn Prebuilder>))
                .with_published(tier.published.clone());
            let outcomes = tier.outcomes.clone();
            Box::new(Tier::new(builder, opts.pisat(), outcomes)) as Box<dyn SecondTier>
        });
        let paths = paths.map(|p| p.collector());
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
        blocks: &Arc<BlockTable>,
        paths: Option<Arc<dyn PathProfiler>>,
    ) -> std::io::Result<Profiling> {
        let images = Arc::new(Mutex::new(images));
        let store = crate::store::run::RunStore::start(opts, &images);
        let prebuild = store.as_ref().and_then(|s| s.prebuild(blocks.clone()));
        let tier = crate::superblock::Slots::default();
        let monitor = start_monitor(opts, blocks, shared, prebuild, paths.as_ref(), &tier, None);
        Ok(Profiling {
            blocks: blocks.clone(),
            monitor: Mutex::new(monitor),
            ring_entries: opts.ring_entries as usize,
            loop_limit: opts.sb_loop_limit,
            inline: (opts.count_inline || opts.count_check).then(|| Mutex::new(Vec::new())),
            count_check: opts.count_check,
            inline_folded: Mutex::default(),
            started: Mutex::new(Instant::now()),
            setup_seconds: Mutex::new(None),
            inherited_blocks: std::sync::atomic::AtomicUsize::new(0),
            inherited_seq: std::sync::atomic::AtomicU64::new(0),
            images,
            store,
            command_line,
            print_summary: AtomicBool::new(false),
            finished: Mutex::new(false),
            process: Mutex::new(ProcessInfo::program(opts.profile.clone())),
            paths,
            tier,
        })
    }

    /// A guest thread is about to run guest code: the first such call
    /// ends the process's set-up time.
    pub fn entering_guest(&self) {
        let mut s = self.setup_seconds.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            *s = Some(crate::clock::since_born());
            self.hold_output();
        }
    }

    /// Open this image's profile file now, before any guest code runs, if
    /// hotlift runs as root: the guest may drop its privileges or
    /// `chroot`, after which the profile could not be created beside it
    /// (a server run as root lost every profile). Created if missing,
    /// never truncated here; moved to a high descriptor (host.rs
    /// `dup_high`) so the guest's own descriptors keep their numbers.
    pub fn hold_output(&self) {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let Some(path) = self.profile_path() else {
            return;
        };
        if std::fs::metadata(&path).is_ok_and(|m| !m.file_type().is_file()) {
            return; // a device or fifo: written to as it is (profile/mod.rs)
        }
        use std::os::fd::IntoRawFd;
        let Ok(f) = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
        else {
            return;
        };
        let low = f.into_raw_fd();
        let high = crate::host::dup_high(low);
        crate::host::close_fd(low);
        if let Some(fd) = high {
            // hotlift's own (host.rs H1): the guest's `close_range` passes
            // over it.
            let old = crate::host::take_own_fd(crate::host::OwnFd::Profile);
            if old >= 0 {
                crate::host::close_fd(old);
            }
            crate::host::set_own_fd(crate::host::OwnFd::Profile, fd);
        }
    }

    /// The file [`Profiling::hold_output`] opened, if any: the profile's
    /// file, opened as the image starts when hotlift runs as root, for a
    /// guest that drops its privileges or `chroot`s (the profile is
    /// written into it when it cannot be written beside it and renamed:
    /// end.rs).
    pub(crate) fn take_held_output(&self) -> Option<std::fs::File> {
        use std::os::fd::FromRawFd;
        let fd = crate::host::take_own_fd(crate::host::OwnFd::Profile);
        // SAFETY: hotlift's own descriptor, handed over by its slot.
        (fd >= 0).then(|| unsafe { std::fs::File::from_raw_fd(fd) })
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
            self.forget_inline_folds();
        }
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        *self.setup_seconds.lock().unwrap_or_else(|e| e.into_inner()) = Some(0.0);
        self.inherited_blocks
            .store(self.blocks.len() as usize, Ordering::Release);
        self.inherited_seq
            .store(self.blocks.seq(), Ordering::Release);
        self.print_summary.store(false, Ordering::Release);
        self.process
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .forked(parent_profile);
        // The parent's file is the parent's; this child's, opened now.
        drop(self.take_held_output());
        self.hold_output();
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
            self.paths.as_ref(),
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
        ctx: &crate::contract::ThreadCtx,
        tid: i32,
    ) -> std::io::Result<ThreadProfiling> {
        // Counters first, ring second, under the monitor's lock: the two
        // lists stay in the same order.
        let monitor = self.monitor.lock().unwrap_or_else(|e| e.into_inner());
        let inline = if let Some(all) = &self.inline {
            let base = map_counters(BLOCK_CAPACITY as usize)?;
            ctx.inline_counts.set(base as u64);
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
        ctx.ring_pos.set(ring.start(0));
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
    /// into code, smc.rs). The caller holds the translation lock and
    /// commits the block's code next (block table I1).
    pub fn publish_block(
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
        let id = self.proc.view.blocks.reserve(meta).ok_or_else(|| {
            super::VmError::Host(format!(
                "more than {BLOCK_CAPACITY} blocks translated in one run"
            ))
        })?;
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
        let mut p = self.ctx.ring_pos.get();
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
        let [hdr, base] = self.ctx.take_sb_loop();
        if hdr == 0 {
            return;
        }
        use crate::contract::{TAG_LOOP, TAG_LOOP_PASSES};
        let n = (hdr & 0xff) as usize;
        let limit = self.ctx.loop_limit.get();
        if self.ctx.loop_left[..n].iter().all(|c| c.get() == limit) {
            // Nothing counted: no record (contract I2).
            return;
        }
        let mut words = Vec::with_capacity(4 + n);
        // SAFETY: rdtsc has no preconditions.
        let tsc = unsafe { std::arch::x86_64::_rdtsc() };
        words.extend([TAG_LOOP, base, tsc as u32, (tsc >> 32) as u32]);
        for (l, c) in self.ctx.loop_left[..n].iter().enumerate() {
            let passes = limit.wrapping_sub(c.replace(limit));
            if passes > 0 {
                words.push(TAG_LOOP_PASSES | (l as u32) << 24 | passes);
            }
        }
        self.push_words(&words);
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
    /// Where it faulted, if at a known guest instruction.
    pub(super) fn record_fault(&mut self) -> Option<crate::cache::PcLocation> {
        let partial = self.ctx.take_sb_partial();
        let fault = self.mail.take_fault();
        let in_rep = fault.is_some_and(|(loc, _)| !loc.exact && loc.rep_ring);
        if let Some((_, rcx)) = fault.filter(|_| in_rep) {
            // A fault inside a ring-bracketed rep (past its ECX-before
            // words).
            self.push_words(&[rcx as u32]);
        }
        self.close_left(partial);
        let (loc, _) = fault?;
        if loc.counted {
            let after = self.proc.view.counted_after(loc);
            if in_rep {
                self.push_words(&[TAG_UNRETIRED_REP, after]);
            } else {
                self.record_unretired(after + 1);
            }
        }
        Some(loc)
    }

    /// The thread left translated code before the end of what it ran:
    /// the superblock pass's `partial` unit (0: none) after its loop
    /// counters, then the `PARTIAL` word of the block it left, if any
    /// (superblock/mod.rs, contract I3).
    pub(super) fn close_left(&mut self, partial: u32) {
        if partial != 0 {
            self.push_loop_counters();
            self.push_words(&[partial]);
        }
        if let Some(b) = self.mail.take_partial() {
            let w = crate::contract::block_word(b, crate::contract::PARTIAL);
            self.push_words(&[w]);
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
            crate::host::say!("hotlift: {e}: the profile holds what the rings held then");
        }
        self.proc.finish(ending);
    }
}
