//! Id epochs: block ids used again. A guest that makes code for ever (a
//! JIT rewriting its functions) would otherwise grow every table indexed
//! by block id, and stop at the ring's limit on ids (contract
//! `BLOCK_ID_LIMIT`). When the dispatcher ends an epoch (dispatch/epoch.rs:
//! every guest thread out of translated code, every translation dropped,
//! no new block id given yet), the monitor drains every ring, then folds
//! what it knows by block id into [`Retired`], merged by what each block
//! is (its [`BlockMeta`] and the image it was in), and starts its tables
//! by id afresh. Everything else (the calling-context tree, the threads'
//! shadow stacks, syscalls, totals, the sampler) goes on untouched.
//!
//! I1: a fold happens after the monitor took every word pushed before the
//!     epoch ended (no word of a dropped translation comes later: their
//!     code is gone) and before any block of the next epoch is published.
//!     So every word it takes before the fold names an old block, every
//!     word after it a new one.
//! I2: what a thread's state still names of an old block, because its
//!     word's follow-up comes in the next epoch, names its retired entry
//!     instead: a word waiting for its target ([`CARRIED`], the thread's
//!     `carry`), a syscall's block (`syscall_from`), the code of a partial
//!     word and of a `rep` instruction (`last_word`, `last_rep_at`): a
//!     block id with [`RETIRED_REF`] set is entry `id & !RETIRED_REF` of the
//!     retired table. The maps keyed by block id (`edges`, `rep_unretired`,
//!     `unretired_at`) may hold such keys; the next fold and the profile
//!     read them as entries.
//! I3: the fold is exact: every count, edge, `rep` and unretired
//!     instruction of the old blocks lands in exactly one entry, as the
//!     end would have aggregated it by guest address (tests/epoch.rs runs
//!     the same walk with and without epochs at random points).
//! I4: superblocks do not outlive an epoch (their code was dropped): their
//!     summaries are kept as they were ([`Tables::sb_summary`]), their units
//!     numbered afresh.
//! I5: `--selector pisat`'s windows lose the old ids they hold (an open
//!     window goes on with the new epoch's); the miner starts afresh
//!     (superblock/pisat `Miner::epoch`).
//! I6: the stream hook (hook.rs; path profiling's collector) is told at
//!     the fold, with the old blocks: what it kept by id it names by what
//!     the block was (paths/collect.rs I3).

use hashbrown::HashMap;

use super::words::{End, WordTable, NONE};
use super::{SbSummary, Tables, ThreadState};
use crate::cache::BlockMeta;
use crate::contract::UNIT_BASE;

/// A block id naming a retired entry (I2).
pub const RETIRED_REF: u32 = 1 << 31;
/// `ThreadState::peek` of a word from an ended epoch waiting for its
/// target (I2): what it needs is in the thread's `carry`.
pub(super) const CARRIED: u32 = NONE - 1;

/// Does `id` (not [`NONE`]) name a retired entry (I2)?
#[inline]
pub fn is_retired(id: u32) -> bool {
    id != NONE && id & RETIRED_REF != 0
}

/// A word of an ended epoch waiting for its target (I2).
#[derive(Debug, Clone)]
pub(super) struct Carry {
    pub end: End,
    pub ret: u64,
    /// Its block's retired entry.
    pub from: u32,
}

/// The blocks of ended id epochs, each entry every old block with the
/// same meta in the same image (module docs).
#[derive(Debug, Default, Clone)]
pub struct Retired {
    pub metas: Vec<BlockMeta>,
    /// The image log index of each entry's image (`u32::MAX`: none).
    pub images: Vec<u32>,
    index: HashMap<(BlockMeta, u32), u32>,
    /// Executions (runs to either exit, and stopped inside).
    pub counts: Vec<u64>,
    /// (entry, target guest address) → transitions.
    pub edges: HashMap<(u32, u64), u64>,
    /// (entry, offset) → `rep` iterations beyond the first, and those
    /// that did not retire.
    pub rep_sites: HashMap<(u32, u32), u64>,
    pub rep_unretired: HashMap<(u32, u32), u64>,
    /// (entry, n) → times its last n instructions did not retire.
    pub unretired_at: HashMap<(u32, u32), u64>,
    /// Epochs ended.
    pub epochs: u64,
}

impl Retired {
    /// The entry of a block like `m` in image `image`, made if new.
    pub fn entry(&mut self, m: BlockMeta, image: u32) -> u32 {
        let next = self.metas.len() as u32;
        *self.index.entry((m, image)).or_insert_with(|| {
            self.metas.push(m);
            self.images.push(image);
            self.counts.push(0);
            next
        })
    }

