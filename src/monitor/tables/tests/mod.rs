use super::*;
use crate::contract::{
    TAG_LOOP, TAG_LOOP_PASSES, TAG_REP, TAG_SIGNAL, TAG_UNRETIRED, TAG_UNRETIRED_REP,
};
use crate::monitor::ExitKind;

mod epoch;
mod memo;
mod triggers;

fn meta(guest: u64, insns: u32, exit: ExitKind, target: u64, next: u64) -> BlockMeta {
    BlockMeta {
        guest,
        target,
        next,
        guest_len: insns,
        insns,
        exit,
    }
}

/// Block `b`'s fall-through (or only) exit word, its taken one, its
/// partial one.
fn fall(b: u32) -> u32 {
    block_word(b, EXIT_FALL)
}
fn taken(b: u32) -> u32 {
    block_word(b, EXIT_TAKEN)
}
fn partial(b: u32) -> u32 {
    block_word(b, PARTIAL)
}

/// `stream` through both tables in the same pieces, each as long as
/// `piece` says.
fn process_both(
    mut t: [&mut Tables; 2],
    stream: &[u32],
    blocks: &BlockTable,
    mut piece: impl FnMut() -> usize,
) {
    let mut k = 0;
    while k < stream.len() {
        let n = piece().min(stream.len() - k);
        for t in t.iter_mut() {
            t.process(0, &stream[k..k + n], blocks);
        }
        k += n;
    }
}

/// One block of 3 instructions with a `rep` second, run once per record
/// list; what the records make of the counts.
fn rep_counts(records: &[u32]) -> (u64, u64) {
    let blocks = BlockTable::new(4).unwrap();
    blocks.push_meta(BlockMeta {
        insns: 3,
        ..BlockMeta::default()
    });
    let mut t = Tables::default();
    t.process(0, records, &blocks);
    t.finish();
    let charged: u64 = t.tree.nodes.iter().map(|n| n.self_insns).sum();
    assert_eq!(charged, 3 + t.rep_extra - t.unretired, "call tree I2");
    assert_eq!(t.count(0), 1);
    (t.rep_extra, t.unretired)
}

#[test]
fn unretired_instructions_leave_the_count() {
    // rep ran 96 of 200 iterations, then the block ran to its end.
    assert_eq!(
        rep_counts(&[TAG_REP | 4, fall(0), 200, 104, fall(0)]),
        (95, 0)
    );
    // ud2 ends the block: 1 instruction did not retire.
    assert_eq!(rep_counts(&[fall(0), TAG_UNRETIRED, 1]), (0, 1));
    // The rep faulted after 96 iterations: they count, the last
    // instruction does not.
    assert_eq!(
        rep_counts(&[
            TAG_REP | 4,
            fall(0),
            200,
            104,
            partial(0),
            TAG_UNRETIRED_REP,
            1
        ]),
        (95, 1)
    );
    // The rep faulted on its first iteration: it did not retire either.
    assert_eq!(
        rep_counts(&[
            TAG_REP | 4,
            fall(0),
            200,
            200,
            partial(0),
            TAG_UNRETIRED_REP,
            1
        ]),
        (0, 2)
    );
    // rep with RCX = 0 counts once.
    assert_eq!(rep_counts(&[TAG_REP | 4, fall(0), 0, 0, fall(0)]), (0, 0));
}

/// Blocks: 0 main (calls 1, returns to 2), 1 f (returns), 2 after the
/// call (branches to 0 or falls to 3), 3 indirect jump, 4..7 targets,
/// which jump back to 0.
fn table() -> BlockTable {
    let t = BlockTable::new(64).unwrap();
    t.push_meta(meta(0x100, 3, ExitKind::Call, 0x200, 0x110));
    t.push_meta(meta(0x200, 5, ExitKind::Return, 0, 0));
    t.push_meta(meta(0x110, 2, ExitKind::Branch, 0x100, 0x120));
    t.push_meta(meta(0x120, 1, ExitKind::IndirectJump, 0, 0));
    for i in 0..4 {
        t.push_meta(meta(0x300 + i * 16, 1, ExitKind::Jump, 0x100, 0));
    }
    t
}

