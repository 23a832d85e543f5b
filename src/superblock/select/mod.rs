//! Superblock selection: from the head, follow the hottest successor by
//! the monitor's edge counts (next-executing-tail style) until a limit, a
//! syscall or trap, the head again (a loop: jump back to the start), or
//! the head of another superblock (leave, and link to it) that is not a
//! fragment (I3).
//!
//! This file holds the size limits, what selection asks of the block graph
//! ([`Graph`]), the straight trace ([`select`]) and the trace along an
//! explicit path ([`check_path`]). How a trace is laid out (a tree, its
//! loop unrolled: [`shape`]) is in select/shape.rs; the estimates of how
//! many blocks a pass covers and how many ring words it costs are in
//! select/cost.rs.
//!
//! I1: every member but the last continues into the next one along an
//!     edge the monitor saw; an indirect edge is followed only when it and
//!     the next hottest targets, up to [`MAX_TARGETS`] of them, carry at
//!     least half of its block's executions (the guard, which tests those
//!     targets once a tree has them, ir/superblock.rs I2, is then likely
//!     to hold).
//! I2: a counted superblock is built only where its passes are expected
//!     to cover `min_yield` ([`PAYS_OFF`] by default) blocks per ring word
//!     they cost, by the edge
//!     counts at the time (a trace through a branch taken half the time
//!     leaves after its first block half the time).
//! I3: a superblock of at most [`FRAGMENT`] members is a fragment, and
//!     selection goes on through its head (copies its blocks) instead of
//!     stopping there: linking to it costs a ring word every few blocks.
//!     Fragments appear where a short piece of a hot path reached its
//!     trigger before the path's own head did (sqlite3's `GetVarint`
//!     tail between the b-tree search loop's call and its return), and
//!     cut every later trace through it in two. Measured (AMD EPYC,
//!     2026-11), ring words with fragments of at most 3 and 6 members:
//!     python3 `py-loop` 343 M -> 187 M, 185 M; sqlite3 398 M -> 313 M,
//!     294 M; lua 332 M -> 267 M, 252 M; perl-hash 150 M -> 116 M, 100 M
//!     (6 against 3, interleaved, fastest of 4-6: 0.84-1.0). Going on
//!     through every head instead halved the words too, but made four
//!     times the superblock code, and building it stalled the monitor
//!     (perl 0.2 s -> 0.9 s of building, 10-30 % slower).

mod cost;
mod shape;
#[cfg(test)]
mod tests;

use super::Next;
use crate::cache::BlockMeta;
use crate::monitor::ExitKind;
use cost::{expected_blocks, ring_words};
use shape::unroll;

pub use cost::{counting_pays, PAYS_OFF};
pub use shape::{shape, Pick};

/// Most targets an indirect transfer inside a superblock tests: the hot
/// one and its alternates (ir/superblock.rs I2).
pub const MAX_TARGETS: usize = 3;

/// Most members of a fragment (I3).
pub const FRAGMENT: usize = 6;

/// Size limits of one superblock.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_blocks: usize,
    pub max_insns: u32,
    /// Most copies of a loop closed at the head (1: no unrolling).
    pub unroll: usize,
    /// I2: blocks a pass should cover per ring word it costs
    /// (`--sb-min-yield`, default [`PAYS_OFF`]; 0: no bar).
    pub min_yield: f64,
    /// shape.rs I1: most members of a tree, every path counted
    /// (`--sb-tree-blocks`; at most `max_blocks`: straight traces only).
    pub tree_blocks: usize,
    /// shape.rs I1: lay out a branch's cold side when at least this share
    /// of the passes should take it (`--sb-tree-share`).
    pub tree_share: f64,
    /// Passes that loop back are counted, not pushed (contract I2), where
    /// the plan allows (`--sb-no-loop-counters` turns it off), from
    /// `loop_limit` (`--sb-loop-limit`).
    pub count_loops: bool,
    pub loop_limit: u32,
}

/// What selection needs to know about blocks.
pub trait Graph {
    fn meta(&self, id: u32) -> Option<BlockMeta>;
    /// The hottest successor of `id` seen so far and how often, with the
    /// block's own execution count.
    fn hottest(&self, id: u32) -> Option<(u32, u64, u64)>;
    /// Can `id` be linked to (live in the current generation)?
    fn live(&self, id: u32) -> bool;
    /// Does a trace stop before `id`: the head of a published superblock
    /// (not a fragment's, I3), or a longjmp's landing site (tables
    /// landing.rs I4)?
    fn stops_at(&self, id: u32) -> bool;
    /// Both successors of `id` seen first (its ways: a branch's two
    /// sides), each with its transitions, and the block's own count.
    fn successors(&self, id: u32) -> Option<([(u32, u64); 2], u64)>;
    /// The targets of `id`'s indirect exit seen so far, most frequent
    /// first, each with its transitions, and the block's own count.
    fn targets(&self, id: u32) -> Option<(Vec<(u32, u64)>, u64)> {
        if let Some((ways, total)) = self.successors(id) {
            let mut t: Vec<(u32, u64)> = ways.into_iter().filter(|w| w.1 > 0).collect();
            t.sort_by_key(|x| std::cmp::Reverse(x.1));
            return Some((t, total));
        }
        let (b, n, total) = self.hottest(id)?;
        Some((vec![(b, n)], total))
    }
}

