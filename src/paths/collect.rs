//! Path profiling's collector, the monitor's stream hook
//! (monitor/hook.rs; src/paths): it collects the
//! probes' records (paths/emit/mod.rs) per guest thread, counts
//! invocations from the block stream, and, for `--reference`, keeps the
//! trace of the profiled function's blocks that the independent reference
//! (paths/reference.rs) is computed from at the end.
//!
//! I1: the reference sees only block ids, their guest addresses, and
//!     markers the monitor already gets (signals, unretired blocks,
//!     superblock passes); it never reads a probe record, so it does not
//!     depend on the probe code.
//! I2: a record's activation is named by its serial (per thread), so a
//!     chunk never joins a path of another activation, even when an
//!     activation is lost without a record (a signal, a longjmp).
//! I3: across id epochs (monitor/tables/epoch.rs I6) a trace keeps what
//!     each block was: at an epoch's end the ids it took in that epoch
//!     become [`KEPT`] entries, indices into the kept blocks (one per
//!     distinct block: the function's code, so few), and the entry
//!     copies' ids are forgotten (the dispatcher makes the unit again, with
//!     ids of the new epoch, only after the fold: dispatch/epoch.rs holds
//!     the translation lock throughout).
//!
//! Usage: the monitor's tables call it as their `StreamHook`: `set_thread`
//! once per batch, `block` for each block entry, `other` for superblock
//! records, `marker` for signal and unretired records and `record` for
//! `TAG_PATH` records.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hashbrown::{HashMap, HashSet};

use crate::cache::BlockMeta;
use crate::contract::{REC_CHUNK, REC_END, REC_LOST, REC_TERM};
use crate::monitor::StreamHook;

/// A trace entry that is not a block id: the thread left the function's
/// extent (after being in it).
pub const TRACE_OUT: u32 = u32::MAX;
/// A trace entry: control flow was interrupted (a signal frame, a
/// sigreturn, a block that did not run to its end).
pub const TRACE_BREAK: u32 = u32::MAX - 1;
/// A trace entry naming a block of an ended id epoch: entry
/// `w & !KEPT` of the kept blocks (I3). Block ids stay below it
/// (contract `BLOCK_ID_LIMIT`).
pub const KEPT: u32 = 1 << 31;
const _: () = assert!(crate::contract::BLOCK_ID_LIMIT < KEPT);

/// What the dispatcher tells the monitor (set once the function is
/// resolved; 0 before).
#[derive(Debug, Default)]
pub struct Shared {
    pub entry: AtomicU64,
    pub lo: AtomicU64,
    pub hi: AtomicU64,
    /// Block ids of the instrumented copies of the entry node (their
    /// executions are the invocations).
    pub entry_ids: Mutex<Vec<u32>>,
    /// Keep the trace for the reference.
    pub reference: bool,
}

/// A recorded path, as the probes gave it (plan.rs decodes it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RawPath {
    pub version: u8,
    pub chunks: Vec<u64>,
    pub tot: u64,
    pub seg: u64,
}

/// One guest thread's state.
#[derive(Debug, Default)]
struct ThreadPaths {
    /// Chunks of open activations, by serial (I2).
    open: HashMap<u32, Vec<u64>>,
    trace: Vec<u32>,
    /// Where this epoch's entries start in `trace` (I3).
    since: usize,
    in_extent: bool,
}

/// Totals of the probes' side.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct ProbeTotals {
    pub invocations: u64,
    pub recorded: u64,
    pub terminated: u64,
    pub lost: u64,
}

/// Trace entries kept at most per thread (4 bytes each).
pub const TRACE_LIMIT: usize = 1 << 28;