    /// The entry of a block like `m` in image `image`, if there is one.
    pub fn find(&self, m: BlockMeta, image: u32) -> Option<u32> {
        self.index.get(&(m, image)).copied()
    }

    /// Is there nothing (no epoch ended)?
    pub fn is_empty(&self) -> bool {
        self.metas.is_empty()
    }
}

/// What a fold needs of the ending epoch (dispatch/epoch.rs): its blocks,
/// and the image of each (`u32::MAX`: none).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct EpochEnd {
    pub metas: Vec<BlockMeta>,
    pub images: Vec<u32>,
}

impl Tables {
    /// Fold the ending epoch's blocks into the retired table and start the
    /// tables by id afresh (module docs). The caller drained every ring
    /// first (I1).
    pub fn end_epoch(&mut self, end: &EpochEnd) {
        // ahead.rs A2: none of the ending epoch's blocks made again.
        self.ahead.fence();
        // As the end would: armed triggers count plainly, memos are
        // replayed, every word's exits and the units' member runs go to
        // `edges` and the blocks' words (I3).
        self.disarm_all();
        self.replay_memos();
        self.settle_words();
        // I4: the superblocks' summaries as they are now.
        let frozen: Vec<Option<SbSummary>> = (0..self.sbs.len() as u32)
            .map(|i| self.sb_summary(i))
            .collect();
        self.frozen_sbs = frozen;
        let mut entry_of = vec![NONE; self.block_hw];
        let mut entry = |r: &mut Retired, id: u32| -> u32 {
            if is_retired(id) {
                return id & !RETIRED_REF;
            }
            let i = id as usize;
            if entry_of.len() <= i {
                entry_of.resize(i + 1, NONE);
            }
            if entry_of[i] == NONE {
                let m = end.metas.get(i).copied().unwrap_or_default();
                let image = end.images.get(i).copied().unwrap_or(u32::MAX);
                entry_of[i] = r.entry(m, image);
            }
            entry_of[i]
        };
        let mut r = std::mem::take(&mut self.retired);
        for id in 0..self.block_hw as u32 {
            if self.block_made(id as usize) {
                let e = entry(&mut r, id);
                r.counts[e as usize] += self.count(id as usize);
            }
        }
        for ((src, to), c) in std::mem::take(&mut self.edges) {
            let e = entry(&mut r, src);
            *r.edges.entry((e, to)).or_insert(0) += c;
        }
        for ((b, off), c) in std::mem::take(&mut self.rep_sites) {
            let e = entry(&mut r, b);
            *r.rep_sites.entry((e, off)).or_insert(0) += c;
        }
        for ((b, off), c) in std::mem::take(&mut self.rep_unretired) {
            let e = entry(&mut r, b);
            *r.rep_unretired.entry((e, off)).or_insert(0) += c;
        }
        for ((b, n), c) in std::mem::take(&mut self.unretired_at) {
            let e = entry(&mut r, b);
            *r.unretired_at.entry((e, n)).or_insert(0) += c;
        }
        // I2: what the threads still name.
        let mut threads = std::mem::take(&mut self.threads);
        for st in &mut threads {
            self.carry_thread(st, &mut r, &mut entry);
            // I5: Pisat's windows name old ids.
            st.window.epoch();
        }
        self.threads = threads;
        self.windows.clear();
        // I6: the stream hook's ids.
        if let Some(h) = self.paths.as_mut() {
            h.epoch(&end.metas);
        }
        r.epochs += 1;
        self.retired = r;
        self.forget_ids();
    }

    /// I2 for one thread.
    fn carry_thread(
        &self,
        st: &mut ThreadState,
        r: &mut Retired,
        entry: &mut impl FnMut(&mut Retired, u32) -> u32,
    ) {
        let block_of = |w: u32| -> Option<u32> {
            if w == NONE || w == CARRIED || is_retired(w) {
                None
            } else if w < UNIT_BASE {
                Some(w >> 2)
            } else {
                // A unit's block: its superblock's member (the fold keeps
                // no units, I4).
                let sb = self.unit_sb.get((w - UNIT_BASE) as usize)?;
                let a = self.sbs.get(*sb as usize)?;
                let k = (w - a.unit_base) as usize;
                a.members.get(k.checked_sub(a.exits.len())?).copied()
            }
        };
        if st.peek != NONE && st.peek != CARRIED {
            let w = st.peek;
            let i = &self.words[w];
            let (end, ret, last) = (i.end, i.ret, i.last);
            st.carry = Some(Carry {
                end,
                ret,
                from: entry(r, last),
            });
            st.peek = CARRIED;
        }
        if st.syscall_from != NONE && !is_retired(st.syscall_from) {
            st.syscall_from = RETIRED_REF | entry(r, st.syscall_from);
        }
        st.last_word = match block_of(st.last_word) {
            Some(b) => RETIRED_REF | entry(r, b),
            None if is_retired(st.last_word) => st.last_word,
            None => NONE,
        };
        let (b, off) = st.last_rep_at;
        if self.block_made(b as usize) {
            st.last_rep_at = (RETIRED_REF | entry(r, b), off);
        }
        // The superblock of its last loop record is gone (I4).
        st.loop_base = NONE;
    }

