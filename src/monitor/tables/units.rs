//! Superblock units: what one ring word of a superblock stands for, and
//! how the monitor turns unit counts back into the member blocks that ran
//! (superblock/mod.rs, exactness).
//!
//! A superblock's members form a tree rooted at its head: each member but
//! the head follows its `parent` (a straight trace is a tree whose every
//! member follows the one before). A pass runs from the head along one
//! path of the tree and ends at an exit (a side exit, the end of a path,
//! or a loop back to the head) or stops abnormally inside a member (a
//! fault, a store into code, a signal). Every exit `k` has its unit
//! `unit_base + k`, every member `m` its partial unit
//! `unit_base + exits + m`: the word a pass pushes (the dispatcher pushes
//! the partial one) names the whole path of blocks that ran, so the
//! per-entry loop handles a pass exactly like one block: a count, the
//! transition from the unit before (into the head), and the instructions.
//!
//! I1: a unit whose path has calls or returns between members (`F_OPS`)
//!     replays them on the shadow stack when it arrives, with the
//!     instructions before each charged where they ran. A path never has a
//!     `rep` string instruction after such a call or return (build.rs), so
//!     the `TAG_REP_SB` records of the pass, which come before its unit,
//!     belong to the context the pass started in.
//! I2: member counts and the edges inside a superblock are derived at the
//!     end from the unit counts ([`Tables::expand_units`]): a member ran
//!     once for every pass whose path holds it. The transitions into the
//!     head (from outside, or from a loop's unit before) and out of a
//!     unit's last block are counted by the per-entry loop like any other.
//! I3: member counts are final only after `finish`.

use super::slots::{exit_flags, Slot, BLOCKS_SHIFT, F_OPS, F_UNIT, INSNS_MASK};
use super::{Frame, UnitInfo};
use crate::monitor::{BlockMeta, Tables, UNIT_BASE, UNIT_LIMIT};

/// A call or return between two members of a superblock, replayed by
/// every pass whose path holds it (I1).
#[derive(Debug, Clone, Copy)]
pub struct PassOp {
    /// The member the transition enters.
    pub at: u16,
    /// `Some(return address)` for a call, None for a return.
    pub call: Option<u64>,
    /// Guest address of member `at` (the callee, or where the return goes).
    pub to: u64,
}

/// A [`PassOp`] as a unit's replay reads it (I1).
#[derive(Debug, Clone, Copy)]
pub(super) struct UnitOp {
    /// Instructions of the path before the call or return.
    before: u64,
    /// The return address of a call; 0 for a return.
    ret: u64,
    to: u64,
}

/// One exit of a superblock, as the monitor needs it.
#[derive(Debug, Clone, Copy)]
pub struct SbExitAcct {
    /// The member the exit leaves from.
    pub member: u16,
    /// A loop back to the head.
    pub to_head: bool,
}

/// The monitor's view of one superblock (module docs).
#[derive(Debug, Clone, Default)]
pub struct SbAccount {
    pub members: Vec<u32>,
    /// Each member's parent (`u16::MAX` for the head; smaller than the
    /// member otherwise).
    pub parent: Vec<u16>,
    /// Instructions along the path from the head through member i.
    insns_through: Vec<u64>,
    /// Blocks on that path.
    depth: Vec<u32>,
    pub exits: Vec<SbExitAcct>,
    /// Calls and returns into members, by the member they enter (I1).
    pub ops: Vec<PassOp>,
    /// The first unit (module docs).
    pub unit_base: u32,
    /// The exits that loop back to the head, in order: loop counter `l`
    /// counts passes of exit `loops[l]` (contract I2).
    pub loops: Vec<u32>,
    /// Those passes are counted, not pushed (set by the builder).
    pub loops_counted: bool,
}

/// How a superblock's passes ended, from its unit counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SbSummary {
    /// Passes entered from outside (not by a loop back to the head).
    pub entries: u64,
    /// Passes that looped back to the head.
    pub loops: u64,
    /// Passes that ran each member.
    pub member_runs: Vec<u64>,
    pub exit_counts: Vec<u64>,
    /// Passes that stopped inside a member.
    pub partial_exits: u64,
}

