//! Superblock passes: turning `TAG_SB_*` records back into the member
//! blocks that ran (superblock/mod.rs, exactness).
//!
//! A pass opens at `TAG_SB_ENTRY | id` and closes at `TAG_SB_EXIT | k`
//! (members 0..=member(k) ran), at `TAG_SB_PARTIAL | m` (0..=m ran), or at
//! the next entry of the same superblock (a loop back to its start: every
//! member ran). Anything else while a pass is open means a record is
//! missing (counted in `sb_record_errors`, which must stay 0). The
//! transition into the head is counted at the entry, the one out of the
//! last member that ran by whatever comes next, so edges into and out of
//! a superblock are counted like any other.
//!
//! I1: a superblock without calls or returns inside is counted lazily: a
//!     pass only bumps one counter (its exit's, `loops`, or `other_ends`)
//!     and adds the instructions that ran to the thread's count, and
//!     [`Tables::expand_lazy_passes`] adds member counts and internal
//!     edges (the loop edge back to the head included) at the end. A loop
//!     back to the start stays in the same open pass: `loops += 1` and the
//!     instructions, nothing else (tables.rs checks for it first). One with calls or returns inside is replayed
//!     member by member at once (the shadow stack must move in order).
//! I2: what a lazy pass touches is in `SbAccount` itself and its exit's
//!     entry, so a pass costs a few cache lines.
//! I3: member counts are final only after `finish`.

use super::{ThreadState, NONE, SB_MASK};
use crate::monitor::{Tables, TAG_SB_EXIT, TAG_SB_PARTIAL};

/// One exit, as the monitor counts it.
#[derive(Debug, Clone)]
pub struct SbExitAcct {
    pub member: u16,
    pub count: u64,
    /// Instructions of members 0..=member, and the member's block.
    insns: u64,
    last: u32,
}

/// A call or return between two members of a superblock, replayed by
/// every pass that gets past it (I1).
#[derive(Debug, Clone, Copy)]
pub struct PassOp {
    /// The member the transition enters.
    pub at: u16,
    /// `Some(return address)` for a call, None for a return.
    pub call: Option<u64>,
    /// Guest address of member `at` (the callee, or where the return goes).
    pub to: u64,
}

/// The monitor's view of one superblock.
#[derive(Debug, Clone, Default)]
pub struct SbAccount {
    pub members: Vec<u32>,
    insns_through: Vec<u64>,
    pub exits: Vec<SbExitAcct>,
    /// Calls and returns between members, by the member they enter (I1).
    pub ops: Vec<PassOp>,
    /// No calls or returns inside or on the loop back: passes and loops
    /// take the fast paths (I1).
    pub plain: bool,
    /// Entries from outside (loops not included).
    pub entries: u64,
    /// Passes that looped back to the start (every member ran).
    pub loops: u64,
    pub partial_exits: u64,
    /// Passes closed after member m by a partial record or the end of the
    /// thread.
    other_ends: Vec<u64>,
}

impl SbAccount {
    /// `exits`: the member each exit leaves from.
    /// `loop_transfers`: the loop back to the start is a call or return.
    pub fn new(
        members: Vec<u32>,
        insns: &[u32],
        exits: &[u16],
        ops: Vec<PassOp>,
        loop_transfers: bool,
    ) -> Self {
        let mut acc = 0;
        let insns_through: Vec<u64> = insns
            .iter()
            .map(|&i| {
                acc += i as u64;
                acc
            })
            .collect();
        let exits: Vec<SbExitAcct> = exits
            .iter()
            .map(|&member| SbExitAcct {
                member,
                count: 0,
                insns: insns_through[member as usize],
                last: members[member as usize],
            })
            .collect();
        SbAccount {
            other_ends: vec![0; members.len()],
            members,
            insns_through,
            exits,
            plain: ops.is_empty() && !loop_transfers,
            ops,
            ..SbAccount::default()
        }
    }

    /// Passes that ended after member m, for each member.
    fn ends_at(&self) -> Vec<u64> {
        let mut ends = self.other_ends.clone();
        for x in &self.exits {
            ends[x.member as usize] += x.count;
        }
        if let Some(last) = ends.last_mut() {
            *last += self.loops;
        }
        ends
    }

    /// Passes that ran member i, for each member.
    pub fn member_runs(&self) -> Vec<u64> {
        let ends = self.ends_at();
        let mut through = 0;
        let mut runs = vec![0; self.members.len()];
        for i in (0..self.members.len()).rev() {
            through += ends[i];
            runs[i] = through;
        }
        runs
    }

    pub fn exit_counts(&self) -> Vec<u64> {
        self.exits.iter().map(|x| x.count).collect()
    }
}

impl Tables {
    /// Know superblock `id` before its code can run (superblock I2).
    pub fn add_superblock(&mut self, id: u32, acc: SbAccount) {
        let i = id as usize;
        if self.sbs.len() <= i {
            self.sbs.resize(i + 1, SbAccount::default());
        }
        self.sbs[i] = acc;
    }

