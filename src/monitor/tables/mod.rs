//! The monitor's tables and the per-entry loop (module I2).
//!
//! A ring word is an exit word (contract): a block, or a superblock pass
//! (a unit, units.rs), ran and left by one exit. Per word the monitor
//! keeps a count and the instructions and blocks the word stands for
//! (words.rs `Hot`), and what else it needs of it (`Info`): how it ends,
//! its static target, its first and last blocks. A batch is taken in two
//! passes (pass.rs): the first counts every word, branch-free, and notes
//! where the *special* words are (words.rs I3: calls, returns, indirect
//! transfers, syscalls, calls and returns inside a superblock pass,
//! superblock triggers still counting) with how many instructions had
//! run by then; the second takes only those, in order: it moves the
//! thread in the calling-context tree (calltree.rs) and counts where
//! indirect transfers went, from the next exit word's first block.
//!
//! I1: every exit is counted exactly once: a direct exit's edge is its
//!     word's count (to its static target, at the end), an indirect exit's
//!     is counted by the second pass in a way of the word, the edge cache
//!     or `edges`, once the next word tells its target, and a syscall's
//!     when its record comes. So for every block, the sum of its outgoing
//!     edges equals its count minus its `PARTIAL` runs, the times it was a
//!     thread's last block, and the indirect exits whose target never came
//!     (`unresolved_exits`: a signal frame or the end of the thread came
//!     first).
//! I2: every guest instruction counted (blocks and `rep` iterations) is
//!     charged to exactly one calling context (calltree.rs I1), the one it
//!     ran in: a word's instructions are charged before the call or return
//!     it ends with moves the thread.
//! I3: the two passes and the general per-word path ([`Tables::entry`],
//!     for path profiling and open Pisat windows) make the same tables.
//!
//! Usage: `tables.process(thread, entries, &block_table)` for each batch a
//! ring hands out, in order; `tables.finish()` once, then read.

use std::collections::BTreeMap;

use hashbrown::HashMap;

mod ahead;
mod ecache;
mod epoch;
mod landing;
mod memo;
mod mine;
mod pass;
mod records;
mod replay;
mod sampling;
mod shadow;
mod snap;
mod special;
mod units;
mod warm;
mod words;

use super::calltree::{CallTree, ROOT};
use super::Request;
use super::{ExitKind, UNIT_BASE};
use crate::anon::UnforkedVec;
use crate::cache::{BlockMeta, BlockTable};
use crate::contract::{block_word, word_block, EXIT_FALL, EXIT_TAKEN, PARTIAL, WORD_LIMIT};
use ecache::EdgeCache;
pub use epoch::{is_retired, EpochEnd, Retired, RETIRED_REF};
pub use mine::Windows;
use shadow::{Frame, Shadow};
use units::UnitOp;
pub use units::{AccountSource, InheritedSb, PassOp, SbAccount, SbExitAcct, SbSummary};
use words::{End, Warm, Ways, Word, WordTable, NONE, SPECIAL, W_BLOCKS, W_INSNS};

/// When the monitor asks for superblocks (superblock/mod.rs).
#[derive(Debug, Clone, Copy)]
pub struct SbConfig {
    pub enabled: bool,
    /// A block entered by a direct transfer this many times.
    pub block_threshold: u32,
    /// An indirect edge taken this many times.
    pub edge_threshold: u32,
    /// `--selector pisat`: windows of the block streams for the second
    /// tier to mine (mine.rs) instead of the thresholds.
    pub windows: Option<Windows>,
}

impl Default for SbConfig {
    fn default() -> Self {
        SbConfig {
            enabled: false,
            block_threshold: u32::MAX,
            edge_threshold: u32::MAX,
            windows: None,
        }
    }
}

impl SbConfig {
    /// Does counting ask for superblocks (the thresholds are live)?
    fn counting(&self) -> bool {
        self.enabled && self.windows.is_none()
    }
}

#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct SyscallStat {
    pub count: u64,
    pub errors: u64,
    pub nanos: u64,
}

