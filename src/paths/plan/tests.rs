//! Ball–Larus numbering, the PAP fold through loops (with chunks), and the
//! methods' decoding, on fixed and random graphs.

use super::*;
use proptest::prelude::*;

fn g(succs: &[&[u32]], exits: &[u32]) -> Graph {
    let mut g = Graph {
        succs: succs.iter().map(|s| s.to_vec()).collect(),
        exits: vec![false; succs.len()],
    };
    for &x in exits {
        g.exits[x as usize] = true;
    }
    g
}

/// Three diamonds in a row: 8 paths.
fn diamonds() -> Graph {
    g(
        &[
            &[1, 2],
            &[3],
            &[3],
            &[4, 5],
            &[6],
            &[6],
            &[7, 8],
            &[9],
            &[9],
            &[],
        ],
        &[9],
    )
}

/// A loop: 0 → 1 (header) → 2|3 → 4 (latch) → 1 | 5 (exit).
fn looped() -> Graph {
    g(&[&[1], &[2, 3], &[4], &[4], &[1, 5], &[]], &[5])
}

/// A random graph of `n` nodes from `edges`; node n-1 and `exits` exit.
fn random(n: usize, edges: &[(usize, usize)], exits: &[usize]) -> Graph {
    let mut gr = Graph {
        succs: vec![Vec::new(); n],
        exits: vec![false; n],
    };
    for &(a, b) in edges {
        let (u, v) = (a % n, b % n);
        if !gr.succs[u].contains(&(v as u32)) {
            gr.succs[u].push(v as u32);
        }
    }
    gr.exits[n - 1] = true;
    for &x in exits {
        gr.exits[x % n] = true;
    }
    gr
}

/// A walk from the entry that ends at an exit, steered by `choices`
/// (None if it does not end within `max` nodes).
fn walk(gr: &Graph, choices: &[usize], max: usize) -> Option<Vec<u32>> {
    let mut p = vec![0u32];
    let mut i = 0;
    while p.len() <= max {
        let u = *p.last().unwrap();
        let s = &gr.succs[u as usize];
        let ways = s.len() + usize::from(gr.exits[u as usize]);
        if ways == 0 {
            return None;
        }
        let c = choices.get(i).copied().unwrap_or(0) % ways;
        i += 1;
        if c == s.len() {
            return Some(p);
        }
        p.push(s[c]);
    }
    None
}

#[test]
fn ball_larus_ids_are_dense_and_unique() {
    let gr = diamonds();
    let plan = Plan::new(Method::None, &gr, &[]);
    assert_eq!(plan.dag.segments(), 8);
    let mut ids: Vec<u64> = plan
        .dag
        .all_segments(100)
        .iter()
        .map(|s| Dag::sum(&plan.dag.val, s))
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..8).collect::<Vec<u64>>());
    for id in 0..8 {
        let s = plan.dag.decode(id).expect("decodes");
        assert_eq!(Dag::sum(&plan.dag.val, &s), id);
    }
    assert_eq!(plan.dag.decode(8), None, "past NumPaths");
}

#[test]
fn a_loop_free_path_has_its_ball_larus_id() {
    let gr = diamonds();
    let plan = Plan::new(Method::None, &gr, &[]);
    let p = vec![0, 2, 3, 5, 6, 8, 9];
    let run = plan.run(&p).unwrap();
    assert!(run.chunks.is_empty());
    assert_eq!(run.end.0, 1, "no segment folded");
    let segs = plan.segments_of(&p).unwrap();
    assert_eq!(segs.len(), 1);
    assert_eq!(run.end.1, Dag::sum(&plan.dag.val, &segs[0]));
    assert_eq!(plan.decode(&[], run.end.0, run.end.1), Some(p));
}

#[test]
fn loop_paths_round_trip_through_many_iterations() {
    let gr = looped();
    let plan = Plan::new(Method::None, &gr, &[]);
    assert!(plan.dag.cut.contains(&(4, 1)), "the back edge is cut");
    for iters in [0usize, 1, 2, 7, 100, 100_000] {
        let mut p = vec![0, 1];
        for i in 0..iters {
            p.extend_from_slice(&[if i % 3 == 0 { 2 } else { 3 }, 4, 1]);
        }
        p.extend_from_slice(&[2, 4, 5]);
        let run = plan.run(&p).unwrap();
        if iters >= 100 {
            assert!(!run.chunks.is_empty(), "{iters} iterations need chunks");
        }
        let back = plan.decode(&run.chunks, run.end.0, run.end.1);
        assert_eq!(back.as_deref(), Some(&p[..]), "{iters} iterations");
    }
}

#[test]
fn cuts_keep_segments_below_the_limit() {
    // 40 diamonds in a row: 2^40 paths, more than a segment may have.
    let mut succs: Vec<Vec<u32>> = Vec::new();
    for i in 0..40u32 {
        let b = 3 * i;
        succs.push(vec![b + 1, b + 2]);
        succs.push(vec![b + 3]);
        succs.push(vec![b + 3]);
    }
    succs.push(vec![]);
    let n = succs.len();
    let mut gr = Graph {
        succs,
        exits: vec![false; n],
    };
    gr.exits[n - 1] = true;
    let plan = Plan::new(Method::None, &gr, &[]);
    assert!(plan.dag.segments() <= crate::paths::dag::SEGMENT_LIMIT);
    assert!(!plan.dag.cut.is_empty());
    let mut p = vec![0u32];
    for i in 0..40u32 {
        p.push(3 * i + 1 + (i % 2));
        p.push(3 * i + 3);
    }
    let run = plan.run(&p).unwrap();
    assert_eq!(plan.decode(&run.chunks, run.end.0, run.end.1), Some(p));
}

