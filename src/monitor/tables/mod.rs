//! The monitor's tables and the per-entry loop (module I2).
//!
//! Per unit (a block, or a superblock unit: units.rs) the monitor keeps
//! one cache line, a [`Slot`] (slots.rs), indexed by the ring word itself:
//! the unit's execution count, what the loop needs from the block table
//! (instructions and blocks, how the unit ends, return address), and a
//! two-way cache of its successors by first block, with their counts. An
//! entry costs one count increment and a compare of its first block
//! against the previous unit's ways, the same for a block as for a whole
//! superblock pass; a successor found in neither way takes the slow path,
//! which moves the evicted way's count into the `edges` hash table. Calls
//! and returns also move the thread along the calling-context tree
//! (calltree.rs).
//!
//! I1: every transition (previous unit → unit) of a thread is counted
//!     exactly once, in a way of the previous unit's slot or in `edges`,
//!     as the edge from the previous unit's last block to the unit's first
//!     block, so the edge profile is complete: for every block, the sum of
//!     its outgoing edges equals its count minus the times it was a
//!     thread's last block.
//! I2: every guest instruction counted (blocks and `rep` iterations) is
//!     charged to exactly one calling context (calltree.rs I1).
//!
//! Usage: `tables.process(thread, entries, &block_table)` for each batch a
//! ring hands out, in order; `tables.finish()` once, then read.

use std::collections::BTreeMap;

use hashbrown::HashMap;

mod mine;
mod sampling;
mod slots;
mod units;

use super::calltree::{CallTree, ROOT};
use super::superblock::{Request, Trigger};
use super::{
    BlockMeta, BlockTable, NR_MASK, TAG, TAG_LOOP, TAG_REP, TAG_REP_SB, TAG_SIGNAL, TAG_SIGRETURN,
    TAG_SYSCALL, TAG_UNRETIRED, TAG_UNRETIRED_REP, UNIT_BASE,
};
use crate::contract::{LOOP_PASSES_MASK, LOOP_PASSES_N, TAG_LOOP_PASSES};
use slots::{
    Slot, SlotTable, BLOCKS_SHIFT, F_CALL, F_INDIRECT, F_OPS, F_SHADOW, F_UNIT, INSNS_MASK, NONE,
};
use units::UnitOp;
pub use units::{PassOp, SbAccount, SbExitAcct, SbSummary};

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
    /// `rep` iterations of a superblock pass whose unit has not come yet
    /// (`TAG_REP_SB`), charged when it does (units.rs I1).
    rep_next: u64,
    /// Instructions charged, block executions and ring entries, so far.
    insns: u64,
    blocks: u64,
    entries: u64,
    /// The Pisat window being filled (mine.rs).
    window: mine::Capture,
    /// The first unit of the superblock of the last `TAG_LOOP` record
    /// (NONE: none understood).
    loop_base: u32,
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
            rep_next: 0,
            insns: 0,
            blocks: 0,
            entries: 0,
            window: mine::Capture::default(),
            loop_base: NONE,
        }
    }
}

/// What the monitor keeps about a superblock unit (units.rs).
#[derive(Debug, Clone)]
pub(super) struct UnitInfo {
    /// The block the unit's path ends at.
    pub last: u32,
    /// The superblock the unit belongs to (blocks have no `UnitInfo`).
    pub sb: u32,
}

/// Exact profile tables, indexed by unit id where dense.
#[derive(Debug)]
pub struct Tables {
    slots: SlotTable,
    /// Block slots made so far: ids below this (slots.rs I2).
    block_hw: usize,
    /// Unit slots made so far: ids from UNIT_BASE below this.
    unit_hw: usize,
    /// Guest address of each block with a slot.
    guests: Vec<u64>,
    /// Per unit from UNIT_BASE on.
    units: Vec<UnitInfo>,
    /// The calls and returns of `F_OPS` units' paths, each unit's in a
    /// row (`Slot::ops_at`, units.rs I1).
    unit_ops: Vec<UnitOp>,
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
    /// Per superblock id: its members, exits and units (units.rs).
    pub sbs: Vec<SbAccount>,
    /// Ring words naming no block or unit (must stay 0).
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
    /// Use `run_fast` where it can (tests compare it with `entry` alone).
    fast: bool,
}

/// The syscall log keeps this many calls; the table counts all.
pub const SYSCALL_LOG_LIMIT: usize = 1 << 20;

