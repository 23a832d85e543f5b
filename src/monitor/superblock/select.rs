//! Superblock selection: from the head, follow the hottest successor by
//! the monitor's edge counts (next-executing-tail style) until a limit, a
//! syscall or trap, the head again (a loop: jump back to the start), or
//! the head of another superblock (leave, and link to it).
//!
//! I1: every member but the last continues into the next one along an
//!     edge the monitor saw; an indirect edge is followed only when it
//!     carries at least half of its block's executions (one guard is then
//!     likely to hold).
//! I2: a counted superblock is built only where its passes are expected
//!     to cover `min_yield` ([`PAYS_OFF`] by default) blocks per ring word
//!     they cost, by the edge
//!     counts at the time (a trace through a branch taken half the time
//!     leaves after its first block half the time).
//! I3: a trace grows into a tree ([`grow_tree`]) where a branch's cold
//!     side is taken by at least `tree_share` of the passes: the cold side
//!     continues into members of its own (laid out after everything
//!     before them) instead of leaving, following the hottest successors
//!     again, so that a loop body whose branches go either way runs each
//!     iteration in the superblock, one ring word per iteration whichever
//!     path it took. A cold path stops like a trace (the head: a loop;
//!     limits, syscalls, other heads: leave) and also before a block it
//!     already holds on its own path and after a call or return (calls
//!     and returns inside are only on the first path, tables/units.rs I1).
//! I5: a loop that is unrolled (`--sb-unroll`) may also grow its tree
//!     over the unrolled trace ([`shape`]): a cold path then goes on
//!     through the head into the next iteration, up to as many iterations
//!     as the trace has, and stops only before a block it already holds
//!     in the same iteration. Of one iteration's tree, the unrolled tree
//!     and the unrolled trace, the one expected to cost the fewest ring
//!     words per iteration is built: a branchy loop body whose paths all
//!     fit twice costs half a word per iteration (c-nest 2 1: 123 million
//!     words -> 64 million).

use super::Next;
use crate::monitor::{BlockMeta, ExitKind};

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
    /// I3: most members of a tree, every path counted (`--sb-tree-blocks`;
    /// at most `max_blocks`: straight traces only).
    pub tree_blocks: usize,
    /// I3: lay out a branch's cold side when at least this share of the
    /// passes should take it (`--sb-tree-share`).
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
    /// Is `id` the head of a published superblock?
    fn is_head(&self, id: u32) -> bool;
    /// Both successors of `id` seen first (its ways: a branch's two
    /// sides), each with its transitions, and the block's own count.
    fn successors(&self, id: u32) -> Option<([(u32, u64); 2], u64)>;
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
        let indirect = matches!(
            m.exit,
            ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return
        );
        if indirect && 2 * n < total {
            break;
        }
        if succ == head {
            members.last_mut().expect("nonempty").1 = Next::Head;
            break;
        }
        let Some(sm) = g.meta(succ) else { break };
        if ends(&sm)
            || !g.live(succ)
            || g.is_head(succ)
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

/// One member of a tree as selected: its block, how its hot side goes
/// on, and the member its cold side goes on in (None: a side exit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    pub block: u32,
    pub next: Next,
    pub cold: Option<u16>,
}

/// I3: grow the straight trace `trace` (as [`select`] chose it) into a
/// tree. Members keep their order; each cold path comes after everything
/// before it, its first member being its branch's `cold`.
pub fn grow_tree(trace: &[(u32, Next)], g: &impl Graph, lim: Limits) -> Vec<Pick> {
    grow_tree_over(trace, g, lim, 1)
}

