//! Tests of superblock selection: straight traces, explicit paths, trees,
//! unrolling and the yield bar, on a small block graph ([`G`]).

use super::cost::words_per_iteration;
use super::shape::grow_tree;
use super::*;
use std::collections::HashMap;

#[derive(Default)]
struct G {
    metas: Vec<BlockMeta>,
    succ: HashMap<u32, (u32, u64, u64)>,
    heads: Vec<u32>,
    /// Both ways, for trees.
    ways: HashMap<u32, [(u32, u64); 2]>,
    /// Every target of an indirect exit, most frequent first.
    targets: HashMap<u32, Vec<(u32, u64)>>,
}

impl Graph for G {
    fn meta(&self, id: u32) -> Option<BlockMeta> {
        self.metas.get(id as usize).copied()
    }
    fn hottest(&self, id: u32) -> Option<(u32, u64, u64)> {
        self.succ.get(&id).copied()
    }
    fn live(&self, _: u32) -> bool {
        true
    }
    fn stops_at(&self, id: u32) -> bool {
        self.heads.contains(&id)
    }
    fn successors(&self, id: u32) -> Option<([(u32, u64); 2], u64)> {
        let ways = self.ways.get(&id)?;
        let total = ways.iter().map(|w| w.1).sum();
        Some((*ways, total))
    }
    fn targets(&self, id: u32) -> Option<(Vec<(u32, u64)>, u64)> {
        let t = self.targets.get(&id)?;
        Some((t.clone(), t.iter().map(|x| x.1).sum()))
    }
}

fn m(exit: ExitKind) -> BlockMeta {
    BlockMeta {
        insns: 4,
        exit,
        ..BlockMeta::default()
    }
}

const LIM: Limits = Limits {
    max_blocks: 8,
    max_insns: 64,
    unroll: 1,
    min_yield: PAYS_OFF,
    tree_blocks: 1,
    tree_share: 0.02,
    count_loops: false,
    loop_limit: 1,
};

#[test]
fn a_loop_closes_at_the_head() {
    let g = G {
        metas: vec![m(ExitKind::Jump), m(ExitKind::Branch), m(ExitKind::Jump)],
        succ: HashMap::from([(0, (1, 10, 10)), (1, (2, 9, 10)), (2, (0, 9, 9))]),
        heads: vec![],
        ..G::default()
    };
    assert_eq!(
        select(0, &g, LIM).unwrap(),
        vec![(0, Next::Member), (1, Next::Member), (2, Next::Head)]
    );
}

#[test]
fn cold_sides_taken_often_grow_a_tree() {
    // A loop: 0 branches to 1 (hot, 3/4) or 2; 1 branches to 3 (hot)
    // or 4; 2, 3 and 4 jump to 5, which jumps back to 0.
    let ways = |a: u32, an: u64, b: u32, bn: u64| [(a, an), (b, bn)];
    let g = G {
        metas: vec![
            at(0x00, ExitKind::Branch, 0x10, 0x20),
            at(0x10, ExitKind::Branch, 0x30, 0x40),
            at(0x20, ExitKind::Jump, 0x50, 0),
            at(0x30, ExitKind::Jump, 0x50, 0),
            at(0x40, ExitKind::Jump, 0x50, 0),
            at(0x50, ExitKind::Jump, 0x00, 0),
        ],
        succ: HashMap::from([
            (0, (1, 75, 100)),
            (1, (3, 60, 75)),
            (2, (5, 25, 25)),
            (3, (5, 60, 60)),
            (4, (5, 15, 15)),
            (5, (0, 100, 100)),
        ]),
        ways: HashMap::from([(0, ways(1, 75, 2, 25)), (1, ways(3, 60, 4, 15))]),
        ..G::default()
    };
    let lim = Limits {
        tree_blocks: 16,
        ..LIM
    };
    let trace = select(0, &g, lim).unwrap();
    assert_eq!(
        trace,
        vec![
            (0, Next::Member),
            (1, Next::Member),
            (3, Next::Member),
            (5, Next::Head)
        ]
    );
    let tree = grow_tree(&trace, &g, lim);
    let p = |block, next, cold| Pick {
        block,
        next,
        cold,
        alt: None,
    };
    assert_eq!(
        tree,
        vec![
            p(0, Next::Member, Some(4)),
            p(1, Next::Member, Some(6)),
            p(3, Next::Member, None),
            p(5, Next::Head, None),
            // 0's cold side (a quarter of the passes) first, then 1's
            // (15 %): each copies the rest of the loop body.
            p(2, Next::Member, None),
            p(5, Next::Head, None),
            p(4, Next::Member, None),
            p(5, Next::Head, None),
        ]
    );
    // Below the share, or without room: the trace alone.
    let rare = Limits {
        tree_share: 0.2,
        ..lim
    };
    assert_eq!(grow_tree(&trace, &g, rare).len(), 6, "only 0's cold side");
    assert_eq!(grow_tree(&trace, &g, LIM).len(), 4, "no room");
}

