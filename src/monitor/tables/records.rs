//! Tagged records (contract): syscalls, `rep` iterations, instructions that
//! did not retire, signal frames, counted loops, path probes.

use super::words::NONE;
use super::{rep_steps, Tables, ThreadState, SYSCALL_LOG_LIMIT};
use crate::contract::{
    record_words, LOOP_PASSES_MASK, LOOP_PASSES_N, NR_MASK, REP_MASK, REP_OFFSET, TAG_LOOP,
    TAG_LOOP_PASSES, TAG_PATH, TAG_REP, TAG_SIGNAL, TAG_SIGRETURN, TAG_SYSCALL, TAG_UNRETIRED,
    TAG_UNRETIRED_REP, UNIT_BASE,
};

impl Tables {
    /// A word of a tagged record (or its first word).
    pub(super) fn record_word(&mut self, st: &mut ThreadState, e: u32) {
        if st.pending_need == 0 {
            if e == TAG_SIGRETURN {
                // The context the handler returns to follows nothing: a
                // word still waiting for its target does not get one.
                if let Some(p) = self.paths.as_deref_mut() {
                    p.marker();
                }
                self.resolve(st, NONE);
                return;
            }
            if e & LOOP_PASSES_MASK == TAG_LOOP_PASSES {
                self.loop_passes(st, e);
                return;
            }
            st.pending.push(e);
            st.pending_need = record_words(e);
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
            if rec[0] & 0xf000_0000 == TAG_PATH {
                p.record(rec);
                return;
            }
            if matches!(rec[0], TAG_UNRETIRED | TAG_UNRETIRED_REP) || rec[0] & !0xff == TAG_SIGNAL {
                p.marker();
            }
        }
        if rec[0] & REP_MASK == TAG_REP {
            // Single-stepping counts each iteration; RCX = 0 still counts
            // the instruction once. The code it ran in has its word next
            // (contract I3); the instruction is `rec[1]`'s block's at the
            // tag's offset.
            let (before, after) = (rec[2], rec[3]);
            let extra = rep_steps(before, after) - 1;
            self.rep_extra += extra;
            let at = (rec[1] >> 2, rec[0] & REP_OFFSET);
            if extra > 0 {
                *self.rep_sites.entry(at).or_default() += extra;
            }
            st.rep_next += extra;
            st.last_rep = (before, after);
            st.last_rep_at = at;
            return;
        }
        if rec[0] == TAG_LOOP {
            self.loop_record(st, rec);
            return;
        }
        if rec[0] == TAG_UNRETIRED {
            // Of the code of the word before (I3), in the context it ran in:
            // the last n instructions of its block.
            let n = u64::from(rec[1]);
            self.unretired += n;
            self.unretired_in(st, rec[1]);
            self.charge(st, n.wrapping_neg());
            return;
        }
        if rec[0] == TAG_UNRETIRED_REP {
            // The block counted the rep once and TAG_REP added steps - 1;
            // it retired only the iterations it completed before the fault,
            // and none of the block's rec[1] instructions after it.
            let (before, after) = st.last_rep;
            let completed = before.wrapping_sub(after) as u64;
            let at_rep = rep_steps(before, after) - completed;
            if at_rep > 0 {
                *self.rep_unretired.entry(st.last_rep_at).or_default() += at_rep;
            }
            self.unretired_in(st, rec[1]);
            let n = at_rep + rec[1] as u64;
            self.unretired += n;
            self.charge(st, n.wrapping_neg());
            return;
        }
        if rec[0] & !0xff == TAG_SIGNAL {
            // The handler is entered from no exit, as a call that returns
            // to the restorer; a word still waiting for its target does
            // not get one.
            let word = |i: usize| rec[i] as u64 | (rec[i + 1] as u64) << 32;
            self.resolve(st, NONE);
            let extra = std::mem::take(&mut st.rep_next);
            self.charge(st, extra);
            self.call(st, word(1), word(3));
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
            // The block goes on after its syscall (tables I1), unless the
            // call does not come back there.
            let from = std::mem::replace(&mut st.syscall_from, NONE);
            let gone = [
                libc::SYS_exit,
                libc::SYS_exit_group,
                libc::SYS_rt_sigreturn,
                libc::SYS_execve,
                libc::SYS_execveat,
            ]
            .contains(&(nr as i64));
            if super::is_retired(from) && !gone {
                // Its block's epoch ended meanwhile (epoch.rs I2).
                self.retired_syscall_edge(from & !super::RETIRED_REF);
            } else if from != NONE && !gone {
                let w = crate::contract::block_word(from, crate::contract::EXIT_FALL);
                let next = self.words[w].target;
                *self.edges.entry((from, next)).or_insert(0) += 1;
            }
        }
    }