/// The monitor's path tables (module docs).
#[derive(Debug)]
pub struct PathsTables {
    shared: Arc<Shared>,
    /// The extent `[lo, lo + span)` and entry, as of this batch.
    lo: u64,
    span: u64,
    entry: u64,
    /// The entry copy seen last (most entries are of it).
    last_entry_id: u32,
    entry_ids: HashSet<u32>,
    threads: Vec<ThreadPaths>,
    cur: usize,
    paths: HashMap<RawPath, u64>,
    /// Paths without chunks (most), by (version, tot, seg): no allocation.
    short: HashMap<(u8, u64, u64), u64>,
    pub totals: ProbeTotals,
    /// Records that did not fit the protocol (must stay 0).
    pub record_errors: u64,
    /// A thread's trace passed [`TRACE_LIMIT`]: the reference is
    /// incomplete.
    pub trace_overflow: bool,
    /// The blocks of ended epochs the traces name (I3).
    kept: Vec<BlockMeta>,
    kept_index: HashMap<BlockMeta, u32>,
}

impl PathsTables {
    pub fn new(shared: Arc<Shared>) -> PathsTables {
        PathsTables {
            shared,
            lo: 0,
            span: 0,
            entry: 0,
            last_entry_id: u32::MAX,
            entry_ids: HashSet::new(),
            threads: Vec::new(),
            cur: 0,
            paths: HashMap::new(),
            short: HashMap::new(),
            totals: ProbeTotals::default(),
            record_errors: 0,
            trace_overflow: false,
            kept: Vec::new(),
            kept_index: HashMap::new(),
        }
    }

    fn push_trace(&mut self, w: u32) {
        let th = &mut self.threads[self.cur];
        if th.trace.len() < TRACE_LIMIT {
            th.trace.push(w);
        } else {
            self.trace_overflow = true;
        }
    }

    #[cold]
    fn refresh_entry_ids(&mut self) {
        let ids = self
            .shared
            .entry_ids
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        self.entry_ids.extend(ids.iter().copied());
    }

    fn is_entry_copy(&mut self, id: u32) -> bool {
        if id == self.last_entry_id {
            return true;
        }
        if !self.entry_ids.contains(&id) {
            self.refresh_entry_ids();
        }
        let yes = self.entry_ids.contains(&id);
        if yes {
            self.last_entry_id = id;
        }
        yes
    }

    /// Every recorded path and its count.
    pub fn recorded(&self) -> Vec<(RawPath, u64)> {
        let mut v: Vec<(RawPath, u64)> = self.paths.iter().map(|(k, &n)| (k.clone(), n)).collect();
        v.extend(self.short.iter().map(|(&(version, tot, seg), &n)| {
            (
                RawPath {
                    version,
                    chunks: Vec::new(),
                    tot,
                    seg,
                },
                n,
            )
        }));
        v
    }

    /// Every thread's trace (for the reference).
    pub fn traces(&self) -> impl Iterator<Item = &[u32]> {
        self.threads.iter().map(|t| t.trace.as_slice())
    }

    /// The block a trace entry names, `blocks` being the current epoch's.
    pub fn meta(&self, w: u32, blocks: &[BlockMeta]) -> Option<BlockMeta> {
        if w & KEPT != 0 {
            self.kept.get((w & !KEPT) as usize).copied()
        } else {
            blocks.get(w as usize).copied()
        }
    }
}

impl StreamHook for PathsTables {
    /// The batch that follows is guest thread `t`'s.
    fn set_thread(&mut self, t: usize) {
        if self.threads.len() <= t {
            self.threads.resize_with(t + 1, ThreadPaths::default);
        }
        self.cur = t;
        let lo = self.shared.lo.load(Ordering::Acquire);
        self.lo = lo;
        self.span = self.shared.hi.load(Ordering::Relaxed).wrapping_sub(lo);
        self.entry = self.shared.entry.load(Ordering::Relaxed);
    }

    /// Block `id` at `guest` was entered.
    fn block(&mut self, guest: u64, id: u32) {
        let inside = guest.wrapping_sub(self.lo) < self.span;
        if !inside {
            if self.shared.reference && self.threads[self.cur].in_extent {
                self.threads[self.cur].in_extent = false;
                self.push_trace(TRACE_OUT);
            }
            return;
        }
        if guest == self.entry && self.is_entry_copy(id) {
            self.totals.invocations += 1;
        }
        if self.shared.reference {
            self.threads[self.cur].in_extent = true;
            self.push_trace(id);
        }
    }