/// I1: may a trace go on from block `id` (ending in an indirect transfer)
/// into its hottest target, `n` of its `total` executions?
pub(super) fn indirect_goes_on(g: &impl Graph, id: u32, n: u64, total: u64) -> bool {
    if 2 * n >= total {
        return true;
    }
    let covered: u64 = g
        .targets(id)
        .map(|(t, _)| t.iter().take(MAX_TARGETS).map(|x| x.1).sum())
        .unwrap_or(n);
    2 * covered >= total
}

/// The members (block ids, and how each continues) of a superblock headed
/// by `head`, or None when there is nothing worth building there.
pub fn select(head: u32, g: &impl Graph, lim: Limits) -> Option<Vec<(u32, Next)>> {
    let ends = |m: &BlockMeta| matches!(m.exit, ExitKind::Syscall | ExitKind::Trap);
    let hm = g.meta(head)?;
    if ends(&hm) || !g.live(head) {
        return None;
    }
    let mut members = vec![(head, Next::Leave)];
    let mut insns = hm.insns;
    loop {
        let (cur, _) = *members.last().expect("the head is a member");
        let m = g.meta(cur)?;
        let Some((succ, n, total)) = g.hottest(cur) else {
            break;
        };
        if m.exit.indirect() && !indirect_goes_on(g, cur, n, total) {
            break;
        }
        if succ == head {
            members.last_mut().expect("nonempty").1 = Next::Head;
            break;
        }
        let Some(sm) = g.meta(succ) else { break };
        if ends(&sm)
            || !g.live(succ)
            || g.stops_at(succ)
            || members.iter().any(|&(b, _)| b == succ)
            || members.len() >= lim.max_blocks
            || insns + sm.insns > lim.max_insns
        {
            break;
        }
        members.last_mut().expect("nonempty").1 = Next::Member;
        members.push((succ, Next::Leave));
        insns += sm.insns;
    }
    // Judged as laid out: a loop unrolled (shape()), where its pass covers
    // several iterations.
    let laid_out = unroll(members.clone(), insns, lim);
    if expected_blocks(&laid_out, g) < lim.min_yield * ring_words(&laid_out, g) {
        // Not worth a superblock (I2): the head alone, which the builder
        // leaves as it is.
        return Some(vec![(head, Next::Leave)]);
    }
    Some(members)
}

/// Can control go from block `from` straight into block `to`? Direct
/// exits only to their own targets; an indirect exit anywhere (the
/// superblock guards the target); syscalls and traps never.
pub fn follows(from: &BlockMeta, to: &BlockMeta) -> bool {
    match from.exit {
        ExitKind::Jump | ExitKind::Call | ExitKind::Fallthrough => from.target == to.guest,
        ExitKind::Branch => from.target == to.guest || from.next == to.guest,
        ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return => true,
        ExitKind::Syscall | ExitKind::Trap => false,
    }
}

/// The members of a superblock along an explicit `path` (head first: a
/// mined pattern or a stored trace), or None when not even its head can
/// be built. The path is cut before the first block that cannot follow
/// the one before it (`follows`), is not live, heads another superblock,
/// ends in a syscall or trap, repeats a member, or would pass the limits;
/// when the last member's direct exit can go back to the head, the loop
/// closes there (and is unrolled like a counted one) — also for a path of
/// the head alone (a one-block loop), but not for a longer path cut down
/// to its head.
pub fn check_path(path: &[u32], g: &impl Graph, lim: Limits) -> Option<Vec<(u32, Next)>> {
    let ends = |m: &BlockMeta| matches!(m.exit, ExitKind::Syscall | ExitKind::Trap);
    let &head = path.first()?;
    let hm = g.meta(head)?;
    if ends(&hm) || !g.live(head) {
        return None;
    }
    let mut members = vec![(head, Next::Leave)];
    let mut insns = hm.insns;
    let mut last = hm;
    for &b in &path[1..] {
        let Some(m) = g.meta(b) else { break };
        if !follows(&last, &m)
            || ends(&m)
            || !g.live(b)
            || g.stops_at(b)
            || members.iter().any(|&(x, _)| x == b)
            || members.len() >= lim.max_blocks
            || insns + m.insns > lim.max_insns
        {
            break;
        }
        members.last_mut().expect("nonempty").1 = Next::Member;
        members.push((b, Next::Leave));
        insns += m.insns;
        last = m;
    }
    if (members.len() > 1 || path.len() == 1) && !last.exit.indirect() && follows(&last, &hm) {
        members.last_mut().expect("nonempty").1 = Next::Head;
    }
    Some(members)
}