/// [`grow_tree`] where a cold path may go on through the head into up to
/// `iterations` iterations of its loop in all (I5): the tree of a loop
/// unrolled (`trace` being the unrolled trace).
fn grow_tree_over(
    trace: &[(u32, Next)],
    g: &impl Graph,
    lim: Limits,
    iterations: usize,
) -> Vec<Pick> {
    let mut tree: Vec<Pick> = trace
        .iter()
        .map(|&(block, next)| Pick {
            block,
            next,
            cold: None,
        })
        .collect();
    let calls = trace.iter().any(|&(b, next)| {
        next == Next::Member
            && g.meta(b).is_some_and(|m| {
                matches!(
                    m.exit,
                    ExitKind::Call | ExitKind::IndirectCall | ExitKind::Return
                )
            })
    });
    if lim.tree_blocks <= tree.len() || calls {
        return tree;
    }
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
        // The most frequent cold side still leaving.
        let best = (0..tree.len())
            .filter_map(|i| {
                let p = tree[i];
                if p.next == Next::Leave || p.cold.is_some() {
                    return None;
                }
                let m = g.meta(p.block)?;
                if m.exit != ExitKind::Branch {
                    return None;
                }
                let hot = match p.next {
                    Next::Member => tree.get(i + 1)?.block,
                    _ => head,
                };
                let (ways, total) = g.successors(p.block)?;
                let (cold, n) = ways.into_iter().find(|&(w, n)| w != hot && n > 0)?;
                (total > 0).then(|| (i, cold, reach[i] * n as f64 / total as f64))
            })
            .filter(|&(_, _, share)| share >= lim.tree_share)
            .max_by(|a, b| a.2.total_cmp(&b.2));
        let Some((from, cold, share)) = best else {
            break;
        };
        // Follow the hottest successors from the cold side (I3).
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
            // A block the path holds already in this iteration (I5: the
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
                || g.is_head(b)
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
            });
            if matches!(
                m.exit,
                ExitKind::Call | ExitKind::IndirectCall | ExitKind::Return | ExitKind::IndirectJump
            ) {
                break;
            }
            let Some((succ, _, _)) = g.hottest(b) else {
                break;
            };
            if let Some(last) = new.last_mut() {
                last.next = Next::Member;
            }
            b = succ;
        }
        if new.is_empty() {
            // Nothing to lay out there: mark it, so it is not chosen again.
            tree[from].cold = Some(u16::MAX);
            continue;
        }
        let last = new.len() - 1;
        // The loop above set `next` ahead of knowing the successor fits.
        new[last].next = closes.unwrap_or(Next::Leave);
        let first = tree.len();
        tree[from].cold = Some(first as u16);
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

/// I2: a superblock must save the monitor work: its pass should cover at
/// least this many blocks per ring word it costs. A pass costs one word,
/// handled like a block's (tables/units.rs), so any superblock that often
/// gets past its head saves words; the bar keeps out those that nearly
/// always leave at once (arena space and build time for nothing).
pub const PAYS_OFF: f64 = 1.25;

/// How many of `members` a pass runs, on average: member i+1 runs when
/// member i went on to it, with the probability the edge counts give.
fn expected_blocks(members: &[(u32, Next)], g: &impl Graph) -> f64 {
    let mut reach = 1.0;
    let mut total = 0.0;
    for &(b, next) in members {
        total += reach;
        if next == Next::Leave {
            break;
        }
        reach *= go_on(b, g);
    }
    total
}

/// The probability that block `b` continues into its hottest successor.
fn go_on(b: u32, g: &impl Graph) -> f64 {
    match g.hottest(b) {
        Some((_, n, total)) if total > 0 => (n as f64 / total as f64).min(1.0),
        _ => 1.0,
    }
}

/// Ring words a pass costs: its unit.
fn ring_words(_members: &[(u32, Next)], _g: &impl Graph) -> f64 {
    1.0
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
            || g.is_head(b)
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
    let direct = !matches!(
        last.exit,
        ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return
    );
    if (members.len() > 1 || path.len() == 1) && direct && follows(&last, &hm) {
        members.last_mut().expect("nonempty").1 = Next::Head;
    }
    Some(members)
}

/// The superblock for trace `trace` (from [`select`] or [`check_path`]):
/// a tree where cold sides are taken often enough ([`grow_tree`]), else
/// the trace, its loop unrolled ([`unroll`]).
///
/// For a loop both may do: the one expected to cost fewer ring words per
/// iteration wins. A pass costs its word, and one that leaves costs about
/// [`OFF_TRACE_WORDS`] more before the loop is back at the head: an
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
    let straight: Vec<Pick> = unrolled
        .iter()
        .map(|&(block, next)| Pick {
            block,
            next,
            cold: None,
        })
        .collect();
    if tree.len() <= trace.len() {
        return straight;
    }
    let loops = trace.last().is_some_and(|t| t.1 == Next::Head);
    let copies = unrolled.len() / trace.len().max(1);
    if !loops || copies <= 1 {
        return tree;
    }
    // I5: the fewest ring words per iteration; on a tie, the first of
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

/// Ring words a loop's superblock `tree` should cost per iteration, laid
/// out the cheaper way (see [`loop_costs`]).
fn words_per_iteration(tree: &[Pick], g: &impl Graph, lim: Limits) -> f64 {
    let (pushed, counted) = loop_costs(tree, g, lim);
    counted.map_or(pushed, |c| c.min(pushed))
}