#[test]
fn every_exit_is_counted_once_through_the_edge_cache() {
    let blocks = table();
    for fast in [true, false] {
        let mut t = Tables::new(SbConfig::default());
        t.fast = fast;
        let mut stream = vec![];
        // The indirect block goes to four different targets in turn: two
        // stay in the ways, two go through the edge cache (I1).
        for round in 0..50u32 {
            stream.extend_from_slice(&[fall(0), fall(1), fall(2), fall(3)]);
            stream.push(fall(4 + round % 4));
        }
        stream.extend_from_slice(&[fall(0), fall(1), taken(2), fall(0)]);
        // Split into uneven batches, as rings hand them out.
        for chunk in stream.chunks(7) {
            t.process(0, chunk, &blocks);
        }
        t.finish();
        let mut by_src: BTreeMap<u32, u64> = BTreeMap::new();
        for (&(p, _), &c) in t.edges() {
            *by_src.entry(p).or_default() += c;
        }
        for id in 0..8u32 {
            // The last block's call had no callee's code after it.
            assert_eq!(
                by_src.get(&id).copied().unwrap_or(0),
                t.count(id as usize),
                "out-edges of block {id}"
            );
        }
        for i in 0..4u64 {
            assert_eq!(
                t.edges()[&(3, 0x300 + i * 16)],
                50 / 4 + u64::from(i < 50 % 4)
            );
        }
        assert_eq!(t.edges()[&(2, 0x120)], 50, "fall-through edge");
        assert_eq!(t.edges()[&(2, 0x100)], 1, "taken edge");
        assert_eq!(t.edges()[&(1, 0x110)], 51, "return edges");
        assert_eq!(t.returns, 51);
        assert_eq!(t.unmatched_returns, 0);
        assert_eq!(t.unresolved_exits, 0);
    }
}

/// A call through a pointer rotating among `targets` (blocks of
/// [`table`]), `rounds` times.
fn rotate(t: &mut Tables, blocks: &BlockTable, targets: &[u32], rounds: u32) {
    let mut stream = vec![];
    for round in 0..rounds {
        stream.extend_from_slice(&[fall(3), fall(targets[(round as usize) % targets.len()])]);
    }
    for chunk in stream.chunks(64) {
        t.process(0, chunk, blocks);
    }
}

#[test]
fn selection_sees_an_indirect_exits_targets_as_they_are_now() {
    // mod.rs `TargetsIndex`: the index of the edge cache is made once
    // and kept while few words come; a target the exit took only since,
    // and the counts of those it had, are what selection reads.
    let blocks = table();
    let mut t = Tables::new(SbConfig::default());
    rotate(&mut t, &blocks, &[4, 5, 6], 30);
    let (got, _) = t.targets(3).expect("an indirect exit");
    assert_eq!(got, vec![(4, 10), (5, 10), (6, 10)], "the index made");
    // A fourth target, into the edge cache: asked for again at once.
    rotate(&mut t, &blocks, &[7], 1);
    let (got, _) = t.targets(3).unwrap();
    assert_eq!(got, vec![(4, 10), (5, 10), (6, 10), (7, 1)], "a new target");
    // The edge cache's counts again once the exit ran twice as often.
    rotate(&mut t, &blocks, &[6, 7], 4000);
    let (got, total) = t.targets(3).unwrap();
    assert_eq!(got, vec![(6, 2010), (7, 2001), (4, 10), (5, 10)], "grown");
    assert_eq!(total, 4031);
}

#[test]
fn call_tree_charges_every_instruction_once() {
    let blocks = table();
    let mut t = Tables::default();
    let stream = [
        fall(0),
        fall(1),
        taken(2),
        fall(0),
        fall(1),
        fall(2),
        fall(3),
        fall(4),
    ];
    t.process(0, &stream, &blocks);
    // rep iterations land in the current context too.
    t.process(0, &[TAG_REP, fall(0), 10, 0], &blocks);
    t.finish();
    let total: u64 = (0..8)
        .map(|i| t.count(i) * blocks.published()[i].insns as u64)
        .sum();
    let charged: u64 = t.tree.nodes.iter().map(|n| n.self_insns).sum();
    assert_eq!(charged, total + 9, "I2");
    // f (0x200) ran twice as a child of the root, 5 instructions each.
    let f = t.tree.nodes.iter().position(|n| n.func == 0x200).unwrap();
    assert_eq!(t.tree.nodes[f].calls, 2);
    assert_eq!(t.tree.nodes[f].self_insns, 10);
    assert_eq!(t.tree.nodes[f].parent, ROOT);
}