/// Per guest thread: its calling context and shadow stack, what it ran,
/// the special word waiting for the next word to tell its target, and a
/// tagged record split across batches.
#[derive(Debug, Clone)]
struct ThreadState {
    shadow: Shadow,
    node: u32,
    /// A word whose indirect end waits for the next exit word (special.rs).
    peek: u32,
    /// The last block that ended in a syscall whose record has not come.
    syscall_from: u32,
    pending: Vec<u32>,
    pending_need: usize,
    /// ECX before and after of the last `TAG_REP` record, and its
    /// instruction (block, offset).
    last_rep: (u32, u32),
    last_rep_at: (u32, u32),
    /// The last exit word taken (the one a `TAG_UNRETIRED` record
    /// corrects, contract I3).
    last_word: u32,
    /// `rep` iterations of the code whose word comes next (contract I3),
    /// charged when it does.
    rep_next: u64,
    /// Instructions charged, block executions and ring entries, so far.
    insns: u64,
    blocks: u64,
    entries: u64,
    /// The first unit of the superblock of the last `TAG_LOOP` record
    /// (NONE: none understood).
    loop_base: u32,
    /// The Pisat window being filled (mine.rs).
    window: mine::Capture,
    /// Where it last returned to each landing site (landing.rs).
    landings: landing::Landings,
    /// The word of an ended id epoch `peek` stands for (epoch.rs I2).
    carry: Option<epoch::Carry>,
}

impl Default for ThreadState {
    fn default() -> Self {
        ThreadState {
            shadow: Shadow::default(),
            node: ROOT,
            peek: NONE,
            syscall_from: NONE,
            pending: Vec::new(),
            pending_need: 0,
            last_rep: (0, 0),
            last_rep_at: (0, 0),
            last_word: NONE,
            rep_next: 0,
            insns: 0,
            blocks: 0,
            entries: 0,
            loop_base: NONE,
            window: mine::Capture::default(),
            landings: landing::Landings::default(),
            carry: None,
        }
    }
}

/// Indirect words' targets beyond their two ways, by word: the word's
/// count when they were taken, and (block, transitions).
type TargetsByWord = HashMap<u32, (u64, Vec<(u32, u64)>)>;

/// [`Tables::targets`]: the edge cache's entries by source word, as of
/// the `entries` count `at` (None: never made), made again once twice as
/// many words came: an estimate for selection, one scan of the cache for
/// many builds (rebuilt at every eighth more words, the scans cost a
/// short python run 8 % of its wall time).
///
/// A word's entries are taken again (one scan of the filled slots)
/// when asked for after it got a slot it had not (`new`), or after it
/// was taken twice as often as when they were taken. A whole index made
/// as a loop started held its rotating calls' third targets with the
/// counts of their first few transitions, or not at all, until twice as
/// many words came: c-qsort's loop was built without them in a third of
/// its runs (a third of its passes looping, 121 M ring words against
/// 6.3 M).
#[derive(Debug, Default)]
struct TargetsIndex {
    at: Option<u64>,
    by_word: TargetsByWord,
    new: hashbrown::HashSet<u32>,
}

