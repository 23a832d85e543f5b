//! The loop-free graph path ids are numbered on: a function's control-flow
//! graph with its back edges (and, where there would be too many paths,
//! some more edges: "cut" edges) replaced by dummy edges, and Ball–Larus
//! numbering on it.
//!
//! A function's graph ([`Graph`]) has nodes `0..n` (node 0 is the
//! function's entry), successor lists, and exit flags (a return or a jump
//! out of the function). [`Dag::build`] adds a virtual `ENTRY` and `EXIT`:
//!
//! - `Start`: ENTRY → node 0 (the function is entered);
//! - `Real`: u → v for every graph edge that is not cut;
//! - `Resume`: ENTRY → v for every target v of a cut edge (a new segment
//!   starts there);
//! - `Latch`: u → EXIT for every source u of a cut edge (a segment ends
//!   there);
//! - `Exit`: u → EXIT for every exit node (the path ends);
//! - `Stop`: u → EXIT for a node with no other way out (a trap, a call
//!   that does not come back into the function): numbering needs every
//!   node to reach EXIT, though no recorded path ends there.
//!
//! Cut edges are the back edges of a depth-first search from the entry
//! (so the result is acyclic, reducible or not) plus, while the number of
//! ENTRY→EXIT paths exceeds [`SEGMENT_LIMIT`], every in-edge of the node
//! that most paths go through.
//!
//! Ball–Larus (EPP): nodes in reverse topological order, `NumPaths(EXIT) =
//! 1`, and for each out-edge e of v in order, `Val(e) = NumPaths(v)` so
//! far, then `NumPaths(v) += NumPaths(target)`. The sum of `Val` along an
//! ENTRY→EXIT path (a *segment*) is its id, unique, in `0..NumPaths(ENTRY)`.
//!
//! I1: every node of the DAG reaches EXIT and is reached from ENTRY, so
//!     `NumPaths` is at least 1 everywhere and the values of a node's
//!     out-edges strictly increase in out-list order (decoding picks the
//!     last one not above what is left).
//! I2: `NumPaths(ENTRY) <= SEGMENT_LIMIT` (segment ids fit in 31 bits).
//! I3: parallel edges (ENTRY→0 as `Start` and as `Resume`; u→EXIT as
//!     `Latch` and `Exit`) are distinct edges with distinct values.

use hashbrown::HashSet;

/// Most ENTRY→EXIT paths (segments) one DAG may have (I2).
pub const SEGMENT_LIMIT: u64 = (1 << 31) - 1;

/// A function's control-flow graph, abstractly (module docs).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// Successors of each node, without duplicates; node 0 is the entry.
    pub succs: Vec<Vec<u32>>,
    /// Nodes with an edge to the function's exit.
    pub exits: Vec<bool>,
}

impl Graph {
    pub fn len(&self) -> usize {
        self.succs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.succs.is_empty()
    }

    /// Out-degree counting the exit edge.
    pub fn out_degree(&self, u: u32) -> usize {
        self.succs[u as usize].len() + usize::from(self.exits[u as usize])
    }

    pub fn has_edge(&self, u: u32, v: u32) -> bool {
        self.succs[u as usize].contains(&v)
    }
}

/// What a DAG edge stands for (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    Start,
    Real { from: u32, to: u32 },
    Resume { to: u32 },
    Latch { from: u32 },
    Exit { from: u32 },
    Stop { from: u32 },
}

/// One DAG edge.
#[derive(Clone, Copy, Debug)]
pub struct DEdge {
    pub src: u32,
    pub dst: u32,
    pub kind: EdgeKind,
}

/// Which part of a graph a DAG is built on (the paths-of-interest
/// subgraph for PSP2/PSP3, the whole graph otherwise).
#[derive(Clone, Debug)]
pub struct Subgraph {
    pub nodes: Vec<bool>,
    pub edges: HashSet<(u32, u32)>,
    pub exits: Vec<bool>,
}

impl Subgraph {
    /// All of `g`.
    pub fn all(g: &Graph) -> Subgraph {
        let mut edges = HashSet::new();
        for (u, s) in g.succs.iter().enumerate() {
            for &v in s {
                edges.insert((u as u32, v));
            }
        }
        Subgraph {
            nodes: vec![true; g.len()],
            edges,
            exits: g.exits.clone(),
        }
    }
}

/// The numbered DAG (module docs).
#[derive(Clone, Debug)]
pub struct Dag {
    /// Graph nodes; ENTRY is `n`, EXIT is `n + 1`.
    pub n: u32,
    pub edges: Vec<DEdge>,
    /// Out-edges (indices into `edges`) of every DAG node, in numbering
    /// order.
    pub out: Vec<Vec<u32>>,
    /// In-edges of every DAG node.
    pub inc: Vec<Vec<u32>>,
    /// Graph edges that are cut (back edges and cuts): crossing one ends a
    /// segment.
    pub cut: HashSet<(u32, u32)>,
    /// Graph nodes in the DAG (reached from the entry in the subgraph).
    pub present: Vec<bool>,
    /// Ball–Larus values (I1).
    pub val: Vec<u64>,
    /// NumPaths of every DAG node.
    pub num: Vec<u64>,
    /// DAG nodes in topological order (ENTRY first).
    pub topo: Vec<u32>,
}

