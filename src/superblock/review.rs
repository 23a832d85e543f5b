//! Taking back superblocks that do not pay: a superblock is built from
//! the edge counts of its first few thousand executions, and a program
//! that changes its habits later (a sort's comparisons, data that turns
//! random) can leave a superblock whose passes cover barely more blocks
//! than the ring words they cost. The monitor then spends more on its
//! records than it would on the plain blocks (select/mod.rs I2), so the
//! builder reviews what it published now and then and takes back the
//! ones that fall below [`RETIRE_SHARE`] of the building bar
//! (`--sb-min-yield`: 1.75 blocks per word by default; a bar of 0 takes
//! nothing back).
//!
//! I1: taking back restores the head block's first 8 bytes (its ring
//!     prologue) with one aligned store under the publish lock, in the
//!     generation it was published in, and only if they still hold the
//!     jump written then: a thread sees the jump or the prologue, never a
//!     mix (build.rs I2). Passes under way finish in the superblock's
//!     code, which stays where it is; the monitor's accounting is the same
//!     either way (a pass record, or the blocks' own entries).
//! I2: a head taken back is not built again in that generation.
#![allow(unsafe_code)]

use std::time::{Duration, Instant};

use super::Builder;
use crate::monitor::Tables;

/// The share of the building bar (select/mod.rs I2, `--sb-min-yield`) in
/// blocks a pass must cover per ring word it costs (a call or return
/// replayed between members counting as a word), once it has run
/// [`MIN_PASSES`] times, to stay. Below the bar itself: a superblock also
/// saves the guest work, and taking back at 2 (the default bar) cost a
/// switch-heavy benchmark 20 % (measured with 1.5, 1.75, 2 and 2.5 on ten
/// guest benchmarks; 1.75 was best).
pub const RETIRE_SHARE: f64 = 0.875;
/// Passes before a superblock is judged.
const MIN_PASSES: u64 = 20_000;
/// How often the builder looks.
const EVERY: Duration = Duration::from_millis(20);

/// One published superblock, as review needs it.
#[derive(Debug, Clone, Copy)]
struct Published {
    sb: u32,
    head: u32,
    head_host: u64,
    original: [u8; 8],
    jump: [u8; 8],
    gen: u64,
}

/// The builder's record of what it published (I1).
#[derive(Debug)]
pub struct Review {
    live: Vec<Published>,
    last: Instant,
}

impl Default for Review {
    fn default() -> Self {
        Review {
            live: Vec::new(),
            last: Instant::now(),
        }
    }
}

impl Review {
    /// Superblock `sb` was published by writing `jump` over `original` at
    /// `head_host`, the code of block `head`.
    pub fn published(
        &mut self,
        sb: u32,
        head: u32,
        head_host: u64,
        original: [u8; 8],
        jump: [u8; 8],
        gen: u64,
    ) {
        self.live.push(Published {
            sb,
            head,
            head_host,
            original,
            jump,
            gen,
        });
    }
}

/// Blocks covered per ring word by superblock `sb`'s passes so far, and
/// how many passes there were.
fn yield_of(tables: &Tables, sb: u32) -> Option<(f64, u64)> {
    let a = tables.sbs.get(sb as usize)?;
    let s = tables.sb_summary(sb)?;
    // Every pass is one word (its unit), except counted loop passes
    // (contract I2), which cost a record of the counters per pass left.
    let passes = s.entries + s.loops;
    let pushed = if a.loops_counted {
        s.entries * (3 + a.loops.len() as u64)
    } else {
        passes
    };
    let blocks: u64 = s.member_runs.iter().sum();
    // A call or return between members is replayed on the shadow stack
    // by every pass that gets there: it costs the monitor about a word,
    // unless its unit's passes are replayed in bulk (monitor/tables/memo.rs).
    let words = pushed + tables.sb_replays(sb);
    (words > 0).then(|| (blocks as f64 / words as f64, passes))
}

impl Builder {
    /// Take back the published superblocks that do not pay (module
    /// docs); cheap when there is nothing to do.
    pub fn review(&mut self, tables: &Tables) {
        if self.review.last.elapsed() < EVERY || self.review.live.is_empty() {
            return;
        }
        self.review.last = Instant::now();
        let gen = self.gen;
        self.review.live.retain(|p| p.gen == gen);
        let below = RETIRE_SHARE * self.cfg.limits.min_yield;
        let poor: Vec<Published> = self
            .review
            .live
            .iter()
            .filter(|p| {
                yield_of(tables, p.sb).is_some_and(|(y, passes)| passes >= MIN_PASSES && y < below)
            })
            .copied()
            .collect();
        for p in poor {
            self.review.live.retain(|q| q.sb != p.sb);
            if !self.take_back(&p) {
                continue;
            }
            self.stats.retired += 1;
            self.failed.insert(p.head);
            self.heads.remove(&p.head);
            if let Some(r) = self.records.of_build(p.sb) {
                r.retired_after_entries = Some(tables.entries);
            }
        }
    }

    /// I1: put the head's prologue back; false when it is not ours to.
    fn take_back(&self, p: &Published) -> bool {
        let mut heads = self
            .shared
            .publish
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if self.shared.gen() != p.gen {
            return false;
        }
        // SAFETY: the head's code is live in this generation (checked
        // under the lock) and starts with the jump published then (read
        // through the RW view); the store is one aligned 8-byte write a
        // running thread sees whole (build.rs I2).
        unsafe {
            let now = std::slice::from_raw_parts(
                (p.head_host as i64 - self.shared.arena.rw_delta) as *const u8,
                8,
            );
            if now != p.jump {
                return false;
            }
            let back = self.shared.patch8(p.head_host, p.original).is_ok();
            if back {
                heads.retain(|&h| h != p.head_host);
            }
            back
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::tables::{SbAccount, SbExitAcct};
    use crate::monitor::SbConfig;

    /// A plain superblock of three blocks, exits after each.
    fn tables_with(exit_counts: [u64; 3]) -> Tables {
        let mut t = Tables::new(SbConfig::default());
        let metas = vec![crate::cache::BlockMeta::default(); 13];
        let exits = (0..3).map(|m| SbExitAcct::direct(m, 0x1000)).collect();
        let base = t.next_units(6).unwrap();
        let acc = SbAccount::new(
            vec![10, 11, 12],
            vec![u16::MAX, 0, 1],
            &[4, 4, 4],
            exits,
            Vec::new(),
            base,
        );
        t.add_superblock(0, acc, &metas);
        for (k, n) in exit_counts.into_iter().enumerate() {
            t.add_unit_count(base + k as u32, n);
        }
        t
    }

    #[test]
    fn yield_is_blocks_per_ring_word() {
        // Every pass runs all three blocks: one unit, 3 blocks a word.
        let (y, passes) = yield_of(&tables_with([0, 0, 30_000]), 0).unwrap();
        assert_eq!(passes, 30_000);
        assert!((y - 3.0).abs() < 1e-9, "{y}");
        // Most passes leave after the head: 1.03 blocks a word.
        let (y, _) = yield_of(&tables_with([29_000, 1_000, 0]), 0).unwrap();
        assert!((y - 31.0 / 30.0).abs() < 1e-9, "{y}");
        assert!(y < RETIRE_SHARE * crate::superblock::select::PAYS_OFF);
        assert!(yield_of(&tables_with([0, 0, 0]), 0).is_none(), "never ran");
    }
}