/// Exact profile tables, indexed by exit word where dense.
#[derive(Debug)]
pub struct Tables {
    words: WordTable<Word>,
    /// Where each indirect end went (words.rs `Ways`).
    ways: WordTable<Ways>,
    /// Every block with words made (words.rs I2) has an id below this.
    block_hw: usize,
    /// How far published blocks were readied and made ahead (ahead.rs).
    ahead: ahead::Ahead,
    /// Unit words made so far: from UNIT_BASE below this.
    unit_hw: usize,
    /// Guest address of each block with words. Both in memory a fork
    /// does not copy, whose pages come when touched (`anon::UnforkedVec`).
    guests: UnforkedVec<u64>,
    /// Which blocks have their words made (words.rs I2), by id.
    block_made: UnforkedVec<bool>,
    /// Guest address → the latest block there (targets into block ids).
    by_guest: HashMap<u64, u32>,
    /// Per unit from UNIT_BASE on: its superblock.
    unit_sb: Vec<u32>,
    /// The calls and returns of units' paths, each unit's in a row
    /// (`Info::ops_at`, units.rs I1).
    unit_ops: Vec<UnitOp>,
    /// Indirect successors beyond a word's two ways (I1).
    ecache: EdgeCache,
    /// [`Tables::targets`]'s index of the edge cache (`TargetsIndex`).
    targets_index: std::cell::RefCell<TargetsIndex>,
    /// (source block id, target guest address) → transitions evicted from
    /// the edge cache, syscall edges, and at the end everything (I1).
    edges: HashMap<(u32, u64), u64>,
    /// Superblock triggers: each target guest address's slot in
    /// `warm_n`, which counts direct entries into it while its trigger is
    /// open, and holds `u32::MAX` once it fired. A word counting toward a
    /// trigger keeps its slot (`Word::warm_at`): no hashing per entry.
    warm: HashMap<u64, u32>,
    warm_n: Vec<u32>,
    /// Per slot of `warm_n`: its in-words (warm.rs I1).
    warm_in: Vec<u32>,
    /// The second pass's list of special words (pass.rs), kept between
    /// batches.
    specials: Vec<(u32, u64)>,
    /// Balanced units with passes not yet replayed into `tree` (memo.rs).
    memo_words: Vec<u32>,
    tree: CallTree,
    returns: u64,
    /// Returns that did not go back to the shadow stack's top (longjmp, …).
    unmatched_returns: u64,
    /// Indirect jumps into a landing site that unwound the shadow stack
    /// (longjmp, landing.rs).
    unwinding_jumps: u64,
    /// Landing sites and the calls' return addresses (landing.rs).
    watch: landing::Watch,
    /// Indirect exits whose target never came (I1).
    unresolved_exits: u64,
    syscalls: BTreeMap<u64, SyscallStat>,
    syscall_log: Vec<(u64, i64)>,
    pub entries: u64,
    pub(super) max_lag: u64,
    pub(super) waits: u64,
    pub(super) wait_ns: u64,
    max_shadow_depth: usize,
    /// Iterations of `rep` string instructions beyond their first (the
    /// block counts count each such instruction once).
    rep_extra: u64,
    /// The same per instruction: (block, offset from its start), and of
    /// those the iterations that did not retire (a fault inside).
    rep_sites: HashMap<(u32, u32), u64>,
    rep_unretired: HashMap<(u32, u32), u64>,
    /// `unretired` by where: (block, n) = the last n instructions of the
    /// block did not retire, so many times (contract I3: the rest of the
    /// block from where it stopped).
    unretired_at: HashMap<(u32, u32), u64>,
    /// Instructions of blocks that did not retire because the block
    /// stopped early (`TAG_UNRETIRED`); the block counts include them.
    unretired: u64,
    /// Frames built for guest signal handlers (`TAG_SIGNAL`).
    signals: u64,
    threads: Vec<ThreadState>,
    finished: bool,
    sb: SbConfig,
    /// Superblocks asked for since the builder last looked.
    pub requests: Vec<Request>,
    /// Per superblock id: its members, exits and units (units.rs).
    pub sbs: Vec<SbAccount>,
    /// Superblocks a forked child took over, by unit (units.rs I4).
    inherited: Vec<units::Inherited>,
    /// Their accounts, copied when their units are made.
    inherited_from: Option<AccountSource>,
    /// The block table, for making their units.
    inherited_blocks: Option<std::sync::Arc<BlockTable>>,
    /// Inherited superblocks whose units were made (they ran).
    pub adopted: u64,
    /// Ring words naming no block or unit (must stay 0).
    sb_record_errors: u64,
    /// Thread id of each ring, in registration order (filled at the end).
    pub(super) thread_tids: Vec<i32>,
    /// Timed samples of the threads' calling contexts (sampler.rs).
    pub(super) sampler: super::sampler::Sampler,
    /// `--selector pisat`: windows filled, for the second tier to take
    /// (mine.rs).
    windows: Vec<Vec<u32>>,
    /// Path profiling of one function (its collector, a stream hook: hook.rs), when asked for.
    pub(super) paths: Option<Box<dyn super::StreamHook>>,
    /// A superblock counts its loops (contract I2): batches may hold
    /// time-stamped loop records (sampling.rs).
    loops_counted: bool,
    /// `--sb-edge-threshold` while counting asks for superblocks, else
    /// never reached.
    edge_threshold: u64,
    /// The blocks of ended id epochs (epoch.rs).
    retired: Retired,
    /// Superblocks below this id ended with an epoch: their summaries
    /// (epoch.rs I4).
    frozen_upto: usize,
    frozen_sbs: Vec<Option<SbSummary>>,
    /// Use the two passes where they can (tests compare them with the
    /// general path alone, I3).
    fast: bool,
    /// Arm a trigger's single direct in-word (warm.rs; tests compare with
    /// counting every entry).
    arm: bool,
    /// Replay units that come back in bulk (memo.rs; tests compare with
    /// replaying every pass).
    memo: bool,
}

