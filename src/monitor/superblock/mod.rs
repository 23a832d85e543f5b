//! Superblocks: hot paths the monitor lays out as one straight-line host
//! block (design S1: the monitor is the decision maker).
//!
//! Past a threshold (a block entered by a direct transfer 3000 times, an
//! indirect edge taken 5000 times) the monitor asks for a superblock
//! headed there (`Tables::requests`). [`select`] follows the hottest
//! successors by the monitor's edge counts; the builder (build.rs) lifts
//! the members again from guest memory, emits them with
//! `backend::emit_superblock` into the superblock arena, and publishes the
//! result by patching the head block's entry into a jump, while the guest
//! keeps running.
//!
//! Exactness: a pass through a superblock pushes one ring word, at its
//! end: the unit of the exit it leaves by (`unit_base + k`), a loop back
//! to the start included (the unit of that loop exit, then on at the
//! start). A thread that leaves abnormally (a fault, a store into code, a
//! signal) has the partial unit of the member it was in pushed for it by
//! the dispatcher: the members from the head to that one ran. Each unit
//! stands for a fixed path of members, so the monitor handles a pass like
//! one block and counts every member block and every edge exactly as if
//! the members had run one by one (tables/units.rs).
//!
//! I1: a superblock's members are live blocks of one code-cache
//!     generation, and everything it links to too; it is published only if
//!     that generation is still current (cache/shared.rs I1).
//! I2: the monitor knows a superblock and has its units
//!     (Tables::add_superblock) before its code can run, so every word
//!     naming it is understood.

pub mod build;
pub mod pisat;
mod review;
pub mod select;

use std::fmt;

use crate::ir::{IrBlock, Terminator};

pub use build::Builder;
pub use select::{check_path, select, Limits};

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
    /// leaving (a tree: select/shape.rs I1).
    pub cold: Option<u16>,
}

/// How a superblock was asked for.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Trigger {
    /// The head's execution count reached `threshold`, entered by a direct
    /// transfer.
    Block { count: u64, threshold: u64 },
    /// The indirect edge `from` → head was taken `threshold` times.
    IndirectEdge {
        from: u64,
        count: u64,
        threshold: u64,
    },
    /// A pattern mined from the block streams (`--selector pisat`, design
    /// S2): `length` blocks, held by `sequences` of the `database`
    /// sequences mined then, repeated `repeats` times (distinct starts) in
    /// one of them (pisat/mod.rs).
    Mined {
        length: u32,
        sequences: u32,
        repeats: u32,
        database: u32,
    },
    /// A trace from the profile store (src/store), pre-built as soon as
    /// its blocks existed: the store's `version` for the program when
    /// read, and `count`, the runs that had built it.
    Stored { version: u64, count: u64 },
}

/// A superblock request from the monitor's tables, or from another
/// selector that already knows the path it wants.
#[derive(Debug, Clone)]
pub struct Request {
    pub head: u32,
    pub trigger: Trigger,
    /// The members to lay out, head first (a mined pattern, a stored
    /// trace): checked by [`select::check_path`] instead of following the
    /// hottest successors. `None`: [`select`] chooses.
    pub path: Option<std::sync::Arc<[u32]>>,
}

impl Request {
    /// A request that lets [`select`] follow the hottest successors.
    pub fn counted(head: u32, trigger: Trigger) -> Request {
        Request {
            head,
            trigger,
            path: None,
        }
    }
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
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
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
    /// `LOOP_COUNTERS` loop exits, each closed by a direct jump or
    /// branch, and no call or return between members: a counted pass
    /// stands for its path's blocks and edges alone, nothing to replay.
    pub fn loops_countable(&self) -> bool {
        let n = self.loop_exits().len();
        (1..=crate::contract::LOOP_COUNTERS).contains(&n)
            && self.pass_ops().is_empty()
            && self.members.iter().all(|m| {
                m.next != Next::Head
                    || matches!(
                        m.ir.term,
                        Terminator::Jump { .. }
                            | Terminator::Branch { .. }
                            | Terminator::Fallthrough { .. }
                    )
            })
    }

    pub fn guest_insns(&self) -> u32 {
        self.members.iter().map(|m| m.ir.guest_insns()).sum()
    }

    /// Each member's parent (the member it follows; `u16::MAX` for the
    /// head): the member before it, or the branch whose cold side it is.
    pub fn parents(&self) -> Vec<u16> {
        let mut parents = vec![u16::MAX; self.members.len()];
        for (i, m) in self.members.iter().enumerate() {
            if m.next == Next::Member {
                parents[i + 1] = i as u16;
            }
            if let Some(c) = m.cold {
                parents[c as usize] = i as u16;
            }
        }
        parents
    }

    /// Members on the first path (the trace the tree grew from).
    pub fn spine(&self) -> usize {
        self.members
            .iter()
            .position(|m| m.next != Next::Member)
            .map_or(self.members.len(), |i| i + 1)
    }

    /// Is the plan well formed: every member but the head has one parent
    /// (an earlier member), and a cold side goes on in the member at the
    /// branch's other target?
    pub fn check(&self) -> bool {
        let mut seen = vec![0u32; self.members.len()];
        for (i, m) in self.members.iter().enumerate() {
            if m.next == Next::Member {
                match self.members.get(i + 1) {
                    Some(_) => seen[i + 1] += 1,
                    None => return false,
                }
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

    /// The calls and returns between members, in order (tables/units.rs
    /// replays them for every pass whose path holds them). A loop back to
    /// the start is not among them: it is how the loop exit's unit ends.
    pub fn pass_ops(&self) -> Vec<crate::monitor::tables::PassOp> {
        let mut ops = Vec::new();
        for (i, m) in self.members.iter().enumerate() {
            if m.next != Next::Member {
                continue;
            }
            let to = self.members[i + 1].ir.start.0;
            let call = match m.ir.term {
                Terminator::Call { return_to, .. } | Terminator::IndirectCall { return_to, .. } => {
                    Some(return_to.0)
                }
                Terminator::Return { .. } => None,
                _ => continue,
            };
            ops.push(crate::monitor::tables::PassOp {
                at: (i + 1) as u16,
                call,
                to,
            });
        }
        ops
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
            match m.cold {
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