/// Blocks 0 (branch to 1, falls to 2), 1 and 2 (both jump back to 0),
/// 3 (jumps to 0), then `more`.
fn tree_blocks(more: &[BlockMeta]) -> BlockTable {
    let blocks = BlockTable::new(64).unwrap();
    blocks.push_meta(meta(0x100, 3, ExitKind::Branch, 0x110, 0x120));
    blocks.push_meta(meta(0x110, 2, ExitKind::Jump, 0x100, 0));
    blocks.push_meta(meta(0x120, 4, ExitKind::Jump, 0x100, 0));
    blocks.push_meta(meta(0x200, 1, ExitKind::Jump, 0x100, 0));
    for &m in more {
        blocks.push_meta(m);
    }
    blocks
}

/// Superblock 0, a tree over blocks 0, 1 and 2 of [`tree_blocks`]: exits
/// 0 and 1 loop back from members 1 and 2. Its first unit.
fn add_tree(t: &mut Tables, blocks: &BlockTable) -> u32 {
    let base = t.next_units(5).unwrap();
    t.add_superblock(0, tree_account(base), blocks.published());
    base
}

/// The account of [`add_tree`]'s superblock, units from `base`.
fn tree_account(base: u32) -> SbAccount {
    let exits = vec![SbExitAcct::to_head(1), SbExitAcct::to_head(2)];
    SbAccount::new(
        vec![0, 1, 2],
        vec![u16::MAX, 0, 0],
        &[3, 2, 4],
        exits,
        Vec::new(),
        base,
    )
}

/// A superblock tree over blocks 0 (branch: 1 hot, 2 cold), 1 and 2
/// (both jump back to 0): exits 0 and 1 loop back from members 1 and 2.
/// Passes come as unit words, a block's word before and after.
#[test]
fn units_of_a_tree_count_every_member_and_edge() {
    let blocks = tree_blocks(&[]);
    let mut t = Tables::new(SbConfig::default());
    t.process(0, &[fall(3)], &blocks);
    let base = add_tree(&mut t, &blocks);
    // Three loops through 1, two through 2, then a pass that stops in
    // member 2 (its partial unit: base + 2 exits + member 2).
    let partial2 = base + 2 + 2;
    let stream = [base, base + 1, base, base + 1, base, partial2, fall(3)];
    t.process(0, &stream, &blocks);
    t.finish();
    assert_eq!(t.sb_record_errors, 0);
    assert_eq!(
        (t.count(0), t.count(1), t.count(2), t.count(3)),
        (6, 3, 3, 2)
    );
    let s = t.sb_summary(0).unwrap();
    assert_eq!(s.member_runs, vec![6, 3, 3]);
    assert_eq!((s.entries, s.loops, s.partial_exits), (1, 5, 1));
    assert_eq!(t.edges()[&(0, 0x110)], 3);
    assert_eq!(t.edges()[&(0, 0x120)], 3);
    // Into the head: from block 3 at each of its runs, from a loop's last
    // member five times.
    assert_eq!(t.edges()[&(3, 0x100)], 2);
    assert_eq!(t.edges()[&(1, 0x100)], 3);
    assert_eq!(t.edges()[&(2, 0x100)], 2);
    let (insns, nblocks, _) = t.per_thread()[0];
    assert_eq!(insns, 1 + 3 * 5 + 2 * 7 + 7 + 1);
    assert_eq!(nblocks, 1 + 5 * 2 + 2 + 1);
    // Edges out of each block add up to its count but the runs that
    // stopped inside it (I1): the partial pass left the head for member 2
    // and stopped there.
    for (b, partial) in [(0u32, 0u64), (1, 0), (2, 1), (3, 0)] {
        let out: u64 = t
            .edges()
            .iter()
            .filter(|(k, _)| k.0 == b)
            .map(|(_, n)| n)
            .sum();
        assert_eq!(out, t.count(b as usize) - partial, "block {b}");
    }
}

