//! The calls and returns of a superblock pass's path (units.rs I1)
//! replayed with the thread's context, its shadow stack's length and the
//! counts in registers (special.rs `replay_ops`; a path that returns into
//! a landing site goes the general way, `replay_ops_watched`).
//!
//! I1: [`run`] takes the ops from `k` on exactly as `Tables::charge`,
//!     `Tables::call` and `Tables::ret` would, one by one, and stops
//!     before the first that needs more: a call into a context the tree
//!     has not cached for its caller (`CallTree::cached_child`: a new one
//!     is the general path's), or that would grow the shadow stack's
//!     vector; a return that does not go to the stack's top. Its caller
//!     takes that op the general way and calls again from the next.
//!
//! Measured (Intel Xeon model 167; monitor records replayed on one core
//! by `examples/monitor_replay`, medians of 3): c-recursion 17.3 -> 15.3
//! ns a word (3.8 calls and returns a word), busybox awk 8.4 -> 8.1,
//! the python loop 6.3 -> 6.1. The general path reloaded what one op
//! leaves for the next (the thread's context, the shadow vector's length,
//! the deepest depth, the counts) from memory at every op. Under
//! cachegrind the awk record runs 3 % more instructions (a path of one or
//! two ops pays the setting up), c-recursion's 1 % fewer and 10 % fewer
//! loads.

use super::shadow::{Frame, Shadow};
use super::units::UnitOp;
use crate::monitor::calltree::CallTree;

/// What a replay reads and leaves: the thread's context and instruction
/// count, the returns and the deepest shadow stack so far.
pub(super) struct Regs {
    pub node: u32,
    pub insns: u64,
    pub returns: u64,
    pub deepest: usize,
}

/// Replay `ops[k..]` (I1), `done` instructions of the path charged
/// before `ops[k]`: the first op not taken (`ops.len()` when all were)
/// and the path's instructions charged then.
#[inline(always)]
pub(super) fn run(
    tree: &mut CallTree,
    shadow: &mut Shadow,
    ops: &[UnitOp],
    mut k: usize,
    mut done: u64,
    r: &mut Regs,
) -> (usize, u64) {
    let (frames, low) = shadow.parts();
    let (mut node, mut insns, mut returns) = (r.node, r.insns, r.returns);
    let (mut deepest, mut lo) = (r.deepest, *low);
    while let Some(op) = ops.get(k) {
        let n = op.before.wrapping_sub(done);
        let here = node;
        if op.ret != 0 {
            let Some(child) = tree.cached_child(here, op.to) else {
                break;
            };
            if frames.len() == frames.capacity() {
                break;
            }
            frames.push(Frame {
                ret: op.ret,
                node: here,
            });
            deepest = deepest.max(frames.len());
            tree.entered(child);
            node = child;
        } else {
            match frames.last() {
                Some(f) if f.ret == op.to => node = f.node,
                _ => break,
            }
            frames.pop();
            lo = lo.min(frames.len());
            returns += 1;
        }
        // The instructions before the op ran in the context it left.
        tree.charge(here, n);
        insns = insns.wrapping_add(n);
        done = op.before;
        k += 1;
    }
    *low = lo;
    *r = Regs {
        node,
        insns,
        returns,
        deepest,
    };
    (k, done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general path of special.rs, op by op: charge, then a call
    /// (frame, cached or entered child) or a return (to the top, or to
    /// the newest frame returning there).
    fn general(t: &mut CallTree, s: &mut Shadow, ops: &[UnitOp], r: &mut Regs) {
        let mut done = 0;
        for op in ops {
            let n = op.before.wrapping_sub(done);
            t.charge(r.node, n);
            r.insns = r.insns.wrapping_add(n);
            done = op.before;
            if op.ret != 0 {
                s.push(Frame {
                    ret: op.ret,
                    node: r.node,
                });
                r.deepest = r.deepest.max(s.len());
                r.node = t.enter(r.node, op.to);
            } else {
                r.returns += 1;
                if let Some(f) = s.last().copied().filter(|f| f.ret == op.to) {
                    s.pop();
                    r.node = f.node;
                } else if let Some(f) = s.unwind_to(op.to) {
                    r.node = f.node;
                }
            }
        }
    }

    /// [`run`], and the general path for each op it leaves.
    fn fast(t: &mut CallTree, s: &mut Shadow, ops: &[UnitOp], r: &mut Regs) {
        let (mut k, mut done) = (0, 0);
        loop {
            (k, done) = run(t, s, ops, k, done, r);
            let Some(op) = ops.get(k) else { return };
            general(
                t,
                s,
                &[UnitOp {
                    before: op.before - done,
                    ..*op
                }],
                r,
            );
            done = op.before;
            k += 1;
        }
    }

    #[test]
    fn replays_as_the_general_path_does() {
        let mut rng = crate::test_rng::Seeded::new(7);
        let (mut ta, mut tb) = (CallTree::default(), CallTree::default());
        let (mut sa, mut sb) = (Shadow::default(), Shadow::default());
        let regs = || Regs {
            node: 0,
            insns: 0,
            returns: 0,
            deepest: 0,
        };
        let (mut ra, mut rb) = (regs(), regs());
        let mut taken = 0;
        for _ in 0..20_000 {
            // A path of up to 12 ops over few functions and return
            // addresses: recursion, calls to new contexts, matched
            // returns and returns to frames further down or nowhere.
            let len = (rng.next() % 13) as usize;
            let mut before = 0;
            let ops: Vec<UnitOp> = (0..len)
                .map(|_| {
                    let x = rng.next();
                    before += (x >> 8) % 5;
                    let (ret, to) = if x % 8 < 4 {
                        (0x100 + (x >> 20) % 6, 0x1000 + (x >> 30) % 5)
                    } else {
                        (0, 0x100 + (x >> 20) % 7)
                    };
                    UnitOp { before, ret, to }
                })
                .collect();
            general(&mut ta, &mut sa, &ops, &mut ra);
            fast(&mut tb, &mut sb, &ops, &mut rb);
            taken += ops.len();
            assert_eq!(
                (ra.node, ra.insns, ra.returns, ra.deepest),
                (rb.node, rb.insns, rb.returns, rb.deepest)
            );
            assert_eq!(sa.len(), sb.len());
            assert_eq!(sa.last(), sb.last());
        }
        assert!(taken > 100_000 && ra.deepest > 20, "{taken} {}", ra.deepest);
        assert_eq!(ta.nodes.len(), tb.nodes.len());
        for (a, b) in ta.nodes.iter().zip(tb.nodes.iter()) {
            assert_eq!(
                (a.parent, a.func, a.calls, a.self_insns),
                (b.parent, b.func, b.calls, b.self_insns)
            );
        }
    }
}
