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
//! `unit_base + exits + m`: the exit word a pass pushes (the dispatcher
//! pushes the partial one) names the whole path of blocks that ran and
//! the exit it left by, so the per-entry loop handles a pass exactly like
//! one block's exit word (contract).
//!
//! I1: a unit whose path has calls or returns between members replays
//!     them on the shadow stack when it comes, with the instructions
//!     before each charged where they ran. A path never has a `rep` string
//!     instruction after such a call or return (build.rs), so the
//!     `TAG_REP` records of the pass, which come before its unit, belong
//!     to the context the pass started in.
//! I2: member counts and the edges inside a superblock are derived at the
//!     end from the unit counts ([`Tables::expand_units`]): a member ran
//!     once for every pass whose path holds it. An exit's own edge is its
//!     unit's count like any exit word's (tables I1).
//! I3: member counts are final only after `finish`.
//! I4: a forked child's monitor knows the superblocks its parent's had
//!     published when it starts ([`Tables::inherit`]): their code, heads
//!     and unit numbers stay the child's (dispatch/fork.rs F2). A unit of
//!     one whose units are not made yet comes as a word without an entry,
//!     and the superblock's units are made then ([`Tables::adopt`]),
//!     before the word is counted (words.rs I2); new superblocks take
//!     units above all of them.

use std::sync::Arc;

use super::memo;
use super::words::{End, Warm, Ways, Word, SPECIAL, W_BLOCKS};
use crate::cache::{BlockMeta, BlockTable};
use crate::ir::superblock::ExitTo;
use crate::monitor::{ExitKind, Tables, UNIT_BASE, UNIT_LIMIT};

/// A call or return between two members of a superblock, replayed by
/// every pass whose path holds it (I1).
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
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
    pub before: u64,
    /// The return address of a call; 0 for a return.
    pub ret: u64,
    pub to: u64,
}

/// One exit of a superblock, as the monitor needs it.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct SbExitAcct {
    /// The member the exit leaves from.
    pub member: u16,
    /// A loop back to the head.
    pub to_head: bool,
    /// Where it goes (a direct target, or wherever an indirect transfer
    /// goes).
    pub to: ExitTo,
}

impl SbExitAcct {
    /// An exit to a direct target.
    pub fn direct(member: u16, target: u64) -> SbExitAcct {
        SbExitAcct {
            member,
            to_head: false,
            to: ExitTo::Direct { target },
        }
    }

    /// A loop back to the head.
    pub fn to_head(member: u16) -> SbExitAcct {
        SbExitAcct {
            member,
            to_head: true,
            to: ExitTo::Loop,
        }
    }
}

/// The monitor's view of one superblock (module docs).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct SbAccount {
    pub members: Vec<u32>,
    /// Each member's parent (`u16::MAX` for the head; smaller than the
    /// member otherwise).
    pub parent: Vec<u16>,
    /// Instructions along the path from the head through member i.
    pub(super) insns_through: Vec<u64>,
    /// Blocks on that path.
    pub(super) depth: Vec<u32>,
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

/// A superblock a forked child's monitor took over from its parent's
/// (I4): its units, and its account until they are made.
#[derive(Debug)]
pub(super) struct Inherited {
    id: u32,
    units: std::ops::Range<u32>,
    /// Its units are made (adopted).
    made: bool,
}

/// A superblock a forked child's monitor takes over (I4): its id, its
/// units and the guest address of its head.
#[derive(Debug, Clone)]
pub struct InheritedSb {
    pub id: u32,
    pub units: std::ops::Range<u32>,
    pub head_guest: u64,
}

/// Where the account of inherited superblock `id` comes from when its
/// units are made (I4): a copy, made then. The accounts stay where the
/// parent left them until then, untouched: taking a reference to each
/// (an `Arc` count written on every account's page) had a python child
/// copy ~140 pages of its parent's heap, 0.4 ms of its monitor's 1.9.
pub struct AccountSource(pub Box<dyn FnMut(u32) -> Option<SbAccount> + Send>);

