// The tests' one pseudo-random generator (issue 21, goal 7): proptest's,
// seeded, for the tests that want a fixed stream of their own rather than
// proptest's strategies (the per-entry loops' fast-against-general checks,
// the time tree's long streams, the loader's mutations, the inputs of the
// busybox and real-program tests). The integration tests include this very
// file (tests/guest/rng.rs): a crate's test code is not another's. Plain
// comments, not `//!`: an included file may hold no inner attributes.

use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// A generator whose stream `seed` fixes, the same on every run.
pub struct Seeded(TestRng);

#[allow(dead_code)]
impl Seeded {
    pub fn new(seed: u64) -> Seeded {
        // XorShift wants 16 bytes, not all zero.
        let mut s = [0u8; 16];
        s[..8].copy_from_slice(&seed.to_le_bytes());
        s[8..].copy_from_slice(&(!seed).to_le_bytes());
        Seeded(TestRng::from_seed(RngAlgorithm::XorShift, &s))
    }

    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// An index below `n` (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// One of `v`'s items.
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.index(v.len())]
    }
}
