
#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::superblock::pisat::tree::Support;
    use crate::monitor::superblock::pisat::Config;
    use crate::monitor::SbConfig;

    /// A loop of `n` blocks: block i branches to i + 1 or (the last)
    /// back to 0.
    fn loop_table(n: u64) -> BlockTable {
        let t = BlockTable::new(64).unwrap();
        for i in 0..n {
            t.push(BlockMeta {
                guest: 0x1000 + 16 * i,
                target: 0x1000 + 16 * ((i + 1) % n),
                next: 0x1000 + 16 * ((i + 2) % n),
                guest_len: 16,
                insns: 4,
                exit: ExitKind::Branch,
            });
        }
        t
    }

    fn pisat() -> SbConfig {
        SbConfig {
            enabled: true,
            block_threshold: 3000,
            edge_threshold: 5000,
            pisat: Some(Config {
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
            }),
        }
    }

    #[test]
    fn windows_are_cut_across_batches_and_mined_into_requests() {
        let blocks = loop_table(5);
        let mut t = Tables::new(pisat());
        let stream: Vec<u32> = (0..5000u32).map(|i| i % 5).collect();
        for chunk in stream.chunks(777) {
            t.process(0, chunk, &blocks);
        }
        let m = t.pisat.as_ref().unwrap();
        // The first batch opens the countdown; then a window every 256
        // entries, whatever the batch size.
        assert_eq!(m.stats.windows_captured, 5000 / 256);
        while t.mining() {
            t.mine(&blocks);
        }
        // One loop: one request, its path a rotation of 0..5 starting at 0.
        assert_eq!(t.requests.len(), 1, "{:?}", t.requests);
        let r = &t.requests[0];
        assert_eq!(r.path.as_deref(), Some(&[0, 1, 2, 3, 4][..]));
        assert!(matches!(r.trigger, Trigger::Mined { length: 5, .. }));
        // Counting stays off: no counted request though blocks ran 1000
        // times (threshold 3000 would not fire anyway; see below).
        let mut counting = Tables::new(SbConfig {
            pisat: None,
            block_threshold: 100,
            ..pisat()
        });
        counting.process(0, &stream, &blocks);
        assert!(counting.pisat.is_none() && !counting.requests.is_empty());
        let mut mined = Tables::new(SbConfig {
            block_threshold: 100,
            ..pisat()
        });
        mined.process(0, &stream, &blocks);
        assert!(mined.requests.is_empty(), "no counting triggers with pisat");
    }

    /// What the per-entry loop costs with and without Pisat, and what
    /// mining costs per element (prints; run with
    /// `cargo test --release --lib tables::mine -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn cost_per_entry() {
        let blocks = loop_table(7);
        let stream: Vec<u32> = (0..1u32 << 22).map(|i| (i * 3 + i / 7) % 7).collect();
        for (name, sb) in [("counting", SbConfig::default()), ("pisat", pisat())] {
            let mut t = Tables::new(sb);
            let t0 = Instant::now();
            for _ in 0..8 {
                for chunk in stream.chunks(1 << 16) {
                    t.process(0, chunk, &blocks);
                }
            }
            let per = t0.elapsed().as_secs_f64() * 1e9 / (8 * stream.len()) as f64;
            let t1 = Instant::now();
            while t.mining() {
                t.mine(&blocks);
            }
            let mined = t.pisat.as_ref().map_or(0, |m| m.stats.elements_mined);
            println!(
                "{name}: {per:.2} ns per entry in the loop; mining {:.0} ns per element ({mined} elements)",
                t1.elapsed().as_secs_f64() * 1e9 / mined.max(1) as f64
            );
        }
    }
}