#[test]
fn short_loops_are_unrolled_within_the_limits() {
    let g = G {
        metas: vec![m(ExitKind::Jump), m(ExitKind::Branch)],
        succ: HashMap::from([(0, (1, 10, 10)), (1, (0, 9, 10))]),
        heads: vec![],
        ..G::default()
    };
    let lim = Limits { unroll: 4, ..LIM };
    let want: Vec<Pick> = (0..3)
        .flat_map(|_| [(0, Next::Member), (1, Next::Member)])
        .chain([(0, Next::Member), (1, Next::Head)])
        .map(|(block, next)| Pick {
            block,
            next,
            cold: None,
            alt: None,
        })
        .collect();
    let trace = select(0, &g, lim).unwrap();
    assert_eq!(shape(&trace, &g, lim), want, "four copies");
    let tight = Limits {
        max_insns: 20,
        ..lim
    };
    assert_eq!(shape(&trace, &g, tight).len(), 4, "two copies fit");
}

fn at(guest: u64, exit: ExitKind, target: u64, next: u64) -> BlockMeta {
    BlockMeta {
        guest,
        target,
        next,
        insns: 4,
        exit,
        ..BlockMeta::default()
    }
}

#[test]
fn explicit_paths_keep_what_can_run_in_a_row() {
    // 0 branches to 1 or 2; 1 jumps to 3; 2 returns; 3 jumps back to 0.
    let g = G {
        metas: vec![
            at(0x10, ExitKind::Branch, 0x20, 0x30),
            at(0x20, ExitKind::Jump, 0x40, 0),
            at(0x30, ExitKind::Return, 0, 0),
            at(0x40, ExitKind::Jump, 0x10, 0),
            at(0x50, ExitKind::Syscall, 0, 0x58),
        ],
        succ: HashMap::new(),
        heads: vec![],
        ..G::default()
    };
    assert_eq!(
        check_path(&[0, 1, 3], &g, LIM).unwrap(),
        vec![(0, Next::Member), (1, Next::Member), (3, Next::Head)],
        "a loop closes at the head"
    );
    assert_eq!(
        check_path(&[0, 3, 1], &g, LIM).unwrap(),
        vec![(0, Next::Leave)],
        "0 cannot go to 3 directly: cut there"
    );
    assert_eq!(
        check_path(&[0, 2, 4], &g, LIM).unwrap(),
        vec![(0, Next::Member), (2, Next::Leave)],
        "a return may go anywhere, but never into a syscall block"
    );
    assert_eq!(check_path(&[4, 0], &g, LIM), None, "no syscall head");
    let self_loop = G {
        metas: vec![at(0x10, ExitKind::Branch, 0x10, 0x18)],
        succ: HashMap::new(),
        heads: vec![],
        ..G::default()
    };
    assert_eq!(
        check_path(&[0], &self_loop, LIM).unwrap(),
        vec![(0, Next::Head)],
        "a one-block loop closes on itself"
    );
    let mut g = g;
    g.heads.push(1);
    assert_eq!(
        check_path(&[0, 1, 3], &g, LIM).unwrap(),
        vec![(0, Next::Leave)],
        "another superblock's head is linked to, not copied"
    );
}

