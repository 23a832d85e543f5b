//! The superblock plan: a trace of translated blocks as the backend lays
//! it out (members in layout order, how each goes on, the exits numbered
//! in layout order). The monitor's selection makes it
//! (superblock), `backend::emit_superblock` emits it, and the
//! profile records its exits.
//!
//! I1: exits are numbered in layout order ([`Plan::new`]); a superblock's
//!     unit for exit `k` is `unit_base + k` (contract/mod.rs).
//! I2: an indirect transfer inside a superblock (a member whose `next` is
//!     `Member` or `Head` and that ends in an indirect jump, call or
//!     return) tests its target against the hot member's address and then,
//!     if its `cold` names one, against each member of its *alternates*
//!     chain in turn (`cold`, that member's `alt`, …): every member of the
//!     chain is entered from the transfer (its parent) when the target is
//!     its own address. Only when none holds does the pass leave, by the
//!     transfer's one indirect exit. `alt` is set on chain members only.

use std::fmt;

use crate::ir::{ExitClass, IrBlock, Terminator};

/// Where control goes after a member's terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Into the next member.
    Member,
    /// Back to the superblock's own start (a loop closed at the head).
    Head,
    /// Out of the superblock, through the terminator's own targets.
    Leave,
}

/// One member: a translated block, lifted again.
#[derive(Debug, Clone)]
pub struct Member {
    pub block: u32,
    pub ir: IrBlock,
    /// How the hot side of its terminator goes on.
    pub next: Next,
    /// A branch whose cold side goes on in this member too, instead of
    /// leaving (a tree: select/shape.rs I1); for an indirect transfer, its
    /// first alternate target's member (I2).
    pub cold: Option<u16>,
    /// I2: the next alternate of the indirect transfer this member is an
    /// alternate target of.
    pub alt: Option<u16>,
}

/// What an exit of a superblock leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ExitTo {
    /// A known guest address (a branch side, a jump, a call).
    Direct { target: u64 },
    /// Wherever an indirect jump, call or return goes (a failed guard or
    /// the last member's own lookup).
    Indirect,
    /// Back to the superblock's own start (a loop closed at the head):
    /// the exit's unit is pushed and the next pass begins.
    Loop,
}

/// One exit of a superblock: leaving member `member` to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Exit {
    pub index: u32,
    pub member: u16,
    pub to: ExitTo,
}

/// A superblock as planned: its members in layout order, and its exits.
#[derive(Debug, Clone)]
pub struct Plan {
    pub id: u32,
    pub members: Vec<Member>,
    pub exits: Vec<Exit>,
    /// Passes that loop back to the head are counted in the thread's loop
    /// counters instead of pushing their unit (contract I2): set by the
    /// builder where [`Plan::loops_countable`].
    pub count_loops: bool,
}

impl Plan {
    /// Make the plan for `members` (ids, lifted blocks, how each continues)
    /// and number its exits in layout order.
    pub fn new(id: u32, members: Vec<Member>) -> Plan {
        let mut exits = Vec::new();
        let n = members.len();
        for (i, m) in members.iter().enumerate() {
            let next_guest = match m.next {
                Next::Member => Some(members[i + 1].ir.start.0),
                Next::Head => Some(members[0].ir.start.0),
                Next::Leave => None,
            };
            let mut add = |to| {
                exits.push(Exit {
                    index: exits.len() as u32,
                    member: i as u16,
                    to,
                })
            };
            match (&m.ir.term, next_guest) {
                (
                    Terminator::Branch {
                        taken, fallthrough, ..
                    },
                    Some(hot),
                ) => {
                    if m.cold.is_none() {
                        let cold = if hot == taken.0 { fallthrough } else { taken };
                        add(ExitTo::Direct { target: cold.0 });
                    }
                }
                (
                    Terminator::Return { .. }
                    | Terminator::IndirectJump { .. }
                    | Terminator::IndirectCall { .. },
                    Some(_),
                ) => add(ExitTo::Indirect),
                (_, Some(_)) => {}
                (
                    Terminator::Branch {
                        taken, fallthrough, ..
                    },
                    None,
                ) => {
                    add(ExitTo::Direct { target: taken.0 });
                    add(ExitTo::Direct {
                        target: fallthrough.0,
                    });
                }
                (
                    Terminator::Jump { target }
                    | Terminator::Fallthrough { next: target }
                    | Terminator::Call { target, .. },
                    None,
                ) => add(ExitTo::Direct { target: target.0 }),
                (
                    Terminator::Return { .. }
                    | Terminator::IndirectJump { .. }
                    | Terminator::IndirectCall { .. },
                    None,
                ) => add(ExitTo::Indirect),
                (Terminator::Syscall { .. } | Terminator::Trap { .. }, None) => {
                    unreachable!("superblock member {i} of {n} ends in a syscall or trap")
                }
            }
            if m.next == Next::Head {
                add(ExitTo::Loop);
            }
        }
        Plan {
            id,
            members,
            exits,
            count_loops: false,
        }
    }

    /// The exits that loop back to the head, in exit order: loop counter
    /// `l` counts the passes that end at the l-th (contract I2).
    pub fn loop_exits(&self) -> Vec<u32> {
        self.exits
            .iter()
            .filter(|x| x.to == ExitTo::Loop)
            .map(|x| x.index)
            .collect()
    }

