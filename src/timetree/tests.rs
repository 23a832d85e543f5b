//! The time tree against a brute-force count over the raw samples (I3),
//! its cost bounds (I4) and logarithmic growth, and `validate`.

use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

/// Brute force: the samples with `from <= t <= to`, per stack type.
fn brute(samples: &[Sample], from: u64, to: u64) -> (u64, HashMap<u32, u64>) {
    let mut c = HashMap::new();
    let mut total = 0;
    for s in samples.iter().filter(|s| from <= s.t && s.t <= to) {
        total += 1;
        *c.entry(s.stack).or_insert(0) += 1;
    }
    (total, c)
}

/// Samples from (time step, stack) pairs: times are running sums, so
/// steps of 0 give equal times (the monitor's clock can repeat).
fn from_steps(steps: &[(u64, u32)]) -> Vec<Sample> {
    let mut t = 0;
    steps
        .iter()
        .map(|&(d, stack)| {
            t += d;
            Sample { t, stack }
        })
        .collect()
}

fn stream() -> impl Strategy<Value = Vec<Sample>> {
    // Few stack types, skewed (squares), so some are below the cut.
    prop::collection::vec((0u64..4, (0u32..40).prop_map(|x| x * x / 100)), 0..2500)
        .prop_map(|v| from_steps(&v))
}

fn params(exact: bool) -> impl Strategy<Value = Params> {
    (2u32..40, 2u32..6, 1u32..100).prop_map(move |(m, n, p)| Params {
        leaf_capacity: m,
        coverage_percent: if exact { 100.0 } else { f64::from(p) },
        fanout: n,
    })
}

/// Windows inside, around and outside the samples' span.
fn windows(samples: &[Sample], picks: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let end = samples.last().map_or(0, |s| s.t) + 3;
    let mut v: Vec<(u64, u64)> = picks
        .iter()
        .map(|&(a, b)| {
            let (a, b) = (a % (end + 1), b % (end + 1));
            (a.min(b), a.max(b))
        })
        .collect();
    v.extend([(0, u64::MAX), (0, 0), (end, u64::MAX), (5, 4)]);
    v
}

/// I4 for one answer of tree `t`.
fn check_cost(t: &TimeTree, w: &Window) {
    let (m, n) = (
        u64::from(t.params.leaf_capacity),
        u64::from(t.params.fanout),
    );
    let d = t.depth() as u64;
    assert!(
        w.cost.nodes <= 1 + 2 * n * d,
        "nodes {:?} depth {d}",
        w.cost
    );
    assert!(w.cost.samples <= 4 * n * m, "samples {:?}", w.cost);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// P = 100 %: every window's answer is the brute-force count.
    #[test]
    fn exact_at_full_coverage(
        samples in stream(),
        p in params(true),
        picks in prop::collection::vec((any::<u64>(), any::<u64>()), 30),
    ) {
        let t = TimeTree::build(samples.clone(), p);
        t.validate(usize::MAX).unwrap();
        for (from, to) in windows(&samples, &picks) {
            let w = t.window(from, to);
            let (total, counts) = brute(&samples, from, to);
            prop_assert_eq!(w.total, total);
            prop_assert_eq!(w.unattributed, 0);
            let got: HashMap<u32, u64> = w.counts.iter().filter(|e| *e.1 > 0).map(|(&s, &c)| (s, c)).collect();
            prop_assert_eq!(&got, &counts, "window [{}, {}]", from, to);
            check_cost(&t, &w);
        }
    }

    /// P < 100 %: exact totals, lower bounds per stack, and the loss at
    /// most (1 − P) of the window's samples (I3).
    #[test]
    fn loss_within_bound(
        samples in stream(),
        p in params(false),
        picks in prop::collection::vec((any::<u64>(), any::<u64>()), 30),
    ) {
        let t = TimeTree::build(samples.clone(), p);
        t.validate(usize::MAX).unwrap();
        for (from, to) in windows(&samples, &picks) {
            let w = t.window(from, to);
            let (total, counts) = brute(&samples, from, to);
            prop_assert_eq!(w.total, total);
            let mut lost = 0;
            for (s, &c) in &counts {
                let got = w.counts.get(s).copied().unwrap_or(0);
                prop_assert!(got <= c, "stack {} over-counted: {} > {}", s, got, c);
                lost += c - got;
            }
            prop_assert!(w.counts.keys().all(|s| counts.contains_key(s)));
            prop_assert_eq!(lost, w.unattributed);
            let bound = (1.0 - p.coverage_percent / 100.0) * total as f64;
            prop_assert!(
                w.unattributed as f64 <= bound + 1e-9 * total as f64,
                "lost {} of {} at P = {}", w.unattributed, total, p.coverage_percent
            );
            check_cost(&t, &w);
        }
    }
}

/// A fixed pseudo-random sequence for the long streams.
type Rng = crate::test_rng::Seeded;

/// A run of `n` samples about 1 ms apart in phases of 5,000 samples, each
/// phase dominated by its own few stacks.
fn long_stream(n: usize, rng: &mut Rng) -> Vec<Sample> {
    let mut t = 0;
    (0..n)
        .map(|i| {
            t += 900_000 + rng.next() % 200_000;
            let phase = (i / 5000) as u32;
            let r = rng.next() % 100;
            let stack = if r < 80 {
                phase * 4 + (r % 3) as u32
            } else {
                1000 + (r % 50) as u32
            };
            Sample { t, stack }
        })
        .collect()
}