#[test]
fn stops_at_syscalls_other_heads_limits_and_cold_indirect_edges() {
    // 0 -> 4 -> 5 -> 6 -> 1 (a return) -> 2 (a syscall) or 3.
    let mut g = G {
        metas: vec![
            m(ExitKind::Jump),
            m(ExitKind::Return),
            m(ExitKind::Syscall),
            m(ExitKind::Jump),
            m(ExitKind::Jump),
            m(ExitKind::Jump),
            m(ExitKind::Jump),
        ],
        succ: HashMap::from([
            (0, (4, 10, 10)),
            (4, (5, 10, 10)),
            (5, (6, 10, 10)),
            (6, (1, 10, 10)),
            (1, (2, 6, 10)),
        ]),
        heads: vec![],
        ..G::default()
    };
    // A syscall block is never a member: the superblock leaves to it.
    let chain = vec![
        (0, Next::Member),
        (4, Next::Member),
        (5, Next::Member),
        (6, Next::Member),
        (1, Next::Leave),
    ];
    assert_eq!(select(0, &g, LIM).unwrap(), chain);
    assert_eq!(
        select(2, &g, LIM),
        None,
        "no superblock headed by a syscall"
    );
    g.succ.insert(1, (3, 4, 10));
    assert_eq!(select(0, &g, LIM).unwrap(), chain, "a cold return edge");
    g.heads.push(1);
    assert_eq!(
        select(0, &g, LIM).unwrap(),
        vec![
            (0, Next::Member),
            (4, Next::Member),
            (5, Next::Member),
            (6, Next::Leave)
        ]
    );
    g.heads.clear();
    let small = Limits {
        max_blocks: 8,
        max_insns: 7,
        unroll: 1,
        min_yield: PAYS_OFF,
        ..LIM
    };
    assert_eq!(select(0, &g, small).unwrap(), vec![(0, Next::Leave)]);
}

#[test]
fn a_superblock_must_save_ring_words() {
    // 0 -> 1 -> 2 -> 3: a pass is one word (its unit) for four blocks.
    let jumps = |p: [(u32, (u32, u64, u64)); 3]| G {
        metas: vec![m(ExitKind::Branch); 4],
        succ: HashMap::from(p),
        heads: vec![],
        ..G::default()
    };
    let g = jumps([(0, (1, 10, 10)), (1, (2, 10, 10)), (2, (3, 10, 10))]);
    assert_eq!(select(0, &g, LIM).unwrap().len(), 4);
    // Each branch goes on half the time: 1 + 1/2 + 1/4 + 1/8 blocks a
    // word, still worth it.
    let g = jumps([(0, (1, 5, 10)), (1, (2, 5, 10)), (2, (3, 5, 10))]);
    assert_eq!(select(0, &g, LIM).unwrap().len(), 4);
    // Each goes on a tenth of the time: 1.11 blocks a word, below the
    // bar: the head alone.
    let g = jumps([(0, (1, 1, 10)), (1, (2, 1, 10)), (2, (3, 1, 10))]);
    assert_eq!(select(0, &g, LIM).unwrap(), vec![(0, Next::Leave)]);
    // Two blocks ending in an indirect jump: one word for two blocks.
    let g = G {
        metas: vec![m(ExitKind::Jump), m(ExitKind::IndirectJump)],
        succ: HashMap::from([(0, (1, 10, 10))]),
        heads: vec![],
        ..G::default()
    };
    assert_eq!(select(0, &g, LIM).unwrap().len(), 2);
}

#[test]
fn a_branchy_loop_grows_a_tree_over_several_iterations() {
    // A loop: 0 branches to 1 or 2 half the time each; both jump back
    // to 0. One iteration's tree costs a word per iteration whichever
    // side ran; unrolled twice, with every path going on through the
    // head into the second iteration, half a word.
    let g = G {
        metas: vec![
            at(0x00, ExitKind::Branch, 0x10, 0x20),
            at(0x10, ExitKind::Jump, 0x00, 0),
            at(0x20, ExitKind::Jump, 0x00, 0),
        ],
        succ: HashMap::from([(0, (1, 50, 100)), (1, (0, 50, 50)), (2, (0, 50, 50))]),
        ways: HashMap::from([(0, [(1, 50), (2, 50)])]),
        ..G::default()
    };
    let lim = Limits {
        tree_blocks: 16,
        unroll: 2,
        min_yield: 0.0,
        ..LIM
    };
    let trace = select(0, &g, lim).unwrap();
    assert_eq!(trace, vec![(0, Next::Member), (1, Next::Head)]);
    let p = |block, next, cold| Pick {
        block,
        next,
        cold,
        alt: None,
    };
    let tree = shape(&trace, &g, lim);
    assert_eq!(
        tree,
        vec![
            // The unrolled trace: 0 1 0 1.
            p(0, Next::Member, Some(4)),
            p(1, Next::Member, None),
            p(0, Next::Member, Some(8)),
            p(1, Next::Head, None),
            // The first 0's cold side goes on into a second iteration;
            // then the two second iterations' cold sides (a quarter
            // of the passes each).
            p(2, Next::Member, None),
            p(0, Next::Member, Some(7)),
            p(1, Next::Head, None),
            p(2, Next::Head, None),
            p(2, Next::Head, None),
        ]
    );
    assert!((words_per_iteration(&tree, &g, lim) - 0.5).abs() < 1e-9);
    let one = grow_tree(&trace, &g, lim);
    assert!((words_per_iteration(&one, &g, lim) - 1.0).abs() < 1e-9);
    // With loop passes counted (contract I2) a loop that never leaves
    // costs no word at all: one iteration's tree, the smallest, wins.
    let counted = Limits {
        count_loops: true,
        ..lim
    };
    assert_eq!(words_per_iteration(&one, &g, counted), 0.0);
    assert_eq!(shape(&trace, &g, counted), one);
    assert!(counting_pays(&one, &g, counted));
    // Without room for the second iteration's paths, one iteration's
    // tree is as good as it gets.
    let small = Limits {
        tree_blocks: 4,
        ..lim
    };
    assert!(words_per_iteration(&shape(&trace, &g, small), &g, small) >= 0.75 - 1e-9);
}

