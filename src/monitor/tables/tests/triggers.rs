//! Superblock triggers: when direct entries into a block fire its
//! trigger (warm.rs), in counts and in order.

use super::*;

fn counting(threshold: u32) -> Tables {
    Tables::new(SbConfig {
        enabled: true,
        block_threshold: threshold,
        edge_threshold: u32::MAX,
        windows: None,
    })
}

/// A block table holding `metas`, ids in order.
fn table(metas: &[BlockMeta]) -> BlockTable {
    let blocks = BlockTable::new(32).unwrap();
    for &m in metas {
        blocks.push_meta(m);
    }
    blocks
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
    let blocks = table(&[
        meta(0x100, 2, ExitKind::Jump, 0x200, 0),
        meta(0x200, 3, ExitKind::Jump, 0x100, 0),
    ]);
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
fn several_words_into_a_block_fire_its_trigger_at_the_threshold() {
    // 0 at 0x100 and 1 at 0x200 jump to 2 at 0x300, which branches back
    // to 0 (taken) or to 1 (falls through): entries into 2 come through
    // both words, in a pseudo-random mix.
    let blocks = table(&[
        meta(0x100, 2, ExitKind::Jump, 0x300, 0),
        meta(0x200, 2, ExitKind::Jump, 0x300, 0),
        meta(0x300, 1, ExitKind::Branch, 0x100, 0x200),
    ]);
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
        assert_eq!(first, u64::from(threshold), "seed {seed}");
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
    let blocks = table(&[
        meta(0x100, 2, ExitKind::Jump, 0x110, 0),
        meta(0x110, 13, ExitKind::Branch, 0x110, 0x200),
        meta(0x200, 1, ExitKind::Jump, 0x100, 0),
    ]);
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
    let blocks = table(&[
        meta(0x25, 2, ExitKind::Jump, 0x48, 0),
        meta(0x48, 3, ExitKind::Branch, 0x30, 0x5a),
        meta(0x30, 3, ExitKind::Branch, 0x7d, 0x48),
        meta(0x5a, 3, ExitKind::Branch, 0x48, 0x7d),
    ]);
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

/// Arming a trigger's single direct in-word (warm.rs) changes nothing a
/// profile or the builder sees: on random walks over random graphs, cut
/// into random pieces, with words joining triggers as blocks are met and
/// superblocks added on the way (their units join triggers, their heads'
/// triggers close), the triggers fire in the same order at the same
/// counts and at the same point of the stream as when every warm word
/// counts each entry, and the counts and edges come out the same.
#[test]
fn an_armed_word_fires_its_trigger_where_counting_each_entry_does() {
    let addr = |b: u64| 0x1000 + 0x40 * b;
    let mut fired_seeds = 0;
    for seed in 1..60u64 {
        let mut rng = TestRng::new(seed);
        let n = 4 + rng.below(12);
        let blocks = BlockTable::new(32).unwrap();
        for b in 0..n {
            let (t, u) = (addr(rng.below(n)), addr(rng.below(n)));
            let (exit, next) = match rng.below(8) {
                0..=3 => (ExitKind::Branch, u),
                4 if b % 3 == 0 => (ExitKind::Call, u),
                _ => (ExitKind::Jump, 0),
            };
            blocks.push_meta(meta(addr(b), 1 + rng.below(5) as u32, exit, t, next));
        }
        let metas = blocks.published().to_vec();
        let threshold = 2 + rng.below(40) as u32;
        let mut arm = counting(threshold);
        let mut each = counting(threshold);
        each.arm = false;
        if seed % 4 == 0 {
            arm.fast = false;
            each.fast = false;
        }
        // Where each superblock's head is, and its first unit.
        let mut sbs: Vec<(u32, u32)> = Vec::new();
        let mut at = rng.below(n) as u32;
        let mut stream = Vec::new();
        for step in 0..4000 {
            let m = &metas[at as usize];
            let tk = m.exit == ExitKind::Branch && rng.below(3) != 0;
            let to = if tk || m.exit != ExitKind::Branch {
                m.target
            } else {
                m.next
            };
            match sbs.iter().find(|s| s.0 == at) {
                // A pass of the head's one-member superblock: exit 0 is
                // its taken branch (or its jump, its call), 1 its
                // fall-through.
                Some(&(_, base)) => {
                    stream.push(base + u32::from(!tk && m.exit == ExitKind::Branch))
                }
                None => stream.push(if tk { taken(at) } else { fall(at) }),
            }
            at = ((to - 0x1000) / 0x40) as u32;
            if stream.len() > 1 + rng.below(64) as usize || step == 3999 {
                let piece = std::mem::take(&mut stream);
                arm.process(0, &piece, &blocks);
                each.process(0, &piece, &blocks);
                assert_eq!(fired(&arm), fired(&each), "seed {seed}, step {step}");
                if rng.below(6) == 0 {
                    // A superblock at a block the walk has met.
                    let h = rng.below(n) as u32;
                    let fresh = !sbs.iter().any(|s| s.0 == h);
                    if arm.count(h as usize) > 0
                        && fresh
                        && metas[h as usize].exit != ExitKind::Call
                    {
                        let hm = &metas[h as usize];
                        let exits = match hm.exit {
                            ExitKind::Branch => vec![
                                SbExitAcct::direct(0, hm.target),
                                SbExitAcct::direct(0, hm.next),
                            ],
                            _ => vec![SbExitAcct::direct(0, hm.target)],
                        };
                        let nx = exits.len() as u32;
                        let id = sbs.len() as u32;
                        let base = arm.next_units(nx + 1).unwrap();
                        for t in [&mut arm, &mut each] {
                            let acc = SbAccount::new(
                                vec![h],
                                vec![u16::MAX],
                                &[hm.insns],
                                exits.clone(),
                                vec![],
                                base,
                            );
                            t.add_superblock(id, acc, &metas);
                        }
                        sbs.push((h, base));
                    }
                }
            }
        }
        fired_seeds += u32::from(!fired(&arm).is_empty());
        arm.finish();
        each.finish();
        for b in 0..n as usize {
            assert_eq!(arm.count(b), each.count(b), "seed {seed}, block {b}");
        }
        assert_eq!(arm.edges(), each.edges(), "seed {seed}");
    }
    // A walk caught in a superblock early may fire nothing more.
    assert!(
        fired_seeds >= 50,
        "triggers fired in {fired_seeds} walks of 59"
    );
}