/// Ring words a loop's superblock `tree` should cost per iteration (over
/// the iterations a pass begins: the head's copies it reaches), with every
/// pass pushing its unit, and with its loop passes counted (contract I2)
/// where they can be. Pushed, a pass costs its word, and one that leaves
/// [`OFF_TRACE_WORDS`] more before the loop is back at the head; counted,
/// only the passes that leave cost words: their unit, [`OFF_TRACE_WORDS`]
/// and the loop record (four words and one per loop exit that counted
/// any pass: at most as many as the passes since the loop was entered),
/// whose words the monitor takes on its general path, at about twice a
/// unit word's cost.
fn loop_costs(tree: &[Pick], g: &impl Graph, lim: Limits) -> (f64, Option<f64>) {
    let (share, iterations) = tree_loop_share(tree, g);
    let iterations = iterations.max(f64::MIN_POSITIVE);
    let loops = tree.iter().filter(|p| p.next == Next::Head).count();
    let pushed = (1.0 + (1.0 - share) * OFF_TRACE_WORDS) / iterations;
    let countable = lim.count_loops && (1..=crate::contract::LOOP_COUNTERS).contains(&loops);
    let counted = countable.then(|| {
        let passes = 1.0 / (1.0 - share).max(f64::MIN_POSITIVE);
        let record = 4.0 + (loops as f64).min(passes);
        (1.0 - share) * (1.0 + OFF_TRACE_WORDS + 2.0 * record) / iterations
    });
    (pushed, counted)
}

/// Should the passes of `tree` that loop back be counted instead of
/// pushed (contract I2)? Where that should cost fewer ring words by the
/// edge counts now ([`loop_costs`]); without a bar (`min_yield` 0:
/// experiments and tests) wherever the plan allows.
pub fn counting_pays(tree: &[Pick], g: &impl Graph, lim: Limits) -> bool {
    if lim.min_yield == 0.0 {
        return true;
    }
    match loop_costs(tree, g, lim) {
        (pushed, Some(counted)) => counted < pushed,
        _ => false,
    }
}

/// Ring words a pass that leaves a loop's superblock costs before the loop
/// is back at the head (the rest of the iteration in blocks).
const OFF_TRACE_WORDS: f64 = 2.0;

/// The share of a tree's passes that should loop back to its head, and
/// how many iterations a pass should begin.
fn tree_loop_share(tree: &[Pick], g: &impl Graph) -> (f64, f64) {
    let mut reach = vec![0.0; tree.len()];
    reach[0] = 1.0;
    let mut share = 0.0;
    let mut iterations = 0.0;
    for (i, p) in tree.iter().enumerate() {
        let r = reach[i];
        if p.block == tree[0].block {
            iterations += r;
        }
        let on = go_on(p.block, g);
        let hot = match p.cold {
            // Both sides of a branch: split by its ways.
            Some(c) => {
                let cold_share = g
                    .successors(p.block)
                    .and_then(|(ways, total)| {
                        let c_block = tree[c as usize].block;
                        let n = ways.iter().find(|w| w.0 == c_block)?.1;
                        (total > 0).then(|| n as f64 / total as f64)
                    })
                    .unwrap_or(0.0);
                reach[c as usize] = r * cold_share;
                r * (1.0 - cold_share)
            }
            None => r * on,
        };
        match p.next {
            Next::Member => reach[i + 1] = hot,
            Next::Head => share += hot,
            Next::Leave => {}
        }
    }
    (share, iterations)
}