/// The superblock of `units_of_a_tree_count_every_member_and_edge`
/// (exits 0 and 1 loop back from members 1 and 2) after a block 4 that
/// calls into its head; `stream` after [4] (units from `base`, which
/// the closure gets). What the tables hold at the end.
fn loop_tables(stream: impl Fn(u32) -> Vec<u32>) -> String {
    loop_tables_as(false, stream)
}

/// [`loop_tables`], the superblock `inherited` from a forked parent
/// (units.rs I4) instead of built here.
fn loop_tables_as(inherited: bool, stream: impl Fn(u32) -> Vec<u32>) -> String {
    let blocks = std::sync::Arc::new(tree_blocks(&[meta(0x300, 5, ExitKind::Call, 0x100, 0x305)]));
    let mut t = Tables::new(SbConfig::default());
    let base = if inherited {
        let base = t.next_units(5).unwrap();
        let acc = tree_account(base);
        let sb = InheritedSb {
            id: 0,
            units: acc.unit_base..acc.unit_base + acc.units(),
            head_guest: blocks.published()[acc.members[0] as usize].guest,
        };
        // The account is copied once, when the first unit comes.
        let mut given = Some(acc);
        t.inherit(
            vec![sb],
            AccountSource(Box::new(move |id| {
                assert_eq!(id, 0);
                Some(given.take().expect("an inherited account copied twice"))
            })),
            blocks.clone(),
        );
        // A superblock of its own takes units above the inherited ones.
        assert_eq!(t.next_units(1), Some(base + 5));
        base
    } else {
        add_tree(&mut t, &blocks)
    };
    let mut all = vec![fall(4)];
    all.extend(stream(base));
    for chunk in all.chunks(3) {
        t.process(0, chunk, &blocks);
    }
    t.finish();
    assert_eq!(t.sb_record_errors, 0);
    let mut edges: Vec<_> = t.edges().iter().map(|(k, v)| (*k, *v)).collect();
    edges.sort();
    let tree: Vec<_> = t
        .tree
        .nodes
        .iter()
        .map(|n| (n.parent, n.func, n.calls, n.self_insns))
        .collect();
    let counts: Vec<u64> = (0..5).map(|b| t.count(b)).collect();
    // Instructions and block executions of the thread (not its ring
    // entries, which differ by design).
    let (insns, nblocks, _) = t.per_thread()[0];
    format!(
        "{counts:?} {edges:?} {tree:?} {insns} {nblocks} {:?}",
        t.sb_summary(0)
    )
}

/// Contract I2: `TAG_LOOP_PASSES` words stand for the loop units they
/// count, pushed one by one, whatever their order, however many records
/// carry them; a record counting nothing changes nothing.
#[test]
fn counted_loop_passes_count_as_pushed_ones() {
    let pushed = loop_tables(|b| vec![b, b + 1, b, b + 1, b, b + 4, fall(3)]);
    let at = |l: u32, n: u32| TAG_LOOP_PASSES | l << 24 | n;
    let counted = loop_tables(|b| vec![TAG_LOOP, b, 7, 0, at(0, 3), at(1, 2), b + 4, fall(3)]);
    assert_eq!(pushed, counted);
    let split = loop_tables(|b| {
        let mut v = vec![TAG_LOOP, b, 5, 0, at(0, 1)];
        v.extend([TAG_LOOP, b, 6, 0, at(1, 2)]);
        v.extend([TAG_LOOP, b, 7, 0, at(0, 2), b + 4, fall(3)]);
        v
    });
    assert_eq!(pushed, split);
    // A loop entered and left at once: its record counts nothing.
    let once = loop_tables(|b| vec![b + 4, fall(3)]);
    let nothing = loop_tables(|b| vec![TAG_LOOP, b, 9, 0, b + 4, fall(3)]);
    assert_eq!(once, nothing);
    assert_ne!(once, pushed);
}

