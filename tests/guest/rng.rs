//! The integration tests' pseudo-random generator, src/test_rng.rs's twin
//! (a crate's test code is not another's): proptest's, seeded, for inputs
//! that are the same on every run.

use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// A generator whose stream `seed` fixes, the same on every run.
pub struct Seeded(TestRng);

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

    /// One of `v`'s items.
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}
