//! A round of Pisat's mining as the second tier runs it (superblock/
//! tier.rs): the windows the per-entry loop cut (monitor/tables/mine.rs)
//! offered to the [`Miner`], fed within the round's budget, and the
//! patterns it settles asked for as superblocks with their paths.
//!
//! I1 (the admission rule): a pattern may start at any block that does
//!     not end in a syscall or trap, and continue into a block only along
//!     a transition the monitor has seen: the next block is one of the
//!     previous block's two ways (the first two successors it had, which
//!     for a branch are its two sides), and for a direct exit also one of
//!     its own targets (`select::follows`, what `select::check_path`
//!     keeps). A CFG edge alone is not enough: a block that can branch
//!     over another would make paths the program never runs in a row
//!     (1,3,4,0,2 from a loop 0..4 whose blocks can skip one) frequent as
//!     gapped subsequences.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Miner;
use crate::cache::BlockMeta;
use crate::monitor::{ExitKind, Request, Tables, Trigger};
use crate::superblock::select::follows;

/// Offer the windows the tables cut since the last round to `m`.
pub fn offer(m: &mut Miner, tables: &mut Tables) {
    for w in tables.take_windows() {
        m.offer(w);
    }
}

/// One round of mining within the configured budget (after [`offer`]);
/// the patterns it settles become superblock requests with their paths.
pub fn mine(m: &mut Miner, tables: &mut Tables, metas: &[BlockMeta]) {
    if !m.has_work() {
        return;
    }
    let deadline = Instant::now() + Duration::from_micros(m.config().budget_us as u64);
    let found = {
        let t = &*tables;
        let mut admit = |p: Option<u32>, e: u32| admits(metas, t, p, e);
        m.work(&mut admit, deadline)
    };
    for p in found {
        tables.requests.push(Request {
            head: p.path[0],
            trigger: Trigger::Mined {
                length: p.path.len() as u32,
                sequences: p.sequences,
                repeats: p.repeats,
                database: p.database,
            },
            path: Some(Arc::from(p.path)),
        });
    }
}

/// May block `e` start a pattern (`p` None) or follow block `p` (I1)?
fn admits(metas: &[BlockMeta], t: &Tables, p: Option<u32>, e: u32) -> bool {
    let Some(me) = metas.get(e as usize) else {
        return false;
    };
    if matches!(me.exit, ExitKind::Syscall | ExitKind::Trap) {
        return false;
    }
    let Some(p) = p else {
        return true;
    };
    let Some(mp) = metas.get(p as usize) else {
        return false;
    };
    let seen = t.successor_blocks(p).contains(&e);
    seen && match mp.exit {
        ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return => true,
        _ => follows(mp, me),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tree::Support;
    use super::super::Config;
    use super::*;
    use crate::monitor::tables::loop_table;
    use crate::monitor::{SbConfig, Windows};

    fn config() -> Config {
        Config {
            window: 64,
            interval: 256,
            sequences: 4,
            support: Support {
                support1: 0.5,
                support2: 4,
            },
            max_nodes: 1 << 16,
            max_depth: 16,
            budget_us: 1_000_000,
        }
    }

    fn pisat(c: &Config) -> SbConfig {
        SbConfig {
            enabled: true,
            block_threshold: 3000,
            edge_threshold: 5000,
            windows: Some(Windows {
                window: c.window,
                interval: c.interval,
            }),
        }
    }

    #[test]
    fn windows_are_mined_into_requests() {
        let blocks = loop_table(5);
        let cfg = config();
        let mut t = Tables::new(pisat(&cfg));
        let mut m = Miner::new(cfg);
        let taken = |b: u32| crate::contract::block_word(b, crate::contract::EXIT_TAKEN);
        let stream: Vec<u32> = (0..5000u32).map(|i| taken(i % 5)).collect();
        for chunk in stream.chunks(777) {
            t.process(0, chunk, &blocks);
            offer(&mut m, &mut t);
        }
        assert_eq!(m.stats.windows_captured, (5000 - 64) / 256 + 1);
        while m.has_work() {
            mine(&mut m, &mut t, blocks.published());
        }
        // One loop: one request, the rotation starting at block 0.
        assert_eq!(t.requests.len(), 1, "{:?}", t.requests);
        let r = &t.requests[0];
        assert_eq!(r.path.as_deref(), Some(&[0, 1, 2, 3, 4][..]));
        assert!(matches!(r.trigger, Trigger::Mined { length: 5, .. }));
    }

    /// What the per-entry loop costs with and without Pisat, and what
    /// mining costs per element; prints only (a benchmark: run with
    /// `cargo test --release --lib pisat::round -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn cost_per_entry() {
        let blocks = loop_table(7);
        let stream: Vec<u32> = (0..1u32 << 22)
            .map(|i| crate::contract::block_word((i * 3 + i / 7) % 7, crate::contract::EXIT_FALL))
            .collect();
        // The default window and interval (options.rs).
        let mut cfg = config();
        cfg.window = 256;
        cfg.interval = 8192;
        cfg.sequences = 16;
        cfg.support.support2 = 8;
        let counting = SbConfig {
            windows: None,
            block_threshold: u32::MAX,
            ..pisat(&cfg)
        };
        for (name, sb) in [("counting", counting), ("pisat", pisat(&cfg))] {
            let mut m = Miner::new(cfg);
            // The best of five passes over the stream (a busy machine
            // only ever makes a pass slower).
            let mut t = Tables::new(sb);
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t0 = Instant::now();
                for chunk in stream.chunks(1 << 16) {
                    t.process(0, chunk, &blocks);
                }
                best = best.min(t0.elapsed().as_secs_f64());
            }
            let per = best * 1e9 / stream.len() as f64;
            let t1 = Instant::now();
            offer(&mut m, &mut t);
            while m.has_work() {
                mine(&mut m, &mut t, blocks.published());
            }
            let mined = m.stats.elements_mined;
            println!(
                "{name}: {per:.2} ns per entry in the loop; mining {:.0} ns per element ({mined} elements)",
                t1.elapsed().as_secs_f64() * 1e9 / mined.max(1) as f64
            );
        }
    }
}
