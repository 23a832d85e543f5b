//! The per-entry loop (tables I2, I3): a batch piece in segments between
//! tagged records, each taken in two passes, or word by word where the
//! words must be seen one at a time (path profiling, an open Pisat
//! window).
//!
//! The first pass ([`first_pass`]) is branch-free over the words it takes:
//! it adds one to each word's count and its weight to a running sum, and
//! writes every word's position with the sum after it to a list, whose
//! length grows only for special words (words.rs I3). It stops before a
//! tagged word, a word without entries, or after `MAX_SEGMENT` words
//! (so a sum's instructions stay within 32 bits). The second pass
//! ([`Tables::special`]) takes the list in order.
//!
//! Measured on this project's 2-vCPU VM (AMD EPYC, 2026-11): the first
//! pass costs about 2 ns a word with its table in L1/L2, the old per-word
//! loop (compare with two cached successors, count, thresholds) 7-9 ns.
#![allow(unsafe_code)]

use super::words::{Warm, Word, SPECIAL};
use super::{Tables, ThreadState};
use crate::cache::BlockTable;
use crate::contract::{TAG, WORD_LIMIT};

/// Most words one segment takes (first pass sums stay below 2^32
/// instructions: a word stands for at most 2^16).
const MAX_SEGMENT: usize = 1 << 15;

/// The first pass over `words` (module docs): how many it took, and the
/// running weight sum after them; `specials` gets (position, sum after
/// the word) of each special word.
#[inline(never)]
fn first_pass(
    hot: *mut Word,
    words: &[u32],
    mut sum: u64,
    specials: &mut Vec<(u32, u64)>,
) -> (usize, u64) {
    let words = &words[..words.len().min(MAX_SEGMENT)];
    specials.clear();
    specials.reserve(words.len());
    let list = specials.as_mut_ptr();
    let mut n = 0usize;
    let mut i = 0usize;
    while i < words.len() {
        let w = words[i];
        // Tagged records are above the table too.
        if w >= WORD_LIMIT {
            break;
        }
        // SAFETY: `w` is inside the table (checked just above), and
        // `list` has room for one entry per word of the segment.
        unsafe {
            let h = &mut *hot.add(w as usize);
            let weight = h.weight;
            // A word without entries (words.rs I2) ends the segment.
            if weight == 0 {
                break;
            }
            let c = h.count;
            h.count = c + 1;
            sum += weight;
            list.add(n).write((i as u32, sum));
            n += (c >> 63) as usize;
        }
        i += 1;
    }
    // SAFETY: the first n entries were written above.
    unsafe { specials.set_len(n) };
    (i, sum)
}

impl Tables {
    /// The per-entry loop over a piece of a batch of thread `t`
    /// (sampling.rs cuts batches where samples fall).
    pub(super) fn process_entries(&mut self, t: usize, entries: &[u32], blocks: &BlockTable) {
        if self.threads.len() <= t {
            self.threads.resize(t + 1, ThreadState::default());
        }
        let mut st = std::mem::take(&mut self.threads[t]);
        if self.sb.windows.is_some() {
            self.window_turn(&mut st);
        }
        if let Some(p) = self.paths.as_deref_mut() {
            p.set_thread(t);
        }
        self.entries += entries.len() as u64;
        st.entries += entries.len() as u64;
        // Path profiling sees every word: the general path only. Pisat's
        // windows see every block while one is open (mine.rs I1).
        let fast = self.fast && self.paths.is_none();
        // The special-word list lives on in the tables: a fresh one per
        // batch was a half-megabyte allocation (an mmap) each time.
        let mut specials = std::mem::take(&mut self.specials);
        let mut i = 0;
        while i < entries.len() {
            let w = entries[i];
            if w & TAG != 0 || st.pending_need > 0 {
                st.window.tick();
                self.record_word(&mut st, w);
                i += 1;
                continue;
            }
            if !self.made(w) && !self.admit(w, blocks) {
                i += 1;
                continue;
            }
            let (quiet, units_only) = st.window.quiet();
            if !fast || units_only || quiet == 0 {
                self.entry(&mut st, w);
                i += 1;
                continue;
            }
            let end = entries
                .len()
                .min(i.saturating_add(usize::try_from(quiet).unwrap_or(usize::MAX)));
            let n = self.segment(&mut st, &entries[i..end], &mut specials);
            st.window.skip(n as u64);
            i += n;
        }
        if self.sb.windows.is_some() {
            self.window_turn(&mut st);
        }
        self.specials = specials;
        self.threads[t] = st;
    }