/// units.rs I4: a superblock a forked child took over counts as one it
/// built, whether its first word is a unit or a counted loop's record;
/// one that never runs leaves no trace.
#[test]
fn inherited_superblocks_count_as_built_ones() {
    let at = |l: u32, n: u32| TAG_LOOP_PASSES | l << 24 | n;
    let streams: [&dyn Fn(u32) -> Vec<u32>; 3] = [
        &|b| vec![b, b + 1, b, b + 1, b, b + 4, fall(3)],
        &|b| vec![TAG_LOOP, b, 7, 0, at(0, 3), at(1, 2), b + 4, fall(3)],
        &|b| vec![b + 4, fall(3)],
    ];
    for stream in streams {
        assert_eq!(loop_tables(stream), loop_tables_as(true, stream));
    }
    let idle = loop_tables_as(true, |_| vec![fall(3)]);
    assert!(idle.ends_with(" None"), "{idle}");
}

/// A random run of a program of four functions whose blocks branch,
/// jump indirectly, call and return, with superblock passes now and then
/// (one with a call inside, one with a return inside), signal frames,
/// sigreturns, `rep` records, blocks stopped inside, and returns past
/// frames (longjmp): the two passes and the general path must agree on
/// everything (tables I3), whatever the batches.
#[test]
fn the_two_passes_count_as_the_general_path() {
    // Function f (0..4) has blocks 4f..4f+3 at 0x1000*(f+1) + 0x10*i:
    // i=0 branches to 1 (taken) or 2, 1 calls function (f+1)%4 and
    // returns to 2, 2 jumps indirectly to 3 or 0, 3 returns.
    let blocks = BlockTable::new(64).unwrap();
    let addr = |f: u64, i: u64| 0x1000 * (f + 1) + 0x10 * i;
    for f in 0..4u64 {
        blocks.push_meta(meta(
            addr(f, 0),
            2,
            ExitKind::Branch,
            addr(f, 1),
            addr(f, 2),
        ));
        blocks.push_meta(meta(
            addr(f, 1),
            3,
            ExitKind::Call,
            addr((f + 1) % 4, 0),
            addr(f, 2),
        ));
        blocks.push_meta(meta(addr(f, 2), 1, ExitKind::IndirectJump, 0, 0));
        blocks.push_meta(meta(addr(f, 3), 4, ExitKind::Return, 0, 0));
    }
    let metas = blocks.published().to_vec();
    for seed in 1..40u64 {
        let mut rng = TestRng::new(seed);
        let mut next = |n: u64| rng.below(n);
        // Superblocks: f0's 0 (fall) -> 2, leaving by 2's indirect jump;
        // f1's 0 (taken) -> 1, calling f2's 0, leaving by its branch;
        // f3's 3, returning to f2's 2, leaving by its indirect jump.
        let sb = |t: &mut Tables| {
            let call = PassOp {
                at: 2,
                call: Some(addr(1, 2)),
                to: addr(2, 0),
            };
            let ret = PassOp {
                at: 1,
                call: None,
                to: addr(2, 2),
            };
            let indirect = |member| SbExitAcct {
                member,
                to_head: false,
                to: crate::ir::superblock::ExitTo::Indirect,
            };
            let sbs = [
                (
                    vec![0, 2],
                    vec![u16::MAX, 0],
                    vec![2, 1],
                    vec![],
                    vec![indirect(1)],
                ),
                (
                    vec![4, 5, 8],
                    vec![u16::MAX, 0, 1],
                    vec![2, 3, 2],
                    vec![call],
                    vec![
                        SbExitAcct::direct(2, addr(2, 1)),
                        SbExitAcct::direct(2, addr(2, 2)),
                    ],
                ),
                (
                    vec![15, 10],
                    vec![u16::MAX, 0],
                    vec![4, 1],
                    vec![ret],
                    vec![indirect(1)],
                ),
            ];
            let mut units = Vec::new();
            for (id, (members, parent, insns, ops, exits)) in sbs.into_iter().enumerate() {
                let n = (members.len() + exits.len()) as u32;
                let base = t.next_units(n).unwrap();
                let acc = SbAccount::new(members, parent, &insns, exits, ops, base);
                t.add_superblock(id as u32, acc, &metas);
                units.push(base);
            }
            units
        };
        let mut fast = Tables::new(SbConfig::default());
        let mut slow = Tables::new(SbConfig::default());
        slow.fast = false;
        let units = sb(&mut fast);
        assert_eq!(units, sb(&mut slow));
        let mut stream = Vec::new();
        let mut stack: Vec<(u64, u32)> = Vec::new();
        let (mut f, mut i) = (0u64, 0u32);
        for _ in 0..3000 {
            let id = (4 * f) as u32 + i;
            match next(40) {
                0 => stream.extend_from_slice(&[TAG_SIGNAL | 10, 0x10, 0, addr(2, 0) as u32, 0]),
                1 => stream.extend_from_slice(&[TAG_REP | 3, fall(0), 9, 2]),
                2 => {
                    // Stopped inside, then runs again from its start.
                    stream.extend_from_slice(&[partial(id), TAG_UNRETIRED, 1]);
                    continue;
                }
                3 => stream.push(crate::contract::TAG_SIGRETURN),
                _ => {}
            }
            (f, i) = if f == 0 && i == 0 && next(5) == 0 {
                // The first superblock's pass: blocks 0 and 2, then 2's
                // indirect jump.
                stream.push(units[0]);
                (f, if next(2) == 0 { 3 } else { 0 })
            } else if f == 1 && i == 0 && next(3) == 0 {
                // The second's: f1's blocks 0 and 1, and f2's 0 and its
                // branch.
                stack.push((1, 2));
                let t = next(2) as u32;
                stream.push(units[1] + t);
                (2, 1 + t)
            } else if f == 3 && i == 3 && stack.last() == Some(&(2, 2)) && next(2) == 0 {
                // The third's: f3's return and f2's block 2, then its
                // indirect jump.
                stream.push(units[2]);
                stack.pop();
                (2, if next(2) == 0 { 3 } else { 0 })
            } else {
                match i {
                    0 => {
                        let t = next(2) as u32;
                        stream.push(if t == 0 { taken(id) } else { fall(id) });
                        (f, 1 + t)
                    }
                    1 => {
                        stream.push(fall(id));
                        stack.push((f, 2));
                        ((f + 1) % 4, 0)
                    }
                    2 => {
                        stream.push(fall(id));
                        (f, if next(2) == 0 { 3 } else { 0 })
                    }
                    _ => {
                        stream.push(fall(id));
                        let depth = next(3).min(stack.len() as u64) as usize;
                        let keep = stack.len().saturating_sub(depth.max(1));
                        let back = stack.get(keep).copied();
                        stack.truncate(keep);
                        back.unwrap_or((0, 0))
                    }
                }
            };
        }
        process_both([&mut fast, &mut slow], &stream, &blocks, || {
            1 + next(150) as usize
        });
        fast.finish();
        slow.finish();
        let counts = |t: &Tables| (0..16).map(|b| t.count(b)).collect::<Vec<_>>();
        assert_eq!(counts(&fast), counts(&slow), "seed {seed}");
        assert_eq!(fast.edges(), slow.edges(), "seed {seed}");
        assert_eq!(fast.per_thread(), slow.per_thread(), "seed {seed}");
        assert_eq!(
            (fast.returns, fast.unmatched_returns, fast.max_shadow_depth),
            (slow.returns, slow.unmatched_returns, slow.max_shadow_depth)
        );
        assert_eq!(fast.unresolved_exits, slow.unresolved_exits);
        let tree = |t: &Tables| {
            t.tree
                .nodes
                .iter()
                .map(|n| (n.parent, n.func, n.calls, n.self_insns))
                .collect::<Vec<_>>()
        };
        assert_eq!(tree(&fast), tree(&slow), "seed {seed}");
        // Every instruction is charged once (I2).
        let charged: u64 = fast.tree.nodes.iter().map(|n| n.self_insns).sum();
        assert_eq!(charged, fast.per_thread()[0].0, "seed {seed}");
        for id in 0..3 {
            assert_eq!(fast.sb_summary(id), slow.sb_summary(id));
            assert!(
                fast.sb_summary(id).unwrap().entries > 0,
                "seed {seed}: {id} ran"
            );
        }
    }
}