impl Default for Tables {
    fn default() -> Self {
        Tables {
            slots: SlotTable::default(),
            block_hw: 0,
            unit_hw: UNIT_BASE as usize,
            guests: Vec::new(),
            units: Vec::new(),
            unit_ops: Vec::new(),
            ecache: Vec::new(),
            edges: HashMap::new(),
            tree: CallTree::default(),
            returns: 0,
            unmatched_returns: 0,
            syscalls: BTreeMap::new(),
            syscall_log: Vec::new(),
            entries: 0,
            max_lag: 0,
            waits: 0,
            wait_ns: 0,
            max_shadow_depth: 0,
            rep_extra: 0,
            unretired: 0,
            signals: 0,
            threads: Vec::new(),
            finished: false,
            sb: SbConfig::default(),
            requests: Vec::new(),
            sbs: Vec::new(),
            sb_record_errors: 0,
            thread_tids: Vec::new(),
            superblocks: Vec::new(),
            build_stats: Default::default(),
            sampler: Default::default(),
            pisat: None,
            paths: None,
            fast: true,
        }
    }
}

impl Tables {
    /// Tables holding only block counts (`--count-inline`).
    pub fn from_counts(counts: &[u64], blocks: &[BlockMeta]) -> Tables {
        let mut t = Tables {
            finished: true,
            ..Tables::default()
        };
        t.grow_blocks(blocks);
        for (id, &c) in counts.iter().enumerate().take(t.block_hw) {
            t.slots[id].count = c;
        }
        t
    }

    /// Execution count of block `id`.
    pub fn count(&self, id: usize) -> u64 {
        if id < self.block_hw {
            self.slots[id].count
        } else {
            0
        }
    }

    /// Make a slot for every block of `table` that has none yet.
    fn grow_blocks(&mut self, table: &[BlockMeta]) {
        let sb = self.sb;
        for (id, m) in table.iter().enumerate().skip(self.block_hw) {
            self.slots[id] = Slot::block(id as u32, m, &sb);
            self.guests.push(m.guest);
        }
        self.block_hw = self.block_hw.max(table.len());
    }

    /// A ring word without a slot: a block published since the slots were
    /// last grown (block table I1: a ring only holds published ids), or
    /// nothing hotlift made (counted, and skipped).
    #[cold]
    #[inline(never)]
    fn admit(&mut self, id: usize, blocks: &BlockTable) -> bool {
        if id < UNIT_BASE as usize {
            self.grow_blocks(blocks.published());
            if id < self.block_hw {
                return true;
            }
        }
        self.sb_record_errors += 1;
        false
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
        // Path profiling sees every entry: the general loop only. Pisat's
        // windows see the entries while one is open (mine.rs I1).
        let fast = self.fast && self.paths.is_none();
        let mut i = 0;
        while i < entries.len() {
            if fast {
                let (quiet, units) = st.window.quiet();
                let quiet = usize::try_from(quiet).unwrap_or(usize::MAX);
                let end = entries.len().min(i.saturating_add(quiet));
                let n = if units {
                    self.run_fast::<true>(&mut st, &entries[i..end])
                } else {
                    self.run_fast::<false>(&mut st, &entries[i..end])
                };
                st.window.skip(n as u64);
                i += n;
                if i == entries.len() {
                    break;
                }
            }
            self.entry(&mut st, entries[i], blocks);
            i += 1;
        }
        if self.pisat.is_some() {
            self.window_turn(&mut st);
        }
        self.entries += entries.len() as u64;
        st.entries += entries.len() as u64;
        self.threads[t] = st;
    }

    /// One ring entry, whatever it is.
    #[inline(never)]
    fn entry(&mut self, st: &mut ThreadState, e: u32, blocks: &BlockTable) {
        if e & TAG != 0 || st.pending_need > 0 {
            st.window.tick();
            self.record_word(st, e);
            return;
        }
        let id = e as usize;
        // One test for both ranges (slots.rs I2): a block id without a
        // slot yet, or a unit id beyond the units made.
        if (id.wrapping_sub(self.block_hw) < UNIT_BASE as usize - self.block_hw
            || id >= self.unit_hw)
            && !self.admit(id, blocks)
        {
            return;
        }
        let first = self.slots[id].first;
        let p = st.prev;
        if p != NONE {
            self.transition(st, p, e, first);
        }
        let s = &mut self.slots[id];
        s.count += 1;
        let (count, trigger, size, flags) = (s.count, s.trigger, s.size, s.flags);
        st.blocks += (size >> BLOCKS_SHIFT) as u64;
        // TAG_REP_SB records of a pass come before its unit (units.rs I1);
        // zero otherwise.
        st.acc += std::mem::take(&mut st.rep_next);
        if flags & F_OPS != 0 {
            let (at, n) = (s.ops_at, s.ops_n);
            let mut cx = (st.node, st.acc, st.insns);
            self.replay_ops(&mut st.shadow, &mut cx, at, n, size);
            (st.node, st.acc, st.insns) = cx;
        } else {
            st.acc += (size & INSNS_MASK) as u64;
        }
        if count == trigger as u64 {
            self.count_trigger(e, p);
        }
        st.prev = e;
        if flags & F_UNIT == 0 {
            st.window.push(e);
            if let Some(paths) = self.paths.as_deref_mut() {
                paths.block(self.guests[id], e);
            }
        } else {
            st.window.tick();
            if let Some(paths) = self.paths.as_deref_mut() {
                paths.other();
            }
        }
    }