/// The syscall log keeps this many calls; the table counts all.
pub const SYSCALL_LOG_LIMIT: usize = 1 << 20;

impl Default for Tables {
    fn default() -> Self {
        Tables {
            words: WordTable::default(),
            ways: WordTable::default(),
            block_hw: 0,
            ahead: Default::default(),
            unit_hw: UNIT_BASE as usize,
            guests: UnforkedVec::with_capacity(0),
            block_made: UnforkedVec::with_capacity(0),
            by_guest: HashMap::new(),
            unit_sb: Vec::new(),
            unit_ops: Vec::new(),
            ecache: EdgeCache::default(),
            targets_index: Default::default(),
            edges: HashMap::new(),
            warm: HashMap::new(),
            warm_n: Vec::new(),
            warm_in: Vec::new(),
            specials: Vec::new(),
            memo_words: Vec::new(),
            tree: CallTree::default(),
            returns: 0,
            unmatched_returns: 0,
            unwinding_jumps: 0,
            watch: landing::Watch::default(),
            unresolved_exits: 0,
            syscalls: BTreeMap::new(),
            syscall_log: Vec::new(),
            entries: 0,
            max_lag: 0,
            waits: 0,
            wait_ns: 0,
            max_shadow_depth: 0,
            rep_extra: 0,
            rep_sites: HashMap::new(),
            rep_unretired: HashMap::new(),
            unretired_at: HashMap::new(),
            unretired: 0,
            signals: 0,
            threads: Vec::new(),
            finished: false,
            sb: SbConfig::default(),
            requests: Vec::new(),
            sbs: Vec::new(),
            inherited: Vec::new(),
            inherited_from: None,
            inherited_blocks: None,
            adopted: 0,
            sb_record_errors: 0,
            thread_tids: Vec::new(),
            sampler: Default::default(),
            windows: Vec::new(),
            paths: None,
            edge_threshold: u64::MAX,
            loops_counted: false,
            retired: Retired::default(),
            frozen_upto: 0,
            frozen_sbs: Vec::new(),
            fast: true,
            arm: true,
            memo: true,
        }
    }
}

/// The `End` of a block's exit word `k`, and where it goes on.
fn block_end(m: &BlockMeta, k: u32) -> (End, u64, u64) {
    if k == PARTIAL {
        return (End::Partial, 0, 0);
    }
    match (m.exit, k) {
        (ExitKind::Branch, EXIT_TAKEN) => (End::Direct, m.target, 0),
        (ExitKind::Branch, _) => (End::Direct, m.next, 0),
        (_, EXIT_TAKEN) => (End::Direct, 0, 0),
        (ExitKind::Jump | ExitKind::Fallthrough, _) => (End::Direct, m.target, 0),
        (ExitKind::Call, _) => (End::Call, m.target, m.next),
        (ExitKind::IndirectJump, _) => (End::IndirectJump, 0, 0),
        (ExitKind::IndirectCall, _) => (End::IndirectCall, 0, m.next),
        (ExitKind::Return, _) => (End::Return, 0, 0),
        (ExitKind::Syscall, _) => (End::Syscall, m.target, 0),
        (ExitKind::Trap, _) => (End::Direct, 0, 0),
    }
}

impl Tables {
    /// The monitor starts with blocks already published (a forked
    /// child's): it will meet them far apart (words.rs I4).
    pub fn meets_blocks_apart(&mut self) {
        self.words.set_sparse();
        self.ways.set_sparse();
    }

    /// Tables that ask for superblocks as `sb` says.
    pub fn new(mut sb: SbConfig) -> Tables {
        // Windows only for a second tier that builds.
        sb.windows = sb.windows.filter(|_| sb.enabled);
        Tables {
            sb,
            edge_threshold: if sb.counting() {
                u64::from(sb.edge_threshold)
            } else {
                u64::MAX
            },
            ..Tables::default()
        }
    }