impl SbAccount {
    /// `members` (block ids) with their `parent`s and instruction counts;
    /// `exits`; the calls and returns into members; units from
    /// `unit_base`.
    pub fn new(
        members: Vec<u32>,
        parent: Vec<u16>,
        insns: &[u32],
        exits: Vec<SbExitAcct>,
        ops: Vec<PassOp>,
        unit_base: u32,
    ) -> Self {
        let n = members.len();
        assert!(
            n > 0 && parent.len() == n && insns.len() == n,
            "a member list"
        );
        let mut insns_through = vec![0u64; n];
        let mut depth = vec![0u32; n];
        for i in 0..n {
            let p = parent[i];
            let (before, d) = if p == u16::MAX {
                assert_eq!(i, 0, "only the head has no parent");
                (0, 0)
            } else {
                assert!((p as usize) < i, "member {i}'s parent {p} comes first");
                (insns_through[p as usize], depth[p as usize])
            };
            insns_through[i] = before + insns[i] as u64;
            depth[i] = d + 1;
        }
        let loops = (0..exits.len() as u32)
            .filter(|&k| exits[k as usize].to_head)
            .collect();
        SbAccount {
            members,
            parent,
            insns_through,
            depth,
            exits,
            ops,
            unit_base,
            loops,
            loops_counted: false,
        }
    }

    /// Units this superblock uses: one per exit, one per member.
    pub fn units(&self) -> u32 {
        (self.exits.len() + self.members.len()) as u32
    }

    /// The members on the path from the head to `m`, head first.
    fn path(&self, m: usize) -> Vec<usize> {
        let mut p = vec![m];
        let mut at = m;
        while self.parent[at] != u16::MAX {
            at = self.parent[at] as usize;
            p.push(at);
        }
        p.reverse();
        p
    }

    /// The calls and returns on the path to `m`, each with the
    /// instructions of the path before it.
    fn path_ops(&self, m: usize) -> Vec<(u64, PassOp)> {
        self.path(m)
            .into_iter()
            .filter_map(|i| {
                let op = self.ops.iter().find(|op| op.at as usize == i)?;
                Some((self.insns_through[self.parent[i] as usize], *op))
            })
            .collect()
    }

    /// `Slot::size` of a unit whose path ends at member `m`.
    fn size(&self, m: usize) -> u32 {
        (self.insns_through[m] as u32).min(INSNS_MASK) | self.depth[m] << BLOCKS_SHIFT
    }

    /// Passes that ran each member, given how many ended at each.
    fn runs(&self, mut ends: Vec<u64>) -> Vec<u64> {
        for i in (1..self.members.len()).rev() {
            let p = self.parent[i] as usize;
            ends[p] += ends[i];
        }
        ends
    }
}

impl Tables {
    /// The first unit id the next superblock gets (its units are made by
    /// [`Tables::add_superblock`]); None when units ran out.
    pub fn next_units(&self, n: u32) -> Option<u32> {
        let base = self.unit_hw as u32;
        (base + n <= UNIT_BASE + UNIT_LIMIT).then_some(base)
    }

    /// Know superblock `id` and make its units (superblock I2) before its
    /// code can run; `metas` is the block table.
    pub fn add_superblock(&mut self, id: u32, acc: SbAccount, metas: &[BlockMeta]) {
        assert_eq!(acc.unit_base as usize, self.unit_hw, "units in order");
        let head = acc.members[0];
        let (nx, nm) = (acc.exits.len(), acc.members.len());
        for u in 0..nx + nm {
            let (m, exit) = if u < nx {
                (acc.exits[u].member as usize, Some(u as u16))
            } else {
                (u - nx, None)
            };
            // An exit leaves the way its member's block does (a branch's
            // side exit has no call or return either); a partial pass
            // never got to its member's end.
            let meta = &metas[acc.members[m] as usize];
            let mut slot = Slot::block(head, meta, &self.sb);
            slot.size = acc.size(m);
            slot.trigger = u32::MAX;
            slot.flags = if exit.is_some() { exit_flags(meta) } else { 0 } | F_UNIT;
            if exit.is_none() {
                slot.way_trigger = u32::MAX;
            }
            let ops = acc.path_ops(m);
            if !ops.is_empty() {
                slot.flags |= F_OPS;
                slot.ops_at = u32::try_from(self.unit_ops.len()).expect("fewer ops than units");
                slot.ops_n = u16::try_from(ops.len()).expect("a path is shorter");
                self.unit_ops.extend(ops.iter().map(|&(before, op)| UnitOp {
                    before,
                    ret: op.call.unwrap_or(0),
                    to: op.to,
                }));
            }
            self.slots[self.unit_hw] = slot;
            self.unit_hw += 1;
            self.units.push(UnitInfo {
                last: acc.members[m],
                sb: id,
            });
        }
        let i = id as usize;
        if self.sbs.len() <= i {
            self.sbs.resize(i + 1, SbAccount::default());
        }
        self.sbs[i] = acc;
    }