    /// I2 at its cheapest: the leading entries of `entries` that are plain
    /// (a unit with a slot, entered along a way of the unit before or an
    /// edge the edge cache holds, passing no threshold; a call into a
    /// context its caller's node has cached, a return to the shadow
    /// stack's top; the calls and returns inside a superblock pass
    /// replayed as the general loop does), with the thread's state in
    /// registers; how many it took. It stops before anything else, which
    /// [`Tables::entry`] does (each check comes before anything changes).
    /// Passes with calls inside were two fifths of c-switch's and nine
    /// tenths of c-recursion's ring words: replaying them here cut the
    /// monitor's time on those by 30–45 %. `UNITS`: superblock passes
    /// only (a Pisat window is open and takes every block id, mine.rs I1).
    #[inline(never)]
    fn run_fast<const UNITS: bool>(&mut self, st: &mut ThreadState, entries: &[u32]) -> usize {
        let slots = self.slots.as_mut_ptr();
        let (block_hw, unit_hw) = (self.block_hw, self.unit_hw);
        let (mut prev, mut acc, mut nblocks) = (st.prev, st.acc, st.blocks);
        let (mut node, mut insns) = (st.node, st.insns);
        if prev == NONE || st.pending_need > 0 || st.rep_next != 0 {
            return 0;
        }
        let mut n = 0;
        for &e in entries {
            let id = e as usize;
            if e & TAG != 0
                || id.wrapping_sub(block_hw) < UNIT_BASE as usize - block_hw
                || id >= unit_hw
            {
                break;
            }
            // SAFETY: `id` and `prev` have slots (checked above, and when
            // `prev` was taken); `s` and `ps` may be the same slot, so only
            // raw pointers are used, one access at a time.
            let (ps, s) = unsafe { (slots.add(prev as usize), slots.add(id)) };
            // SAFETY: as above.
            let (first, sflags, pflags, ret) =
                unsafe { ((*s).first, (*s).flags, (*ps).flags, (*ps).ret) };
            if UNITS && sflags & F_UNIT == 0 {
                break;
            }
            // SAFETY: as above.
            let (h0, h1) = unsafe { ((*ps).way[0] == first, (*ps).way[1] == first) };
            let way = usize::from(h1);
            // SAFETY: as above.
            let thresholds = unsafe {
                (*ps).way_n[way] + 1 == (*ps).way_trigger as u64
                    || (*s).count + 1 == (*s).trigger as u64
            };
            // Beyond the two ways: the edge cache when it holds the edge
            // (an indirect jump's many targets); anything else stops.
            let mut cached = usize::MAX;
            if !(h0 | h1) {
                let k = ecache_index(prev, first);
                match self.ecache.get(k) {
                    Some(c)
                        if c.p == prev
                            && c.e == first
                            // SAFETY: as above.
                            && c.n + 1 != unsafe { (*ps).way_trigger } as u64 =>
                    {
                        cached = k
                    }
                    _ => break,
                }
            }
            if thresholds {
                break;
            }
            // A call or a return: only the common cases here.
            let mut child = NONE;
            if pflags & F_SHADOW != 0 {
                let to = self.guests[first as usize];
                if pflags & F_CALL != 0 {
                    match self.tree.cached_child(node, to) {
                        Some(c) if st.shadow.len() < st.shadow.capacity() => child = c,
                        _ => break,
                    }
                } else if st.shadow.last().is_none_or(|f| f.ret != to) {
                    break;
                }
                insns = insns.wrapping_add(acc);
                self.tree.charge(node, std::mem::take(&mut acc));
                if pflags & F_CALL != 0 {
                    st.shadow.push(Frame { ret, node });
                    self.max_shadow_depth = self.max_shadow_depth.max(st.shadow.len());
                    self.tree.entered(child);
                    node = child;
                } else {
                    self.returns += 1;
                    node = st.shadow.pop().map_or(node, |f| f.node);
                }
            }
            // SAFETY: as above.
            let size = unsafe {
                if cached == usize::MAX {
                    (*ps).way_n[way] += 1;
                } else {
                    self.ecache[cached].n += 1;
                }
                (*s).count += 1;
                (*s).size
            };
            if sflags & F_OPS != 0 {
                // The calls and returns inside a superblock pass.
                // SAFETY: as above.
                let (at, n) = unsafe { ((*s).ops_at, (*s).ops_n) };
                let mut cx = (node, acc, insns);
                self.replay_ops(&mut st.shadow, &mut cx, at, n, size);
                (node, acc, insns) = cx;
            } else {
                acc += (size & INSNS_MASK) as u64;
            }
            nblocks += (size >> BLOCKS_SHIFT) as u64;
            prev = e;
            n += 1;
        }
        st.prev = prev;
        st.acc = acc;
        st.blocks = nblocks;
        st.node = node;
        st.insns = insns;
        n
    }

