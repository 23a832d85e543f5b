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
pub mod record;
mod review;
pub mod select;

use crate::ir::Terminator;

pub use crate::ir::superblock::{Exit, ExitTo, Member, Next, Plan};
pub use build::Builder;
pub use select::{check_path, select, Limits};

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

/// A superblock published in code-cache generation `gen`, as a forked
/// child's monitor takes it over (dispatch/fork.rs F2, tables/units.rs
/// I4): its id, head block and account.
#[derive(Debug, Clone)]
pub struct Adoptable {
    pub id: u32,
    pub gen: u64,
    pub head: u32,
    pub acc: crate::monitor::tables::SbAccount,
}

/// What a process's builder has published (build.rs I3), where a fork
/// finds it: a lock only the builder takes, between rounds, so a paused
/// monitor holds it never (monitor I4).
pub type Published = std::sync::Arc<std::sync::Mutex<Vec<Adoptable>>>;

/// The calls and returns between `plan`'s members, in layout order of
/// the member each enters (tables/units.rs replays them for every pass
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
