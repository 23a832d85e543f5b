//! Probe pushing and ESPP weights on a numbered DAG (dag.rs).
//!
//! Pushing: a node with a single in-edge can take that edge's weight onto
//! each of its out-edges (`r×x+i then ×y+k = r×(xy)+(yi+k)` for the
//! multiplicative form; for sums, `a` then `b` is `a+b`): every
//! ENTRY→EXIT sum stays the same and the probe moves later, where paths
//! that were ended early (T3) never pay for it.
//!
//! ESPP (SPP with the fix for confused paths): the DAG is numbered with
//! the edges of interest last (so they carry the larger weights), weights
//! are pushed, and then the weight of each edge that is not of interest is
//! deleted (set to 0: no probe there) one by one, *only if* afterwards
//! every segment of interest still has an id no other segment has.
//!
//! I1: after [`espp`], for every segment of interest p and every other
//!     ENTRY→EXIT path q of the DAG, `sum(p) != sum(q)` (checked by exact
//!     counting, [`distinct`]; a deletion whose check would cost more than
//!     [`BUDGET`] states is not made). So an id that passes the segment
//!     check (T2) names exactly one segment, of interest.

use hashbrown::HashMap;

use super::dag::Dag;

/// Most (node, remaining sum) states one validity check may visit.
pub const BUDGET: usize = 1 << 18;

/// Push single in-edge weights forward, in topological order.
pub fn push_forward(dag: &Dag, w: &mut [u64]) {
    for &x in &dag.topo {
        if x == dag.entry() || x == dag.exit() {
            continue;
        }
        let inc = &dag.inc[x as usize];
        if inc.len() != 1 {
            continue;
        }
        let e = inc[0] as usize;
        let a = w[e];
        if a == 0 {
            continue;
        }
        for &o in &dag.out[x as usize] {
            w[o as usize] += a;
        }
        w[e] = 0;
    }
}

/// ESPP (module docs): `w` starts as the Ball–Larus values of `dag`
/// (numbered with `heavy` edges last); `interest` are the segments of
/// interest as DAG edge lists.
pub fn espp(dag: &Dag, w: &mut [u64], heavy: &[bool], interest: &[Vec<u32>]) {
    push_forward(dag, w);
    if interest.is_empty() {
        return;
    }
    for &x in &dag.topo {
        for &e in &dag.out[x as usize] {
            let e = e as usize;
            if heavy[e] || w[e] == 0 {
                continue;
            }
            let old = w[e];
            w[e] = 0;
            if !distinct(dag, w, interest) {
                w[e] = old;
            }
        }
    }
}

/// I1 for weights `w`: each segment of interest's sum is the sum of that
/// one DAG path only (false also when counting would exceed the budget).
pub fn distinct(dag: &Dag, w: &[u64], interest: &[Vec<u32>]) -> bool {
    let mut c = Counter {
        dag,
        w,
        memo: HashMap::new(),
    };
    interest.iter().all(|p| c.count(Dag::sum(w, p)) == Some(1))
}

/// Counts ENTRY→EXIT paths with a given sum, saturating at 2.
struct Counter<'a> {
    dag: &'a Dag,
    w: &'a [u64],
    memo: HashMap<(u32, u64), u8>,
}

/// A frame of the counting walk: node, sum still to make, next out-edge,
/// paths found so far.
struct Frame {
    x: u32,
    rem: u64,
    next: usize,
    found: u8,
}

