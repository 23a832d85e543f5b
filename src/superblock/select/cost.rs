//! The yield estimate of superblock selection, by the edge counts at the
//! time: how many blocks a pass should run ([`expected_blocks`]), how
//! many ring words it costs ([`ring_words`]), and for a loop the words
//! per iteration with its passes pushed or counted ([`loop_costs`]).
//! select/mod.rs I2 builds a superblock only where a pass covers [`PAYS_OFF`]
//! blocks per word; shape.rs I2 lays a loop out the way expected to cost
//! the fewest words per iteration; the builder counts loop passes where
//! [`counting_pays`].
//!
//! These are estimates: they decide what is built and how, never what the
//! profile counts (a pass's unit keeps that exact, superblock/mod.rs).

use super::shape::Pick;
use super::{Graph, Limits};
use crate::superblock::Next;

/// select/mod.rs I2: a superblock must save the monitor work: its pass should
/// cover at least this many blocks per ring word it costs. A pass costs
/// one word, handled like a block's (monitor/tables/units.rs), so any superblock
/// that often gets past its head saves words; the bar keeps out those
/// that nearly always leave at once (arena space and build time for
/// nothing).
pub const PAYS_OFF: f64 = 1.25;

/// How many of `members` a pass runs, on average: member i+1 runs when
/// member i went on to it, with the probability the edge counts give.
pub(super) fn expected_blocks(members: &[(u32, Next)], g: &impl Graph) -> f64 {
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
pub(super) fn go_on(b: u32, g: &impl Graph) -> f64 {
    match g.hottest(b) {
        Some((_, n, total)) if total > 0 => (n as f64 / total as f64).min(1.0),
        _ => 1.0,
    }
}

/// Ring words a pass costs: its unit.
pub(super) fn ring_words(_members: &[(u32, Next)], _g: &impl Graph) -> f64 {
    1.0
}

/// Ring words a loop's superblock `tree` should cost per iteration, laid
/// out the cheaper way (see [`loop_costs`]).
pub(super) fn words_per_iteration(tree: &[Pick], g: &impl Graph, lim: Limits) -> f64 {
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
        let ind = g.meta(p.block).is_some_and(|m| m.exit.indirect());
        let alternates = if ind {
            super::shape::chain(tree, i)
        } else {
            Vec::new()
        };
        let targets = if alternates.is_empty() {
            None
        } else {
            g.targets(p.block)
        };
        let hot = match p.cold {
            // An indirect transfer's targets: split by their counts.
            Some(_) if targets.is_some() => {
                let (t, total) = targets.unwrap_or_default();
                let share = |b: u32| {
                    let n = t.iter().find(|x| x.0 == b).map_or(0, |x| x.1);
                    if total > 0 {
                        n as f64 / total as f64
                    } else {
                        0.0
                    }
                };
                for &a in &alternates {
                    reach[a] = r * share(tree[a].block);
                }
                let hot_block = match p.next {
                    Next::Member => tree[i + 1].block,
                    _ => tree[0].block,
                };
                r * share(hot_block)
            }
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