/// The largest query cost over `k` random windows, and their mean nodes.
fn worst_cost(t: &TimeTree, k: usize, rng: &mut Rng) -> (Cost, f64) {
    let (lo, hi) = t.span().unwrap();
    let mut worst = Cost::default();
    let mut nodes = 0;
    for _ in 0..k {
        let a = lo + rng.next() % (hi - lo);
        let b = lo + rng.next() % (hi - lo);
        let w = t.window(a.min(b), a.max(b));
        check_cost(t, &w);
        worst.nodes = worst.nodes.max(w.cost.nodes);
        worst.samples = worst.samples.max(w.cost.samples);
        worst.counts = worst.counts.max(w.cost.counts);
        nodes += w.cost.nodes;
    }
    (worst, nodes as f64 / k as f64)
}

/// Visited nodes grow with log n, samples visited not at all: 1e4, 1e5
/// and 1e6 samples with the design's defaults.
#[test]
fn query_cost_grows_with_the_logarithm() {
    let mut rng = Rng::new(7);
    let mut rows = Vec::new();
    for n in [10_000usize, 100_000, 1_000_000] {
        let t = TimeTree::build(long_stream(n, &mut rng), Params::default());
        let (worst, mean) = worst_cost(&t, 500, &mut rng);
        let log = (n as f64 / 100.0).log2();
        assert!(
            t.depth() as f64 <= log.ceil() + 2.0,
            "depth {} for {n} samples",
            t.depth()
        );
        eprintln!(
            "n {n:>8}: depth {:>2}, nodes {:>7}; per query worst nodes {:>3} (mean {mean:.1}), samples {:>3}, counts {:>4}",
            t.depth(),
            t.nodes.len(),
            worst.nodes,
            worst.samples,
            worst.counts
        );
        rows.push((n, worst, mean));
    }
    let (small, big) = (&rows[0], &rows[2]);
    // log2(1e6/100) / log2(1e4/100) = 2; linear growth would be 100.
    assert!(
        (big.1.nodes as f64) < 2.5 * small.1.nodes as f64 && big.2 < 2.5 * small.2,
        "nodes visited grew more than logarithmically: {rows:?}"
    );
    assert!(big.1.samples <= 4 * 2 * 100, "{rows:?}");
}

#[test]
fn small_tree_has_the_designed_shape() {
    // 10 samples, M = 4, N = 2: root [0,10) → [0,5) [5,10) → leaves of
    // 2 and 3 samples.
    let samples: Vec<Sample> = (0..10)
        .map(|i| Sample {
            t: i * 10,
            stack: u32::from(i >= 7),
        })
        .collect();
    let p = Params {
        leaf_capacity: 4,
        coverage_percent: 70.0,
        fanout: 2,
    };
    let t = TimeTree::build(samples, p);
    t.validate(2).unwrap();
    assert_eq!(t.nodes.len(), 7);
    assert_eq!(t.depth(), 3);
    // Root: stack 0 ×7 covers 70 %: stack 1 is cut.
    assert_eq!(t.nodes[0].top, vec![(0, 7)]);
    assert_eq!(t.nodes[0].children, Some((1, 2)));
    let w = t.window(0, 90);
    assert_eq!((w.total, w.unattributed), (10, 3));
    assert_eq!(
        w.cost,
        Cost {
            nodes: 1,
            samples: 0,
            counts: 1
        }
    );
    // [20, 60]: both halves overlap partly; of their leaves [0,2) and
    // [7,10) are disjoint, [2,5) and [5,7) inside (enumerated).
    let w = t.window(20, 60);
    assert_eq!(w.total, 5);
    assert_eq!(w.counts[&0], 5);
    assert_eq!(w.unattributed, 0);
}

#[test]
fn validate_rejects_broken_trees() {
    let samples: Vec<Sample> = (0..50).map(|i| Sample { t: i, stack: 0 }).collect();
    let p = Params {
        leaf_capacity: 4,
        ..Params::default()
    };
    let good = TimeTree::build(samples, p);
    good.validate(1).unwrap();
    let json = serde_json::to_string(&good).unwrap();
    let back: TimeTree = serde_json::from_str(&json).unwrap();
    assert_eq!(back, good);
    type Breaker = fn(&mut TimeTree);
    let cases: [(Breaker, &str); 8] = [
        (|t| t.nodes[0].children = Some((0, 2)), "out of order"),
        (|t| t.nodes[1].hi -= 1, "partition"),
        (|t| t.times.swap(3, 4), "decrease"),
        (|t| t.stacks[5] = 9, "stack 9"),
        (|t| t.nodes[0].top = vec![(0, 51)], "exceed"),
        (|t| t.params.fanout = 1, "parameters"),
        (|t| t.nodes.truncate(1), "range"),
        (|t| t.nodes[2].first = 7, "first/last"),
    ];
    for (brk, want) in cases {
        let mut t = good.clone();
        brk(&mut t);
        let e = t.validate(1).unwrap_err();
        assert!(e.contains(want), "{want}: {e}");
    }
}
