//! The second tier: superblocks, hot paths laid out as one straight-line
//! host block (design S1: the monitor thread is the decision maker). It
//! runs on the monitor thread between the profile consumer's drain rounds
//! (tier.rs, `monitor::SecondTier`), above the consumer (src/monitor),
//! whose tables it reads and whose requests it takes; the consumer knows
//! it only through that trait.
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
//! the members had run one by one (monitor/tables/units.rs).
//!
//! I1: a superblock's members are live blocks of one code-cache
//!     generation, and everything it links to too; it is published only if
//!     that generation is still current (cache/shared.rs I1).
//! I2: the monitor knows a superblock and has its units
//!     (Tables::add_superblock) before its code can run, so every word
//!     naming it is understood.

pub mod build;
mod members;
pub mod pisat;
pub mod record;
mod review;
pub mod select;
pub mod tier;

use crate::ir::Terminator;

pub use crate::ir::superblock::{Exit, ExitTo, Member, Next, Plan};
pub use build::Builder;
pub use select::{check_path, select, Limits};
pub use tier::{Outcome, Outcomes, Slots, Tier};

pub use crate::monitor::{Request, Trigger};

/// A superblock published in code-cache generation `gen`, as a forked
/// child's monitor takes it over (dispatch/fork.rs F2, monitor/tables/units.rs
/// I4): its id, head block, what the child's tables and builder need at
/// once (`sb`, `fragment`), and its account (shared: a child takes every
/// one over and copies only those whose units run in it). A child reads
/// only this log at its start, not the accounts, which lie all over the
/// parent's heap: reading three fields of each was 0.3 ms of a python
/// child's monitor.
#[derive(Debug, Clone)]
pub struct Adoptable {
    pub id: u32,
    pub gen: u64,
    pub head: u32,
    pub sb: crate::monitor::tables::InheritedSb,
    /// Short enough to be copied into traces (`select` I3).
    pub fragment: bool,
    pub acc: std::sync::Arc<crate::monitor::tables::SbAccount>,
}

/// What a process's builder has published (build.rs I3), where a fork
/// finds it: a lock only the builder takes, between rounds, so a paused
/// monitor holds it never (monitor I4).
pub type Published = std::sync::Arc<std::sync::Mutex<Vec<Adoptable>>>;

/// The calls and returns between `plan`'s members, in layout order of
/// the member each enters (monitor/tables/units.rs replays them for every pass
/// whose path holds them): into the next member, and into each alternate
/// target of an indirect call or return (ir/superblock.rs I2). A loop
/// back to the start is not among them: it is how the loop exit's unit
/// ends.
pub fn pass_ops(plan: &Plan) -> Vec<crate::monitor::tables::PassOp> {
    let mut ops = Vec::new();
    for (i, m) in plan.members.iter().enumerate() {
        let call = match m.ir.term {
            Terminator::Call { return_to, .. } | Terminator::IndirectCall { return_to, .. } => {
                Some(return_to.0)
            }
            Terminator::Return { .. } => None,
            _ => continue,
        };
        let next = (m.next == Next::Member).then_some(i + 1);
        for at in next.into_iter().chain(plan.alternates(i)) {
            ops.push(crate::monitor::tables::PassOp {
                at: at as u16,
                call,
                to: plan.members[at].ir.start.0,
            });
        }
    }
    ops.sort_by_key(|op| op.at);
    ops
}
