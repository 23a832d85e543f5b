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

use super::calltree::{CallTree, ROOT};
use super::{BlockMeta, BlockTable, ExitKind, NR_MASK, TAG, TAG_REP, TAG_SYSCALL};

/// No block (an empty way, no previous block).
const NONE: u32 = u32::MAX;
/// `Slot::flags`: the block ends with a call / a return.
const F_CALL: u8 = 1;
const F_RETURN: u8 = 2;

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
    flags: u8,
}

impl Slot {
    fn new(m: &BlockMeta) -> Slot {
        let flags = match m.exit {
            ExitKind::Call | ExitKind::IndirectCall => F_CALL,
            ExitKind::Return => F_RETURN,
            _ => 0,
        };
        Slot {
            count: 0,
            way: [NONE; 2],
            way_n: [0; 2],
            guest: m.guest,
            ret: m.next,
            insns: m.insns,
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
    threads: Vec<ThreadState>,
    finished: bool,
}

/// The syscall log keeps this many calls; the table counts all.
pub const SYSCALL_LOG_LIMIT: usize = 1 << 20;

impl Tables {
    /// Tables holding only block counts (`--count-inline`).
    pub fn from_counts(counts: &[u64], blocks: &[BlockMeta]) -> Tables {
        let mut slots: Vec<Slot> = blocks.iter().map(Slot::new).collect();
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
        self.slots.extend(table[have..].iter().map(Slot::new));
    }

    /// Process a batch of entries of guest thread `t` (monitor I1).
    pub fn process(&mut self, t: usize, entries: &[u32], blocks: &BlockTable) {
        if self.threads.len() <= t {
            self.threads.resize(t + 1, ThreadState::default());
        }
        let mut st = std::mem::take(&mut self.threads[t]);
        self.entries += entries.len() as u64;
        for &e in entries {
            if st.pending_need > 0 || e & TAG != 0 {
                self.record_word(&mut st, e);
                continue;
            }
            let id = e as usize;
            if id >= self.slots.len() {
                self.grow(id, blocks);
            }
            let p = st.prev;
            if p != NONE {
                let ps = &mut self.slots[p as usize];
                if ps.way[0] == e {
                    ps.way_n[0] += 1;
                } else if ps.way[1] == e {
                    ps.way_n[1] += 1;
                } else {
                    self.edge_miss(p, e);
                }
                if self.slots[p as usize].flags != 0 {
                    self.call_or_return(&mut st, p, e);
                }
            }
            let s = &mut self.slots[id];
            s.count += 1;
            st.acc += s.insns as u64;
            st.prev = e;
        }
        self.threads[t] = st;
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
        self.tree.charge(st.node, std::mem::take(&mut st.acc));
        if ps.flags & F_CALL != 0 {
            st.shadow.push(Frame {
                ret: ps.ret,
                node: st.node,
            });
            self.max_shadow_depth = self.max_shadow_depth.max(st.shadow.len());
            st.node = self.tree.enter(st.node, to);
        } else {
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
    }

    /// A word of a tagged record (or its first word).
    fn record_word(&mut self, st: &mut ThreadState, e: u32) {
        if st.pending_need == 0 {
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
        if rec[0] == TAG_REP {
            // Single-stepping counts each iteration; RCX = 0 still counts
            // the instruction once.
            let (before, after) = (rec[1], rec[2]);
            let steps = if before == after {
                1
            } else {
                before.wrapping_sub(after) as u64
            };
            self.rep_extra += steps - 1;
            st.acc += steps - 1;
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
        for st in &mut self.threads {
            self.tree.charge(st.node, std::mem::take(&mut st.acc));
        }
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
    }

    /// Every transition counted: (source block id, target guest address)
    /// → count. Complete only after [`Tables::finish`].
    pub fn edges(&self) -> &HashMap<(u32, u64), u64> {
        &self.edges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut t = Tables::default();
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