/// A loop closed at the head is laid out up to `lim.unroll` times in a
/// row, within the size limits: one unit then covers that many
/// iterations, and a short loop body pays for its word less often.
fn unroll(members: Vec<(u32, Next)>, insns: u32, lim: Limits) -> Vec<(u32, Next)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(Default)]
    struct G {
        metas: Vec<BlockMeta>,
        succ: HashMap<u32, (u32, u64, u64)>,
        heads: Vec<u32>,
        /// Both ways, for trees.
        ways: HashMap<u32, [(u32, u64); 2]>,
    }

    impl Graph for G {
        fn meta(&self, id: u32) -> Option<BlockMeta> {
            self.metas.get(id as usize).copied()
        }
        fn hottest(&self, id: u32) -> Option<(u32, u64, u64)> {
            self.succ.get(&id).copied()
        }
        fn live(&self, _: u32) -> bool {
            true
        }
        fn is_head(&self, id: u32) -> bool {
            self.heads.contains(&id)
        }
        fn successors(&self, id: u32) -> Option<([(u32, u64); 2], u64)> {
            let ways = self.ways.get(&id)?;
            let total = ways.iter().map(|w| w.1).sum();
            Some((*ways, total))
        }
    }

    fn m(exit: ExitKind) -> BlockMeta {
        BlockMeta {
            insns: 4,
            exit,
            ..BlockMeta::default()
        }
    }

    const LIM: Limits = Limits {
        max_blocks: 8,
        max_insns: 64,
        unroll: 1,
        min_yield: PAYS_OFF,
        tree_blocks: 1,
        tree_share: 0.02,
        count_loops: false,
        loop_limit: 1,
    };

    #[test]
    fn a_loop_closes_at_the_head() {
        let g = G {
            metas: vec![m(ExitKind::Jump), m(ExitKind::Branch), m(ExitKind::Jump)],
            succ: HashMap::from([(0, (1, 10, 10)), (1, (2, 9, 10)), (2, (0, 9, 9))]),
            heads: vec![],
            ..G::default()
        };
        assert_eq!(
            select(0, &g, LIM).unwrap(),
            vec![(0, Next::Member), (1, Next::Member), (2, Next::Head)]
        );
    }

    #[test]
    fn cold_sides_taken_often_grow_a_tree() {
        // A loop: 0 branches to 1 (hot, 3/4) or 2; 1 branches to 3 (hot)
        // or 4; 2, 3 and 4 jump to 5, which jumps back to 0.
        let ways = |a: u32, an: u64, b: u32, bn: u64| [(a, an), (b, bn)];
        let g = G {
            metas: vec![
                at(0x00, ExitKind::Branch, 0x10, 0x20),
                at(0x10, ExitKind::Branch, 0x30, 0x40),
                at(0x20, ExitKind::Jump, 0x50, 0),
                at(0x30, ExitKind::Jump, 0x50, 0),
                at(0x40, ExitKind::Jump, 0x50, 0),
                at(0x50, ExitKind::Jump, 0x00, 0),
            ],
            succ: HashMap::from([
                (0, (1, 75, 100)),
                (1, (3, 60, 75)),
                (2, (5, 25, 25)),
                (3, (5, 60, 60)),
                (4, (5, 15, 15)),
                (5, (0, 100, 100)),
            ]),
            ways: HashMap::from([(0, ways(1, 75, 2, 25)), (1, ways(3, 60, 4, 15))]),
            ..G::default()
        };
        let lim = Limits {
            tree_blocks: 16,
            ..LIM
        };
        let trace = select(0, &g, lim).unwrap();
        assert_eq!(
            trace,
            vec![
                (0, Next::Member),
                (1, Next::Member),
                (3, Next::Member),
                (5, Next::Head)
            ]
        );
        let tree = grow_tree(&trace, &g, lim);
        let p = |block, next, cold| Pick { block, next, cold };
        assert_eq!(
            tree,
            vec![
                p(0, Next::Member, Some(4)),
                p(1, Next::Member, Some(6)),
                p(3, Next::Member, None),
                p(5, Next::Head, None),
                // 0's cold side (a quarter of the passes) first, then 1's
                // (15 %): each copies the rest of the loop body.
                p(2, Next::Member, None),
                p(5, Next::Head, None),
                p(4, Next::Member, None),
                p(5, Next::Head, None),
            ]
        );
        // Below the share, or without room: the trace alone.
        let rare = Limits {
            tree_share: 0.2,
            ..lim
        };
        assert_eq!(grow_tree(&trace, &g, rare).len(), 6, "only 0's cold side");
        assert_eq!(grow_tree(&trace, &g, LIM).len(), 4, "no room");
    }

    #[test]
    fn short_loops_are_unrolled_within_the_limits() {
        let g = G {
            metas: vec![m(ExitKind::Jump), m(ExitKind::Branch)],
            succ: HashMap::from([(0, (1, 10, 10)), (1, (0, 9, 10))]),
            heads: vec![],
            ..G::default()
        };
        let lim = Limits { unroll: 4, ..LIM };
        let want: Vec<Pick> = (0..3)
            .flat_map(|_| [(0, Next::Member), (1, Next::Member)])
            .chain([(0, Next::Member), (1, Next::Head)])
            .map(|(block, next)| Pick {
                block,
                next,
                cold: None,
            })
            .collect();
        let trace = select(0, &g, lim).unwrap();
        assert_eq!(shape(&trace, &g, lim), want, "four copies");
        let tight = Limits {
            max_insns: 20,
            ..lim
        };
        assert_eq!(shape(&trace, &g, tight).len(), 4, "two copies fit");
    }

    fn at(guest: u64, exit: ExitKind, target: u64, next: u64) -> BlockMeta {
        BlockMeta {
            guest,
            target,
            next,
            insns: 4,
            exit,
            ..BlockMeta::default()
        }
    }

    #[test]
    fn explicit_paths_keep_what_can_run_in_a_row() {
        // 0 branches to 1 or 2; 1 jumps to 3; 2 returns; 3 jumps back to 0.
        let g = G {
            metas: vec![
                at(0x10, ExitKind::Branch, 0x20, 0x30),
                at(0x20, ExitKind::Jump, 0x40, 0),
                at(0x30, ExitKind::Return, 0, 0),
                at(0x40, ExitKind::Jump, 0x10, 0),
                at(0x50, ExitKind::Syscall, 0, 0x58),
            ],
            succ: HashMap::new(),
            heads: vec![],
            ..G::default()
        };
        assert_eq!(
            check_path(&[0, 1, 3], &g, LIM).unwrap(),
            vec![(0, Next::Member), (1, Next::Member), (3, Next::Head)],
            "a loop closes at the head"
        );
        assert_eq!(
            check_path(&[0, 3, 1], &g, LIM).unwrap(),
            vec![(0, Next::Leave)],
            "0 cannot go to 3 directly: cut there"
        );
        assert_eq!(
            check_path(&[0, 2, 4], &g, LIM).unwrap(),
            vec![(0, Next::Member), (2, Next::Leave)],
            "a return may go anywhere, but never into a syscall block"
        );
        assert_eq!(check_path(&[4, 0], &g, LIM), None, "no syscall head");
        let self_loop = G {
            metas: vec![at(0x10, ExitKind::Branch, 0x10, 0x18)],
            succ: HashMap::new(),
            heads: vec![],
            ..G::default()
        };
        assert_eq!(
            check_path(&[0], &self_loop, LIM).unwrap(),
            vec![(0, Next::Head)],
            "a one-block loop closes on itself"
        );
        let mut g = g;
        g.heads.push(1);
        assert_eq!(
            check_path(&[0, 1, 3], &g, LIM).unwrap(),
            vec![(0, Next::Leave)],
            "another superblock's head is linked to, not copied"
        );
    }

    #[test]
    fn stops_at_syscalls_other_heads_limits_and_cold_indirect_edges() {
        // 0 -> 4 -> 5 -> 6 -> 1 (a return) -> 2 (a syscall) or 3.
        let mut g = G {
            metas: vec![
                m(ExitKind::Jump),
                m(ExitKind::Return),
                m(ExitKind::Syscall),
                m(ExitKind::Jump),
                m(ExitKind::Jump),
                m(ExitKind::Jump),
                m(ExitKind::Jump),
            ],
            succ: HashMap::from([
                (0, (4, 10, 10)),
                (4, (5, 10, 10)),
                (5, (6, 10, 10)),
                (6, (1, 10, 10)),
                (1, (2, 6, 10)),
            ]),
            heads: vec![],
            ..G::default()
        };
        // A syscall block is never a member: the superblock leaves to it.
        let chain = vec![
            (0, Next::Member),
            (4, Next::Member),
            (5, Next::Member),
            (6, Next::Member),
            (1, Next::Leave),
        ];
        assert_eq!(select(0, &g, LIM).unwrap(), chain);
        assert_eq!(
            select(2, &g, LIM),
            None,
            "no superblock headed by a syscall"
        );
        g.succ.insert(1, (3, 4, 10));
        assert_eq!(select(0, &g, LIM).unwrap(), chain, "a cold return edge");
        g.heads.push(1);
        assert_eq!(
            select(0, &g, LIM).unwrap(),
            vec![
                (0, Next::Member),
                (4, Next::Member),
                (5, Next::Member),
                (6, Next::Leave)
            ]
        );
        g.heads.clear();
        let small = Limits {
            max_blocks: 8,
            max_insns: 7,
            unroll: 1,
            min_yield: PAYS_OFF,
            ..LIM
        };
        assert_eq!(select(0, &g, small).unwrap(), vec![(0, Next::Leave)]);
    }

    #[test]
    fn a_superblock_must_save_ring_words() {
        // 0 -> 1 -> 2 -> 3: a pass is one word (its unit) for four blocks.
        let jumps = |p: [(u32, (u32, u64, u64)); 3]| G {
            metas: vec![m(ExitKind::Branch); 4],
            succ: HashMap::from(p),
            heads: vec![],
            ..G::default()
        };
        let g = jumps([(0, (1, 10, 10)), (1, (2, 10, 10)), (2, (3, 10, 10))]);
        assert_eq!(select(0, &g, LIM).unwrap().len(), 4);
        // Each branch goes on half the time: 1 + 1/2 + 1/4 + 1/8 blocks a
        // word, still worth it.
        let g = jumps([(0, (1, 5, 10)), (1, (2, 5, 10)), (2, (3, 5, 10))]);
        assert_eq!(select(0, &g, LIM).unwrap().len(), 4);
        // Each goes on a tenth of the time: 1.11 blocks a word, below the
        // bar: the head alone.
        let g = jumps([(0, (1, 1, 10)), (1, (2, 1, 10)), (2, (3, 1, 10))]);
        assert_eq!(select(0, &g, LIM).unwrap(), vec![(0, Next::Leave)]);
        // Two blocks ending in an indirect jump: one word for two blocks.
        let g = G {
            metas: vec![m(ExitKind::Jump), m(ExitKind::IndirectJump)],
            succ: HashMap::from([(0, (1, 10, 10))]),
            heads: vec![],
            ..G::default()
        };
        assert_eq!(select(0, &g, LIM).unwrap().len(), 2);
    }

    #[test]
    fn a_branchy_loop_grows_a_tree_over_several_iterations() {
        // A loop: 0 branches to 1 or 2 half the time each; both jump back
        // to 0. One iteration's tree costs a word per iteration whichever
        // side ran; unrolled twice, with every path going on through the
        // head into the second iteration, half a word.
        let g = G {
            metas: vec![
                at(0x00, ExitKind::Branch, 0x10, 0x20),
                at(0x10, ExitKind::Jump, 0x00, 0),
                at(0x20, ExitKind::Jump, 0x00, 0),
            ],
            succ: HashMap::from([(0, (1, 50, 100)), (1, (0, 50, 50)), (2, (0, 50, 50))]),
            ways: HashMap::from([(0, [(1, 50), (2, 50)])]),
            ..G::default()
        };
        let lim = Limits {
            tree_blocks: 16,
            unroll: 2,
            min_yield: 0.0,
            ..LIM
        };
        let trace = select(0, &g, lim).unwrap();
        assert_eq!(trace, vec![(0, Next::Member), (1, Next::Head)]);
        let p = |block, next, cold| Pick { block, next, cold };
        let tree = shape(&trace, &g, lim);
        assert_eq!(
            tree,
            vec![
                // The unrolled trace: 0 1 0 1.
                p(0, Next::Member, Some(4)),
                p(1, Next::Member, None),
                p(0, Next::Member, Some(8)),
                p(1, Next::Head, None),
                // The first 0's cold side goes on into a second iteration;
                // then the two second iterations' cold sides (a quarter
                // of the passes each).
                p(2, Next::Member, None),
                p(0, Next::Member, Some(7)),
                p(1, Next::Head, None),
                p(2, Next::Head, None),
                p(2, Next::Head, None),
            ]
        );
        assert!((words_per_iteration(&tree, &g, lim) - 0.5).abs() < 1e-9);
        let one = grow_tree(&trace, &g, lim);
        assert!((words_per_iteration(&one, &g, lim) - 1.0).abs() < 1e-9);
        // With loop passes counted (contract I2) a loop that never leaves
        // costs no word at all: one iteration's tree, the smallest, wins.
        let counted = Limits {
            count_loops: true,
            ..lim
        };
        assert_eq!(words_per_iteration(&one, &g, counted), 0.0);
        assert_eq!(shape(&trace, &g, counted), one);
        assert!(counting_pays(&one, &g, counted));
        // Without room for the second iteration's paths, one iteration's
        // tree is as good as it gets.
        let small = Limits {
            tree_blocks: 4,
            ..lim
        };
        assert!(words_per_iteration(&shape(&trace, &g, small), &g, small) >= 0.75 - 1e-9);
    }
}