    /// Count the transition `p` → `e` (whose first block is `first`) of a
    /// thread (I1) and move it in the calling-context tree.
    #[inline(always)]
    fn transition(&mut self, st: &mut ThreadState, p: u32, e: u32, first: u32) {
        let ps = &mut self.slots[p as usize];
        // Branch-free on the hot path: which way is taken is as random as
        // the guest's branches are.
        let (h0, h1) = (u64::from(ps.way[0] == first), u64::from(ps.way[1] == first));
        ps.way_n[0] += h0;
        ps.way_n[1] += h1;
        if h0 | h1 == 0 {
            self.edge_miss(p, first, 1);
        } else if ps.way_trigger != u32::MAX {
            let n = ps.way_n[h1 as usize];
            if n == ps.way_trigger as u64 {
                self.edge_trigger(p, first, n);
            }
        }
        if self.slots[p as usize].flags & F_SHADOW != 0 {
            self.call_or_return(st, p, e);
        }
    }

    /// Block `e` reached its count threshold; entered from unit `p` this
    /// time.
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

    /// The indirect edge from unit `p` to block `e` reached its threshold.
    #[cold]
    fn edge_trigger(&mut self, p: u32, e: u32, count: u64) {
        let from = self.guests[self.last_block(p) as usize];
        self.requests.push(Request::counted(
            e,
            Trigger::IndirectEdge {
                from,
                count,
                threshold: self.slots[p as usize].way_trigger as u64,
            },
        ));
    }

    /// Successor `e` (a first block) of unit `p` is in neither way: a free
    /// way, or the edge cache, whose evicted entry goes to `edges` (I1);
    /// `n` transitions at once.
    #[cold]
    fn edge_miss(&mut self, p: u32, e: u32, n: u64) {
        let ps = &mut self.slots[p as usize];
        if let Some(w) = ps.way.iter().position(|&w| w == NONE) {
            ps.way[w] = e;
            ps.way_n[w] = n;
            return;
        }
        if self.ecache.is_empty() {
            self.ecache = vec![EMPTY_EDGE; ECACHE];
        }
        let slot = &mut self.ecache[ecache_index(p, e)];
        if slot.p == p && slot.e == e {
            slot.n += n;
            let (now, trigger) = (slot.n, self.slots[p as usize].way_trigger as u64);
            if now >= trigger && now - n < trigger {
                self.edge_trigger(p, e, now);
            }
            return;
        }
        let old = std::mem::replace(slot, EdgeSlot { p, e, n });
        if old.p != NONE {
            self.add_edge(old.p, old.e, old.n);
        }
    }

    /// `n` transitions at once from unit `p` to a unit whose first block is
    /// `first`, where no threshold can be passed (a direct exit: counted
    /// loops, contract I2).
    fn count_edge_n(&mut self, p: u32, first: u32, n: u64) {
        let ps = &mut self.slots[p as usize];
        match ps.way.iter().position(|&w| w == first) {
            Some(w) => ps.way_n[w] += n,
            None => self.edge_miss(p, first, n),
        }
    }

    /// A `TAG_LOOP` record (contract I2): the `TAG_LOOP_PASSES` words
    /// after it count passes of the superblock whose first unit is
    /// `rec[1]`.
    fn loop_record(&mut self, st: &mut ThreadState, rec: &[u32]) {
        let base = rec[1];
        let known = (UNIT_BASE as usize..self.unit_hw).contains(&(base as usize))
            && self.sbs[self.unit(base).sb as usize].unit_base == base;
        st.loop_base = if known { base } else { NONE };
        if !known {
            self.sb_record_errors += 1;
        }
    }

    /// A `TAG_LOOP_PASSES` word (contract I2): `n` passes ended at the
    /// `l`-th exit looping back to the head of the superblock of the last
    /// `TAG_LOOP` record. Each is a pass of that exit's unit followed by a
    /// pass into the head, exactly as if its word had come; the first
    /// counted pass was entered from the unit before, and the pass after
    /// the last one (counted, or the unit of the exit the loop is left by)
    /// has had its transition into the head counted here already.
    fn loop_passes(&mut self, st: &mut ThreadState, w: u32) {
        let (l, n) = (((w >> 24) & 0x1f) as usize, u64::from(w & LOOP_PASSES_N));
        let base = st.loop_base;
        let loops = match base {
            NONE => None,
            _ => Some(&self.sbs[self.unit(base).sb as usize].loops),
        };
        let Some(&k) = loops.and_then(|loops| loops.get(l)) else {
            self.sb_record_errors += 1;
            return;
        };
        let u = base + k;
        let head = self.slots[u as usize].first;
        if st.prev != NONE {
            self.transition(st, st.prev, u, head);
            st.prev = NONE;
        }
        self.count_edge_n(u, head, n);
        let s = &mut self.slots[u as usize];
        s.count += n;
        st.blocks += n * u64::from(s.size >> BLOCKS_SHIFT);
        st.acc += n * u64::from(s.size & INSNS_MASK);
    }

