//! Passes of superblock units that come back to the context they started
//! in, replayed into the calling-context tree in bulk (units.rs I1
//! otherwise replays every pass's calls and returns one by one).
//!
//! Two kinds of path qualify (`Word::memo`):
//! - *balanced*: each return on the path goes back to a call made earlier
//!   on it and no call is left open (a loop body that calls a comparator
//!   or `isspace` and comes back). A pass leaves the thread in the context
//!   it started in, with the shadow stack as it was.
//! - *rotating*: the path returns first, to `R`, then runs a balanced
//!   piece, and the unit's exit calls the function `f` again, returning to
//!   `R` (a loop whose superblock is headed in the callee it calls each
//!   iteration: `getc` and the loop in `wc` around it). A pass from a
//!   context `C` whose shadow top is the call to `C` from `C`'s parent
//!   (`f` is `C`'s function, the frame returns to `R` and to `C`'s
//!   parent) ends in `C` with that frame pushed again; any other pass
//!   takes the general path.
//!
//! In both, what a pass adds to the tree (contexts entered, the path's
//! instructions charged piece by piece to the contexts they ran in, its
//! returns) depends only on the context it starts in.
//!
//! I1: such a unit's word counts the passes not yet replayed, all started
//!     in context `memo_node` (`memo_n` of them). A pass from another
//!     context first replays those `memo_n` passes at once
//!     ([`Tables::replay_memo`]: every count times `memo_n`), then counts
//!     from its own. The thread's totals (instructions, blocks) are counted
//!     per pass, as for any word.
//! I2: every word's memo is replayed before the tree is read, in
//!     [`Tables::finish`]; until then a callee context on the path may not
//!     exist yet. Nothing names one in the meantime: a pass ends in the
//!     context it started in, which is where a timed sample (sampler.rs)
//!     finds the thread.
//! I3: the deepest call stack stays exact: each pass raises it to the
//!     thread's shadow depth plus its path's depth.
//!
//! Measured (Intel Xeon model 207, monitor CPU, medians of 5): c-wordfreq
//! 0.89 → 0.60 s and c-switch 1.41 → 1.21 s (balanced paths), busybox
//! `wc` 0.85 → 0.57 s (rotating), c-recursion unchanged (its recursion
//! starts each pass in a new context).

use super::units::UnitOp;
use super::words::{End, NONE, W_BLOCKS, W_INSNS};
use super::{Tables, ThreadState};

/// `Word::memo`: the path rotates (returns, then its exit calls again);
/// the low bits are the depth its balanced piece calls to.
pub(super) const ROTATES: u8 = 0x80;
const DEPTH: u8 = 0x7f;

/// How deep the balanced path `ops` calls, if it is balanced (at most
/// 127).
fn depth(ops: &[UnitOp]) -> Option<u8> {
    let mut open: Vec<u64> = Vec::new();
    let mut deepest = 0;
    for op in ops {
        if op.ret != 0 {
            open.push(op.ret);
            deepest = deepest.max(open.len());
        } else if open.last() == Some(&op.to) {
            open.pop();
        } else {
            return None;
        }
    }
    let d = u8::try_from(deepest).ok().filter(|&d| d <= DEPTH)?;
    open.is_empty().then_some(d)
}

/// `Word::memo` of a unit whose path has the calls and returns `ops` and
/// ends the way `end` says, calling with return address `ret` (a `Call`
/// end): a balanced path's depth (1 to 127), [`ROTATES`] with the depth of
/// its balanced piece, or 0.
pub(super) fn kind(ops: &[UnitOp], end: End, ret: u64) -> u8 {
    match ops.split_first() {
        None => 0,
        Some((first, rest)) if first.ret == 0 && end == End::Call && ret == first.to => {
            depth(rest).map_or(0, |d| ROTATES | d)
        }
        Some(_) => depth(ops).unwrap_or(0),
    }
}

