//! The dispatcher's side of profiling: publishing blocks to the monitor,
//! choosing each block's prologue, pushing syscall records, and writing the
//! profile however the guest ends.
//!
//! I1: every block is pushed to the block table before its code can run, and
//!     its id equals its index in the code cache's block list.
//! I2: `finish` runs exactly once, on every way out (exit, exit_group, trap,
//!     fault, hotlift error), after the monitor drained every ring.
#![allow(unsafe_code)]

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::Vm;
use crate::backend::Prologue;
use crate::images::{ImageKind, ImageLog};
use crate::ir::{IrBlock, Terminator};
use crate::monitor::superblock::build::BuildConfig;
use crate::monitor::superblock::{Builder, Limits};
use crate::monitor::{
    BlockMeta, BlockTable, ExitKind, Monitor, MonitorInfo, Ring, SbConfig, Tables, ThreadRing,
    NR_MASK, TAG_SYSCALL, TAG_UNRETIRED, TAG_UNRETIRED_REP,
};
use crate::profile::{hex, Binary, Ending, Inputs, Module, Modules, Profile, Symbols, Times};

/// Most blocks one run may translate (ids are never reused).
pub const BLOCK_CAPACITY: u32 = 1 << 22;

/// Profiling state of one guest process.
#[derive(Debug)]
pub struct Profiling {
    pub blocks: Arc<BlockTable>,
    pub monitor: Option<Monitor>,
    pub ring: Option<Arc<ThreadRing>>,
    /// `--count-inline` counters, indexed by block id.
    inline: Option<(*mut u64, usize)>,
    started: Instant,
    /// Every image the guest had: program, interpreter, vDSO, libraries
    /// (src/images.rs); the profile's module table.
    pub images: ImageLog,
    pub command_line: Vec<String>,
    /// Every translation: (host address, host size, guest address).
    pub translations: Vec<(u64, u32, u64)>,
    /// Print the summary on stderr at the end (`hotlift profile`).
    pub print_summary: bool,
    finished: bool,
}

fn map_counters(cap: usize) -> std::io::Result<*mut u64> {
    let p = crate::anon::map(cap * 8, libc::MAP_NORESERVE)?;
    Ok(p as *mut u64)
}

impl Profiling {
    /// Set up what `opts` asks for; `ctx_ring_pos` and `ctx_counts` are the
    /// thread context's fields to point at the ring and counters.
    pub fn new(
        opts: &crate::options::RunOptions,
        ctx: &mut crate::runtime::ThreadCtx,
        images: ImageLog,
        command_line: Vec<String>,
        cache: &crate::cache::CodeCache,
    ) -> std::io::Result<Profiling> {
        let blocks = Arc::new(BlockTable::new(BLOCK_CAPACITY)?);
        let mut p = Profiling {
            blocks: blocks.clone(),
            monitor: None,
            ring: None,
            inline: None,
            started: Instant::now(),
            images,
            command_line,
            translations: Vec::new(),
            print_summary: false,
            finished: false,
        };
        if opts.count_inline {
            let base = map_counters(BLOCK_CAPACITY as usize)?;
            ctx.inline_counts = base as u64;
            p.inline = Some((base, BLOCK_CAPACITY as usize));
        } else if opts.monitor() {
            let ring = Ring::new(opts.ring_entries as usize)?;
            ctx.ring_pos = ring.start(0);
            let tr = Arc::new(ThreadRing {
                ring,
                pos: ctx.ring_pos_atomic(),
                tid: std::process::id() as i32,
            });
            let sb = SbConfig {
                enabled: opts.superblocks(),
                block_threshold: opts.sb_threshold,
                edge_threshold: opts.sb_edge_threshold,
            };
            let builder = opts.superblocks().then(|| {
                let cfg = BuildConfig {
                    limits: Limits {
                        max_blocks: opts.sb_max_blocks as usize,
                        max_insns: opts.sb_max_insns,
                    },
                    max_block_insns: opts.max_block_insns as usize,
                    ibl_base: cache.ibl.base(),
                    dump_dir: opts.dump_superblocks.clone(),
                };
                Builder::new(cfg, cache.shared.clone(), blocks.clone())
            });
            let monitor = Monitor::start(blocks, sb, builder);
            monitor.add_ring(tr.clone());
            p.monitor = Some(monitor);
            p.ring = Some(tr);
        }
        Ok(p)
    }
}

