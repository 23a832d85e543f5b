//! How a trace that selection chose (select/mod.rs) is laid out: grown into
//! a tree where a branch's cold side is taken often ([`grow_tree`]), its
//! loop unrolled ([`unroll`]), or both; [`shape`] picks the layout
//! expected to cost the fewest ring words (by select/cost.rs).
//!
//! I1: a trace grows into a tree ([`grow_tree`]) where a branch's cold
//!     side is taken by at least `tree_share` of the passes: the cold side
//!     continues into members of its own (laid out after everything
//!     before them) instead of leaving, following the hottest successors
//!     again, so that a loop body whose branches go either way runs each
//!     iteration in the superblock, one ring word per iteration whichever
//!     path it took. An indirect transfer's other targets grow paths the
//!     same way, where each is taken by at least `tree_share` of the
//!     passes: up to [`MAX_TARGETS`] targets in all, tested in turn
//!     (ir/superblock.rs I2), so that a loop calling through a function
//!     pointer that rotates among a few functions runs each iteration in
//!     the superblock too. A cold path stops like a trace (the head: a
//!     loop; limits, syscalls, other heads: leave; an indirect transfer
//!     whose targets are spread, select/mod.rs I1) and also before a block it
//!     already holds on its own path. Calls and returns may be on any
//!     path (monitor/tables/units.rs I1 replays each path's own).
//! I2: a loop that is unrolled (`--sb-unroll`) may also grow its tree
//!     over the unrolled trace ([`shape`]): a cold path then goes on
//!     through the head into the next iteration, up to as many iterations
//!     as the trace has, and stops only before a block it already holds
//!     in the same iteration. Of one iteration's tree, the unrolled tree
//!     and the unrolled trace, the one expected to cost the fewest ring
//!     words per iteration is built: a branchy loop body whose paths all
//!     fit twice costs half a word per iteration (c-nest 2 1: 123 million
//!     words -> 64 million).
use super::cost::{go_on, words_per_iteration};
use super::{indirect_goes_on, Graph, Limits, MAX_TARGETS};
use crate::cache::BlockMeta;
use crate::monitor::ExitKind;
use crate::superblock::Next;

/// One member of a tree as selected: its block, how its hot side goes
/// on, and the member its cold side goes on in (None: a side exit); for
/// an indirect transfer, `cold` is its first other target's member and
/// `alt` of each such member the next one (ir/superblock.rs I2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    pub block: u32,
    pub next: Next,
    pub cold: Option<u16>,
    pub alt: Option<u16>,
}

/// An indirect exit's targets with their counts, and its block's count
/// ([`Graph::targets`]).
type Targets = (Vec<(u32, u64)>, u64);

/// The members of indirect member `i`'s alternates chain, in order.
pub(super) fn chain(tree: &[Pick], i: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = tree[i].cold;
    while let Some(c) = at.map(usize::from).filter(|&c| c < tree.len()) {
        out.push(c);
        at = tree[c].alt;
    }
    out
}

/// I1: grow the straight trace `trace` (as [`select`](super::select)
/// chose it) into a tree. Members keep their order; each cold path comes
/// after everything before it, its first member being its branch's
/// `cold`.
pub(super) fn grow_tree(trace: &[(u32, Next)], g: &impl Graph, lim: Limits) -> Vec<Pick> {
    grow_tree_over(trace, g, lim, 1)
}

/// A straight trace's members as a tree without cold paths.
fn as_tree(trace: &[(u32, Next)]) -> Vec<Pick> {
    trace
        .iter()
        .map(|&(block, next)| Pick {
            block,
            next,
            cold: None,
            alt: None,
        })
        .collect()
}