    /// Execution count of block `id` (its runs to either exit, and
    /// stopped inside).
    pub fn count(&self, id: usize) -> u64 {
        if !self.block_made(id) {
            return 0;
        }
        (0..3)
            .map(|k| self.words[block_word(id as u32, k)].n())
            .sum()
    }

    /// Count of exit word `w` (a unit's passes that ended at its exit).
    fn word_count(&self, w: u32) -> u64 {
        self.words[w].n()
    }

    /// Make block `id`'s words (words.rs I2) if it has none yet and the
    /// block table has it: blocks get words when the monitor first sees
    /// one, not when they are translated (a forked child inherits every
    /// translation of its parent and runs few of them).
    fn make_block(&mut self, id: u32, table: &[BlockMeta]) {
        let Some(m) = table.get(id as usize) else {
            return;
        };
        let i = id as usize;
        if self.block_made(i) {
            return;
        }
        if self.guests.len() <= i {
            // To every block the table has: fresh zeroed memory, whose
            // pages come when touched (a forked child meets its parent's
            // blocks far apart: growing a step at a time zeroed and copied
            // 300 KB of a python child's, a tenth of its monitor's time;
            // `vec![0; n]`, once malloc's mmap threshold had risen, took
            // the memory from the heap and wrote all of it: 0.4 ms of a
            // python child that writes its profile).
            let n = (i + 1).max(table.len()).max(2 * self.guests.len());
            // SAFETY: zero is a valid u64 and a valid bool.
            let mut guests = unsafe { UnforkedVec::<u64>::zeroed(n) };
            guests[..self.guests.len()].copy_from_slice(&self.guests);
            self.guests = guests;
            // SAFETY: as above.
            let mut made = unsafe { UnforkedVec::<bool>::zeroed(n) };
            made[..self.block_made.len()].copy_from_slice(&self.block_made);
            self.block_made = made;
            if !self.words.sparse() {
                // Read before written, out of order after a plan (kept K6):
                // no zero page, write fault and TLB shoot-down a page.
                self.guests.populate();
                self.block_made.populate();
            }
        }
        self.ready_published(table.len());
        self.guests[i] = m.guest;
        self.block_made[i] = true;
        if matches!(m.exit, ExitKind::Call | ExitKind::IndirectCall) {
            self.note_call_site(m.next);
        }
        // The latest block at an address is the one with the highest id.
        let latest = self.by_guest.entry(m.guest).or_insert(id);
        *latest = (*latest).max(id);
        let triggers = self.sb.counting();
        let weight = u64::from(m.insns) | 1 << W_BLOCKS;
        self.words.ready(block_word(id, 0));
        self.ways.ready(block_word(id, 0));
        for k in 0..3 {
            let (end, target, ret) = block_end(m, k);
            let slot = if triggers {
                self.open_trigger(end, target)
            } else {
                None
            };
            let w = block_word(id, k);
            let (warm, count, ret) = match slot {
                Some(s) => self.join_trigger(s, w, end, true, ret),
                None if end.special() => (Warm::No, SPECIAL, ret),
                None => (Warm::No, 0, ret),
            };
            self.words[w] = Word {
                count,
                weight,
                end,
                warm,
                warm_at: slot.unwrap_or(0),
                first: id,
                last: id,
                target,
                ret,
                ..Word::default()
            };
            self.ways[w] = Ways::EMPTY;
        }
        self.block_hw = self.block_hw.max(i + 1);
    }

    /// Does block `id` have its words made? Cheaper than [`Tables::made`]
    /// for the many blocks a forked child never meets: no page of the
    /// word table is touched.
    #[inline]
    fn block_made(&self, id: usize) -> bool {
        self.block_made.get(id).is_some_and(|&m| m)
    }

    /// Does word `w` have its entry made? Made words weigh at least one
    /// block; the tables' untouched entries are zero (words.rs I1, I2).
    #[inline(always)]
    fn made(&self, w: u32) -> bool {
        // A block's three words are made together (make_block), its
        // fourth never: the dense list answers without touching the
        // entry's page (words.rs I4).
        if w < UNIT_BASE {
            return w & 3 != 3 && self.block_made((w >> 2) as usize);
        }
        (w as usize) < WORD_LIMIT as usize && self.words[w].weight != 0
    }