    /// `n` transitions from unit `p` to block `e` (I1).
    fn add_edge(&mut self, p: u32, e: u32, n: u64) {
        let key = (self.last_block(p), self.guests[e as usize]);
        *self.edges.entry(key).or_insert(0) += n;
    }

    /// `p` ended with a call or a return and `e` came next: move the thread
    /// in the calling-context tree and on its shadow stack.
    fn call_or_return(&mut self, st: &mut ThreadState, p: u32, e: u32) {
        let ps = self.slots[p as usize];
        let to = self.guests[self.slots[e as usize].first as usize];
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
        st.node = self.call(&mut st.shadow, st.node, ret, to);
    }

    /// A return to `to`.
    fn do_return(&mut self, st: &mut ThreadState, to: u64) {
        self.charge(st);
        st.node = self.ret(&mut st.shadow, st.node, to);
    }

    /// A call from context `node` to `to` that returns to `ret`: the
    /// callee's context.
    #[inline(always)]
    fn call(&mut self, shadow: &mut Vec<Frame>, node: u32, ret: u64, to: u64) -> u32 {
        shadow.push(Frame { ret, node });
        self.max_shadow_depth = self.max_shadow_depth.max(shadow.len());
        self.tree.enter(node, to)
    }

    /// A return from context `node` to `to`: the context returned to.
    #[inline(always)]
    fn ret(&mut self, shadow: &mut Vec<Frame>, node: u32, to: u64) -> u32 {
        self.returns += 1;
        match shadow.last() {
            Some(f) if f.ret == to => {
                let n = f.node;
                shadow.pop();
                n
            }
            _ => self.unmatched_return(shadow, node, to),
        }
    }