impl Dag {
    pub fn entry(&self) -> u32 {
        self.n
    }

    pub fn exit(&self) -> u32 {
        self.n + 1
    }

    /// Number of segments (ENTRY→EXIT paths), at least 1.
    pub fn segments(&self) -> u64 {
        self.num[self.entry() as usize]
    }

    /// The radix segment ids are folded with: at least 2, so that a
    /// segment with id 0 still adds a digit.
    pub fn radix(&self) -> u64 {
        self.segments().max(2)
    }

    /// Build the DAG of `sub` of `g`. A node's out-edges are numbered in
    /// graph order, except that those `heavy` says yes to come last and so
    /// get the larger values (ESPP's "EI edges get the larger weights").
    pub fn build(g: &Graph, sub: &Subgraph, heavy: &dyn Fn(&EdgeKind) -> bool) -> Dag {
        let mut extra_cut: HashSet<(u32, u32)> = HashSet::new();
        loop {
            let dag = Dag::build_with_cuts(g, sub, &extra_cut, heavy);
            if dag.segments() <= SEGMENT_LIMIT {
                return dag;
            }
            // I2: cut every in-edge of the node the most paths go through.
            let from_entry = dag.paths_from_entry();
            let mut best = None;
            for v in 0..dag.n {
                let has_real_in = dag.inc[v as usize]
                    .iter()
                    .any(|&e| matches!(dag.edges[e as usize].kind, EdgeKind::Real { .. }));
                if !dag.present[v as usize] || !has_real_in {
                    continue;
                }
                let through = from_entry[v as usize].saturating_mul(dag.num[v as usize]);
                if best.is_none_or(|(_, t)| through > t) {
                    best = Some((v, through));
                }
            }
            let (v, _) = best.expect("a DAG over the segment limit has a node with a real in-edge");
            for &e in &dag.inc[v as usize] {
                if let EdgeKind::Real { from, to } = dag.edges[e as usize].kind {
                    extra_cut.insert((from, to));
                }
            }
        }
    }

    /// Paths from ENTRY to every DAG node (saturating).
    fn paths_from_entry(&self) -> Vec<u64> {
        let mut p = vec![0u64; self.out.len()];
        p[self.entry() as usize] = 1;
        for &x in &self.topo {
            for &e in &self.out[x as usize] {
                let d = self.edges[e as usize].dst as usize;
                p[d] = p[d].saturating_add(p[x as usize]);
            }
        }
        p
    }

    fn build_with_cuts(
        g: &Graph,
        sub: &Subgraph,
        extra_cut: &HashSet<(u32, u32)>,
        heavy: &dyn Fn(&EdgeKind) -> bool,
    ) -> Dag {
        let n = g.len() as u32;
        let allowed = |u: u32, v: u32| {
            sub.nodes[u as usize] && sub.nodes[v as usize] && sub.edges.contains(&(u, v))
        };
        // Depth-first search from the entry: back edges go to a node on
        // the stack.
        let mut present = vec![false; n as usize];
        let mut on_stack = vec![false; n as usize];
        let mut cut: HashSet<(u32, u32)> = extra_cut.clone();
        if n > 0 && sub.nodes[0] {
            let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
            present[0] = true;
            on_stack[0] = true;
            while let Some(&mut (u, ref mut i)) = stack.last_mut() {
                let succs = &g.succs[u as usize];
                if *i < succs.len() {
                    let v = succs[*i];
                    *i += 1;
                    if !allowed(u, v) {
                        continue;
                    }
                    if on_stack[v as usize] {
                        cut.insert((u, v));
                    } else if !present[v as usize] {
                        present[v as usize] = true;
                        on_stack[v as usize] = true;
                        stack.push((v, 0));
                    }
                } else {
                    on_stack[u as usize] = false;
                    stack.pop();
                }
            }
        }
        let (entry, exit) = (n, n + 1);
        let mut edges = Vec::new();
        let mut add = |src: u32, dst: u32, kind: EdgeKind| edges.push(DEdge { src, dst, kind });
        if n > 0 && present[0] {
            add(entry, 0, EdgeKind::Start);
        }
        let mut resumes: Vec<u32> = Vec::new();
        let mut latches: Vec<u32> = Vec::new();
        for u in 0..n {
            if !present[u as usize] {
                continue;
            }
            for &v in &g.succs[u as usize] {
                if !allowed(u, v) {
                    continue;
                }
                if cut.contains(&(u, v)) {
                    if !latches.contains(&u) {
                        latches.push(u);
                    }
                    if !resumes.contains(&v) {
                        resumes.push(v);
                    }
                } else {
                    add(u, v, EdgeKind::Real { from: u, to: v });
                }
            }
        }
        resumes.sort_unstable();
        latches.sort_unstable();
        for &v in &resumes {
            add(entry, v, EdgeKind::Resume { to: v });
        }
        for &u in &latches {
            add(u, exit, EdgeKind::Latch { from: u });
        }
        for u in 0..n {
            if present[u as usize] && sub.exits[u as usize] {
                add(u, exit, EdgeKind::Exit { from: u });
            }
        }
        let mut out = vec![Vec::new(); n as usize + 2];
        for (i, e) in edges.iter().enumerate() {
            out[e.src as usize].push(i as u32);
        }
        // I1: a dead end still reaches EXIT.
        for u in 0..n {
            if present[u as usize] && out[u as usize].is_empty() {
                out[u as usize].push(edges.len() as u32);
                edges.push(DEdge {
                    src: u,
                    dst: exit,
                    kind: EdgeKind::Stop { from: u },
                });
            }
        }
        for o in out.iter_mut() {
            // Stable: light edges first, heavy last.
            o.sort_by_key(|&e| heavy(&edges[e as usize].kind));
        }
        let mut inc = vec![Vec::new(); n as usize + 2];
        for (i, e) in edges.iter().enumerate() {
            inc[e.dst as usize].push(i as u32);
        }
        let topo = topo_order(&out, &edges, entry);
        let mut dag = Dag {
            n,
            edges,
            out,
            inc,
            cut,
            present,
            val: Vec::new(),
            num: Vec::new(),
            topo,
        };
        dag.number();
        dag
    }