    /// Both passes over the words at the start of `words` (module docs):
    /// how many they took (at least one: the first word has entries).
    fn segment(
        &mut self,
        st: &mut ThreadState,
        words: &[u32],
        specials: &mut Vec<(u32, u64)>,
    ) -> usize {
        let hot = self.words.as_mut_ptr();
        let (n, sum) = first_pass(hot, words, 0, specials);
        // The code of the segment's first word is where a word waiting for
        // its target went.
        self.resolve(st, self.words[words[0]].first);
        // `rep` iterations of the first word's code.
        let rep = std::mem::take(&mut st.rep_next);
        self.charge(st, rep);
        let charged = self.second_pass(st, &words[..n], specials);
        self.charge_weight(st, sum - charged);
        st.last_word = words[n - 1];
        n
    }

    /// The second pass over `specials` of the segment `seg` (module docs):
    /// how much of the segment's weight sum it charged. The common cases
    /// (a call, a return to the shadow stack's top, an indirect transfer
    /// along a way or counted in the edge cache's slot it has already,
    /// into a context the caller has cached) with the
    /// thread's state in locals; anything else through [`Tables::special`].
    fn second_pass(&mut self, st: &mut ThreadState, seg: &[u32], specials: &[(u32, u64)]) -> u64 {
        use super::words::{End, NONE, W_BLOCKS, W_INSNS};
        let mut charged = 0u64;
        let words = self.words.as_mut_ptr();
        let ways = self.ways.as_mut_ptr();
        let threshold = self.edge_threshold;
        for &(at, after) in specials {
            let at = at as usize;
            let w = seg[at];
            let next = seg.get(at + 1).copied();
            // SAFETY: `w` and `next` are words of the segment, which the
            // first pass took only with entries (words.rs I2).
            let word = unsafe { &*words.add(w as usize) };
            let (e, rare) = (word.end, (word.warm != Warm::No) | (word.ops_n > 0));
            let common = !rare
                && (e == End::Call || e.plain_indirect() && next.is_some())
                && st.shadow.len() < st.shadow.capacity();
            if !common {
                charged = self.special(st, w, after, charged, next);
                continue;
            }
            if e.has(End::MOVES) {
                let d = after - charged;
                charged = after;
                st.blocks += d >> W_BLOCKS;
                let ins = d & W_INSNS;
                st.insns = st.insns.wrapping_add(ins);
                self.tree.charge(st.node, ins);
            }
            if e == End::Call {
                self.call(st, word.ret, word.target);
                continue;
            }
            // An indirect end, and its target's code is next.
            // SAFETY: as above.
            let to = unsafe { (*words.add(next.unwrap_or(0) as usize)).first };
            // SAFETY: `w` has entries (words.rs I2).
            let way = unsafe { &mut *ways.add(w as usize) };
            let n = if let Some(n) = way.hit(to) {
                n
            } else if way.to[1] != NONE {
                self.edge_count(w, to)
            } else {
                st.peek = w;
                self.resolve(st, to);
                continue;
            };
            if n == threshold {
                self.edge_trigger(w, to, n);
            }
            if e.has(End::CALL) {
                let g = self.guest(to);
                self.call(st, word.ret, g);
            } else if e.has(End::RET) {
                let g = self.guest(to);
                self.ret(st, g);
            }
        }
        charged
    }

    /// The general path: one exit word `w` (with entries), as the two
    /// passes take it (tables I3).
    pub(super) fn entry(&mut self, st: &mut ThreadState, w: u32) {
        st.last_word = w;
        self.resolve(st, self.words[w].first);
        let rep = std::mem::take(&mut st.rep_next);
        self.charge(st, rep);
        let h = &mut self.words[w];
        let special = h.count & SPECIAL != 0;
        h.count += 1;
        let weight = h.weight;
        if special {
            let charged = self.special(st, w, weight, 0, None);
            self.charge_weight(st, weight - charged);
        } else {
            self.charge_weight(st, weight);
        }
        let (block, unit) = (w < crate::contract::UNIT_BASE, self.words[w].unit);
        if block && !unit {
            st.window.push(w >> 2);
            if let Some(paths) = self.paths.as_deref_mut() {
                paths.block(self.guests[(w >> 2) as usize], w >> 2);
            }
        } else {
            st.window.tick();
            if let Some(paths) = self.paths.as_deref_mut() {
                paths.other();
            }
        }
    }
}