#[test]
fn an_indirect_call_rotating_among_three_targets_grows_alternates() {
    // A loop: 0 calls through a pointer to 1, 2 or 3 (a third of the
    // time each), which return to 4, which jumps back to 0.
    let g = G {
        metas: vec![
            at(0x00, ExitKind::IndirectCall, 0, 0x40),
            at(0x10, ExitKind::Return, 0, 0),
            at(0x20, ExitKind::Return, 0, 0),
            at(0x30, ExitKind::Return, 0, 0),
            at(0x40, ExitKind::Jump, 0x00, 0),
        ],
        succ: HashMap::from([
            (0, (1, 34, 100)),
            (1, (4, 34, 34)),
            (2, (4, 33, 33)),
            (3, (4, 33, 33)),
            (4, (0, 100, 100)),
        ]),
        targets: HashMap::from([(0, vec![(1, 34), (2, 33), (3, 33)])]),
        ..G::default()
    };
    let lim = Limits {
        tree_blocks: 16,
        ..LIM
    };
    // The hottest target has a third of the calls, the three all of
    // them (I1): the trace goes on through the call.
    let trace = select(0, &g, lim).unwrap();
    assert_eq!(
        trace,
        vec![(0, Next::Member), (1, Next::Member), (4, Next::Head)]
    );
    let p = |block, next, cold, alt| Pick {
        block,
        next,
        cold,
        alt,
    };
    let tree = grow_tree(&trace, &g, lim);
    assert_eq!(
        tree,
        vec![
            p(0, Next::Member, Some(3), None),
            p(1, Next::Member, None, None),
            p(4, Next::Head, None, None),
            // The other two targets, tested in turn, each going on back
            // to the head.
            p(2, Next::Member, None, Some(5)),
            p(4, Next::Head, None, None),
            p(3, Next::Member, None, None),
            p(4, Next::Head, None, None),
        ]
    );
    assert_eq!(shape::chain(&tree, 0), vec![3, 5]);
    // Every pass loops: a word per iteration.
    assert!((words_per_iteration(&tree, &g, lim) - 1.0).abs() < 1e-9);
    // No more than MAX_TARGETS targets in all: a fourth is not tested.
    let mut four = g;
    four.metas.push(at(0x50, ExitKind::Return, 0, 0));
    four.succ.insert(5, (4, 25, 25));
    four.targets
        .insert(0, vec![(1, 25), (2, 25), (3, 25), (5, 25)]);
    let tree = grow_tree(&trace, &four, lim);
    assert_eq!(shape::chain(&tree, 0).len(), MAX_TARGETS - 1);
    // Spread over more targets than a guard tests: the trace stops at
    // the call.
    let mut spread = four;
    let eight = [
        (1, 13),
        (2, 13),
        (3, 13),
        (5, 13),
        (6, 12),
        (7, 12),
        (8, 12),
        (9, 12),
    ];
    spread.targets.insert(0, eight.to_vec());
    spread.succ.insert(0, (1, 13, 100));
    assert_eq!(select(0, &spread, lim).unwrap()[0], (0, Next::Leave));
}
