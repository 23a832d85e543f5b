//! Superblock passes: turning `TAG_SB_*` records back into the member
//! blocks that ran (superblock/mod.rs, exactness).
//!
//! A pass opens at `TAG_SB_ENTRY | id` and closes at `TAG_SB_EXIT | k`
//! (members 0..=member(k) ran), at `TAG_SB_PARTIAL | m` (0..=m ran), or at
//! the next entry of the same superblock (a loop back to its start: every
//! member ran). The transition into the head is counted at the entry, the
//! one out of the last member that ran by whatever comes next, so edges
//! into and out of a superblock are counted like any other.
//!
//! I1: a superblock without calls or returns inside is counted lazily:
//!     a pass only adds to `ends_at[m]` and to the thread's instruction
//!     count, and [`Tables::expand_lazy_passes`] adds member counts and
//!     internal edges at the end (`ends_at` is kept for every superblock:
//!     the profile's per-member runs come from it). One with calls or returns inside is
//!     replayed member by member at once (the shadow stack must move in
//!     order).
//! I2: member counts are final only after `finish`.

use super::{ThreadState, NONE, SB_MASK};
use crate::monitor::{Tables, TAG_SB_EXIT, TAG_SB_PARTIAL};

/// The monitor's view of one superblock.
#[derive(Debug, Clone)]
pub struct SbAccount {
    pub members: Vec<u32>,
    /// Member each exit leaves from.
    pub exit_member: Vec<u16>,
    /// Instructions of members 0..=m.
    pub insns_through: Vec<u64>,
    /// Replay passes member by member (I1).
    pub eager: bool,
    /// Passes that ended after member m.
    pub ends_at: Vec<u64>,
    pub exit_counts: Vec<u64>,
    pub entries: u64,
    pub partial_exits: u64,
}

impl SbAccount {
    pub fn new(members: Vec<u32>, insns: &[u32], exit_member: Vec<u16>, eager: bool) -> Self {
        let mut acc = 0;
        let insns_through = insns
            .iter()
            .map(|&i| {
                acc += i as u64;
                acc
            })
            .collect();
        SbAccount {
            ends_at: vec![0; members.len()],
            exit_counts: vec![0; exit_member.len()],
            members,
            exit_member,
            insns_through,
            eager,
            entries: 0,
            partial_exits: 0,
        }
    }
}

impl SbAccount {
    /// Passes that ran member i, for each member.
    pub fn member_runs(&self) -> Vec<u64> {
        let mut through = 0;
        let mut runs = vec![0; self.members.len()];
        for i in (0..self.members.len()).rev() {
            through += self.ends_at[i];
            runs[i] = through;
        }
        runs
    }
}

impl Tables {
    /// Know superblock `id` before its code can run (superblock I2).
    pub fn add_superblock(&mut self, id: u32, acc: SbAccount) {
        let i = id as usize;
        if self.sbs.len() <= i {
            self.sbs
                .resize(i + 1, SbAccount::new(Vec::new(), &[], Vec::new(), false));
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
            self.sbs[st.pass as usize].partial_exits += 1;
            let last = self.sbs[st.pass as usize].members.len() - 1;
            self.sb_end(st, (x as usize).min(last));
        } else if e >= TAG_SB_EXIT {
            if st.pass == NONE {
                self.sb_record_errors += 1;
                return;
            }
            let sb = &mut self.sbs[st.pass as usize];
            let Some(&m) = sb.exit_member.get(x as usize) else {
                self.sb_record_errors += 1;
                return;
            };
            sb.exit_counts[x as usize] += 1;
            self.sb_end(st, m as usize);
        } else {
            let id = x;
            if st.pass != NONE {
                // A loop back to the start: the whole pass ran.
                if st.pass != id {
                    self.sb_record_errors += 1;
                }
                let last = self.sbs[st.pass as usize].members.len() - 1;
                self.sb_end(st, last);
            }
            let Some(sb) = self
                .sbs
                .get_mut(id as usize)
                .filter(|s| !s.members.is_empty())
            else {
                self.sb_record_errors += 1;
                return;
            };
            sb.entries += 1;
            let (head, eager) = (sb.members[0], sb.eager);
            if st.prev != NONE {
                self.transition(st, st.prev, head);
            }
            if eager {
                self.enter_member(st, head);
            }
            st.prev = head;
            st.pass = id;
        }
    }

    /// Close the open pass after member `m` (module docs).
    pub(super) fn sb_end(&mut self, st: &mut ThreadState, m: usize) {
        let id = st.pass as usize;
        st.pass = NONE;
        self.sbs[id].ends_at[m] += 1;
        if self.sbs[id].eager {
            let members = std::mem::take(&mut self.sbs[id].members);
            for &b in &members[1..=m] {
                self.transition(st, st.prev, b);
                self.enter_member(st, b);
            }
            self.sbs[id].members = members;
        } else {
            let sb = &self.sbs[id];
            st.acc += sb.insns_through[m];
            st.prev = sb.members[m];
        }
    }

    /// A member ran (counted now, no superblock trigger).
    fn enter_member(&mut self, st: &mut ThreadState, b: u32) {
        let s = &mut self.slots[b as usize];
        s.count += 1;
        st.acc += s.insns as u64;
        st.prev = b;
    }

    /// A block entry arrived while a pass was open: a record is missing.
    #[cold]
    pub(super) fn stray_in_pass(&mut self, st: &mut ThreadState) {
        self.sb_record_errors += 1;
        self.sb_end(st, 0);
    }

    /// I1: member counts and internal edges of lazy passes.
    pub(super) fn expand_lazy_passes(&mut self) {
        for sb in &self.sbs {
            if sb.eager || sb.members.is_empty() {
                continue;
            }
            let runs = sb.member_runs();
            for (i, &b) in sb.members.iter().enumerate() {
                self.slots[b as usize].count += runs[i];
                if let Some(&next) = sb.members.get(i + 1) {
                    if runs[i + 1] > 0 {
                        let to = self.slots[next as usize].guest;
                        *self.edges.entry((b, to)).or_insert(0) += runs[i + 1];
                    }
                }
            }
        }
    }
}