impl Tables {
    /// `n` passes of unit `w`, whose `Word::memo` is set, from the
    /// thread's context (I1; more than one only for a counted loop's
    /// passes, contract I2: each starts where the one before ended): their
    /// instructions and blocks go to the thread's totals now, their path's
    /// calls, returns and per-context instructions (and a rotating unit's
    /// exit call) into the memo. False, and nothing done, for a rotating
    /// pass whose shadow top is not the frame its path returns through.
    #[inline(always)]
    pub(super) fn memo_pass(&mut self, st: &mut ThreadState, w: u32, weight: u64, n: u32) -> bool {
        let node = st.node;
        let (memo, target, ret) = {
            let i = &self.words[w];
            (i.memo, i.target, i.ret)
        };
        let mut depth = st.shadow.len() + usize::from(memo & DEPTH);
        if memo & ROTATES != 0 {
            let c = &self.tree.nodes[node as usize];
            match st.shadow.last() {
                Some(f)
                    if f.ret == ret && f.node == c.parent && c.func == target && node != f.node => {
                }
                _ => return false,
            }
            depth -= 1;
        }
        let passes = u64::from(n);
        st.blocks += passes * (weight >> W_BLOCKS);
        st.insns = st.insns.wrapping_add(passes.wrapping_mul(weight & W_INSNS));
        let i = &mut self.words[w];
        match i.memo_n.checked_add(n) {
            Some(sum) if i.memo_n != 0 && i.memo_node == node => i.memo_n = sum,
            _ => {
                let (old, had) = (i.memo_node, i.memo_n);
                i.memo_node = node;
                i.memo_n = n;
                if had == 0 {
                    self.memo_words.push(w);
                } else {
                    self.replay_memo(w, old, had);
                }
            }
        }
        self.max_shadow_depth = self.max_shadow_depth.max(depth);
        true
    }

    /// Replay `n` passes of unit `w` from context `node` (I1).
    #[cold]
    #[inline(never)]
    pub(super) fn replay_memo(&mut self, w: u32, node: u32, n: u32) {
        let n = u64::from(n);
        let i = self.words[w];
        let mut ops = i.ops_at as usize..i.ops_at as usize + usize::from(i.ops_n);
        // The contexts the path's open calls return to (at most 127).
        let mut stack = [0u32; 128];
        let (mut depth, mut at, mut done) = (0usize, node, 0u64);
        if i.memo & ROTATES != 0 {
            // Its first op returns to the caller's context.
            let op = self.unit_ops[ops.next().expect("a rotating path returns")];
            self.tree.charge(at, op.before.wrapping_mul(n));
            done = op.before;
            at = self.tree.nodes[node as usize].parent;
            self.returns += n;
        }
        for k in ops {
            let op = self.unit_ops[k];
            self.tree
                .charge(at, op.before.wrapping_sub(done).wrapping_mul(n));
            done = op.before;
            if op.ret != 0 {
                stack[depth] = at;
                depth += 1;
                at = self.tree.enter_n(at, op.to, n);
            } else {
                depth -= 1;
                at = stack[depth];
                self.returns += n;
            }
        }
        let rest = (i.weight & W_INSNS).wrapping_sub(done);
        self.tree.charge(at, rest.wrapping_mul(n));
        if i.memo & ROTATES != 0 {
            // The exit's call, back into `node` (memo_pass checked it is
            // `at`'s child for the target).
            let back = self.tree.enter_n(at, i.target, n);
            debug_assert_eq!(back, node);
        }
    }

    /// Replay every memo (I2).
    pub(super) fn replay_memos(&mut self) {
        for w in std::mem::take(&mut self.memo_words) {
            let i = &mut self.words[w];
            let (node, n) = (i.memo_node, i.memo_n);
            i.memo_n = 0;
            i.memo_node = NONE;
            if n != 0 {
                self.replay_memo(w, node, n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(ret: u64, to: u64) -> UnitOp {
        UnitOp { before: 0, ret, to }
    }

    fn ret(to: u64) -> UnitOp {
        UnitOp {
            before: 0,
            ret: 0,
            to,
        }
    }

    #[test]
    fn only_paths_that_come_back_are_memoised() {
        let d = End::Direct;
        assert_eq!(kind(&[call(0x10, 0x100), ret(0x10)], d, 0), 1);
        let nested = [
            call(0x10, 0x100),
            call(0x110, 0x200),
            ret(0x110),
            ret(0x10),
            call(0x20, 0x100),
            ret(0x20),
        ];
        assert_eq!(kind(&nested, d, 0), 2);
        // Left open, returning out of the pass's context, returning
        // elsewhere than the call's return address, nothing to replay.
        assert_eq!(kind(&[call(0x10, 0x100)], d, 0), 0);
        assert_eq!(kind(&[ret(0x10)], d, 0), 0);
        assert_eq!(kind(&[call(0x10, 0x100), ret(0x18)], d, 0), 0);
        assert_eq!(kind(&[], End::Call, 0x10), 0);
        // Rotating: a return, then the exit calls again returning there.
        assert_eq!(kind(&[ret(0x10)], End::Call, 0x10), ROTATES);
        assert_eq!(
            kind(&[ret(0x10), call(0x30, 0x300), ret(0x30)], End::Call, 0x10),
            ROTATES | 1
        );
        assert_eq!(kind(&[ret(0x10)], End::Call, 0x18), 0);
        assert_eq!(kind(&[ret(0x10)], End::IndirectCall, 0x10), 0);
        assert_eq!(kind(&[ret(0x10), call(0x30, 0x300)], End::Call, 0x10), 0);
    }
}
