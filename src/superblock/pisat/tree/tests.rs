//! The PST-tree against hand-worked examples and against a brute-force
//! miner that defines each pattern's timestamp set directly (tree/mod.rs
//! module docs), on small random databases.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

const A: u32 = 0;
const B: u32 = 1;
const C: u32 = 2;
const D: u32 = 3;
const E: u32 = 4;

fn all(_: Option<u32>, _: u32) -> bool {
    true
}

/// Feed `db` as the design does: every sequence is in the database from
/// the start, and timestamp by timestamp each gets its next element.
fn build(db: &[Vec<u32>], limits: Limits, support: Support, admit: &mut impl Admit) -> Tree {
    let mut t = Tree::new(limits, support);
    let ids: Vec<SeqId> = db.iter().map(|_| t.add_sequence()).collect();
    let longest = db.iter().map(Vec::len).max().unwrap_or(0);
    for ct in 0..longest {
        for (s, seq) in db.iter().enumerate() {
            if let Some(&e) = seq.get(ct) {
                t.push(ids[s], e, admit);
            }
        }
    }
    t
}

const BIG: Limits = Limits {
    max_depth: 16,
    max_nodes: 1 << 20,
};

fn lists(t: &Tree, path: &[u32]) -> Vec<(SeqId, Vec<u32>)> {
    t.contents()
        .get(path)
        .map(|l| l.iter().map(|(s, ts)| (*s, ts.clone())).collect())
        .unwrap_or_default()
}

/// The kind of example the paper works: three sequences where the loop
/// B,C,E is found as B,C,E in one sequence (repeated: support2) and as
/// its rotation C,E,B across all three (support1).
#[test]
fn three_sequences_by_hand() {
    let db = vec![
        vec![B, C, E, B, C, E],
        vec![A, C, E, B, D],
        vec![C, E, B, C],
    ];
    let sup = Support {
        support1: 0.6,
        support2: 2,
    };
    let t = build(&db, BIG, sup, &mut all);
    assert_eq!(sup.sequences_needed(3), 2);
    // Root children: the timestamps of each label.
    assert_eq!(
        lists(&t, &[B]),
        vec![(0, vec![0, 3]), (1, vec![3]), (2, vec![2])]
    );
    assert_eq!(lists(&t, &[A]), vec![(1, vec![0])]);
    // B,C: C at 1 and 4 of sequence 0 extend B's latest (0, then 3); in
    // sequence 2 only the C at 3 follows a B (at 2).
    assert_eq!(lists(&t, &[B, C]), vec![(0, vec![0, 3]), (2, vec![2])]);
    // B,C,E carries the start of B,C down: repeated twice in sequence 0.
    assert_eq!(lists(&t, &[B, C, E]), vec![(0, vec![0, 3])]);
    // C,E,B: once in every sequence.
    assert_eq!(
        lists(&t, &[C, E, B]),
        vec![(0, vec![1]), (1, vec![1]), (2, vec![0])]
    );
    // B,E: the E at 5 extends the B at 3, the latest, not the one at 0.
    assert_eq!(lists(&t, &[B, E]), vec![(0, vec![0, 3])]);
    // No repeated label on a path.
    assert!(t.contents().keys().all(|p| {
        let mut q = p.clone();
        q.sort();
        q.dedup();
        q.len() == p.len()
    }));
    let found: Vec<Vec<u32>> = t.found.iter().map(|&n| t.path(n)).collect();
    assert!(found.contains(&vec![B, C, E]), "support2 in sequence 0");
    assert!(found.contains(&vec![C, E, B]), "support1: all three");
    assert!(!found.contains(&vec![A, C]), "only in sequence 1, once");
    assert!(!found.contains(&vec![B, C, E, D]));

    // Sequence 1 leaves: A and D were only there (I4); C,E,B keeps 0 and 2.
    let mut t = t;
    t.remove_sequence(1);
    assert!(lists(&t, &[A]).is_empty() && lists(&t, &[D]).is_empty());
    assert_eq!(lists(&t, &[C, E, B]), vec![(0, vec![1]), (2, vec![0])]);
    assert_eq!(t.sequences(), 2);
}

#[test]
fn latest_start_counts_repeats_once_per_start() {
    let sup = Support {
        support1: 1.0,
        support2: 2,
    };
    // Two A's then one B: one occurrence of A,B (from the latest A).
    let t = build(&[vec![A, A, B]], BIG, sup, &mut all);
    assert_eq!(lists(&t, &[A, B]), vec![(0, vec![1])]);
    // One A then two B's: still one start.
    let t = build(&[vec![A, B, B]], BIG, sup, &mut all);
    assert_eq!(lists(&t, &[A, B]), vec![(0, vec![0])]);
    assert!(t.found.iter().all(|&n| t.path(n) != vec![A, B]));
    // A loop: A,B,A,B,A,B has three starts of A,B.
    let t = build(&[vec![A, B, A, B, A, B]], BIG, sup, &mut all);
    assert_eq!(lists(&t, &[A, B]), vec![(0, vec![0, 2, 4])]);
    assert_eq!(lists(&t, &[B, A]), vec![(0, vec![1, 3])]);
}

