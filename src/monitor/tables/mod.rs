//! The monitor's tables and the per-entry loop (module I2).
//!
//! Per block id the monitor keeps one cache line, a [`Slot`]: the block's
//! execution count, what the loop needs from the block table (guest
//! address, instruction count, exit kind, return address), and a two-way
//! cache of the block's successors with their counts. An entry costs one
//! count increment and a compare of its id against the previous block's
//! ways; a successor found in neither way takes the slow path, which moves
//! the evicted way's count into the `edges` hash table. Calls and returns
//! also move the thread along the calling-context tree (calltree.rs).
//!
//! I1: every transition (previous block → block) of a thread is counted
//!     exactly once, in a way of the previous block's slot or in `edges`,
//!     so the edge profile is complete: for every block, the sum of its
//!     outgoing edges equals its count minus the times it was a thread's
//!     last block.
//! I2: every guest instruction counted (blocks and `rep` iterations) is
//!     charged to exactly one calling context (calltree.rs I1).
//!
//! Usage: `tables.process(thread, entries, &block_table)` for each batch a
//! ring hands out, in order; `tables.finish()` once, then read.

use std::collections::BTreeMap;

use hashbrown::HashMap;

mod mine;
mod passes;
mod sampling;

use super::calltree::{CallTree, ROOT};
use super::superblock::{Request, Trigger};
use super::{
    BlockMeta, BlockTable, ExitKind, NR_MASK, TAG, TAG_REP, TAG_SB_ENTRY, TAG_SIGNAL,
    TAG_SIGRETURN, TAG_SYSCALL, TAG_UNRETIRED, TAG_UNRETIRED_REP,
};
pub use passes::{PassOp, SbAccount};

/// No block (an empty way, no previous block).
const NONE: u32 = u32::MAX;
/// The payload of a superblock record.
const SB_MASK: u32 = super::SB_ID_LIMIT - 1;
/// `Slot::flags`: the block ends with a call / a return / an indirect
/// transfer (returns and indirect calls too).
const F_CALL: u8 = 1;
const F_RETURN: u8 = 2;
const F_INDIRECT: u8 = 4;
/// Flags that need `call_or_return`.
const F_SHADOW: u8 = F_CALL | F_RETURN;

/// When the monitor asks for superblocks (superblock/mod.rs).
#[derive(Debug, Clone, Copy)]
pub struct SbConfig {
    pub enabled: bool,
    /// A block entered by a direct transfer this many times.
    pub block_threshold: u32,
    /// An indirect edge taken this many times.
    pub edge_threshold: u32,
    /// `--selector pisat`: mined patterns instead of the thresholds.
    pub pisat: Option<super::superblock::pisat::Config>,
}

