//! The monitor's tables and the per-entry classification (module I2).

use std::collections::BTreeMap;

use hashbrown::HashMap;

use super::{BlockMeta, BlockTable, ExitKind, NR_MASK, TAG, TAG_SYSCALL};

#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct SyscallStat {
    pub count: u64,
    pub errors: u64,
    pub nanos: u64,
}

/// Per guest thread: the previous block, the shadow call stack, and a
/// tagged record split across ring segments.
#[derive(Debug, Default, Clone)]
struct ThreadState {
    prev: Option<u32>,
    shadow: Vec<u64>,
    pending: Vec<u32>,
    pending_need: usize,
    /// ECX before and after of the last `TAG_REP` record.
    last_rep: (u32, u32),
}

/// Exact profile tables, indexed by BlockId where dense.
#[derive(Debug, Default)]
pub struct Tables {
    pub counts: Vec<u64>,
    pub taken: Vec<u64>,
    pub fallthrough: Vec<u64>,
    /// (source block, target guest address) → count, for indirect exits.
    pub indirect: HashMap<(u32, u64), u64>,
    /// (call-site block guest address, callee guest address) → count.
    pub calls: HashMap<(u64, u64), u64>,
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
    threads: Vec<ThreadState>,
}

/// The syscall log keeps this many calls; the table counts all.
pub const SYSCALL_LOG_LIMIT: usize = 1 << 20;

impl Tables {
    /// Tables holding only block counts (`--count-inline`).
    pub fn from_counts(counts: Vec<u64>) -> Tables {
        Tables {
            counts,
            ..Tables::default()
        }
    }

    fn grow(&mut self, n: usize) {
        if self.counts.len() < n {
            let n = n.next_power_of_two();
            self.counts.resize(n, 0);
            self.taken.resize(n, 0);
            self.fallthrough.resize(n, 0);
        }
    }

    /// Process a batch of entries of guest thread `t` (I1).
    pub fn process(&mut self, t: usize, entries: &[u32], blocks: &BlockTable) {
        if self.threads.len() <= t {
            self.threads.resize(t + 1, ThreadState::default());
        }
        let mut table = blocks.published();
        self.grow(table.len());
        let mut st = std::mem::take(&mut self.threads[t]);
        self.entries += entries.len() as u64;
        for &e in entries {
            if st.pending_need > 0 {
                st.pending.push(e);
                st.pending_need -= 1;
                if st.pending_need == 0 {
                    self.tagged(&mut st.last_rep, &st.pending);
                    st.pending.clear();
                }
                continue;
            }
            if e & TAG != 0 {
                st.pending.push(e);
                st.pending_need = super::record_words(e);
                continue;
            }
            let id = e as usize;
            if id >= table.len() {
                table = blocks.published();
                self.grow(table.len());
                assert!(
                    id < table.len(),
                    "ring entry {id} is not a published block (block table I1)"
                );
            }
            self.counts[id] += 1;
            let cur = &table[id];
            if let Some(p) = st.prev {
                self.edge(&mut st, p, &table[p as usize], cur);
            }
            st.prev = Some(e);
        }
        self.threads[t] = st;
    }

    fn edge(&mut self, st: &mut ThreadState, p: u32, prev: &BlockMeta, cur: &BlockMeta) {
        match prev.exit {
            ExitKind::Branch => {
                if cur.guest == prev.target {
                    self.taken[p as usize] += 1;
                } else {
                    self.fallthrough[p as usize] += 1;
                }
            }
            ExitKind::Call | ExitKind::IndirectCall => {
                *self.calls.entry((prev.guest, cur.guest)).or_insert(0) += 1;
                st.shadow.push(prev.next);
                self.max_shadow_depth = self.max_shadow_depth.max(st.shadow.len());
                if prev.exit == ExitKind::IndirectCall {
                    *self.indirect.entry((p, cur.guest)).or_insert(0) += 1;
                }
            }
            ExitKind::Return => {
                self.returns += 1;
                *self.indirect.entry((p, cur.guest)).or_insert(0) += 1;
                if st.shadow.last() == Some(&cur.guest) {
                    st.shadow.pop();
                } else {
                    self.unmatched_returns += 1;
                    if let Some(i) = st.shadow.iter().rposition(|&r| r == cur.guest) {
                        st.shadow.truncate(i);
                    }
                }
            }
            ExitKind::IndirectJump => {
                *self.indirect.entry((p, cur.guest)).or_insert(0) += 1;
            }
            ExitKind::Jump | ExitKind::Fallthrough | ExitKind::Syscall | ExitKind::Trap => {}
        }
    }

    fn tagged(&mut self, last_rep: &mut (u32, u32), rec: &[u32]) {
        if rec[0] == super::TAG_REP {
            // Single-stepping counts each iteration; RCX = 0 still counts
            // the instruction once.
            let (before, after) = (rec[1], rec[2]);
            self.rep_extra += rep_steps(before, after) - 1;
            *last_rep = (before, after);
            return;
        }
        if rec[0] == super::TAG_UNRETIRED {
            self.unretired += rec[1] as u64;
            return;
        }
        if rec[0] == super::TAG_UNRETIRED_REP {
            // The block counted the rep once and TAG_REP added steps - 1;
            // it retired only the iterations it completed before the fault.
            let (before, after) = *last_rep;
            let completed = before.wrapping_sub(after) as u64;
            self.unretired += rep_steps(before, after) - completed + rec[1] as u64;
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
    use super::super::{TAG_REP, TAG_UNRETIRED, TAG_UNRETIRED_REP};
    use super::*;

    /// One block of 3 instructions with a `rep` second, entered once per
    /// record list; what the records make of the counts.
    fn counts(records: &[u32]) -> (u64, u64) {
        let blocks = BlockTable::new(4).unwrap();
        blocks.push(BlockMeta {
            insns: 3,
            ..BlockMeta::default()
        });
        let mut t = Tables::default();
        t.process(0, records, &blocks);
        (t.rep_extra, t.unretired)
    }

    #[test]
    fn unretired_instructions_leave_the_count() {
        // rep ran 96 of 200 iterations, then the block ran to its end.
        assert_eq!(counts(&[0, TAG_REP, 200, 104]), (95, 0));
        // ud2 ends the block: 1 instruction did not retire.
        assert_eq!(counts(&[0, TAG_UNRETIRED, 1]), (0, 1));
        // The rep faulted after 96 iterations: they count, the last
        // instruction does not.
        assert_eq!(
            counts(&[0, TAG_REP, 200, 104, TAG_UNRETIRED_REP, 1]),
            (95, 1)
        );
        // The rep faulted on its first iteration: it did not retire either.
        assert_eq!(
            counts(&[0, TAG_REP, 200, 200, TAG_UNRETIRED_REP, 1]),
            (0, 2)
        );
        // rep with RCX = 0 counts once.
        assert_eq!(counts(&[0, TAG_REP, 0, 0]), (0, 0));
    }
}