    /// A `TAG_LOOP` record (contract I2): the `TAG_LOOP_PASSES` words
    /// after it count passes of the superblock whose first unit is
    /// `rec[1]`; its head is where a word waiting for its target went.
    fn loop_record(&mut self, st: &mut ThreadState, rec: &[u32]) {
        let base = rec[1];
        if !self.made(base) {
            // A superblock taken over from a forked child's parent (units.rs
            // I4) that has not run here before.
            self.adopt(base);
        }
        let sb = (UNIT_BASE as usize..self.unit_hw)
            .contains(&(base as usize))
            .then(|| self.unit_sb[(base - UNIT_BASE) as usize] as usize)
            .filter(|&sb| self.sbs.get(sb).is_some_and(|a| a.unit_base == base));
        st.loop_base = match sb {
            Some(sb) => {
                self.resolve(st, self.sbs[sb].members[0]);
                base
            }
            None => {
                self.sb_record_errors += 1;
                NONE
            }
        };
    }

    /// The last `n` instructions of the block of the thread's last word
    /// (a block's partial word, or a superblock's partial unit: its
    /// member's block) did not retire once more.
    fn unretired_in(&mut self, st: &ThreadState, n: u32) {
        let w = st.last_word;
        let block = if super::is_retired(w) {
            // An entry of an ended id epoch (epoch.rs I2), as the maps keep it.
            Some(w)
        } else if w < UNIT_BASE {
            Some(w >> 2)
        } else {
            let sb = self.unit_sb.get((w.wrapping_sub(UNIT_BASE)) as usize);
            sb.and_then(|&sb| self.sbs.get(sb as usize)).and_then(|a| {
                let k = (w - a.unit_base) as usize;
                a.members.get(k.checked_sub(a.exits.len())?).copied()
            })
        };
        if let (Some(b), true) = (block, n > 0 && w != NONE) {
            *self.unretired_at.entry((b, n)).or_default() += 1;
        }
    }

    /// A `TAG_LOOP_PASSES` word (contract I2): `n` passes ended at the
    /// `l`-th exit looping back to the head of the superblock of the last
    /// `TAG_LOOP` record, each as if its unit's word had come (its edge
    /// into the head is the unit's count, tables I1).
    fn loop_passes(&mut self, st: &mut ThreadState, w: u32) {
        let (l, n) = (((w >> 24) & 0x1f) as usize, u64::from(w & LOOP_PASSES_N));
        let base = st.loop_base;
        let exit = (base != NONE)
            .then(|| {
                let sb = self.unit_sb[(base - UNIT_BASE) as usize] as usize;
                self.sbs[sb].loops.get(l).copied()
            })
            .flatten();
        let Some(k) = exit else {
            self.sb_record_errors += 1;
            return;
        };
        let u = base + k;
        let extra = std::mem::take(&mut st.rep_next);
        self.charge(st, extra);
        let h = &mut self.words[u];
        h.count += n;
        let (weight, ops_n, memo) = (h.weight, h.ops_n, h.memo);
        if ops_n == 0 {
            st.blocks += n * (weight >> super::W_BLOCKS);
            self.charge(st, n * super::insns_of(weight));
            return;
        }
        // A path with calls and returns, counted because each pass ends in
        // the context it started in (the builder's `loop_keeps_context`):
        // the passes in bulk into its memo (memo.rs), or, where the memo
        // is off or the first pass does not start as the path needs, one
        // by one as pushed words would have been.
        let passes = u32::try_from(n).expect("LOOP_PASSES_N fits");
        if memo != 0 && self.memo && self.memo_pass(st, u, weight, passes) {
            return;
        }
        for _ in 0..n {
            let charged = self.special(st, u, weight, 0, None);
            self.charge_weight(st, weight - charged);
        }
    }
}