impl Default for SbConfig {
    fn default() -> Self {
        SbConfig {
            enabled: false,
            block_threshold: u32::MAX,
            edge_threshold: u32::MAX,
            pisat: None,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct SyscallStat {
    pub count: u64,
    pub errors: u64,
    pub nanos: u64,
}

/// Entries of the direct-mapped edge cache (16 bytes each).
const ECACHE: usize = 1 << 16;

/// An edge-cache entry: transitions from block `p` to block `e`.
#[derive(Debug, Clone, Copy)]
struct EdgeSlot {
    p: u32,
    e: u32,
    n: u64,
}

const EMPTY_EDGE: EdgeSlot = EdgeSlot {
    p: NONE,
    e: NONE,
    n: 0,
};

fn ecache_index(p: u32, e: u32) -> usize {
    let k = (u64::from(p) << 32 | u64::from(e)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (k >> (64 - ECACHE.trailing_zeros())) as usize
}

/// What the per-entry loop keeps per block id: one cache line.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Slot {
    count: u64,
    /// Successor block ids seen (NONE = free) and transitions to each.
    way: [u32; 2],
    way_n: [u64; 2],
    guest: u64,
    /// Call blocks: the return address pushed.
    ret: u64,
    insns: u32,
    /// Ask for a superblock here when `count` reaches this (u32::MAX: no).
    trigger: u32,
    /// Indirect blocks: ask for one at a successor when a way's count
    /// reaches this.
    way_trigger: u32,
    flags: u8,
}

impl Slot {
    fn new(m: &BlockMeta, sb: &SbConfig) -> Slot {
        let flags = match m.exit {
            ExitKind::Call => F_CALL,
            ExitKind::IndirectCall => F_CALL | F_INDIRECT,
            ExitKind::Return => F_RETURN | F_INDIRECT,
            ExitKind::IndirectJump => F_INDIRECT,
            _ => 0,
        };
        let on = |t: u32| {
            if sb.enabled && sb.pisat.is_none() {
                t
            } else {
                u32::MAX
            }
        };
        Slot {
            count: 0,
            way: [NONE; 2],
            way_n: [0; 2],
            guest: m.guest,
            ret: m.next,
            insns: m.insns,
            trigger: on(sb.block_threshold),
            way_trigger: if flags & F_INDIRECT != 0 {
                on(sb.edge_threshold)
            } else {
                u32::MAX
            },
            flags,
        }
    }
}

/// A shadow call stack frame: where the call returns to, and the context
/// the thread was in before it.
#[derive(Debug, Clone, Copy)]
struct Frame {
    ret: u64,
    node: u32,
}

/// Per guest thread: the previous block, the shadow call stack, the
/// calling context, and a tagged record split across ring segments.
#[derive(Debug, Clone)]
struct ThreadState {
    prev: u32,
    shadow: Vec<Frame>,
    node: u32,
    /// Instructions not yet charged to `node`.
    acc: u64,
    pending: Vec<u32>,
    pending_need: usize,
    /// ECX before and after of the last `TAG_REP` record.
    last_rep: (u32, u32),
    /// The superblock whose pass is open (passes.rs), or NONE.
    pass: u32,
    /// While a lazy pass is open: its superblock's entry record (a loop
    /// back to the start, passes.rs fast path) and its instructions.
    loop_word: u32,
    loop_insns: u64,
    loop_blocks: u64,
    /// Instructions charged, block executions and ring entries, so far.
    insns: u64,
    blocks: u64,
    entries: u64,
    /// The Pisat window being filled (mine.rs).
    window: mine::Capture,
}

impl Default for ThreadState {
    fn default() -> Self {
        ThreadState {
            prev: NONE,
            shadow: Vec::new(),
            node: ROOT,
            acc: 0,
            pending: Vec::new(),
            pending_need: 0,
            last_rep: (0, 0),
            pass: NONE,
            loop_word: 0,
            loop_insns: 0,
            loop_blocks: 0,
            insns: 0,
            blocks: 0,
            entries: 0,
            window: mine::Capture::default(),
        }
    }
}

/// Exact profile tables, indexed by BlockId where dense.
#[derive(Debug, Default)]
pub struct Tables {
    slots: Vec<Slot>,
    /// Successors beyond a block's two ways (I1).
    ecache: Vec<EdgeSlot>,
    /// (source block id, target guest address) → transitions evicted from
    /// the edge cache, and at the end everything (I1).
    edges: HashMap<(u32, u64), u64>,
    pub tree: CallTree,
    pub returns: u64,
    /// Returns that did not go back to the shadow stack's top (longjmp, …).
    pub unmatched_returns: u64,
    pub syscalls: BTreeMap<u64, SyscallStat>,
    pub syscall_log: Vec<(u64, i64)>,
    pub entries: u64,
    pub max_lag: u64,
    pub waits: u64,
    pub wait_ns: u64,
    pub max_shadow_depth: usize,
    /// Iterations of `rep` string instructions beyond their first (the
    /// block counts count each such instruction once).
    pub rep_extra: u64,
    /// Instructions of entered blocks that did not retire because the block
    /// stopped early (`TAG_UNRETIRED`); the block counts include them.
    pub unretired: u64,
    /// Frames built for guest signal handlers (`TAG_SIGNAL`).
    pub signals: u64,
    threads: Vec<ThreadState>,
    finished: bool,
    pub sb: SbConfig,
    /// Superblocks asked for since the builder last looked.
    pub requests: Vec<Request>,
    /// Per superblock id: its members and pass counts (passes.rs).
    pub sbs: Vec<SbAccount>,
    /// Records that did not fit the superblock protocol (must stay 0).
    pub sb_record_errors: u64,
    /// Thread id of each ring, in registration order (filled at the end).
    pub thread_tids: Vec<i32>,
    /// What the builder made (filled at the end).
    pub superblocks: Vec<super::superblock::build::SbRecord>,
    pub build_stats: super::superblock::build::BuildStats,
    /// Timed samples of the threads' calling contexts (sampler.rs).
    pub sampler: super::sampler::Sampler,
    /// `--selector pisat`: the sequence database and PST-tree (mine.rs).
    pub pisat: Option<Box<super::superblock::pisat::Miner>>,
    /// Path profiling of one function (monitor/paths.rs), when asked for.
    pub paths: Option<Box<super::paths::PathsTables>>,
}

/// The syscall log keeps this many calls; the table counts all.
pub const SYSCALL_LOG_LIMIT: usize = 1 << 20;

impl Tables {
    /// Tables holding only block counts (`--count-inline`).
    pub fn from_counts(counts: &[u64], blocks: &[BlockMeta]) -> Tables {
        let sb = SbConfig::default();
        let mut slots: Vec<Slot> = blocks.iter().map(|m| Slot::new(m, &sb)).collect();
        for (s, &c) in slots.iter_mut().zip(counts) {
            s.count = c;
        }
        Tables {
            slots,
            finished: true,
            ..Tables::default()
        }
    }

    /// Execution count of block `id`.
    pub fn count(&self, id: usize) -> u64 {
        self.slots.get(id).map_or(0, |s| s.count)
    }

    /// Make a slot for every published block up to `id` (I1 of the block
    /// table: a ring only holds published ids).
    #[cold]
    fn grow(&mut self, id: usize, blocks: &BlockTable) {
        let table = blocks.published();
        assert!(
            id < table.len(),
            "ring entry {id} is not a published block (block table I1)"
        );
        let have = self.slots.len();
        let sb = self.sb;
        self.slots
            .extend(table[have..].iter().map(|m| Slot::new(m, &sb)));
    }

    /// Tables that ask for superblocks as `sb` says.
    pub fn new(sb: SbConfig) -> Tables {
        Tables {
            sb,
            pisat: sb
                .pisat
                .filter(|_| sb.enabled)
                .map(|c| Box::new(super::superblock::pisat::Miner::new(c))),
            ..Tables::default()
        }
    }

    /// The per-entry loop over a piece of a batch of thread `t`
    /// (sampling.rs cuts batches where samples fall).
    fn process_entries(&mut self, t: usize, entries: &[u32], blocks: &BlockTable) {
        if self.threads.len() <= t {
            self.threads.resize(t + 1, ThreadState::default());
        }
        let mut st = std::mem::take(&mut self.threads[t]);
        if self.pisat.is_some() {
            self.window_turn(&mut st);
        }
        if let Some(p) = self.paths.as_deref_mut() {
            p.set_thread(t);
        }
        self.entries += entries.len() as u64;
        st.entries += entries.len() as u64;
        for &e in entries {
            if e & TAG != 0 || st.pending_need > 0 {
                st.window.tick();
                if let Some(p) = self.paths.as_deref_mut() {
                    if st.pending_need == 0 && (e == st.loop_word || e >= TAG_SB_ENTRY) {
                        p.other();
                    }
                }
                if e == st.loop_word && st.pending_need == 0 {
                    // A lazy superblock looped back to its start.
                    self.sbs[st.pass as usize].loops += 1;
                    st.acc += st.loop_insns;
                    st.blocks += st.loop_blocks;
                } else if e >= TAG_SB_ENTRY && st.pending_need == 0 {
                    self.sb_record(&mut st, e);
                } else {
                    self.record_word(&mut st, e);
                }
                continue;
            }
            let id = e as usize;
            if id >= self.slots.len() {
                self.grow(id, blocks);
            }
            if st.pass != NONE {
                self.stray_in_pass(&mut st);
            }
            let p = st.prev;
            if p != NONE {
                self.transition(&mut st, p, e);
            }
            let s = &mut self.slots[id];
            s.count += 1;
            st.blocks += 1;
            st.acc += s.insns as u64;
            if s.count == s.trigger as u64 {
                self.count_trigger(e, p);
            }
            st.prev = e;
            st.window.push(e);
            if let Some(paths) = self.paths.as_deref_mut() {
                paths.block(self.slots[id].guest, e);
            }
        }
        if self.pisat.is_some() {
            self.window_turn(&mut st);
        }
        self.threads[t] = st;
    }

    /// Count the transition `p` → `e` of a thread (I1) and move it in the
    /// calling-context tree.
    #[inline(always)]
    fn transition(&mut self, st: &mut ThreadState, p: u32, e: u32) {
        let ps = &mut self.slots[p as usize];
        // Branch-free on the hot path: which way is taken is as random as
        // the guest's branches are.
        let (h0, h1) = (u64::from(ps.way[0] == e), u64::from(ps.way[1] == e));
        ps.way_n[0] += h0;
        ps.way_n[1] += h1;
        if h0 | h1 == 0 {
            self.edge_miss(p, e);
        } else if ps.way_trigger != u32::MAX {
            let n = ps.way_n[h1 as usize];
            if n == ps.way_trigger as u64 {
                self.edge_trigger(p, e, n);
            }
        }
        if self.slots[p as usize].flags & F_SHADOW != 0 {
            self.call_or_return(st, p, e);
        }
    }

    /// Block `e` reached its count threshold; entered from `p` this time.
    #[cold]
    fn count_trigger(&mut self, e: u32, p: u32) {
        let direct = p == NONE || self.slots[p as usize].flags & F_INDIRECT == 0;
        let s = &mut self.slots[e as usize];
        if direct {
            let threshold = s.trigger as u64;
            s.trigger = u32::MAX;
            self.requests.push(Request::counted(
                e,
                Trigger::Block {
                    count: s.count,
                    threshold,
                },
            ));
        } else {
            // Entered indirectly: ask again at a later direct entry. Not at
            // the very next execution: a block most returns land in would
            // come here on every one (c-qsort: 6 % of the monitor's time).
            let later = s.count + (s.count / 8).max(64);
            s.trigger = later.min(u64::from(u32::MAX - 1)) as u32;
        }
    }

    /// The indirect edge `p` → `e` reached its threshold.
    #[cold]
    fn edge_trigger(&mut self, p: u32, e: u32, count: u64) {
        self.requests.push(Request::counted(
            e,
            Trigger::IndirectEdge {
                from: self.slots[p as usize].guest,
                count,
                threshold: self.slots[p as usize].way_trigger as u64,
            },
        ));
    }

    /// Successor `e` of `p` is in neither way: a free way, or the edge
    /// cache, whose evicted entry goes to `edges` (I1).
    #[cold]
    fn edge_miss(&mut self, p: u32, e: u32) {
        let ps = &mut self.slots[p as usize];
        if let Some(w) = ps.way.iter().position(|&w| w == NONE) {
            ps.way[w] = e;
            ps.way_n[w] = 1;
            return;
        }
        if self.ecache.is_empty() {
            self.ecache = vec![EMPTY_EDGE; ECACHE];
        }
        let slot = &mut self.ecache[ecache_index(p, e)];
        if slot.p == p && slot.e == e {
            slot.n += 1;
            let n = slot.n;
            if n == self.slots[p as usize].way_trigger as u64 {
                self.edge_trigger(p, e, n);
            }
            return;
        }
        let old = std::mem::replace(slot, EdgeSlot { p, e, n: 1 });
        if old.p != NONE {
            let to = self.slots[old.e as usize].guest;
            *self.edges.entry((old.p, to)).or_insert(0) += old.n;
        }
    }

    /// `p` ended with a call or a return and `e` came next: move the thread
    /// in the calling-context tree and on its shadow stack.
    fn call_or_return(&mut self, st: &mut ThreadState, p: u32, e: u32) {
        let (ps, to) = (self.slots[p as usize], self.slots[e as usize].guest);
        if ps.flags & F_CALL != 0 {
            self.do_call(st, ps.ret, to);
        } else {
            self.do_return(st, to);
        }
    }

    /// Charge the thread's pending instructions to its calling context
    /// (I2) and to its own total.
    #[inline]
    fn charge(&mut self, st: &mut ThreadState) {
        let n = std::mem::take(&mut st.acc);
        st.insns = st.insns.wrapping_add(n);
        self.tree.charge(st.node, n);
    }

    /// What each guest thread (by ring, in registration order) executed:
    /// (instructions, block executions, ring entries). Complete after
    /// [`Tables::finish`].
    pub fn per_thread(&self) -> Vec<(u64, u64, u64)> {
        self.threads
            .iter()
            .map(|st| (st.insns, st.blocks, st.entries))
            .collect()
    }

    /// A call to `to` that returns to `ret`.
    fn do_call(&mut self, st: &mut ThreadState, ret: u64, to: u64) {
        self.charge(st);
        st.shadow.push(Frame { ret, node: st.node });
        self.max_shadow_depth = self.max_shadow_depth.max(st.shadow.len());
        st.node = self.tree.enter(st.node, to);
    }

    /// A return to `to`.
    fn do_return(&mut self, st: &mut ThreadState, to: u64) {
        self.charge(st);
        self.returns += 1;
        match st.shadow.last() {
            Some(f) if f.ret == to => {
                st.node = f.node;
                st.shadow.pop();
            }
            _ => {
                self.unmatched_returns += 1;
                if let Some(i) = st.shadow.iter().rposition(|f| f.ret == to) {
                    st.node = st.shadow[i].node;
                    st.shadow.truncate(i);
                }
            }
        }
    }

    /// A word of a tagged record (or its first word).
    fn record_word(&mut self, st: &mut ThreadState, e: u32) {
        if st.pending_need == 0 {
            if e == TAG_SIGRETURN {
                // The context the handler returns to follows no block.
                if let Some(p) = self.paths.as_deref_mut() {
                    p.marker();
                }
                st.prev = NONE;
                return;
            }
            st.pending.push(e);
            st.pending_need = super::record_words(e);
            return;
        }
        st.pending.push(e);
        st.pending_need -= 1;
        if st.pending_need == 0 {
            let rec = std::mem::take(&mut st.pending);
            self.tagged(st, &rec);
            st.pending = rec;
            st.pending.clear();
        }
    }

    fn tagged(&mut self, st: &mut ThreadState, rec: &[u32]) {
        if let Some(p) = self.paths.as_deref_mut() {
            if rec[0] & 0xf000_0000 == super::TAG_PATH {
                p.record(rec);
                return;
            }
            if matches!(rec[0], TAG_UNRETIRED | TAG_UNRETIRED_REP) || rec[0] & !0xff == TAG_SIGNAL {
                p.marker();
            }
        }
        if rec[0] == TAG_REP {
            // Single-stepping counts each iteration; RCX = 0 still counts
            // the instruction once.
            let (before, after) = (rec[1], rec[2]);
            let extra = rep_steps(before, after) - 1;
            self.rep_extra += extra;
            st.acc += extra;
            st.last_rep = (before, after);
            return;
        }
        if rec[0] == TAG_UNRETIRED {
            self.unretired += rec[1] as u64;
            st.acc = st.acc.wrapping_sub(rec[1] as u64);
            return;
        }
        if rec[0] == TAG_UNRETIRED_REP {
            // The block counted the rep once and TAG_REP added steps - 1;
            // it retired only the iterations it completed before the fault.
            let (before, after) = st.last_rep;
            let completed = before.wrapping_sub(after) as u64;
            let n = rep_steps(before, after) - completed + rec[1] as u64;
            self.unretired += n;
            st.acc = st.acc.wrapping_sub(n);
            return;
        }
        if rec[0] & !0xff == TAG_SIGNAL {
            // The handler is entered from no block, as a call that returns
            // to the restorer.
            let word = |i: usize| rec[i] as u64 | (rec[i + 1] as u64) << 32;
            st.prev = NONE;
            self.do_call(st, word(1), word(3));
            self.signals += 1;
            return;
        }
        if rec[0] & !NR_MASK == TAG_SYSCALL {
            let nr = (rec[0] & NR_MASK) as u64;
            let ret = (rec[1] as u64 | (rec[2] as u64) << 32) as i64;
            let s = self.syscalls.entry(nr).or_default();
            s.count += 1;
            s.nanos += rec[3] as u64;
            if (-4095..0).contains(&ret) {
                s.errors += 1;
            }
            if self.syscall_log.len() < SYSCALL_LOG_LIMIT {
                self.syscall_log.push((nr, ret));
            }
        }
    }

    /// After the last batch: charge what each thread has not charged yet
    /// (I2) and move every way's count into `edges` (I1).
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let mut threads = std::mem::take(&mut self.threads);
        for st in &mut threads {
            if st.pass != NONE {
                // A thread ended inside a pass with no record for it (it
                // was killed there): count what must have run, its head.
                self.close_at_end(st);
            }
            self.charge(st);
        }
        self.threads = threads;
        for p in 0..self.slots.len() {
            let s = self.slots[p];
            for w in 0..2 {
                if s.way[w] != NONE && s.way_n[w] > 0 {
                    let to = self.slots[s.way[w] as usize].guest;
                    *self.edges.entry((p as u32, to)).or_insert(0) += s.way_n[w];
                }
            }
            self.slots[p].way = [NONE; 2];
            self.slots[p].way_n = [0; 2];
        }
        for slot in std::mem::take(&mut self.ecache) {
            if slot.p != NONE {
                let to = self.slots[slot.e as usize].guest;
                *self.edges.entry((slot.p, to)).or_insert(0) += slot.n;
            }
        }
        self.expand_lazy_passes();
    }

    /// The most frequent successor of block `id` among its two ways, that
    /// successor's transition count, and the block's own count.
    pub fn hottest(&self, id: u32) -> Option<(u32, u64, u64)> {
        let s = self.slots.get(id as usize)?;
        let w = usize::from(s.way_n[1] > s.way_n[0]);
        (s.way[w] != NONE).then_some((s.way[w], s.way_n[w], s.count))
    }

    /// Every transition counted: (source block id, target guest address)
    /// → count. Complete only after [`Tables::finish`].
    pub fn edges(&self) -> &HashMap<(u32, u64), u64> {
        &self.edges
    }
}

/// How many steps a `rep` instruction that ran from ECX `before` to
/// `after` counts: one per iteration, and one when it ran none (RCX = 0).
fn rep_steps(before: u32, after: u32) -> u64 {
    if before == after {
        1
    } else {
        before.wrapping_sub(after) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One block of 3 instructions with a `rep` second, entered once per
    /// record list; what the records make of the counts.
    fn rep_counts(records: &[u32]) -> (u64, u64) {
        let blocks = BlockTable::new(4).unwrap();
        blocks.push(BlockMeta {
            insns: 3,
            ..BlockMeta::default()
        });
        let mut t = Tables::default();
        t.process(0, records, &blocks);
        t.finish();
        let charged: u64 = t.tree.nodes.iter().map(|n| n.self_insns).sum();
        assert_eq!(charged, 3 + t.rep_extra - t.unretired, "call tree I2");
        (t.rep_extra, t.unretired)
    }

    #[test]
    fn unretired_instructions_leave_the_count() {
        // rep ran 96 of 200 iterations, then the block ran to its end.
        assert_eq!(rep_counts(&[0, TAG_REP, 200, 104]), (95, 0));
        // ud2 ends the block: 1 instruction did not retire.
        assert_eq!(rep_counts(&[0, TAG_UNRETIRED, 1]), (0, 1));
        // The rep faulted after 96 iterations: they count, the last
        // instruction does not.
        assert_eq!(
            rep_counts(&[0, TAG_REP, 200, 104, TAG_UNRETIRED_REP, 1]),
            (95, 1)
        );
        // The rep faulted on its first iteration: it did not retire either.
        assert_eq!(
            rep_counts(&[0, TAG_REP, 200, 200, TAG_UNRETIRED_REP, 1]),
            (0, 2)
        );
        // rep with RCX = 0 counts once.
        assert_eq!(rep_counts(&[0, TAG_REP, 0, 0]), (0, 0));
    }

    fn meta(guest: u64, insns: u32, exit: ExitKind, target: u64, next: u64) -> BlockMeta {
        BlockMeta {
            guest,
            target,
            next,
            guest_len: insns,
            insns,
            exit,
        }
    }

    /// Blocks: 0 main (calls 1, returns to 2), 1 f (returns), 2 after the
    /// call (branches to 0 or falls to 3), 3 indirect jump, 4..7 targets.
    fn table() -> BlockTable {
        let t = BlockTable::new(64).unwrap();
        t.push(meta(0x100, 3, ExitKind::Call, 0x200, 0x110));
        t.push(meta(0x200, 5, ExitKind::Return, 0, 0));
        t.push(meta(0x110, 2, ExitKind::Branch, 0x100, 0x120));
        t.push(meta(0x120, 1, ExitKind::IndirectJump, 0, 0));
        for i in 0..4 {
            t.push(meta(0x300 + i * 16, 1, ExitKind::Jump, 0x120, 0));
        }
        t
    }

    #[test]
    fn every_transition_is_counted_once_through_the_edge_cache() {
        let blocks = table();
        let mut t = Tables::new(SbConfig::default());
        let mut stream = vec![];
        // The indirect block goes to four different targets in turn: two
        // stay in the ways, two go through the edge cache (I1).
        for round in 0..50u32 {
            stream.extend_from_slice(&[0, 1, 2]);
            stream.push(3);
            stream.push(4 + round % 4);
        }
        stream.push(3);
        // Split into uneven batches, as rings hand them out.
        for chunk in stream.chunks(7) {
            t.process(0, chunk, &blocks);
        }
        t.finish();
        let mut by_src: BTreeMap<u32, u64> = BTreeMap::new();
        for (&(p, _), &c) in t.edges() {
            *by_src.entry(p).or_default() += c;
        }
        for id in 0..8u32 {
            let last = u64::from(id == 3);
            assert_eq!(
                by_src.get(&id).copied().unwrap_or(0),
                t.count(id as usize) - last,
                "out-edges of block {id}"
            );
        }
        for i in 0..4u64 {
            assert_eq!(
                t.edges()[&(3, 0x300 + i * 16)],
                50 / 4 + u64::from(i < 50 % 4)
            );
        }
        assert_eq!(t.edges()[&(2, 0x120)], 50, "fall-through edge");
        assert_eq!(t.returns, 50);
        assert_eq!(t.unmatched_returns, 0);
    }

    #[test]
    fn call_tree_charges_every_instruction_once() {
        let blocks = table();
        let mut t = Tables::default();
        let stream: Vec<u32> = [0, 1, 2, 0, 1, 2, 3, 4].to_vec();
        t.process(0, &stream, &blocks);
        // rep iterations land in the current context too.
        t.process(0, &[TAG_REP, 10, 0], &blocks);
        t.finish();
        let total: u64 = (0..8)
            .map(|i| t.count(i) * blocks.published()[i].insns as u64)
            .sum();
        let charged: u64 = t.tree.nodes.iter().map(|n| n.self_insns).sum();
        assert_eq!(charged, total + 9, "I2");
        // f (0x200) ran twice as a child of the root, 5 instructions each.
        let f = t.tree.nodes.iter().position(|n| n.func == 0x200).unwrap();
        assert_eq!(t.tree.nodes[f].calls, 2);
        assert_eq!(t.tree.nodes[f].self_insns, 10);
        assert_eq!(t.tree.nodes[f].parent, ROOT);
    }
}
