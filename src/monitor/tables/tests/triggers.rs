//! Superblock triggers: when direct entries into a block fire its
//! trigger (special.rs `warm_entry`), in counts and in order.

use super::*;

fn counting(threshold: u32) -> Tables {
    Tables::new(SbConfig {
        enabled: true,
        block_threshold: threshold,
        edge_threshold: u32::MAX,
        windows: None,
    })
}

/// The block-trigger requests so far: (head, count at firing).
fn fired(t: &Tables) -> Vec<(u32, u64)> {
    t.requests
        .iter()
        .filter_map(|r| match r.trigger {
            crate::monitor::Trigger::Block { count, .. } => Some((r.head, count)),
            _ => None,
        })
        .collect()
}

#[test]
fn one_word_into_a_block_fires_its_trigger_at_the_threshold() {
    // 0 at 0x100 jumps to 1 at 0x200, which jumps back.
    let blocks = BlockTable::new(8).unwrap();
    blocks.push_meta(meta(0x100, 2, ExitKind::Jump, 0x200, 0));
    blocks.push_meta(meta(0x200, 3, ExitKind::Jump, 0x100, 0));
    for fast in [true, false] {
        for threshold in [1u32, 2, 10, 1000] {
            let mut t = counting(threshold);
            t.fast = fast;
            let mut entries = 0u64;
            while entries < u64::from(threshold) + 50 {
                t.process(0, &[fall(0), fall(1)], &blocks);
                entries += 1;
                assert_eq!(t.count(0), entries);
                assert_eq!(t.count(1), entries);
                // Block 0 is entered from 1 and fires at the threshold.
                // Block 1, entered from 0, too, but not before its first
                // entry has made it one of the monitor's blocks: an entry
                // later at a threshold of 1.
                let (t0, t1) = (u64::from(threshold), u64::from(threshold).max(2));
                let mut want = vec![];
                if entries >= t1 {
                    want.push((1, t1));
                }
                if entries >= t0 {
                    want.push((0, t0));
                }
                let mut got = fired(&t);
                got.sort_by_key(|f| std::cmp::Reverse(f.0));
                assert_eq!(
                    got, want,
                    "threshold {threshold}, {entries} entries, fast {fast}"
                );
            }
            t.finish();
            assert_eq!(t.count(0), entries);
            assert_eq!(t.edges()[&(0, 0x200)], entries);
            assert_eq!(t.edges()[&(1, 0x100)], entries);
        }
    }
}

#[test]
fn several_words_into_a_block_fire_within_half_the_threshold_more() {
    // 0 at 0x100 and 1 at 0x200 jump to 2 at 0x300, which branches back
    // to 0 (taken) or to 1 (falls through): entries into 2 come through
    // both words, in a pseudo-random mix.
    let blocks = BlockTable::new(8).unwrap();
    blocks.push_meta(meta(0x100, 2, ExitKind::Jump, 0x300, 0));
    blocks.push_meta(meta(0x200, 2, ExitKind::Jump, 0x300, 0));
    blocks.push_meta(meta(0x300, 1, ExitKind::Branch, 0x100, 0x200));
    for seed in 1..20u64 {
        let mut rng = TestRng::new(seed);
        let threshold = 200u32;
        let mut t = counting(threshold);
        let (mut into2, mut at) = (0u64, 0u32);
        let mut first = None;
        for _ in 0..1000 {
            // Odd seeds favour word 0 three to one, even ones neither.
            let to0 = rng.below(4) < if seed % 2 == 1 { 3 } else { 2 };
            let piece = [fall(at), if to0 { taken(2) } else { fall(2) }];
            t.process(0, &piece, &blocks);
            into2 += 1;
            at = if to0 { 0 } else { 1 };
            if first.is_none() && fired(&t).iter().any(|f| f.0 == 2) {
                first = Some(into2);
            }
        }
        let first = first.expect("block 2's trigger fired");
        assert!(
            (u64::from(threshold)..=3 * u64::from(threshold) / 2).contains(&first),
            "seed {seed}: fired after {first} entries"
        );
        assert_eq!(fired(&t).iter().filter(|f| f.0 == 2).count(), 1);
        t.finish();
        assert_eq!(t.count(0) + t.count(1), into2, "seed {seed}");
        assert_eq!(t.count(2), into2);
        let out2 = t.edges()[&(2, 0x100)] + t.edges()[&(2, 0x200)];
        assert_eq!(out2, into2);
    }
}

#[test]
fn a_self_loop_fires_at_the_threshold() {
    // 0 at 0x100 falls into 1 at 0x110, which branches to itself (taken)
    // or out to 0x200 (2).
    let blocks = BlockTable::new(8).unwrap();
    blocks.push_meta(meta(0x100, 2, ExitKind::Jump, 0x110, 0));
    blocks.push_meta(meta(0x110, 13, ExitKind::Branch, 0x110, 0x200));
    blocks.push_meta(meta(0x200, 1, ExitKind::Jump, 0x100, 0));
    let mut t = counting(3000);
    t.process(0, &[fall(0)], &blocks);
    let mut stream = vec![taken(1); 9999];
    stream.push(fall(1));
    for chunk in stream.chunks(4096) {
        t.process(0, chunk, &blocks);
    }
    assert_eq!(fired(&t), vec![(1, 3000)]);
}

/// The order triggers fire in decides which block heads a superblock
/// (the first built takes the loop in): a loop head entered once from
/// outside and then once an iteration reaches its threshold an iteration
/// before the block it branches to, and must fire first. (Counting some
/// entries late put the inner block first in c-nest: its superblock took
/// the loop without the head's, and the run pushed 65 M ring words
/// instead of 0.7 M.)
#[test]
fn a_loop_head_entered_from_outside_fires_before_its_body() {
    // P at 0x25 jumps to the head H at 0x48, which branches to X at 0x30
    // (taken) or Y at 0x5a; X falls back into H, Y jumps back to H.
    let blocks = BlockTable::new(8).unwrap();
    blocks.push_meta(meta(0x25, 2, ExitKind::Jump, 0x48, 0));
    blocks.push_meta(meta(0x48, 3, ExitKind::Branch, 0x30, 0x5a));
    blocks.push_meta(meta(0x30, 3, ExitKind::Branch, 0x7d, 0x48));
    blocks.push_meta(meta(0x5a, 3, ExitKind::Branch, 0x48, 0x7d));
    for fast in [true, false] {
        let mut t = counting(3000);
        t.fast = fast;
        let mut stream = vec![fall(0)];
        for _ in 0..10_000 {
            stream.extend_from_slice(&[taken(1), fall(2)]);
        }
        for chunk in stream.chunks(4096) {
            t.process(0, chunk, &blocks);
        }
        assert_eq!(fired(&t), vec![(1, 3000), (2, 3000)], "fast {fast}");
    }
}