impl std::fmt::Debug for AccountSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccountSource")
    }
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
    pub fn path(&self, m: usize) -> Vec<usize> {
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
    pub fn path_ops(&self, m: usize) -> Vec<(u64, PassOp)> {
        self.path(m)
            .into_iter()
            .filter_map(|i| {
                let op = self.ops.iter().find(|op| op.at as usize == i)?;
                Some((self.insns_through[self.parent[i] as usize], *op))
            })
            .collect()
    }

    /// The calls and returns on the path to `m` as a unit replays them.
    fn unit_path(&self, m: usize) -> Vec<UnitOp> {
        self.path_ops(m)
            .into_iter()
            .map(|(before, op)| UnitOp {
                before,
                ret: op.call.unwrap_or(0),
                to: op.to,
            })
            .collect()
    }

    /// May the passes that loop back to the head through member `m` be
    /// counted (contract I2, `Plan::loops_countable`)? Each must end in the
    /// calling context it started in, as its count is replayed: a path
    /// without calls or returns (not closed by a call), or one replayed in
    /// bulk (memo.rs): balanced, or rotating when the loop back is the call
    /// with return address `call`.
    pub fn loop_keeps_context(&self, m: usize, call: Option<u64>) -> bool {
        let ops = self.unit_path(m);
        match call {
            None => ops.is_empty() || memo::kind(&ops, End::Direct, 0) != 0,
            Some(ret) => memo::kind(&ops, End::Call, ret) & memo::ROTATES != 0,
        }
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
        self.unit_hw += acc.units() as usize;
        self.place_superblock(id, acc, metas, true);
    }

    /// I4: a forked child's monitor takes over the superblocks its
    /// parent's monitor had published (their code and heads stay,
    /// dispatch/fork.rs F2). Their units are made when one of them first
    /// comes ([`Tables::adopt`]), not now: a child that runs a few of them
    /// makes those, and no page of the word table for the rest. Their
    /// heads' triggers are done at once, as [`Tables::add_superblock`]
    /// does.
    pub fn inherit(
        &mut self,
        mut sbs: Vec<InheritedSb>,
        source: AccountSource,
        blocks: Arc<BlockTable>,
    ) {
        sbs.sort_by_key(|s| s.units.start);
        self.warm.reserve(sbs.len());
        self.warm_n.reserve(sbs.len());
        self.warm_in.reserve(sbs.len());
        for sb in &sbs {
            let s = self.warm_slot(sb.head_guest);
            self.close_trigger(s);
            self.unit_hw = self.unit_hw.max(sb.units.end as usize);
        }
        self.unit_sb
            .resize(self.unit_hw - UNIT_BASE as usize, u32::MAX);
        self.inherited = sbs
            .into_iter()
            .map(|sb| Inherited {
                id: sb.id,
                units: sb.units,
                made: false,
            })
            .collect();
        self.inherited_from = Some(source);
        self.inherited_blocks = Some(blocks);
    }

    /// I4: make the units of the inherited superblock unit `u` belongs
    /// to, if it is one not made yet. True when `u` is made now.
    #[cold]
    pub(super) fn adopt(&mut self, u: u32) -> bool {
        let i = self.inherited.partition_point(|e| e.units.start <= u);
        let Some(e) = i.checked_sub(1).map(|i| &mut self.inherited[i]) else {
            return false;
        };
        if !e.units.contains(&u) || e.made {
            return false;
        }
        e.made = true;
        let id = e.id;
        let (Some(blocks), Some(source)) =
            (self.inherited_blocks.clone(), self.inherited_from.as_mut())
        else {
            return false;
        };
        let Some(acc) = (source.0)(id) else {
            return false;
        };
        self.place_superblock(id, acc, blocks.published(), false);
        self.adopted += 1;
        true
    }

    /// Make superblock `id`'s units at its `unit_base` (below `unit_hw`),
    /// and with `members` its members' words.
    fn place_superblock(&mut self, id: u32, acc: SbAccount, metas: &[BlockMeta], members: bool) {
        let head = acc.members[0];
        let head_guest = metas.get(head as usize).map_or(0, |m| m.guest);
        // Members the monitor has not met (a superblock from the store)
        // get their words: the end adds member runs to them. An adopted
        // superblock's get theirs there, those that ran (I4): a forked
        // child meets few of its parent's blocks, each on a page of the
        // word table of its own.
        if members {
            for &b in &acc.members {
                self.make_block(b, metas);
            }
        }
        let (nx, nm) = (acc.exits.len(), acc.members.len());
        // Its head's trigger has done its work.
        let s = self.warm_slot(head_guest);
        self.close_trigger(s);
        let triggers = self.sb.counting();
        for u in 0..nx + nm {
            let (m, exit) = if u < nx {
                (acc.exits[u].member as usize, Some(acc.exits[u]))
            } else {
                (u - nx, None)
            };
            let meta = metas
                .get(acc.members[m] as usize)
                .copied()
                .unwrap_or_default();
            // An exit leaves the way its member's block does; a partial
            // pass never got to its member's end.
            let (end, target, ret) = match exit.map(|x| x.to) {
                None => (End::Partial, 0, 0),
                Some(to) => {
                    let direct = match to {
                        ExitTo::Direct { target } => target,
                        ExitTo::Loop => head_guest,
                        ExitTo::Indirect => 0,
                    };
                    // A loop back to the head may be a call, a return or
                    // an indirect transfer (a guard that held) too.
                    match meta.exit {
                        ExitKind::Call => (End::Call, direct, meta.next),
                        ExitKind::Return => (End::Return, 0, 0),
                        ExitKind::IndirectCall => (End::IndirectCall, 0, meta.next),
                        ExitKind::IndirectJump => (End::IndirectJump, 0, 0),
                        _ => (End::Direct, direct, 0),
                    }
                }
            };
            let ops = acc.unit_path(m);
            self.note_call_site(ret);
            for op in &ops {
                self.note_call_site(op.ret);
            }
            let (ops_at, ops_n, memo) = if ops.is_empty() {
                (0, 0, 0)
            } else {
                let at = u32::try_from(self.unit_ops.len()).expect("fewer ops than units");
                self.unit_ops.extend_from_slice(&ops);
                let memo = memo::kind(&self.unit_ops[at as usize..], end, ret);
                (
                    at,
                    u16::try_from(ops.len()).expect("a path is shorter"),
                    memo,
                )
            };
            let slot = if triggers && exit.is_some() {
                self.open_trigger(end, target)
            } else {
                None
            };
            let w = acc.unit_base + u as u32;
            let (warm, _, ret) = match slot {
                Some(s) => self.join_trigger(s, w, end, false, ret),
                None => (Warm::No, 0, ret),
            };
            self.words.ready(w);
            self.ways.ready(w);
            let special = end.special() || warm != Warm::No || ops_n > 0;
            // A path returning into a landing site (selection keeps them
            // out of new superblocks, but one may have become a site
            // since): replayed with the watch (landing.rs I1).
            let watch = ops
                .iter()
                .any(|op| op.ret == 0 && self.is_landing_site(op.to));
            self.words[w] = Word {
                count: if special { SPECIAL } else { 0 },
                weight: acc.insns_through[m] | u64::from(acc.depth[m]) << W_BLOCKS,
                end,
                unit: true,
                warm,
                warm_at: slot.unwrap_or(0),
                ops_n,
                ops_at,
                memo: if watch { 0 } else { memo },
                watch,
                memo_node: 0,
                memo_n: 0,
                first: head,
                last: acc.members[m],
                target,
                ret,
            };
            self.ways[w] = Ways::EMPTY;
            let k = (w - UNIT_BASE) as usize;
            if self.unit_sb.len() <= k {
                self.unit_sb.resize(k + 1, u32::MAX);
            }
            self.unit_sb[k] = id;
        }
        self.loops_counted |= acc.loops_counted;
        let i = id as usize;
        if self.sbs.len() <= i {
            self.sbs.resize(i + 1, SbAccount::default());
        }
        self.sbs[i] = acc;
    }

    /// How superblock `id`'s passes ended so far.
    pub fn sb_summary(&self, id: u32) -> Option<SbSummary> {
        if (id as usize) < self.frozen_upto {
            // As of the end of its id epoch (epoch.rs I4).
            return self.frozen_sbs.get(id as usize).cloned().flatten();
        }
        let a = self
            .sbs
            .get(id as usize)
            .filter(|a| !a.members.is_empty())?;
        let count = |u: u32| self.word_count(u);
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

    /// Calls and returns superblock `id`'s passes replayed one by one
    /// (I1): those of units whose passes are not replayed in bulk
    /// (memo.rs), each as often as its unit came.
    pub fn sb_replays(&self, id: u32) -> u64 {
        if (id as usize) < self.frozen_upto {
            return 0;
        }
        let Some(a) = self.sbs.get(id as usize) else {
            return 0;
        };
        (a.unit_base..a.unit_base + a.units())
            .filter(|&u| {
                self.unit_sb
                    .get((u - UNIT_BASE) as usize)
                    .is_some_and(|&x| x != u32::MAX)
            })
            .map(|u| {
                let w = &self.words[u];
                if w.memo != 0 {
                    0
                } else {
                    u64::from(w.ops_n) * self.word_count(u)
                }
            })
            .sum()
    }

    /// I2: member counts and the edges inside superblocks, from the unit
    /// counts.
    pub(super) fn expand_units(&mut self) {
        let inherited = self.inherited_blocks.clone();
        // Those of ended epochs were expanded then (epoch.rs I4).
        for id in self.frozen_upto as u32..self.sbs.len() as u32 {
            let Some(s) = self.sb_summary(id) else {
                continue;
            };
            let members = self.sbs[id as usize].members.clone();
            for (&b, &runs) in members.iter().zip(&s.member_runs) {
                if runs > 0 && !self.block_made(b as usize) {
                    // An adopted superblock's member (I4).
                    if let Some(blocks) = &inherited {
                        self.make_block(b, blocks.published());
                    }
                }
            }
            let a = &self.sbs[id as usize];
            for (i, &b) in a.members.iter().enumerate() {
                let runs = s.member_runs[i];
                if runs == 0 {
                    // Nothing to add, and the word of a member that never
                    // ran (an adopted superblock's, I4) is not made: its
                    // page stays untouched.
                    continue;
                }
                // The member ran that many times to the next member (its
                // fall-through word stands for it; its own exits' edges
                // are the units').
                self.words[crate::contract::block_word(b, crate::contract::EXIT_FALL)].count +=
                    runs;
                let p = a.parent[i];
                if p != u16::MAX {
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
        self.words[u].count += n;
    }
}