    /// A ring word without entries: a block the monitor sees for the
    /// first time (block table I1: a ring only holds published ids), or
    /// nothing hotlift made (counted, and skipped).
    #[cold]
    #[inline(never)]
    fn admit(&mut self, w: u32, blocks: &BlockTable) -> bool {
        if w < UNIT_BASE && w & 3 != 3 {
            self.make_block(w >> 2, blocks.published());
            if self.made(w) {
                return true;
            }
        } else if w >= UNIT_BASE && self.adopt(w) && self.made(w) {
            return true;
        }
        self.sb_record_errors += 1;
        false
    }

    /// The guest address of block `b`'s code.
    #[inline(always)]
    fn guest(&self, b: u32) -> u64 {
        self.guests.get(b as usize).copied().unwrap_or(0)
    }

    /// The latest block at guest address `g`, if any (NONE).
    fn block_at(&self, g: u64) -> u32 {
        self.by_guest.get(&g).copied().unwrap_or(NONE)
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

    /// What a monitor record checks its replay against (trace.rs I1).
    pub fn totals(&self) -> super::trace::Totals {
        let (insns, blocks) = self.threads.iter().fold((0u64, 0u64), |(i, b), st| {
            (i.wrapping_add(st.insns), b + st.blocks)
        });
        super::trace::Totals {
            entries: self.entries,
            returns: self.returns,
            insns,
            blocks,
        }
    }

    /// Block `id`'s successors seen so far: a branch's two sides (taken
    /// first), another block's one target, or the first two targets an
    /// indirect exit had, by block id (NONE: not taken yet, not
    /// translated, or none), each with its count, and the block's own
    /// count (superblock trees, select/shape.rs).
    pub fn successors(&self, id: u32) -> Option<([(u32, u64); 2], u64)> {
        if !self.block_made(id as usize) {
            return None;
        }
        let total = self.count(id as usize);
        // A side counts once it was taken.
        let way = |k: u32| {
            let w = block_word(id, k);
            let (target, n) = (self.words[w].target, self.word_count(w));
            let to = if target != 0 && n > 0 {
                self.block_at(target)
            } else {
                NONE
            };
            (to, if to == NONE { 0 } else { n })
        };
        let fall = block_word(id, EXIT_FALL);
        let ways = if self.words[fall].end.indirect() {
            let w = &self.ways[fall];
            [(w.to[0], w.n[0]), (w.to[1], w.n[1])]
        } else {
            [way(EXIT_TAKEN), way(EXIT_FALL)]
        };
        Some((ways, total))
    }

    /// The targets an indirect exit of block `id` went to, by block id,
    /// most frequent first, each with its count (its two ways and what
    /// the edge cache holds for it: an estimate, for superblock selection,
    /// select/shape.rs), and the block's own count; None for a block that
    /// does not end in an indirect transfer.
    pub fn targets(&self, id: u32) -> Option<(Vec<(u32, u64)>, u64)> {
        if !self.block_made(id as usize) {
            return None;
        }
        let fall = block_word(id, EXIT_FALL);
        if !self.words[fall].end.indirect() {
            return None;
        }
        let w = &self.ways[fall];
        let mut out: Vec<(u32, u64)> = (0..2)
            .filter(|&k| w.to[k] != NONE && w.n[k] > 0)
            .map(|k| (w.to[k], w.n[k]))
            .collect();
        // The edge cache holds a word's transitions only once both its
        // ways are taken.
        if w.to[1] != NONE {
            let mut index = self.targets_index.borrow_mut();
            if index.at.is_none_or(|at| self.entries > 2 * at.max(1 << 16)) {
                let mut by_word = TargetsByWord::new();
                for slot in self.ecache.entries() {
                    if slot.n > 0 {
                        let (_, v) = by_word
                            .entry(slot.p)
                            .or_insert_with(|| (self.words[slot.p].n(), Vec::new()));
                        v.push((slot.e, slot.n));
                    }
                }
                *index = TargetsIndex {
                    at: Some(self.entries),
                    by_word,
                    new: Default::default(),
                };
            } else {
                // Its entries again if they are stale (`TargetsIndex`).
                let count = self.words[fall].n();
                let then = index.by_word.get(&fall).map(|e| e.0);
                let grown = then.is_some_and(|c| count > 2 * c.max(1 << 10));
                if index.new.remove(&fall) || grown {
                    let now = self.ecache.entries().filter(|s| s.p == fall && s.n > 0);
                    let now = now.map(|s| (s.e, s.n)).collect();
                    index.by_word.insert(fall, (count, now));
                }
            }
            for &(e, n) in index.by_word.get(&fall).map(|e| &e.1).into_iter().flatten() {
                if !out.iter().any(|t| t.0 == e) {
                    out.push((e, n));
                }
            }
        }
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Some((out, self.count(id as usize)))
    }

    /// The most frequent successor of block `id` among its two ways, that
    /// successor's transition count, and the block's own count.
    pub fn hottest(&self, id: u32) -> Option<(u32, u64, u64)> {
        let (ways, total) = self.successors(id)?;
        let w = usize::from(ways[1].1 > ways[0].1);
        (ways[w].0 != NONE).then_some((ways[w].0, ways[w].1, total))
    }

    /// Every transition counted: (source block id, target guest address)
    /// → count. Complete only after [`Tables::finish`].
    pub fn edges(&self) -> &HashMap<(u32, u64), u64> {
        &self.edges
    }

    /// After the last batch: the words still waiting for a target stay
    /// unresolved (I1), what each thread has not charged is charged (I2),
    /// and every word's exits go into `edges`.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.disarm_all();
        let mut threads = std::mem::take(&mut self.threads);
        for st in &mut threads {
            self.resolve(st, NONE);
            // `rep` iterations of code whose word never came (the thread
            // was killed inside it) ran all the same.
            let extra = std::mem::take(&mut st.rep_next);
            self.charge(st, extra);
        }
        self.threads = threads;
        // memo.rs I2.
        self.replay_memos();
        self.settle_words();
    }