impl Counter<'_> {
    /// Paths from ENTRY with sum `s` (0, 1 or 2 = "more"); None past the
    /// budget. Iterative: DAGs can be thousands of nodes deep.
    fn count(&mut self, s: u64) -> Option<u8> {
        let (entry, exit) = (self.dag.entry(), self.dag.exit());
        let mut stack = vec![Frame {
            x: entry,
            rem: s,
            next: 0,
            found: 0,
        }];
        let mut ret = 0u8;
        let mut returning = false;
        while let Some(top) = stack.last_mut() {
            if returning {
                top.found = (top.found + ret).min(2);
                returning = false;
            }
            if top.x == exit {
                ret = u8::from(top.rem == 0);
                stack.pop();
                returning = true;
                continue;
            }
            let out = &self.dag.out[top.x as usize];
            let mut child = None;
            while top.found < 2 && top.next < out.len() {
                let e = out[top.next] as usize;
                top.next += 1;
                let we = self.w[e];
                if we > top.rem {
                    continue;
                }
                let key = (self.dag.edges[e].dst, top.rem - we);
                match self.memo.get(&key) {
                    Some(&c) => top.found = (top.found + c).min(2),
                    None => {
                        child = Some(key);
                        break;
                    }
                }
            }
            match child {
                Some((x, rem)) => stack.push(Frame {
                    x,
                    rem,
                    next: 0,
                    found: 0,
                }),
                None => {
                    let (x, rem, found) = (top.x, top.rem, top.found);
                    stack.pop();
                    self.memo.insert((x, rem), found);
                    if self.memo.len() > BUDGET {
                        return None;
                    }
                    ret = found;
                    returning = true;
                }
            }
        }
        Some(ret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::dag::{Graph, Subgraph};
    use proptest::prelude::*;

    /// A random acyclic graph: edges only to higher nodes, the last node
    /// (and some others) exits.
    fn graph(n: usize, edges: &[(usize, usize)], exits: &[usize]) -> Graph {
        let mut g = Graph {
            succs: vec![Vec::new(); n],
            exits: vec![false; n],
        };
        for &(a, b) in edges {
            let (a, b) = (a % n, b % n);
            let (u, v) = (a.min(b), a.max(b));
            if u != v && !g.succs[u].contains(&(v as u32)) {
                g.succs[u].push(v as u32);
            }
        }
        g.exits[n - 1] = true;
        for &x in exits {
            g.exits[x % n] = true;
        }
        g
    }

    proptest! {
        /// ESPP never gives a segment of interest an id another segment
        /// has (I1), checked against every segment by brute force.
        #[test]
        fn deletion_never_merges_interest_with_other_ids(
            n in 3usize..9,
            edges in proptest::collection::vec((0usize..9, 0usize..9), 2..20),
            exits in proptest::collection::vec(0usize..9, 0..3),
            picks in proptest::collection::vec(0usize..1000, 1..4),
        ) {
            let g = graph(n, &edges, &exits);
            let dag = Dag::build(&g, &Subgraph::all(&g), &|_| false);
            let segs = dag.all_segments(1 << 12);
            let mut interest: Vec<Vec<u32>> =
                picks.iter().map(|&i| segs[i % segs.len()].clone()).collect();
            interest.sort();
            interest.dedup();
            let heavy: Vec<bool> = (0..dag.edges.len() as u32)
                .map(|e| interest.iter().any(|p| p.contains(&e)))
                .collect();
            let mut w = dag.val.clone();
            espp(&dag, &mut w, &heavy, &interest);
            for p in &interest {
                let sp = Dag::sum(&w, p);
                for q in &segs {
                    if q != p {
                        prop_assert_ne!(sp, Dag::sum(&w, q), "interest {:?} and {:?} share an id", p, q);
                    }
                }
            }
        }

        /// Pushing keeps every segment's sum.
        #[test]
        fn pushing_keeps_sums(
            n in 3usize..9,
            edges in proptest::collection::vec((0usize..9, 0usize..9), 2..20),
            exits in proptest::collection::vec(0usize..9, 0..3),
        ) {
            let g = graph(n, &edges, &exits);
            let dag = Dag::build(&g, &Subgraph::all(&g), &|_| false);
            let mut w = dag.val.clone();
            push_forward(&dag, &mut w);
            for s in dag.all_segments(1 << 12) {
                prop_assert_eq!(Dag::sum(&w, &s), Dag::sum(&dag.val, &s));
            }
        }
    }
}