    /// A return that does not go to the shadow stack's top (longjmp, a
    /// thread switching stacks): to the newest frame returning there, if
    /// any.
    #[cold]
    fn unmatched_return(&mut self, shadow: &mut Vec<Frame>, node: u32, to: u64) -> u32 {
        self.unmatched_returns += 1;
        match shadow.iter().rposition(|f| f.ret == to) {
            Some(i) => {
                let n = shadow[i].node;
                shadow.truncate(i);
                n
            }
            None => node,
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
            if e & LOOP_PASSES_MASK == TAG_LOOP_PASSES {
                self.loop_passes(st, e);
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
        if rec[0] == TAG_REP || rec[0] == TAG_REP_SB {
            // Single-stepping counts each iteration; RCX = 0 still counts
            // the instruction once. Inside a superblock pass, the unit
            // comes after (units.rs I1).
            let (before, after) = (rec[1], rec[2]);
            let extra = rep_steps(before, after) - 1;
            self.rep_extra += extra;
            if rec[0] == TAG_REP {
                st.acc += extra;
            } else {
                st.rep_next += extra;
            }
            st.last_rep = (before, after);
            return;
        }
        if rec[0] == TAG_LOOP {
            self.loop_record(st, rec);
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
            // `rep` iterations of a pass that never ended (the thread was
            // killed inside it without a partial record) ran all the same.
            st.acc += std::mem::take(&mut st.rep_next);
            self.charge(st);
        }
        self.threads = threads;
        let used = (0..self.block_hw).chain(UNIT_BASE as usize..self.unit_hw);
        for p in used {
            let s = self.slots[p];
            for w in 0..2 {
                if s.way[w] != NONE && s.way_n[w] > 0 {
                    self.add_edge(p as u32, s.way[w], s.way_n[w]);
                }
            }
            self.slots[p].way = [NONE; 2];
            self.slots[p].way_n = [0; 2];
        }
        for slot in std::mem::take(&mut self.ecache) {
            if slot.p != NONE {
                self.add_edge(slot.p, slot.e, slot.n);
            }
        }
        self.expand_units();
    }

    /// The slot of block `id`, if it has one.
    fn block_slot(&self, id: u32) -> Option<&Slot> {
        ((id as usize) < self.block_hw).then(|| &self.slots[id as usize])
    }

    /// The most frequent successor of block `id` among its two ways, that
    /// successor's transition count, and the block's own count.
    pub fn hottest(&self, id: u32) -> Option<(u32, u64, u64)> {
        let s = self.block_slot(id)?;
        let w = usize::from(s.way_n[1] > s.way_n[0]);
        (s.way[w] != NONE).then_some((s.way[w], s.way_n[w], s.count))
    }

    /// Both ways of block `id`: (successor, transitions) each, with the
    /// block's own count (superblock trees, select.rs).
    pub fn successors(&self, id: u32) -> Option<([(u32, u64); 2], u64)> {
        let s = self.block_slot(id)?;
        Some(([(s.way[0], s.way_n[0]), (s.way[1], s.way_n[1])], s.count))
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

/// A xorshift generator for the property tests of the per-entry loops.
#[cfg(test)]
pub(super) struct TestRng(u64);

#[cfg(test)]
impl TestRng {
    pub(super) fn new(seed: u64) -> TestRng {
        TestRng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// A number below `n`.
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::ExitKind;

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

    /// A superblock tree over blocks 0 (branch: 1 hot, 2 cold), 1 and 2
    /// (both jump back to 0): exits 0 and 1 loop back from members 1 and
    /// 2. Passes come as unit words, a block word before and after.
    #[test]
    fn units_of_a_tree_count_every_member_and_edge() {
        let blocks = BlockTable::new(64).unwrap();
        blocks.push(meta(0x100, 3, ExitKind::Branch, 0x110, 0x120));
        blocks.push(meta(0x110, 2, ExitKind::Jump, 0x100, 0));
        blocks.push(meta(0x120, 4, ExitKind::Jump, 0x100, 0));
        blocks.push(meta(0x200, 1, ExitKind::Jump, 0x100, 0));
        let metas = blocks.published().to_vec();
        let mut t = Tables::new(SbConfig::default());
        t.process(0, &[3], &blocks);
        let base = t.next_units(5).unwrap();
        let exits = vec![
            SbExitAcct {
                member: 1,
                to_head: true,
            },
            SbExitAcct {
                member: 2,
                to_head: true,
            },
        ];
        let acc = SbAccount::new(
            vec![0, 1, 2],
            vec![u16::MAX, 0, 0],
            &[3, 2, 4],
            exits,
            Vec::new(),
            base,
        );
        t.add_superblock(0, acc, &metas);
        // Three loops through 1, two through 2, then a pass that stops in
        // member 2 (its partial unit: base + 2 exits + member 2).
        let partial2 = base + 2 + 2;
        let stream = [base, base + 1, base, base + 1, base, partial2, 3];
        t.process(0, &stream, &blocks);
        t.finish();
        assert_eq!(t.sb_record_errors, 0);
        assert_eq!(
            (t.count(0), t.count(1), t.count(2), t.count(3)),
            (6, 3, 3, 2)
        );
        let s = t.sb_summary(0).unwrap();
        assert_eq!(s.member_runs, vec![6, 3, 3]);
        assert_eq!((s.entries, s.loops, s.partial_exits), (1, 5, 1));
        assert_eq!(t.edges()[&(0, 0x110)], 3);
        assert_eq!(t.edges()[&(0, 0x120)], 3);
        // Into the head: from block 3 once, from a loop's last member five
        // times (each loop unit's next pass).
        assert_eq!(t.edges()[&(3, 0x100)], 1);
        assert_eq!(t.edges()[&(1, 0x100)], 3);
        assert_eq!(t.edges()[&(2, 0x100)], 2);
        assert_eq!(t.edges()[&(2, 0x200)], 1, "out of the stopped pass");
        let (insns, nblocks, _) = t.per_thread()[0];
        assert_eq!(insns, 1 + 3 * 5 + 2 * 7 + 7 + 1);
        assert_eq!(nblocks, 1 + 5 * 2 + 2 + 1);
        // Edges out of each block add up to its count (but the last).
        for b in 0..4u32 {
            let out: u64 = t
                .edges()
                .iter()
                .filter(|(k, _)| k.0 == b)
                .map(|(_, n)| n)
                .sum();
            assert_eq!(out, t.count(b as usize) - u64::from(b == 3), "block {b}");
        }
    }

    /// The superblock of `units_of_a_tree_count_every_member_and_edge`
    /// (exits 0 and 1 loop back from members 1 and 2) after a block 4 that
    /// calls into its head; `stream` after [4] (units from `base`, which
    /// the closure gets). What the tables hold at the end.
    fn loop_tables(stream: impl Fn(u32) -> Vec<u32>) -> String {
        let blocks = BlockTable::new(64).unwrap();
        blocks.push(meta(0x100, 3, ExitKind::Branch, 0x110, 0x120));
        blocks.push(meta(0x110, 2, ExitKind::Jump, 0x100, 0));
        blocks.push(meta(0x120, 4, ExitKind::Jump, 0x100, 0));
        blocks.push(meta(0x200, 1, ExitKind::Jump, 0x100, 0));
        blocks.push(meta(0x300, 5, ExitKind::Call, 0x100, 0x305));
        let metas = blocks.published().to_vec();
        let mut t = Tables::new(SbConfig::default());
        let base = t.next_units(5).unwrap();
        let exits = (1..3)
            .map(|member| SbExitAcct {
                member,
                to_head: true,
            })
            .collect();
        let acc = SbAccount::new(
            vec![0, 1, 2],
            vec![u16::MAX, 0, 0],
            &[3, 2, 4],
            exits,
            Vec::new(),
            base,
        );
        t.add_superblock(0, acc, &metas);
        let mut all = vec![4];
        all.extend(stream(base));
        for chunk in all.chunks(3) {
            t.process(0, chunk, &blocks);
        }
        t.finish();
        assert_eq!(t.sb_record_errors, 0);
        let mut edges: Vec<_> = t.edges().iter().map(|(k, v)| (*k, *v)).collect();
        edges.sort();
        let tree: Vec<_> = t
            .tree
            .nodes
            .iter()
            .map(|n| (n.parent, n.func, n.calls, n.self_insns))
            .collect();
        let counts: Vec<u64> = (0..5).map(|b| t.count(b)).collect();
        // Instructions and block executions of the thread (not its ring
        // entries, which differ by design).
        let (insns, nblocks, _) = t.per_thread()[0];
        format!(
            "{counts:?} {edges:?} {tree:?} {insns} {nblocks} {:?}",
            t.sb_summary(0)
        )
    }

    /// Contract I2: `TAG_LOOP_PASSES` words stand for the loop units they
    /// count, pushed one by one, whatever their order, however many
    /// records carry them; a record counting nothing changes nothing.
    #[test]
    fn counted_loop_passes_count_as_pushed_ones() {
        let pushed = loop_tables(|b| vec![b, b + 1, b, b + 1, b, b + 4, 3]);
        let at = |l: u32, n: u32| TAG_LOOP_PASSES | l << 24 | n;
        let counted = loop_tables(|b| vec![TAG_LOOP, b, 7, 0, at(0, 3), at(1, 2), b + 4, 3]);
        assert_eq!(pushed, counted);
        let split = loop_tables(|b| {
            let mut v = vec![TAG_LOOP, b, 5, 0, at(0, 1)];
            v.extend([TAG_LOOP, b, 6, 0, at(1, 2)]);
            v.extend([TAG_LOOP, b, 7, 0, at(0, 2), b + 4, 3]);
            v
        });
        assert_eq!(pushed, split);
        // A loop entered and left at once: its record counts nothing.
        let once = loop_tables(|b| vec![b + 4, 3]);
        let nothing = loop_tables(|b| vec![TAG_LOOP, b, 9, 0, b + 4, 3]);
        assert_eq!(once, nothing);
        assert_ne!(once, pushed);
    }

    /// A random run of a program of four functions whose blocks branch,
    /// jump indirectly, call and return, with a superblock unit now and
    /// then, a signal frame, and a return past frames (longjmp): the fast
    /// loop (`run_fast`) and the general one (`entry`) must agree on
    /// everything.
    #[test]
    fn the_fast_loop_counts_as_the_general_one() {
        // Function f (0..4) has blocks 4f..4f+3 at 0x1000*(f+1) + 0x10*i:
        // i=0 branches to 1 or 2, 1 calls function (f+1)%4 and returns to
        // 2, 2 jumps indirectly to 3 or 0, 3 returns.
        let blocks = BlockTable::new(64).unwrap();
        let addr = |f: u64, i: u64| 0x1000 * (f + 1) + 0x10 * i;
        for f in 0..4u64 {
            blocks.push(meta(
                addr(f, 0),
                2,
                ExitKind::Branch,
                addr(f, 1),
                addr(f, 2),
            ));
            blocks.push(meta(
                addr(f, 1),
                3,
                ExitKind::Call,
                addr((f + 1) % 4, 0),
                addr(f, 2),
            ));
            blocks.push(meta(addr(f, 2), 1, ExitKind::IndirectJump, 0, 0));
            blocks.push(meta(addr(f, 3), 4, ExitKind::Return, 0, 0));
        }
        let metas = blocks.published().to_vec();
        for seed in 1..40u64 {
            let mut rng = TestRng::new(seed);
            let mut next = |n: u64| rng.below(n);
            // Superblocks, each with a unit for its exit: f0's blocks
            // 0 -> 2; f1's 0 -> 1, calling f2's 0; f3's 3, returning to
            // f2's 2.
            let sb = |t: &mut Tables| {
                let exit = |member| SbExitAcct {
                    member,
                    to_head: false,
                };
                let call = PassOp {
                    at: 2,
                    call: Some(addr(1, 2)),
                    to: addr(2, 0),
                };
                let ret = PassOp {
                    at: 1,
                    call: None,
                    to: addr(2, 2),
                };
                let sbs = [
                    (vec![0, 2], vec![u16::MAX, 0], vec![2, 1], vec![]),
                    (
                        vec![4, 5, 8],
                        vec![u16::MAX, 0, 1],
                        vec![2, 3, 2],
                        vec![call],
                    ),
                    (vec![15, 10], vec![u16::MAX, 0], vec![4, 1], vec![ret]),
                ];
                let mut units = Vec::new();
                for (id, (members, parent, insns, ops)) in sbs.into_iter().enumerate() {
                    let last = members.len() as u16 - 1;
                    let base = t.next_units(members.len() as u32 + 1).unwrap();
                    let acc = SbAccount::new(members, parent, &insns, vec![exit(last)], ops, base);
                    t.add_superblock(id as u32, acc, &metas);
                    units.push(base);
                }
                units
            };
            let mut fast = Tables::new(SbConfig::default());
            let mut slow = Tables::new(SbConfig::default());
            slow.fast = false;
            let units = sb(&mut fast);
            assert_eq!(units, sb(&mut slow));
            let mut stream = Vec::new();
            let mut stack: Vec<(u64, u32)> = Vec::new();
            let (mut f, mut i) = (0u64, 0u32);
            for _ in 0..3000 {
                let id = (4 * f) as u32 + i;
                if f == 0 && i == 0 && next(5) == 0 {
                    // The first superblock's pass: blocks 0 and 2.
                    stream.push(units[0]);
                    i = 2;
                } else if f == 1 && i == 0 && next(3) == 0 {
                    // The second's: f1's blocks 0 and 1, and f2's 0.
                    stream.push(units[1]);
                    stack.push((1, 2));
                    f = 2;
                } else if f == 3 && i == 3 && stack.last() == Some(&(2, 2)) && next(2) == 0 {
                    // The third's: f3's return and f2's block 2.
                    stream.push(units[2]);
                    stack.pop();
                    (f, i) = (2, 2);
                } else {
                    stream.push(id);
                }
                match next(40) {
                    0 => {
                        stream.extend_from_slice(&[TAG_SIGNAL | 10, 0x10, 0, addr(2, 0) as u32, 0])
                    }
                    1 => stream.extend_from_slice(&[TAG_REP, 9, 2]),
                    _ => {}
                }
                (f, i) = match i {
                    0 => (f, 1 + next(2) as u32),
                    1 => {
                        stack.push((f, 2));
                        ((f + 1) % 4, 0)
                    }
                    2 => (f, if next(2) == 0 { 3 } else { 0 }),
                    _ => {
                        let depth = next(3).min(stack.len() as u64) as usize;
                        let keep = stack.len().saturating_sub(depth.max(1));
                        let back = stack.get(keep).copied();
                        stack.truncate(keep);
                        back.map_or((0, 0), |(g, j)| (g, j))
                    }
                };
            }
            for chunk in stream.chunks(97) {
                fast.process(0, chunk, &blocks);
                slow.process(0, chunk, &blocks);
            }
            fast.finish();
            slow.finish();
            let counts = |t: &Tables| (0..16).map(|b| t.count(b)).collect::<Vec<_>>();
            assert_eq!(counts(&fast), counts(&slow), "seed {seed}");
            assert_eq!(fast.edges(), slow.edges(), "seed {seed}");
            assert_eq!(fast.per_thread(), slow.per_thread(), "seed {seed}");
            assert_eq!(
                (fast.returns, fast.unmatched_returns, fast.max_shadow_depth),
                (slow.returns, slow.unmatched_returns, slow.max_shadow_depth)
            );
            let tree = |t: &Tables| {
                t.tree
                    .nodes
                    .iter()
                    .map(|n| (n.parent, n.func, n.calls, n.self_insns))
                    .collect::<Vec<_>>()
            };
            assert_eq!(tree(&fast), tree(&slow), "seed {seed}");
            for id in 0..3 {
                assert_eq!(fast.sb_summary(id), slow.sb_summary(id));
                assert!(
                    fast.sb_summary(id).unwrap().entries > 0,
                    "seed {seed}: {id} ran"
                );
            }
        }
    }

    /// What an entry costs the monitor, on a stream of branchy blocks
    /// (each goes on to one of two successors at random) with no calls,
    /// through the fast loop and through the general one alone:
    /// `cargo test --release --lib ns_per_entry -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn ns_per_entry() {
        let blocks = BlockTable::new(4096).unwrap();
        for b in 0..1024u64 {
            blocks.push(meta(0x1000 + 16 * b, 3, ExitKind::Branch, 0, 0));
        }
        let mut rng = TestRng::new(1);
        let mut cur = 0u32;
        let stream: Vec<u32> = (0..1 << 22)
            .map(|_| {
                cur = (cur * 2 + 1 + rng.below(2) as u32) % 1024;
                cur
            })
            .collect();
        for fast in [false, true, false, true] {
            let mut t = Tables::new(SbConfig::default());
            t.fast = fast;
            let t0 = std::time::Instant::now();
            for _ in 0..8 {
                for chunk in stream.chunks(1 << 15) {
                    t.process(0, chunk, &blocks);
                }
            }
            let ns = t0.elapsed().as_nanos() as f64 / (8 * stream.len()) as f64;
            println!("fast loop {fast}: {ns:.2} ns per entry");
        }
    }
}