    /// Ball–Larus values (module docs), saturating (the caller cuts).
    fn number(&mut self) {
        let mut num = vec![0u64; self.out.len()];
        let mut val = vec![0u64; self.edges.len()];
        num[self.exit() as usize] = 1;
        for &x in self.topo.iter().rev() {
            if x == self.exit() {
                continue;
            }
            let mut np = 0u64;
            for &e in &self.out[x as usize] {
                val[e as usize] = np;
                np = np.saturating_add(num[self.edges[e as usize].dst as usize]);
            }
            num[x as usize] = np;
        }
        self.num = num;
        self.val = val;
    }

    /// The DAG edge for graph edge u → v (not cut).
    pub fn real_edge(&self, u: u32, v: u32) -> Option<u32> {
        self.out[u as usize]
            .iter()
            .copied()
            .find(|&e| matches!(self.edges[e as usize].kind, EdgeKind::Real { to, .. } if to == v))
    }

    /// The DAG edge of `kind` leaving `src`.
    pub fn edge_of(&self, src: u32, kind: EdgeKind) -> Option<u32> {
        self.out[src as usize]
            .iter()
            .copied()
            .find(|&e| self.edges[e as usize].kind == kind)
    }

    /// Decode segment id `id` with values `val` (Ball–Larus values or any
    /// whose sums equal them): the DAG edges from ENTRY to EXIT.
    pub fn decode(&self, mut id: u64) -> Option<Vec<u32>> {
        let mut x = self.entry();
        let mut path = Vec::new();
        while x != self.exit() {
            // I1: the last out-edge whose value is not above what is left.
            let e = *self.out[x as usize]
                .iter()
                .rev()
                .find(|&&e| self.val[e as usize] <= id)?;
            id -= self.val[e as usize];
            path.push(e);
            x = self.edges[e as usize].dst;
            if path.len() > self.out.len() {
                return None;
            }
        }
        (id == 0).then_some(path)
    }

    /// The id of a segment given as DAG edges, with values `val`.
    pub fn sum(val: &[u64], path: &[u32]) -> u64 {
        path.iter().map(|&e| val[e as usize]).sum()
    }

    /// Every ENTRY→EXIT path (for tests and small graphs), at most `max`.
    pub fn all_segments(&self, max: usize) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        let mut stack = vec![(self.entry(), Vec::new())];
        while let Some((x, path)) = stack.pop() {
            if out.len() >= max {
                break;
            }
            if x == self.exit() {
                out.push(path);
                continue;
            }
            for &e in self.out[x as usize].iter().rev() {
                let mut p = path.clone();
                p.push(e);
                stack.push((self.edges[e as usize].dst, p));
            }
        }
        out
    }
}

/// Topological order of the DAG nodes reachable from `entry` (Kahn).
fn topo_order(out: &[Vec<u32>], edges: &[DEdge], entry: u32) -> Vec<u32> {
    let mut indeg = vec![0u32; out.len()];
    for e in edges {
        indeg[e.dst as usize] += 1;
    }
    let mut ready = vec![entry];
    let mut order = Vec::with_capacity(out.len());
    while let Some(x) = ready.pop() {
        order.push(x);
        for &e in &out[x as usize] {
            let d = edges[e as usize].dst;
            indeg[d as usize] -= 1;
            if indeg[d as usize] == 0 {
                ready.push(d);
            }
        }
    }
    order
}