/// What the per-entry loop costs per word: a random branchy stream over
/// 1024 blocks, through the two passes and the general path; prints only
/// (`cargo test --release --lib ns_per_entry -- --ignored --nocapture`).
#[test]
#[ignore]
fn ns_per_entry() {
    let blocks = BlockTable::new(4096).unwrap();
    for b in 0..1024u64 {
        blocks.push_meta(meta(0x1000 + 16 * b, 3, ExitKind::Branch, 0, 0));
    }
    let mut rng = TestRng::new(1);
    let mut cur = 0u32;
    let stream: Vec<u32> = (0..1 << 22)
        .map(|_| {
            let t = rng.below(2) as u32;
            let w = block_word(cur, t);
            cur = (cur * 2 + 1 + t) % 1024;
            w
        })
        .collect();
    for fast in [false, true, false, true] {
        let mut t = Tables::new(SbConfig::default());
        t.fast = fast;
        let t0 = std::time::Instant::now();
        for _ in 0..8 {
            for chunk in stream.chunks(1 << 15) {
                t.process(0, chunk, &blocks);
            }
        }
        let ns = t0.elapsed().as_nanos() as f64 / (8 * stream.len()) as f64;
        println!("two passes {fast}: {ns:.2} ns per entry");
    }
}

/// Fresh tables and a block table of two blocks of 3 instructions.
fn two_blocks() -> (BlockTable, Tables) {
    let blocks = BlockTable::new(4).unwrap();
    for _ in 0..2 {
        blocks.push_meta(BlockMeta {
            insns: 3,
            ..BlockMeta::default()
        });
    }
    (blocks, Tables::default())
}