    /// The unit's info (`u` at or above `UNIT_BASE`).
    pub(super) fn unit(&self, u: u32) -> &UnitInfo {
        &self.units[(u - UNIT_BASE) as usize]
    }

    /// The last block of unit `u` (a block is its own).
    #[inline]
    pub(super) fn last_block(&self, u: u32) -> u32 {
        if u < UNIT_BASE {
            u
        } else {
            self.unit(u).last
        }
    }

    /// I1: a unit (`size`, and `n` calls and returns from `unit_ops[at]`
    /// on, in its slot) arrived: replay the calls and returns of its path
    /// on the thread's `shadow` stack, charging its instructions where
    /// they ran. `cx` is the thread's (context, instructions not charged
    /// yet, instructions charged).
    #[inline(always)]
    pub(super) fn replay_ops(
        &mut self,
        shadow: &mut Vec<Frame>,
        cx: &mut (u32, u64, u64),
        at: u32,
        n: u16,
        size: u32,
    ) {
        let (mut node, mut acc, mut insns) = *cx;
        let mut done = 0;
        for k in at as usize..at as usize + n as usize {
            let op = self.unit_ops[k];
            acc += op.before - done;
            done = op.before;
            insns = insns.wrapping_add(acc);
            self.tree.charge(node, std::mem::take(&mut acc));
            node = if op.ret != 0 {
                self.call(shadow, node, op.ret, op.to)
            } else {
                self.ret(shadow, node, op.to)
            };
        }
        acc += (size & INSNS_MASK) as u64 - done;
        *cx = (node, acc, insns);
    }

    /// How superblock `id`'s passes ended so far.
    pub fn sb_summary(&self, id: u32) -> Option<SbSummary> {
        let a = self
            .sbs
            .get(id as usize)
            .filter(|a| !a.members.is_empty())?;
        let count = |u: u32| self.slots[u as usize].count;
        let nx = a.exits.len() as u32;
        let exit_counts: Vec<u64> = (0..nx).map(|k| count(a.unit_base + k)).collect();
        let mut ends: Vec<u64> = (0..a.members.len() as u32)
            .map(|m| count(a.unit_base + nx + m))
            .collect();
        let partial_exits = ends.iter().sum();
        let mut loops = 0;
        for (x, &c) in a.exits.iter().zip(&exit_counts) {
            ends[x.member as usize] += c;
            if x.to_head {
                loops += c;
            }
        }
        let passes: u64 = ends.iter().sum();
        Some(SbSummary {
            entries: passes - loops,
            loops,
            member_runs: a.runs(ends),
            exit_counts,
            partial_exits,
        })
    }

    /// I2: member counts and the edges inside superblocks, from the unit
    /// counts.
    pub(super) fn expand_units(&mut self) {
        for id in 0..self.sbs.len() as u32 {
            let Some(s) = self.sb_summary(id) else {
                continue;
            };
            let a = &self.sbs[id as usize];
            for (i, &b) in a.members.iter().enumerate() {
                let runs = s.member_runs[i];
                self.slots[b as usize].count += runs;
                let p = a.parent[i];
                if p != u16::MAX && runs > 0 {
                    let from = a.members[p as usize];
                    let to = self.guests[b as usize];
                    *self.edges.entry((from, to)).or_insert(0) += runs;
                }
            }
        }
    }

    /// Count `n` passes of unit `u` (tests of what reads unit counts).
    #[cfg(test)]
    pub(crate) fn add_unit_count(&mut self, u: u32, n: u64) {
        assert!((UNIT_BASE as usize..self.unit_hw).contains(&(u as usize)));
        self.slots[u as usize].count += n;
    }
}