    /// Can the passes that loop back be counted (contract I2)? At most
    /// `LOOP_COUNTERS` loop exits, each closed by a direct jump, branch or
    /// call, and each of whose passes ends in the calling context it
    /// started in, so that a count stands for them all: `keeps_context(m)`
    /// for the path to loop member `m` (a path without calls or returns,
    /// or one the monitor replays in bulk: monitor/tables/memo.rs).
    pub fn loops_countable(&self, keeps_context: impl Fn(usize) -> bool) -> bool {
        let n = self.loop_exits().len();
        (1..=crate::contract::LOOP_COUNTERS).contains(&n)
            && self.members.iter().enumerate().all(|(i, m)| {
                m.next != Next::Head
                    || matches!(
                        m.ir.term,
                        Terminator::Jump { .. }
                            | Terminator::Branch { .. }
                            | Terminator::Fallthrough { .. }
                            | Terminator::Call { .. }
                    ) && keeps_context(i)
            })
    }

    pub fn guest_insns(&self) -> u32 {
        self.members.iter().map(|m| m.ir.guest_insns()).sum()
    }

    /// Each member's parent (the member it follows; `u16::MAX` for the
    /// head): the member before it, the branch whose cold side it is, or
    /// the indirect transfer whose alternate it is (I2).
    pub fn parents(&self) -> Vec<u16> {
        let mut parents = vec![u16::MAX; self.members.len()];
        for (i, m) in self.members.iter().enumerate() {
            if m.next == Next::Member {
                parents[i + 1] = i as u16;
            }
            if let Some(c) = m.cold {
                parents[c as usize] = i as u16;
            }
            // Alternates come after the member before them in the chain,
            // whose parent is set by then.
            if let Some(a) = m.alt {
                parents[a as usize] = parents[i];
            }
        }
        parents
    }

    /// I2: the alternates of member `i`'s indirect transfer, in the order
    /// they are tested (empty for any other member).
    pub fn alternates(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        if self.members[i].ir.term.class() != ExitClass::Indirect {
            return out;
        }
        let mut at = self.members[i].cold;
        while let Some(c) = at {
            let c = c as usize;
            if c >= self.members.len() || out.contains(&c) {
                break;
            }
            out.push(c);
            at = self.members[c].alt;
        }
        out
    }

    /// Members on the first path (the trace the tree grew from).
    pub fn spine(&self) -> usize {
        self.members
            .iter()
            .position(|m| m.next != Next::Member)
            .map_or(self.members.len(), |i| i + 1)
    }

    /// Is the plan well formed: every member but the head has one parent
    /// (an earlier member), a cold side goes on in the member at the
    /// branch's other target, and an indirect transfer's alternates are
    /// later members at addresses of their own (I2)?
    pub fn check(&self) -> bool {
        let mut seen = vec![0u32; self.members.len()];
        let mut chained = vec![false; self.members.len()];
        for (i, m) in self.members.iter().enumerate() {
            if m.next == Next::Member {
                match self.members.get(i + 1) {
                    Some(_) => seen[i + 1] += 1,
                    None => return false,
                }
            }
            if m.alt.is_some() && !chained[i] {
                return false;
            }
            if m.cold.is_some() && m.ir.term.class() == ExitClass::Indirect {
                let hot = match m.next {
                    Next::Member => self.members[i + 1].ir.start,
                    Next::Head => self.members[0].ir.start,
                    Next::Leave => return false,
                };
                let mut targets = vec![hot];
                let mut prev = i;
                let mut at = m.cold;
                while let Some(c) = at {
                    let c = c as usize;
                    if c <= prev || c >= self.members.len() {
                        return false;
                    }
                    let start = self.members[c].ir.start;
                    if targets.contains(&start) {
                        return false;
                    }
                    targets.push(start);
                    chained[c] = true;
                    seen[c] += 1;
                    prev = c;
                    at = self.members[c].alt;
                }
                continue;
            }
            if let Some(c) = m.cold {
                let c = c as usize;
                let hot = match m.next {
                    Next::Member => self.members[i + 1].ir.start,
                    Next::Head => self.members[0].ir.start,
                    Next::Leave => return false,
                };
                let Terminator::Branch {
                    taken, fallthrough, ..
                } = m.ir.term
                else {
                    return false;
                };
                let other = if hot == taken { fallthrough } else { taken };
                if c <= i || c >= self.members.len() || self.members[c].ir.start != other {
                    return false;
                }
                seen[c] += 1;
            }
        }
        seen[0] == 0 && seen[1..].iter().all(|&n| n == 1)
    }
}

/// The IR text `dump` prints (IR I2 for each member, with the layout).
impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "superblock {} head {} ({} members, {} guest insns)",
            self.id,
            self.members[0].ir.start,
            self.members.len(),
            self.guest_insns()
        )?;
        for (i, m) in self.members.iter().enumerate() {
            write!(f, "member {i} (block {}): ", m.block)?;
            write!(f, "{}", m.ir)?;
            let next = match m.next {
                Next::Member => "next member".to_string(),
                Next::Head => "loop to head".to_string(),
                Next::Leave => "leave".to_string(),
            };
            let alts = self.alternates(i);
            match m.cold {
                Some(_) if !alts.is_empty() => {
                    let alts: Vec<String> = alts.iter().map(|a| format!("member {a}")).collect();
                    writeln!(f, "  -> {next}; other targets -> {}", alts.join(", "))?
                }
                Some(c) => writeln!(f, "  -> {next}; cold side -> member {c}")?,
                None => writeln!(f, "  -> {next}")?,
            }
        }
        for e in &self.exits {
            match e.to {
                ExitTo::Direct { target } => writeln!(
                    f,
                    "exit {} from member {} to {target:#x}",
                    e.index, e.member
                )?,
                ExitTo::Indirect => {
                    writeln!(f, "exit {} from member {} indirect", e.index, e.member)?
                }
                ExitTo::Loop => {
                    writeln!(f, "exit {} from member {} loops to head", e.index, e.member)?
                }
            }
        }
        Ok(())
    }
}