#[test]
fn admission_cuts_the_tree_to_admitted_paths() {
    // Only A→B, B→C and C→A may follow each other (a loop's edges).
    let mut edges = |p: Option<u32>, e: u32| match p {
        None => true,
        Some(p) => (p, e) == (A, B) || (p, e) == (B, C) || (p, e) == (C, A),
    };
    let db = vec![vec![A, B, D, C, A, B, C]];
    let sup = Support {
        support1: 1.0,
        support2: 2,
    };
    let t = build(&db, BIG, sup, &mut edges);
    let full = build(&db, BIG, sup, &mut all);
    for (path, l) in t.contents() {
        assert!(path.windows(2).all(|w| edges(Some(w[0]), w[1])), "{path:?}");
        assert_eq!(full.contents()[&path], l, "same lists as the full tree");
    }
    assert!(t.contents().contains_key(&vec![A, B, C]));
    assert!(!t.contents().contains_key(&vec![A, C]));
    // The gap over D is a subsequence match: B,C from B at 1 and C at 3.
    assert_eq!(lists(&t, &[A, B, C]), vec![(0, vec![0, 4])]);
}

#[test]
fn depth_and_node_limits_hold() {
    let db = vec![vec![A, B, C, D, E, A, B, C, D, E]];
    let sup = Support {
        support1: 1.0,
        support2: 2,
    };
    let t = build(
        &db,
        Limits {
            max_depth: 3,
            max_nodes: 1 << 20,
        },
        sup,
        &mut all,
    );
    assert!(t.contents().keys().all(|p| p.len() <= 3));
    let t = build(
        &db,
        Limits {
            max_depth: 16,
            max_nodes: 20,
        },
        sup,
        &mut all,
    );
    assert_eq!(t.nodes(), 20);
    assert!(t.refused > 0);
}

// ---------------------------------------------------------------------
// Brute force.

/// Does `p` match inside `s` with its first label at `s[0]` and its last
/// at `s[last]`?
fn embeds_fixed(p: &[u32], s: &[u32]) -> bool {
    if p.len() == 1 {
        return s.len() == 1 && s[0] == p[0];
    }
    if s.len() < p.len() || s[0] != p[0] || s[s.len() - 1] != p[p.len() - 1] {
        return false;
    }
    let mid = &p[1..p.len() - 1];
    let mut it = s[1..s.len() - 1].iter();
    mid.iter().all(|x| it.any(|y| y == x))
}