    /// A superblock record (single word).
    pub(super) fn sb_record(&mut self, st: &mut ThreadState, e: u32) {
        let x = e & SB_MASK;
        if e >= TAG_SB_PARTIAL {
            if st.pass == NONE {
                self.sb_record_errors += 1;
                return;
            }
            let sb = &mut self.sbs[st.pass as usize];
            sb.partial_exits += 1;
            let m = (x as usize).min(sb.members.len() - 1);
            sb.other_ends[m] += 1;
            self.close_at(st, m);
        } else if e >= TAG_SB_EXIT {
            if st.pass == NONE || x as usize >= self.sbs[st.pass as usize].exits.len() {
                self.sb_record_errors += 1;
                return;
            }
            self.close_exit(st, x as usize);
        } else {
            let id = x;
            let looped = st.pass == id;
            if looped {
                // A loop back to the start: the whole pass ran. Eager
                // superblocks only (lazy ones take the fast path); the
                // loop edge is counted by the transition below.
                self.close_loop(st);
            } else if st.pass != NONE {
                self.stray_in_pass(st);
            }
            let Some(sb) = self
                .sbs
                .get_mut(id as usize)
                .filter(|s| !s.members.is_empty())
            else {
                self.sb_record_errors += 1;
                return;
            };
            if !looped {
                sb.entries += 1;
            }
            let (head, plain) = (sb.members[0], sb.plain);
            let total = sb.insns_through.last().copied().unwrap_or(0);
            if st.prev != NONE {
                self.transition(st, st.prev, head);
            }
            if plain {
                st.loop_word = e;
                st.loop_insns = total;
                st.loop_blocks = self.sbs[id as usize].members.len() as u64;
            }
            st.prev = head;
            st.pass = id;
        }
    }

    /// The open pass left through exit `k` (I2).
    fn close_exit(&mut self, st: &mut ThreadState, k: usize) {
        let sb = &mut self.sbs[st.pass as usize];
        let plain = sb.plain;
        let x = &mut sb.exits[k];
        x.count += 1;
        if plain {
            st.acc += x.insns;
            st.blocks += x.member as u64 + 1;
            st.prev = x.last;
            st.pass = NONE;
            st.loop_word = 0;
        } else {
            let m = x.member as usize;
            self.replay_ops(st, m);
        }
    }

    /// The open pass of a superblock that is not plain looped back to the
    /// start (a plain one never gets here: tables.rs fast path).
    fn close_loop(&mut self, st: &mut ThreadState) {
        let sb = &mut self.sbs[st.pass as usize];
        sb.loops += 1;
        let last = sb.members.len() - 1;
        self.replay_ops(st, last);
    }

    /// Close the open pass after member `m` (its counter already bumped).
    fn close_at(&mut self, st: &mut ThreadState, m: usize) {
        let sb = &self.sbs[st.pass as usize];
        if sb.plain {
            st.acc += sb.insns_through[m];
            st.blocks += m as u64 + 1;
            st.prev = sb.members[m];
            st.pass = NONE;
            st.loop_word = 0;
        } else {
            self.replay_ops(st, m);
        }
    }

    /// Members 0..=m ran: replay the calls and returns between them, with
    /// the instructions before each charged where they ran (I1).
    fn replay_ops(&mut self, st: &mut ThreadState, m: usize) {
        let id = st.pass as usize;
        st.pass = NONE;
        st.loop_word = 0;
        let mut done = 0;
        let mut i = 0;
        loop {
            let sb = &self.sbs[id];
            let Some(&op) = sb.ops.get(i).filter(|op| op.at as usize <= m) else {
                st.acc += sb.insns_through[m] - done;
                st.blocks += m as u64 + 1;
                st.prev = sb.members[m];
                return;
            };
            let upto = sb.insns_through[op.at as usize - 1];
            st.acc += upto - done;
            done = upto;
            match op.call {
                Some(ret) => self.do_call(st, ret, op.to),
                None => self.do_return(st, op.to),
            }
            i += 1;
        }
    }

    /// A thread ended inside a pass with no record for it (it was killed
    /// there): count what must have run, its head.
    pub(super) fn close_at_end(&mut self, st: &mut ThreadState) {
        self.sbs[st.pass as usize].other_ends[0] += 1;
        self.close_at(st, 0);
    }

    /// An entry arrived while a pass was open and no exit explains it: a
    /// record is missing (counted; the pass is closed at its head).
    #[cold]
    pub(super) fn stray_in_pass(&mut self, st: &mut ThreadState) {
        self.sb_record_errors += 1;
        self.close_at_end(st);
    }

    /// I1: member counts and internal edges of lazy passes.
    pub(super) fn expand_lazy_passes(&mut self) {
        for sb in &self.sbs {
            if sb.members.is_empty() {
                continue;
            }
            let runs = sb.member_runs();
            for (i, &b) in sb.members.iter().enumerate() {
                // Every pass that ran member i: entries and loops alike.
                self.slots[b as usize].count += runs[i];
                if let Some(&next) = sb.members.get(i + 1) {
                    if runs[i + 1] > 0 {
                        let to = self.slots[next as usize].guest;
                        *self.edges.entry((b, to)).or_insert(0) += runs[i + 1];
                    }
                }
            }
            // Unless plain, each loop's next entry counted it.
            if sb.loops > 0 && sb.plain {
                let (last, head) = (sb.members[sb.members.len() - 1], sb.members[0]);
                let to = self.slots[head as usize].guest;
                *self.edges.entry((last, to)).or_insert(0) += sb.loops;
            }
        }
    }
}
