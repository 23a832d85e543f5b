//! A thread's shadow call stack: one frame per call not yet returned from.
//!
//! A return to the top frame's address pops it (the common case, inline).
//! A return that goes elsewhere (longjmp, a thread switching stacks, a
//! JIT's calls that never return) goes to the newest frame returning
//! there: found without walking the whole stack, which in a JVM grows to
//! tens of thousands of frames that such returns then scanned each time.
//!
//! I1: `index` maps a return address to positions of frames holding it,
//!     ascending, for the frames below `indexed`; frames below
//!     `min(low, indexed)` have not changed since they were indexed (`low`
//!     is the lowest depth the stack had since then). Positions at or
//!     above that bound, and positions whose frame now returns elsewhere
//!     (popped and pushed again), are stale: a lookup checks each.
//! I2: the newest frame returning to an address is the newest above the
//!     unchanged part (scanned, at most [`SCAN`] frames: more are indexed
//!     first) or else the newest valid position in the index: the same
//!     frame a scan of the whole stack finds.

use hashbrown::HashMap;

/// A shadow call stack frame: where the call returns to, and the context
/// the thread was in before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Frame {
    pub ret: u64,
    pub node: u32,
}

/// Frames above the indexed part a lookup scans before indexing them.
const SCAN: usize = 32;

#[derive(Debug, Clone, Default)]
pub(super) struct Shadow {
    frames: Vec<Frame>,
    low: usize,
    indexed: usize,
    index: HashMap<u64, Vec<u32>>,
    /// Positions held by `index`, stale ones included.
    positions: usize,
}

impl Shadow {
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    #[inline(always)]
    pub fn capacity(&self) -> usize {
        self.frames.capacity()
    }

    #[inline(always)]
    pub fn last(&self) -> Option<&Frame> {
        self.frames.last()
    }

    /// The frames and the lowest depth since they were indexed (I1), for
    /// a loop that pushes and pops with them in registers (replay.rs):
    /// it keeps `low` at most the least length the frames had.
    #[inline(always)]
    pub fn parts(&mut self) -> (&mut Vec<Frame>, &mut usize) {
        (&mut self.frames, &mut self.low)
    }

    /// The frame at depth `i` (0: the oldest).
    pub fn get(&self, i: usize) -> Option<Frame> {
        self.frames.get(i).copied()
    }

    /// Pop every frame from depth `len` up.
    pub fn truncate(&mut self, len: usize) {
        self.frames.truncate(len);
        self.low = self.low.min(self.frames.len());
    }

    #[inline(always)]
    pub fn push(&mut self, f: Frame) {
        self.frames.push(f);
    }

    #[inline(always)]
    pub fn pop(&mut self) {
        self.frames.pop();
        self.low = self.low.min(self.frames.len());
    }

    /// Pop every frame from the newest returning to `to` up (I2); that
    /// frame, or None (and nothing popped) when no frame returns there.
    pub fn unwind_to(&mut self, to: u64) -> Option<Frame> {
        let len = self.frames.len();
        let mut valid = self.low.min(self.indexed).min(len);
        if len - valid > SCAN {
            self.take_in(valid);
            valid = len;
        }
        let i = match self.frames[valid..].iter().rposition(|f| f.ret == to) {
            Some(i) => valid + i,
            None => self
                .index
                .get(&to)?
                .iter()
                .rev()
                .map(|&p| p as usize)
                .find(|&p| p < valid && self.frames[p].ret == to)?,
        };
        let f = self.frames[i];
        self.truncate(i);
        Some(f)
    }

    /// Index the frames from `valid` (the unchanged part's end) up (I1);
    /// start over when stale positions outnumber the frames.
    #[cold]
    fn take_in(&mut self, valid: usize) {
        let len = self.frames.len();
        let mut from = valid;
        if self.positions > 4 * len + 1024 {
            self.index.clear();
            self.positions = 0;
            from = 0;
        }
        // Stale positions from `from` up sit at the ends of their lists
        // (ascending): drop those of the addresses about to be indexed
        // first, then append the frames' positions in order.
        for f in &self.frames[from..] {
            if let Some(at) = self.index.get_mut(&f.ret) {
                while at.last().is_some_and(|&q| q as usize >= from) {
                    at.pop();
                    self.positions -= 1;
                }
            }
        }
        for (p, f) in self.frames.iter().enumerate().skip(from) {
            self.index.entry(f.ret).or_default().push(p as u32);
            self.positions += 1;
        }
        self.indexed = len;
        self.low = len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stack as a plain vector: the newest frame returning to `to`
    /// found by scanning it all.
    fn naive(v: &mut Vec<Frame>, to: u64) -> Option<Frame> {
        let i = v.iter().rposition(|f| f.ret == to)?;
        let f = v[i];
        v.truncate(i);
        Some(f)
    }

    #[test]
    fn unwinds_to_the_same_frame_as_a_full_scan() {
        // A deterministic mix of calls, matched returns and returns to
        // frames deep down or nowhere, over few return addresses (so that
        // positions go stale and come back with the same address).
        let mut s = Shadow::default();
        let mut v: Vec<Frame> = Vec::new();
        let mut rng = crate::test_rng::Seeded::new(1);
        let mut found = 0;
        for step in 0..400_000u32 {
            let x = rng.next();
            let ret = 0x1000 + (x >> 40) % 37;
            match x % 10 {
                0..=4 => {
                    let f = Frame { ret, node: step };
                    s.push(f);
                    v.push(f);
                }
                5..=7 => {
                    if let Some(&top) = v.last() {
                        assert_eq!(s.last(), Some(&top));
                        s.pop();
                        v.pop();
                    }
                }
                _ => {
                    let want = naive(&mut v, ret);
                    found += usize::from(want.is_some());
                    assert_eq!(s.unwind_to(ret), want, "step {step}");
                }
            }
            assert_eq!(s.len(), v.len());
        }
        assert!(found > 10_000, "deep returns exercised: {found}");
        assert!(!s.index.is_empty(), "the index was used");
    }

    #[test]
    fn a_deep_stack_with_returns_to_nowhere() {
        let mut s = Shadow::default();
        for k in 0..100_000u64 {
            s.push(Frame {
                ret: k,
                node: k as u32,
            });
            if k % 3 == 0 {
                assert_eq!(s.unwind_to(u64::MAX), None);
            }
        }
        assert_eq!(s.unwind_to(5).map(|f| f.node), Some(5));
        assert_eq!(s.len(), 5);
        assert_eq!(s.unwind_to(99_999), None, "popped");
    }
}