#[test]
fn rep_iterations_are_kept_per_instruction() {
    // Block 0 has rep instructions at offsets 4 and 9, block 1 one at 0.
    let (blocks, mut t) = two_blocks();
    let stream = [
        TAG_REP | 4,
        fall(0),
        10,
        0,
        TAG_REP | 9,
        fall(0),
        3,
        1,
        fall(0),
        TAG_REP | 4,
        fall(0),
        5,
        0,
        fall(0),
        TAG_REP,
        fall(1),
        7,
        0,
        fall(1),
        // RCX = 0: once, nothing beyond.
        TAG_REP,
        fall(1),
        0,
        0,
        fall(1),
    ];
    t.process(0, &stream, &blocks);
    t.finish();
    let mut sites: Vec<_> = t.rep_sites.iter().map(|(&k, &n)| (k, n)).collect();
    sites.sort_unstable();
    assert_eq!(sites, vec![((0, 4), 13), ((0, 9), 1), ((1, 0), 6)]);
    assert_eq!(t.rep_extra, 20);
}

#[test]
fn unretired_instructions_are_kept_by_block() {
    // Block 1 stopped with its last 2 instructions not run, twice; block
    // 0's rep faulted on its first iteration (which its block counted),
    // and the 1 instruction after it did not run.
    let (blocks, mut t) = two_blocks();
    let stream = [
        partial(1),
        TAG_UNRETIRED,
        2,
        fall(0),
        partial(1),
        TAG_UNRETIRED,
        2,
        TAG_REP | 6,
        fall(0),
        8,
        8,
        partial(0),
        TAG_UNRETIRED_REP,
        1,
    ];
    t.process(0, &stream, &blocks);
    t.finish();
    let at: Vec<_> = t.unretired_at.iter().map(|(&k, &n)| (k, n)).collect();
    assert_eq!(t.unretired_at.len(), 2, "{at:?}");
    assert_eq!(t.unretired_at[&(1, 2)], 2);
    assert_eq!(t.unretired_at[&(0, 1)], 1);
    assert_eq!(t.rep_unretired.get(&(0, 6)), Some(&1));
    assert_eq!(t.unretired, 2 * 2 + 1 + 1);
}