#[test]
fn espp_deletes_probes_of_edges_not_of_interest() {
    // A three-way branch: Ball–Larus needs two probes; with one path of
    // interest ESPP merges the other two (ids 0 and 0) and keeps one.
    let gr = g(&[&[1, 2, 3], &[4], &[4], &[4], &[]], &[4]);
    let interest = vec![vec![0, 1, 4]];
    let all = Plan::new(Method::None, &gr, &[]);
    let espp = Plan::new(Method::Psp1, &gr, &interest);
    let probes = |p: &Plan| p.probe.iter().filter(|&&v| v != 0).count();
    assert!(probes(&espp) < probes(&all), "{:?}", espp.probe);
    let run = espp.run(&interest[0]).unwrap();
    assert_eq!(
        espp.decode(&run.chunks, run.end.0, run.end.1),
        Some(interest[0].clone())
    );
    // Any other path's segment id is not one of interest (so T2 ends it).
    for s in espp.dag.all_segments(100) {
        let id = Dag::sum(&espp.probe, &s);
        if espp.interest_segments.get(&id) != Some(&s) {
            assert!(!espp.interest_segments.contains_key(&id));
        }
    }
}

#[test]
fn psp2_numbers_only_the_subgraph_of_interest() {
    let gr = diamonds();
    let interest = vec![vec![0, 1, 3, 4, 6, 7, 9], vec![0, 2, 3, 4, 6, 8, 9]];
    let plan = Plan::new(Method::Psp2, &gr, &interest);
    assert_eq!(plan.dag.segments(), 4, "2 × 1 × 2 paths in the subgraph");
    assert_eq!(plan.step(3, 5), Step::Terminate, "a boundary edge");
    assert!(!plan.instrumented(5));
    for p in &interest {
        let run = plan.run(p).unwrap();
        assert_eq!(
            plan.decode(&run.chunks, run.end.0, run.end.1).as_ref(),
            Some(p)
        );
    }
    assert!(plan.run(&[0, 1, 3, 5, 6, 7, 9]).is_none());
}

#[test]
fn psp0_checks_pairs_of_interest_after_branches() {
    let gr = looped();
    let interest = vec![vec![0, 1, 2, 4, 1, 3, 4, 5]];
    let plan = Plan::new(Method::Psp0, &gr, &interest);
    // 0 has one way out: no check; 1 branches: a check.
    assert!(matches!(
        plan.step(0, 1),
        Step::Go {
            check: Check::None,
            ..
        }
    ));
    let Step::Go {
        check: Check::Pairs(ok),
        ..
    } = plan.step(1, 2)
    else {
        panic!("a check after the branch")
    };
    let run = plan.run(&interest[0]).unwrap();
    assert!(ok.contains(&run.states[2]), "the pair on entering node 2");
    // A path leaving the paths of interest fails the check somewhere.
    let Step::Go {
        check: Check::Pairs(ok3),
        ..
    } = plan.step(1, 3)
    else {
        panic!("a check after the branch")
    };
    let other = plan.run(&[0, 1, 3, 4, 5]).unwrap();
    assert!(!ok3.contains(&other.states[2]));
    assert!(matches!(plan.step(4, 1), Step::Fold { .. }));
}

proptest! {
    /// Every walk through a random graph with loops round-trips (plan I1),
    /// and Ball–Larus ids of its DAG are exactly 0..NumPaths.
    #[test]
    fn random_graphs_round_trip(
        n in 2usize..10,
        edges in proptest::collection::vec((0usize..10, 0usize..10), 1..25),
        exits in proptest::collection::vec(0usize..10, 0..3),
        choices in proptest::collection::vec(0usize..8, 0..200),
    ) {
        let gr = random(n, &edges, &exits);
        let plan = Plan::new(Method::None, &gr, &[]);
        let segs = plan.dag.all_segments(1 << 14);
        if segs.len() < 1 << 14 {
            let mut ids: Vec<u64> = segs.iter().map(|s| Dag::sum(&plan.dag.val, s)).collect();
            ids.sort_unstable();
            prop_assert_eq!(ids, (0..plan.dag.segments()).collect::<Vec<u64>>());
        }
        if let Some(p) = walk(&gr, &choices, 150) {
            let run = plan.run(&p).expect("every edge has a probe");
            prop_assert_eq!(plan.decode(&run.chunks, run.end.0, run.end.1), Some(p));
        }
    }

    /// Every method decodes its paths of interest exactly.
    #[test]
    fn methods_decode_paths_of_interest(
        n in 2usize..10,
        edges in proptest::collection::vec((0usize..10, 0usize..10), 1..25),
        exits in proptest::collection::vec(0usize..10, 0..3),
        walks in proptest::collection::vec(proptest::collection::vec(0usize..8, 0..40), 1..4),
    ) {
        let gr = random(n, &edges, &exits);
        let interest: Vec<Vec<u32>> = walks.iter().filter_map(|c| walk(&gr, c, 30)).collect();
        for m in [Method::Psp0, Method::Psp1, Method::Psp2, Method::Psp3] {
            let plan = Plan::new(m, &gr, &interest);
            for p in &interest {
                let run = plan.run(p).expect("paths of interest have probes");
                let back = plan.decode(&run.chunks, run.end.0, run.end.1);
                prop_assert_eq!(back.as_ref(), Some(p), "{:?}", m);
            }
        }
    }
}