/// The timestamp set of pattern `p` in `s`: for every end `t` of an
/// occurrence, the latest start it can be matched from.
fn brute_timestamps(p: &[u32], s: &[u32]) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for t in 0..s.len() {
        if s[t] != *p.last().unwrap() {
            continue;
        }
        if let Some(t1) = (0..=t).rev().find(|&t1| embeds_fixed(p, &s[t1..=t])) {
            out.push(t1 as u32);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Every repeat-free admitted pattern up to `depth` over `alphabet`
/// labels, with its non-empty timestamp sets.
fn brute(
    db: &[(SeqId, Vec<u32>)],
    alphabet: u32,
    depth: usize,
    admit: &dyn Fn(Option<u32>, u32) -> bool,
) -> BTreeMap<Vec<u32>, BTreeMap<SeqId, Vec<u32>>> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<Vec<u32>> = (0..alphabet)
        .filter(|&e| admit(None, e))
        .map(|e| vec![e])
        .collect();
    while let Some(p) = stack.pop() {
        let lists: BTreeMap<SeqId, Vec<u32>> = db
            .iter()
            .map(|(id, s)| (*id, brute_timestamps(&p, s)))
            .filter(|(_, ts)| !ts.is_empty())
            .collect();
        if lists.is_empty() {
            // No sequence has it: none has a longer one either.
            continue;
        }
        if p.len() < depth {
            for e in 0..alphabet {
                if !p.contains(&e) && admit(Some(*p.last().unwrap()), e) {
                    let mut q = p.clone();
                    q.push(e);
                    stack.push(q);
                }
            }
        }
        out.insert(p, lists);
    }
    out
}

fn frequent(
    m: &BTreeMap<Vec<u32>, BTreeMap<SeqId, Vec<u32>>>,
    sup: Support,
    db: usize,
) -> Vec<Vec<u32>> {
    m.iter()
        .filter(|(_, l)| {
            l.len() >= sup.sequences_needed(db)
                || l.values().any(|t| t.len() >= sup.support2 as usize)
        })
        .map(|(p, _)| p.clone())
        .collect()
}

fn case() -> impl Strategy<Value = (u32, Vec<Vec<u32>>, Vec<bool>, usize, Support)> {
    (1u32..=5).prop_flat_map(|alphabet| {
        (
            Just(alphabet),
            prop::collection::vec(prop::collection::vec(0..alphabet, 0..12), 1..=4),
            prop::collection::vec(
                prop::bool::weighted(0.7),
                ((alphabet + 1) * alphabet) as usize,
            ),
            1usize..=5,
            (
                prop::sample::select(vec![0.0, 0.34, 0.5, 0.75, 1.0]),
                1u32..=4,
            )
                .prop_map(|(support1, support2)| Support { support1, support2 }),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn tree_equals_brute_force((alphabet, db, matrix, depth, sup) in case()) {
        // Admission: a random relation, row 0 for "may start a pattern".
        let admit = |p: Option<u32>, e: u32| {
            let row = p.map_or(0, |p| p + 1);
            matrix[(row * alphabet + e) as usize]
        };
        let limits = Limits { max_depth: depth, max_nodes: 1 << 20 };
        let mut a = admit;
        let t = build(&db, limits, sup, &mut a);
        let ids: Vec<(SeqId, Vec<u32>)> =
            db.iter().cloned().enumerate().map(|(i, s)| (i as SeqId, s)).collect();
        let want = brute(&ids, alphabet, depth, &admit);
        prop_assert_eq!(&t.contents(), &want);

        let mut found: Vec<Vec<u32>> = t.found.iter().map(|&n| t.path(n)).collect();
        found.sort();
        prop_assert_eq!(found, frequent(&want, sup, db.len()));

        // A sequence leaves: the tree is what the others alone make.
        let mut t = t;
        t.remove_sequence(0);
        let want = brute(&ids[1..], alphabet, depth, &admit);
        prop_assert_eq!(t.contents(), want);
    }

    #[test]
    fn the_unrestricted_tree_is_the_designs((alphabet, db, _m, depth, sup) in case()) {
        let t = build(&db, Limits { max_depth: depth, max_nodes: 1 << 20 }, sup, &mut all);
        let ids: Vec<(SeqId, Vec<u32>)> =
            db.iter().cloned().enumerate().map(|(i, s)| (i as SeqId, s)).collect();
        prop_assert_eq!(t.contents(), brute(&ids, alphabet, depth, &all));
    }

    #[test]
    fn the_node_cap_holds((_a, db, _m, depth, sup) in case(), cap in 1usize..30) {
        let t = build(&db, Limits { max_depth: depth, max_nodes: cap }, sup, &mut all);
        prop_assert!(t.nodes() <= cap);
        // Every node kept has a prefix-closed path (I1).
        let c = t.contents();
        for p in c.keys() {
            prop_assert!(p.len() == 1 || c.contains_key(&p[..p.len() - 1]));
        }
    }
}

/// Sequences coming and going while others grow (the miner's database
/// is a sliding window of them), with small node caps, so that node ids
/// are freed and made again: every push finds the nodes indexed for its
/// sequence (tree/mod.rs `push` expects it), the cap holds, and the last
/// sequence to go takes every node with it (I4).
#[test]
fn sequences_come_and_go_with_a_small_cap() {
    let mut rng = crate::test_rng::Seeded::new(1);
    let mut next = || rng.next();
    for round in 0..400 {
        let cap = 1 + (next() % 200) as usize;
        let alphabet = [3u64, 5, 70, 130][(next() % 4) as usize];
        let sup = Support {
            support1: 0.5,
            support2: 2 + (next() % 3) as u32,
        };
        let mut t = Tree::new(
            Limits {
                max_depth: 1 + (next() % 6) as usize,
                max_nodes: cap,
            },
            sup,
        );
        let mut live: Vec<SeqId> = Vec::new();
        for _ in 0..2000 {
            match next() % 10 {
                0 | 1 if live.len() < 12 => live.push(t.add_sequence()),
                2 if !live.is_empty() => {
                    let s = live.swap_remove((next() % live.len() as u64) as usize);
                    t.remove_sequence(s);
                }
                _ if !live.is_empty() => {
                    let s = live[(next() % live.len() as u64) as usize];
                    t.push(s, (next() % alphabet) as u32, &mut all);
                }
                _ => {}
            }
            assert!(t.nodes() <= cap, "round {round}");
        }
        for s in live {
            t.remove_sequence(s);
        }
        assert_eq!(
            t.nodes(),
            0,
            "round {round}: every node goes with the last sequence"
        );
    }
}