/// What the monitor needs to know about a lifted block.
pub fn block_meta(b: &IrBlock) -> BlockMeta {
    let (exit, target, next) = match &b.term {
        Terminator::Jump { target } => (ExitKind::Jump, target.0, 0),
        Terminator::Fallthrough { next } => (ExitKind::Fallthrough, next.0, 0),
        Terminator::Branch {
            taken, fallthrough, ..
        } => (ExitKind::Branch, taken.0, fallthrough.0),
        Terminator::Call { target, return_to } => (ExitKind::Call, target.0, return_to.0),
        Terminator::IndirectJump { .. } => (ExitKind::IndirectJump, 0, 0),
        Terminator::IndirectCall { return_to, .. } => (ExitKind::IndirectCall, 0, return_to.0),
        Terminator::Return { .. } => (ExitKind::Return, 0, 0),
        Terminator::Syscall { next } => (ExitKind::Syscall, next.0, 0),
        Terminator::Trap { .. } => (ExitKind::Trap, 0, 0),
    };
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
    /// into code, smc.rs).
    pub(super) fn publish_block(
        &mut self,
        b: &IrBlock,
        counted: bool,
    ) -> Result<Prologue, super::VmError> {
        let id = self.prof.blocks.push(block_meta(b)).ok_or_else(|| {
            super::VmError::Host(format!(
                "more than {BLOCK_CAPACITY} blocks translated in one run"
            ))
        })?;
        assert_eq!(
            id as usize,
            self.cache.blocks.len(),
            "block table and code cache disagree on ids"
        );
        Ok(
            match (
                counted,
                self.prof.inline.is_some(),
                self.prof.ring.is_some(),
            ) {
                (false, _, _) => Prologue::None,
                (true, true, _) => Prologue::Count { id },
                (true, false, true) => Prologue::Ring { id },
                _ => Prologue::None,
            },
        )
    }

    /// Append a record to this thread's ring from Rust (ring I1, I2).
    pub(super) fn push_words(&mut self, words: &[u32]) {
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

    /// Tell the monitor that `n` counted instructions of the block entered
    /// last did not retire (monitor `TAG_UNRETIRED`).
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
                self.push_words(&[partial]);
            }
            return;
        };
        let in_rep = !loc.exact && loc.rep_ring;
        if in_rep {
            // A fault inside a ring-bracketed rep (past its ECX-before
            // words).
            self.push_words(&[rcx as u32]);
        }
        if partial != 0 {
            self.push_words(&[partial]);
        }
        if !loc.counted {
            return;
        }
        let after = self.cache.counted_after(loc);
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
    /// once; only the first call does anything.
    pub fn finish(&mut self, ending: Ending) {
        if self.prof.finished {
            return;
        }
        self.prof.finished = true;
        let (tables, info, counting) = if let Some(m) = self.prof.monitor.as_mut() {
            (m.finish(), m.info.clone(), "ring")
        } else if let Some((base, cap)) = self.prof.inline {
            let n = (self.prof.blocks.len() as usize).min(cap);
            // SAFETY: the counter array holds `cap` zero-initialised u64s and
            // no translated code runs now (dispatch I1).
            let counts = unsafe { std::slice::from_raw_parts(base, n) };
            (
                Tables::from_counts(counts, self.prof.blocks.published()),
                MonitorInfo::default(),
                "inline",
            )
        } else {
            return;
        };
        if self.opts.profile.is_none() && !self.prof.print_summary {
            return;
        }
        let (binary, modules) = module_table(&self.prof.images);
        let ring_capacity = self
            .prof
            .ring
            .as_ref()
            .map(|r| 2 * r.ring.seg_entries())
            .unwrap_or(0);
        let profile = Profile::build(Inputs {
            tables: &tables,
            blocks: self.prof.blocks.published(),
            binary,
            modules,
            command_line: self.prof.command_line.clone(),
            options: serde_json::to_value(&self.opts).unwrap_or_default(),
            counting,
            monitor: info.clone(),
            ending,
            times: Times {
                wall_seconds: self.prof.started.elapsed().as_secs_f64(),
                process_cpu_seconds: process_cpu_seconds(),
                monitor_cpu_seconds: info.cpu_seconds,
            },
            ring_capacity,
            flushes: self.cache.flushes,
            translations: &self.prof.translations,
        });
        if let Some(path) = &self.opts.profile {
            if let Err(e) = profile.write_json(path) {
                eprintln!(
                    "hotlift: cannot write the profile to {}: {e}",
                    path.display()
                );
            }
        }
        if self.prof.print_summary {
            let mem = &self.mem;
            let code = |addr: u64, len: usize| {
                let ok = len > 0 && mem.find(addr).is_some_and(|(_, r)| r.prot.x);
                ok.then(|| crate::syscall::guest_read_bytes(addr, len))
                    .flatten()
            };
            eprint!("{}", profile.summary(&code));
        }
    }
}

/// The profile's `binary` (the program's file) and module table, from the
/// run's image log: symbols and build ids read now from each file (the
/// vDSO's from memory). A file that changed since it was mapped (another
/// build id) gives no symbols.
fn module_table(images: &ImageLog) -> (Binary, Modules) {
    let mut binary = Binary {
        path: String::new(),
        sha256: String::new(),
        build_id: None,
        size: 0,
    };
    let mut list = Vec::with_capacity(images.records.len());
    for r in &images.records {
        let build_id = r.build_id.as_deref().map(hex);
        let symbols = if r.kind == ImageKind::Vdso {
            // SAFETY: the vDSO is mapped readable for the process's life.
            let image = unsafe {
                std::slice::from_raw_parts(r.base as *const u8, (r.end - r.base) as usize)
            };
            Symbols::from_elf(image, r.bias)
        } else {
            let bytes = std::fs::read(&r.path).unwrap_or_default();
            if r.kind == ImageKind::Program {
                binary = Binary {
                    path: r.path.display().to_string(),
                    sha256: sha256_hex(&bytes),
                    build_id: build_id.clone(),
                    size: bytes.len() as u64,
                };
            }
            Symbols::from_file(&bytes, r.bias, r.build_id.as_deref())
        };
        list.push(Module {
            name: r.file_name(),
            path: r.path.display().to_string(),
            kind: serde_json::to_value(r.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            base: r.base,
            end: r.end,
            build_id,
            unmapped: r.end_block.is_some(),
            symbols,
            first_block: r.first_block,
            end_block: r.end_block,
        });
    }
    (binary, Modules::new(list))
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