    /// Every word with its entry made: the blocks' and the units'. Units
    /// of inherited superblocks that never ran were never made (units.rs
    /// I4): their entries are untouched memory, and stay so.
    fn made_words(&self) -> Vec<u32> {
        let blocks = (0..self.block_hw as u32).filter(|&b| self.block_made(b as usize));
        let block_words = blocks.flat_map(|b| (0..3).map(move |k| block_word(b, k)));
        let units = (UNIT_BASE..self.unit_hw as u32)
            .filter(|&u| self.unit_sb.get((u - UNIT_BASE) as usize) != Some(&u32::MAX));
        block_words.chain(units).collect()
    }

    /// `n` transitions from word `p` into block `e` (I1).
    fn add_edge(&mut self, p: u32, e: u32, n: u64) {
        let key = (self.words[p].last, self.guest(e));
        *self.edges.entry(key).or_insert(0) += n;
    }

    /// The blocks `p` went on to directly (a branch's sides, a jump's
    /// target) or was seen to go on to (indirect), for Pisat's admission
    /// rule (superblock/pisat/round.rs I1).
    pub fn successor_blocks(&self, p: u32) -> [u32; 2] {
        self.successors(p)
            .map_or([NONE; 2], |(w, _)| [w[0].0, w[1].0])
    }
}

/// A word's instructions (the low half of its weight).
fn insns_of(weight: u64) -> u64 {
    weight & W_INSNS
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

/// The block and exit of a word below `UNIT_BASE` (tests and Pisat).
#[allow(dead_code)]
fn split(w: u32) -> (u32, u32) {
    word_block(w)
}

/// A block table of a loop of `n` blocks for tests: block i branches to
/// i + 1 or i + 2.
#[cfg(test)]
pub(crate) fn loop_table(n: u64) -> BlockTable {
    let t = BlockTable::new(64).unwrap();
    for i in 0..n {
        t.push_meta(BlockMeta {
            guest: 0x1000 + 16 * i,
            target: 0x1000 + 16 * ((i + 1) % n),
            next: 0x1000 + 16 * ((i + 2) % n),
            guest_len: 16,
            insns: 4,
            exit: ExitKind::Branch,
        });
    }
    t
}

/// The generator of the property tests of the per-entry loops.
#[cfg(test)]
pub(super) type TestRng = crate::test_rng::Seeded;

#[cfg(test)]
mod tests;