    /// The words' exits into `edges` and the units' member runs into the
    /// blocks' words (I3; what [`Tables::finish`] does after the threads).
    pub(super) fn settle_words(&mut self) {
        for w in self.made_words() {
            let (n, i) = (self.word_count(w), self.words[w]);
            if (i.end == End::Direct || i.end == End::Call) && i.target != 0 && n > 0 {
                *self.edges.entry((i.last, i.target)).or_insert(0) += n;
            } else if i.end.indirect() {
                let ways = self.ways[w];
                for k in 0..2 {
                    if ways.to[k] != NONE && ways.n[k] > 0 {
                        self.add_edge(w, ways.to[k], ways.n[k]);
                    }
                }
            }
        }
        let ecache = std::mem::take(&mut self.ecache);
        for slot in ecache.entries() {
            self.add_edge(slot.p, slot.e, slot.n);
        }
        self.expand_units();
    }

    /// Everything indexed by block id or exit word, afresh (the fold took
    /// what it held).
    fn forget_ids(&mut self) {
        self.words = WordTable::default();
        self.ways = WordTable::default();
        self.block_hw = 0;
        self.unit_hw = UNIT_BASE as usize;
        self.guests = crate::anon::UnforkedVec::with_capacity(0);
        self.block_made = crate::anon::UnforkedVec::with_capacity(0);
        self.by_guest = HashMap::new();
        self.unit_sb = Vec::new();
        self.unit_ops = Vec::new();
        self.ecache = Default::default();
        self.targets_index = Default::default();
        self.warm = HashMap::new();
        self.warm_n = Vec::new();
        self.warm_in = Vec::new();
        self.specials.clear();
        self.memo_words.clear();
        self.requests.clear();
        self.watch.forget_words();
        self.inherited = Vec::new();
        self.inherited_from = None;
        self.inherited_blocks = None;
        self.windows.clear();
        // I4: the superblocks so far keep their summaries, not their
        // accounts' lists.
        self.frozen_upto = self.sbs.len();
        for a in &mut self.sbs {
            *a = Default::default();
        }
    }

    /// A word of an ended epoch waiting for its target went to block `to`
    /// (I2; [`Tables::resolve`] for a carried word).
    #[cold]
    #[inline(never)]
    pub(super) fn resolve_carried(&mut self, st: &mut ThreadState, to: u32) {
        let Some(c) = st.carry.take() else {
            return;
        };
        if to == NONE {
            self.unresolved_exits += 1;
            if c.end.has(End::CALL) {
                let node = st.node;
                self.push_frame(st, c.ret, node);
            } else if c.end.has(End::RET) {
                self.ret(st, 0);
            }
            return;
        }
        let guest = self.guest(to);
        *self.retired.edges.entry((c.from, guest)).or_insert(0) += 1;
        // As the word's own transition would have marked it (landing.rs
        // I1): its target's block is new to it, as after any flush (the
        // block there now has an id the word never went to).
        let end = self.first_sight(c.end, guest);
        if end.has(End::CALL) {
            self.call(st, c.ret, guest);
        } else if end.has(End::RET) {
            self.ret(st, guest);
            if end.has(End::LANDS) {
                self.returned(st, guest);
            }
        } else if end.has(End::LANDS) {
            self.unwind_landing(st, guest);
        }
    }

    /// The syscall of retired entry `e`'s block came back: its edge to
    /// where the block goes on (records.rs).
    #[cold]
    pub(super) fn retired_syscall_edge(&mut self, e: u32) {
        let next = self.retired.metas.get(e as usize).map_or(0, |m| m.target);
        *self.retired.edges.entry((e, next)).or_insert(0) += 1;
    }
}