    /// A superblock record: code outside the function ran (superblocks
    /// never hold its blocks, paths/engine/mod.rs).
    fn other(&mut self) {
        if self.shared.reference && self.threads[self.cur].in_extent {
            self.threads[self.cur].in_extent = false;
            self.push_trace(TRACE_OUT);
        }
    }

    /// A signal frame, a sigreturn, or a block that stopped early.
    fn marker(&mut self) {
        if self.shared.reference {
            self.push_trace(TRACE_BREAK);
        }
    }

    /// A `TAG_PATH` record (`rec[0]` is the tag).
    fn record(&mut self, rec: &[u32]) {
        let kind = (rec[0] >> 24) & 0xf;
        let version = ((rec[0] >> 16) & 0xff) as u8;
        let serial = rec.get(1).copied().unwrap_or(0);
        let word = |i: usize| rec[i] as u64 | (rec[i + 1] as u64) << 32;
        let th = &mut self.threads[self.cur];
        match kind {
            REC_END if rec.len() == 5 => {
                let (tot, seg) = (word(2), rec[4] as u64);
                let chunks = if th.open.is_empty() {
                    None
                } else {
                    th.open.remove(&serial)
                };
                match chunks {
                    None => *self.short.entry((version, tot, seg)).or_insert(0) += 1,
                    Some(chunks) => {
                        let key = RawPath {
                            version,
                            chunks,
                            tot,
                            seg,
                        };
                        *self.paths.entry(key).or_insert(0) += 1;
                    }
                }
                self.totals.recorded += 1;
            }
            REC_CHUNK if rec.len() == 4 => {
                th.open.entry(serial).or_default().push(word(2));
            }
            REC_TERM if rec.len() == 2 => {
                if !th.open.is_empty() {
                    th.open.remove(&serial);
                }
                self.totals.terminated += 1;
            }
            REC_LOST if rec.len() == 2 => {
                th.open.remove(&serial);
                self.totals.lost += 1;
            }
            _ => self.record_errors += 1,
        }
    }

    /// I3.
    fn epoch(&mut self, metas: &[BlockMeta]) {
        for th in &mut self.threads {
            for w in &mut th.trace[th.since..] {
                if *w >= TRACE_BREAK || *w & KEPT != 0 {
                    continue;
                }
                let m = metas.get(*w as usize).copied().unwrap_or_default();
                let next = self.kept.len() as u32;
                let k = *self.kept_index.entry(m).or_insert(next);
                if k == next {
                    self.kept.push(m);
                }
                *w = KEPT | k;
            }
            th.since = th.trace.len();
        }
        self.entry_ids.clear();
        self.last_entry_id = u32::MAX;
        self.shared
            .entry_ids
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// I3: after an epoch, the trace names the old blocks by what they
    /// were and an old entry copy's id (now another block's) counts no
    /// invocation.
    #[test]
    fn an_epoch_keeps_the_trace_and_forgets_entry_ids() {
        let shared = Arc::new(Shared {
            reference: true,
            ..Shared::default()
        });
        shared.lo.store(0x1000, Ordering::Relaxed);
        shared.hi.store(0x1100, Ordering::Relaxed);
        shared.entry.store(0x1000, Ordering::Relaxed);
        shared.entry_ids.lock().unwrap().push(1);
        let mut t = PathsTables::new(shared.clone());
        t.set_thread(0);
        t.block(0x1000, 1);
        t.block(0x1040, 0);
        assert_eq!(t.totals.invocations, 1);
        let meta = |guest| BlockMeta {
            guest,
            guest_len: 4,
            ..BlockMeta::default()
        };
        t.epoch(&[meta(0x1040), meta(0x1000)]);
        assert!(shared.entry_ids.lock().unwrap().is_empty());
        t.set_thread(0);
        // Id 1 is now the plain copy at the entry: no invocation.
        t.block(0x1000, 1);
        assert_eq!(t.totals.invocations, 1);
        let blocks = [meta(0x1080), meta(0x1000)];
        let seen: Vec<u64> = t.threads[0]
            .trace
            .iter()
            .map(|&w| t.meta(w, &blocks).unwrap().guest)
            .collect();
        assert_eq!(seen, [0x1000, 0x1040, 0x1000]);
    }
}
