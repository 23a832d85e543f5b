//! The memo's bulk replay (memo.rs) against the pass-by-pass one.

use super::*;

/// memo.rs: a loop in A calls B each iteration; superblock 0 runs one
/// iteration with B's call and return inside (balanced), superblock 1 is
/// headed in B, returns into A's loop and calls B again as it loops
/// (rotating). A is called from the root and from D, so passes come from
/// several contexts. Replayed in bulk or pass by pass, everything the
/// tables hold is the same.
#[test]
fn memoised_passes_count_as_replayed_ones() {
    const R0: u64 = 0x100;
    const R1: u64 = 0x110;
    const R2: u64 = 0x120;
    const R3: u64 = 0x130;
    const D0: u64 = 0x3000;
    const D1: u64 = 0x3010;
    const A0: u64 = 0x1000;
    const A1: u64 = 0x1010;
    const A2: u64 = 0x1020;
    const B0: u64 = 0x2000;
    let blocks = BlockTable::new(64).unwrap();
    let table = [
        meta(R0, 1, ExitKind::Branch, R1, R2),
        meta(R1, 2, ExitKind::Call, A0, R3),
        meta(R2, 2, ExitKind::Call, D0, R3),
        meta(R3, 1, ExitKind::Jump, R0, 0),
        meta(D0, 3, ExitKind::Call, A0, D1),
        meta(D1, 1, ExitKind::Return, 0, 0),
        meta(A0, 3, ExitKind::Call, B0, A1),
        meta(A1, 2, ExitKind::Branch, A0, A2),
        meta(A2, 1, ExitKind::Return, 0, 0),
        meta(B0, 4, ExitKind::Return, 0, 0),
    ];
    for m in table {
        blocks.push_meta(m);
    }
    let id = |g: u64| table.iter().position(|m| m.guest == g).unwrap() as u32;
    let metas = blocks.published().to_vec();
    // A superblock of three members, each following the one before.
    let add = |t: &mut Tables, sb: u32, members: [u64; 3], insns: [u32; 3], exits, ops| {
        let base = t.next_units(5).unwrap();
        let members = members.iter().map(|&g| id(g)).collect();
        let acc = SbAccount::new(members, vec![u16::MAX, 0, 1], &insns, exits, ops, base);
        t.add_superblock(sb, acc, &metas);
        base
    };
    let sbs = |t: &mut Tables| {
        // 0: A0 -> B0 -> A1, looping to A0 or leaving to A2.
        let call = PassOp {
            at: 1,
            call: Some(A1),
            to: B0,
        };
        let ret = PassOp {
            at: 2,
            call: None,
            to: A1,
        };
        let exits = vec![SbExitAcct::to_head(2), SbExitAcct::direct(2, A2)];
        let base0 = add(t, 0, [A0, B0, A1], [3, 4, 2], exits, vec![call, ret]);
        // 1: B0 -> (return) A1 -> A0, leaving to A2 or calling B0 again.
        let ret = PassOp { at: 1, ..ret };
        let exits = vec![SbExitAcct::direct(1, A2), SbExitAcct::to_head(2)];
        let base1 = add(t, 1, [B0, A1, A0], [4, 2, 3], exits, vec![ret]);
        (base0, base1)
    };
    for seed in 1..30u64 {
        let mut rng = TestRng::new(seed);
        let mut next = |n: u64| rng.below(n);
        let mut memo = Tables::new(SbConfig::default());
        let mut plain = Tables::new(SbConfig::default());
        plain.memo = false;
        // Their loop passes counted (contract I2): in bulk, and one by one.
        let mut counted = Tables::new(SbConfig::default());
        let mut counted_plain = Tables::new(SbConfig::default());
        counted_plain.memo = false;
        let (base0, base1) = sbs(&mut memo);
        assert_eq!((base0, base1), sbs(&mut plain));
        assert_eq!((base0, base1), sbs(&mut counted));
        assert_eq!((base0, base1), sbs(&mut counted_plain));
        // The guest, block by block, with its return addresses.
        let (mut stream, mut stack, mut pc) = (Vec::new(), vec![0u64], R0);
        let (mut balanced, mut rotating) = (0, 0);
        let fall_of = |g: u64| fall(id(g));
        for _ in 0..4000 {
            pc = match pc {
                R0 if next(2) == 0 => {
                    stream.push(taken(id(R0)));
                    R1
                }
                R0 => {
                    stream.push(fall_of(R0));
                    R2
                }
                R1 | R2 | D0 | A0 if pc != A0 || next(3) == 0 || stack.len() > 40 => {
                    stream.push(fall_of(pc));
                    let (ret, to) = match pc {
                        R1 | R2 => (R3, if pc == R1 { A0 } else { D0 }),
                        D0 => (D1, A0),
                        _ => (A1, B0),
                    };
                    stack.push(ret);
                    to
                }
                A0 => {
                    balanced += 1;
                    if next(4) == 0 {
                        stream.push(base0 + 1);
                        A2
                    } else {
                        stream.push(base0);
                        A0
                    }
                }
                R3 => {
                    stream.push(fall_of(R3));
                    R0
                }
                B0 if stack.last() == Some(&A1) && next(2) == 0 => {
                    // Returns into A's loop, then leaves or calls again.
                    stack.pop();
                    if next(4) == 0 {
                        stream.push(base1);
                        A2
                    } else {
                        rotating += 1;
                        stack.push(A1);
                        stream.push(base1 + 1);
                        B0
                    }
                }
                A1 if next(3) == 0 => {
                    stream.push(fall_of(A1));
                    A2
                }
                A1 => {
                    stream.push(taken(id(A1)));
                    A0
                }
                _ => {
                    // A return: D1, A2, B0.
                    stream.push(fall_of(pc));
                    stack.pop().unwrap()
                }
            };
        }
        assert!(balanced > 100 && rotating > 100, "seed {seed}");
        process_both([&mut memo, &mut plain], &stream, &blocks, || {
            1 + next(100) as usize
        });
        // Both kinds were taken in bulk.
        for u in [base0, base0 + 1, base1 + 1] {
            assert!(memo.memo_words.contains(&u), "seed {seed}: unit {u}");
        }
        assert!(plain.memo_words.is_empty());
        memo.finish();
        plain.finish();
        assert!(memo.memo_words.is_empty());
        let counts = |t: &Tables| (0..table.len()).map(|b| t.count(b)).collect::<Vec<_>>();
        assert_eq!(counts(&memo), counts(&plain), "seed {seed}");
        assert_eq!(memo.edges(), plain.edges(), "seed {seed}");
        assert_eq!(memo.per_thread(), plain.per_thread(), "seed {seed}");
        assert_eq!(
            (memo.returns, memo.unmatched_returns, memo.max_shadow_depth),
            (
                plain.returns,
                plain.unmatched_returns,
                plain.max_shadow_depth
            ),
            "seed {seed}"
        );
        // The same contexts, though they may have been made in another
        // order.
        let tree = |t: &Tables| {
            (0..t.tree.nodes.len() as u32)
                .map(|n| {
                    let c = &t.tree.nodes[n as usize];
                    (t.tree.stack(n), c.calls, c.self_insns)
                })
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(tree(&memo), tree(&plain), "seed {seed}");
        let charged: u64 = memo.tree.nodes.iter().map(|n| n.self_insns).sum();
        assert_eq!(charged, memo.per_thread()[0].0, "seed {seed}");
        for sb in 0..2 {
            assert_eq!(memo.sb_summary(sb), plain.sb_summary(sb), "seed {seed}");
        }
        // Each run of a loop unit as the record a counted loop pushes.
        let (mut cstream, mut longest) = (Vec::new(), 0);
        let mut k = 0;
        while k < stream.len() {
            let w = stream[k];
            let sb_base = match w {
                _ if w == base0 => base0,
                _ if w == base1 + 1 => base1,
                _ => {
                    cstream.push(w);
                    k += 1;
                    continue;
                }
            };
            let run = stream[k..].iter().take_while(|&&x| x == w).count();
            longest = longest.max(run);
            cstream.extend([TAG_LOOP, sb_base, k as u32, 0, TAG_LOOP_PASSES | run as u32]);
            k += run;
        }
        assert!(longest > 1, "seed {seed}: runs of passes");
        process_both(
            [&mut counted, &mut counted_plain],
            &cstream,
            &blocks,
            || 1 + next(100) as usize,
        );
        counted.finish();
        counted_plain.finish();
        for t in [&counted, &counted_plain] {
            assert_eq!(counts(t), counts(&plain), "seed {seed}");
            assert_eq!(t.edges(), plain.edges(), "seed {seed}");
            let totals = |t: &Tables| {
                t.per_thread()
                    .iter()
                    .map(|x| (x.0, x.1))
                    .collect::<Vec<_>>()
            };
            assert_eq!(totals(t), totals(&plain), "seed {seed}");
            assert_eq!(
                (t.returns, t.unmatched_returns, t.max_shadow_depth),
                (
                    plain.returns,
                    plain.unmatched_returns,
                    plain.max_shadow_depth
                ),
                "seed {seed}"
            );
            assert_eq!(tree(t), tree(&plain), "seed {seed}");
            for sb in 0..2 {
                assert_eq!(t.sb_summary(sb), plain.sb_summary(sb), "seed {seed}");
            }
        }
    }
}