/// [`grow_tree`] where a cold path may go on through the head into up to
/// `iterations` iterations of its loop in all (I2): the tree of a loop
/// unrolled (`trace` being the unrolled trace).
fn grow_tree_over(
    trace: &[(u32, Next)],
    g: &impl Graph,
    lim: Limits,
    iterations: usize,
) -> Vec<Pick> {
    let mut tree = as_tree(trace);
    if lim.tree_blocks <= tree.len() {
        return tree;
    }
    // Indirect members with no other target left to lay out.
    let mut closed = vec![false; tree.len()];
    // Each indirect member's targets (a scan of the edge cache: once).
    let mut targets: std::collections::HashMap<u32, Option<Targets>> =
        std::collections::HashMap::new();
    // Per member: how often a pass gets there, and its path (member
    // indices from the head), for the cold paths grown from it.
    let mut reach = Vec::with_capacity(tree.len());
    let mut paths: Vec<Vec<usize>> = Vec::with_capacity(tree.len());
    let mut r = 1.0;
    for (i, p) in tree.iter().enumerate() {
        reach.push(r);
        let mut path = paths.last().cloned().unwrap_or_default();
        path.push(i);
        paths.push(path);
        r *= go_on(p.block, g);
    }
    let head = tree[0].block;
    let ends = |m: &BlockMeta| matches!(m.exit, ExitKind::Syscall | ExitKind::Trap);
    loop {
        // The most frequent cold side still leaving, or other target of
        // an indirect transfer still not tested.
        let mut best: Option<(usize, u32, f64)> = None;
        for i in 0..tree.len() {
            let p = tree[i];
            if p.next == Next::Leave || closed.get(i).copied().unwrap_or(false) {
                continue;
            }
            let Some(m) = g.meta(p.block) else { continue };
            let hot = match p.next {
                Next::Member => tree[i + 1].block,
                _ => head,
            };
            let found = if m.exit == ExitKind::Branch {
                if p.cold.is_some() {
                    continue;
                }
                g.successors(p.block).and_then(|(ways, total)| {
                    let (cold, n) = ways.into_iter().find(|&(w, n)| w != hot && n > 0)?;
                    (total > 0).then(|| (i, cold, reach[i] * n as f64 / total as f64))
                })
            } else if m.exit.indirect() {
                let tested = chain(&tree, i);
                if tested.len() + 1 >= MAX_TARGETS {
                    continue;
                }
                let known = targets.entry(p.block).or_insert_with(|| g.targets(p.block));
                known.as_ref().and_then(|(t, total)| {
                    let &(cold, n) = t.iter().find(|&&(b, n)| {
                        n > 0 && b != hot && !tested.iter().any(|&c| tree[c].block == b)
                    })?;
                    (*total > 0).then(|| (i, cold, reach[i] * n as f64 / *total as f64))
                })
            } else {
                None
            };
            if let Some(c) = found.filter(|c| c.2 >= lim.tree_share) {
                // The last of equals, as `max_by` would.
                if best.is_none_or(|b| c.2 >= b.2) {
                    best = Some(c);
                }
            }
        }
        let Some((from, cold, share)) = best else {
            break;
        };
        // Follow the hottest successors from the cold side (I1).
        let mut path = paths[from].clone();
        let mut insns: u32 = path
            .iter()
            .filter_map(|&i| g.meta(tree[i].block))
            .map(|m| m.insns)
            .sum();
        let mut new: Vec<Pick> = Vec::new();
        let mut b = cold;
        let mut closes = None;
        // Iterations the path has begun (the head's copies on it).
        let mut heads = path.iter().filter(|&&i| tree[i].block == head).count();
        loop {
            if b == head {
                if heads >= iterations {
                    closes = Some(Next::Head);
                    break;
                }
                heads += 1;
            }
            let Some(m) = g.meta(b) else { break };
            // A block the path holds already in this iteration (I2: the
            // same block in an earlier one is another copy of it).
            let on_path = b != head
                && path
                    .iter()
                    .map(|&i| tree[i].block)
                    .chain(new.iter().map(|p| p.block))
                    .rev()
                    .take_while(|&x| x != head)
                    .any(|x| x == b);
            if ends(&m)
                || !g.live(b)
                || g.stops_at(b)
                || on_path
                || path.len() + new.len() >= lim.max_blocks
                || tree.len() + new.len() >= lim.tree_blocks
                || insns + m.insns > lim.max_insns
            {
                break;
            }
            insns += m.insns;
            new.push(Pick {
                block: b,
                next: Next::Leave,
                cold: None,
                alt: None,
            });
            let Some((succ, n, total)) = g.hottest(b) else {
                break;
            };
            if m.exit.indirect() && !indirect_goes_on(g, b, n, total) {
                break;
            }
            if let Some(last) = new.last_mut() {
                last.next = Next::Member;
            }
            b = succ;
        }
        let is_branch = g
            .meta(tree[from].block)
            .is_some_and(|m| m.exit == ExitKind::Branch);
        if new.is_empty() {
            // Nothing to lay out there: mark it, so it is not chosen again.
            if is_branch {
                tree[from].cold = Some(u16::MAX);
            } else {
                closed[from] = true;
            }
            continue;
        }
        let last = new.len() - 1;
        // The loop above set `next` ahead of knowing the successor fits.
        new[last].next = closes.unwrap_or(Next::Leave);
        let first = tree.len();
        match chain(&tree, from).last() {
            Some(&c) if !is_branch => tree[c].alt = Some(first as u16),
            _ => tree[from].cold = Some(first as u16),
        }
        closed.resize(first + new.len(), false);
        let mut rr = share;
        for (k, p) in new.into_iter().enumerate() {
            path.push(first + k);
            paths.push(path.clone());
            reach.push(rr);
            rr *= go_on(p.block, g);
            tree.push(p);
        }
    }
    for p in &mut tree {
        if p.cold == Some(u16::MAX) {
            p.cold = None;
        }
    }
    tree
}

/// The superblock for trace `trace` (from [`select`](super::select) or
/// [`check_path`](super::check_path)): a tree where cold sides are taken
/// often enough ([`grow_tree`]), else the trace, its loop unrolled
/// ([`unroll`]).
///
/// For a loop both may do: the one expected to cost fewer ring words per
/// iteration wins. A pass costs its word, and one that leaves costs about
/// [`OFF_TRACE_WORDS`](super::cost::OFF_TRACE_WORDS) more before the loop is back at the head: an
/// unrolled trace whose path loops with probability p runs
/// 1 + p + … + p^(k-1) iterations a pass and leaves with 1 - p^k; a
/// tree runs one iteration a pass and leaves as often as its loop exits
/// are not taken.
pub fn shape(trace: &[(u32, Next)], g: &impl Graph, lim: Limits) -> Vec<Pick> {
    let tree = grow_tree(trace, g, lim);
    let insns = trace
        .iter()
        .filter_map(|&(b, _)| g.meta(b))
        .map(|m| m.insns)
        .sum();
    let unrolled = unroll(trace.to_vec(), insns, lim);
    let straight = as_tree(&unrolled);
    if tree.len() <= trace.len() {
        return straight;
    }
    let loops = trace.last().is_some_and(|t| t.1 == Next::Head);
    let copies = unrolled.len() / trace.len().max(1);
    if !loops || copies <= 1 {
        return tree;
    }
    // I2: the fewest ring words per iteration; on a tie, the first of
    // one iteration's tree, the unrolled tree, the unrolled trace.
    let unrolled_tree = grow_tree_over(&unrolled, g, lim, copies);
    let cost = |t: &[Pick]| words_per_iteration(t, g, lim);
    let mut best = (cost(&tree), tree);
    for t in [unrolled_tree, straight] {
        let w = cost(&t);
        if w < best.0 {
            best = (w, t);
        }
    }
    best.1
}

/// A loop closed at the head is laid out up to `lim.unroll` times in a
/// row, within the size limits: one unit then covers that many
/// iterations, and a short loop body pays for its word less often.
pub(super) fn unroll(members: Vec<(u32, Next)>, insns: u32, lim: Limits) -> Vec<(u32, Next)> {
    if members.last().map(|m| m.1) != Some(Next::Head) {
        return members;
    }
    let copies = lim
        .unroll
        .min((lim.max_insns / insns.max(1)) as usize)
        .min(lim.max_blocks / members.len())
        .max(1);
    let mut out = Vec::with_capacity(members.len() * copies);
    for c in 0..copies {
        for &(b, next) in &members {
            let next = if next == Next::Head && c + 1 < copies {
                Next::Member
            } else {
                next
            };
            out.push((b, next));
        }
    }
    out
}
