//! What the probes of one version of a profiled function do, for each
//! method, and the same arithmetic in Rust: running a path through it
//! (the records the probes would push) and decoding records back into the
//! path.
//!
//! The running id of an activation is a pair `(tot, seg)`:
//! - `seg` is the Ball–Larus sum of the current segment (dag.rs): the
//!   entry sets it to the value of the `Start` edge, every uncut edge adds
//!   its value;
//! - at a cut edge u → v (a loop's back edge, or a cut) the segment is
//!   complete: `seg + Val(Latch u)` is its id `i`, and PAP's rule for the
//!   in-edges of join nodes, `tot = tot × s + i`, folds it into `tot`, with
//!   `s` the DAG's number of segments (its radix); then `seg = Val(Resume
//!   v)`;
//! - `tot` starts at 1 (a sentinel digit, so leading 0 segments count), and
//!   at the exit `(tot, seg + Val(Exit u))` is recorded.
//!
//! So a path that crosses no cut edge has the plain Ball–Larus id; a path
//! through loops is the sequence of its segments' ids, which is exactly
//! what `tot` holds in base `s`. Overflow-free representation: when a
//! fold would take `tot` past 2^63 - 1 (the probe sees the overflow flag
//! of `imul` and `add`), the old `tot` is pushed as a chunk record and the
//! fold starts again from 1 (`tot = s + i`); a path's id is then its
//! chunks and final record, and the digits of all of them in order are
//! its segments (I1). Ids never wrap, however many iterations.
//!
//! Methods (SEEDS.md S3): `All` numbers every path; `Psp0` (T1) checks the
//! pair against the pairs paths of interest have at that node after every
//! branch; `Psp1` (T2) numbers with ESPP weights (espp.rs) and checks each
//! completed segment id against the segments of interest; `Psp2` (T3)
//! numbers only the subgraph of interest, ends at once on a boundary edge,
//! and pushes probes forward; `Psp3` is T2 + T3. A failed check or a
//! boundary edge ends the profiling of that activation ("terminated").
//!
//! T2's regions: the design checks a local id at the exit of every
//! reducible acyclic (single-entry, single-exit) subgraph. Here the region
//! is the whole loop-free DAG, whose single entry and exit are the virtual
//! ENTRY and EXIT, so the check sits where a segment ends (a back edge, a
//! cut, the function's exit) and the local id is the segment id. Smaller
//! regions would end paths earlier at the price of more checks and of a
//! local counter per region; they are not built.
//!
//! I1: `decode(run(p)) == p` for every path p whose edges all have a step
//!     (tests: round trips through loops with chunks).
//! I2: a recorded id never decodes to a wrong path: under ESPP only
//!     segments of interest are ever recorded (T2 checks every segment end)
//!     and their ids are unique (espp.rs I1); otherwise ids are Ball–Larus
//!     sums, unique by construction.

use hashbrown::{HashMap, HashSet};

use super::dag::{Dag, EdgeKind, Graph, Subgraph};
use crate::ir::probe::{Check, ExitStep, Step};

/// How the paths of the function are profiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Every path, no early termination.
    None,
    /// T1: partial-id checks after every branch.
    Psp0,
    /// T2: segment-id checks where segments end, ESPP weights.
    Psp1,
    /// T3: boundary edges end profiling at once; probes pushed forward.
    Psp2,
    /// T2 + T3.
    Psp3,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::None => "none",
            Method::Psp0 => "psp0",
            Method::Psp1 => "psp1",
            Method::Psp2 => "psp2",
            Method::Psp3 => "psp3",
        }
    }
    fn t1(self) -> bool {
        self == Method::Psp0
    }
    fn t2(self) -> bool {
        matches!(self, Method::Psp1 | Method::Psp3)
    }
    fn t3(self) -> bool {
        matches!(self, Method::Psp2 | Method::Psp3)
    }
}

/// A numbered version of the function's graph for one method.
#[derive(Clone, Debug)]
pub struct Plan {
    pub method: Method,
    pub graph: Graph,
    pub dag: Dag,
    /// What the probes add on each DAG edge (Ball–Larus values, pushed
    /// forward for T3, ESPP weights for T2 without T3).
    pub probe: Vec<u64>,
    /// Paths of interest as graph node sequences.
    pub interest: Vec<Vec<u32>>,
    /// Segment ids of interest (probe sums) and their DAG edges.
    pub interest_segments: HashMap<u64, Vec<u32>>,
    /// T1: pairs paths of interest have on entering each node, and at
    /// their end.
    t1_nodes: Vec<HashSet<(u64, u64)>>,
    t1_end: HashSet<(u64, u64)>,
    /// Decode through `interest_segments` (ESPP ids are not sums of
    /// Ball–Larus values).
    by_table: bool,
}

/// What running a path through a plan gives (the probes' records).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// `(tot, seg)` on entering each node of the path.
    pub states: Vec<(u64, u64)>,
    /// Chunks pushed on the way.
    pub chunks: Vec<u64>,
    /// The final record `(tot, seg)`.
    pub end: (u64, u64),
}

impl Plan {
    /// Number `g` for `method`, with `interest` (graph paths from the entry
    /// to an exit; the caller checked them).
    pub fn new(method: Method, g: &Graph, interest: &[Vec<u32>]) -> Plan {
        let mut ei: HashSet<(u32, u32)> = HashSet::new();
        let mut ni = vec![false; g.len()];
        let mut ei_exits = vec![false; g.len()];
        for p in interest {
            for w in p.windows(2) {
                ei.insert((w[0], w[1]));
            }
            for &v in p {
                ni[v as usize] = true;
            }
            if let Some(&last) = p.last() {
                ei_exits[last as usize] = true;
            }
        }
        let sub = if method.t3() {
            Subgraph {
                nodes: ni,
                edges: ei.clone(),
                exits: ei_exits.clone(),
            }
        } else {
            Subgraph::all(g)
        };
        let heavy = |k: &EdgeKind| method == Method::Psp1 && is_ei(k, &ei, &ei_exits);
        let dag = Dag::build(g, &sub, &heavy);
        let mut plan = Plan {
            method,
            graph: g.clone(),
            probe: dag.val.clone(),
            dag,
            interest: interest.to_vec(),
            interest_segments: HashMap::new(),
            t1_nodes: vec![HashSet::new(); g.len()],
            t1_end: HashSet::new(),
            by_table: false,
        };
        if method.t3() {
            super::espp::push_forward(&plan.dag, &mut plan.probe);
        }
        let pi_segments: Vec<Vec<u32>> = {
            let mut set: Vec<Vec<u32>> = interest
                .iter()
                .filter_map(|p| plan.segments_of(p))
                .flatten()
                .collect();
            set.sort();
            set.dedup();
            set
        };
        if method == Method::Psp1 {
            let cut = &plan.dag.cut;
            let is_heavy: Vec<bool> = plan
                .dag
                .edges
                .iter()
                .map(|e| match e.kind {
                    // Dummies of cut edges of interest.
                    EdgeKind::Resume { to } => {
                        ei.iter().any(|&(u, v)| v == to && cut.contains(&(u, v)))
                    }
                    EdgeKind::Latch { from } => {
                        ei.iter().any(|&(u, v)| u == from && cut.contains(&(u, v)))
                    }
                    k => is_ei(&k, &ei, &ei_exits),
                })
                .collect();
            super::espp::espp(&plan.dag, &mut plan.probe, &is_heavy, &pi_segments);
            plan.by_table = true;
        }
        for s in &pi_segments {
            plan.interest_segments
                .insert(Dag::sum(&plan.probe, s), s.clone());
        }
        if method.t1() {
            for p in interest {
                if let Some(run) = plan.run(p) {
                    for (&v, &st) in p.iter().zip(&run.states) {
                        plan.t1_nodes[v as usize].insert(st);
                    }
                    plan.t1_end.insert(run.end);
                }
            }
        }
        plan
    }

    /// One fold (module docs): the new `tot`, and the chunk pushed first
    /// when the fold would pass 2^63 - 1.
    pub fn fold(&self, tot: u64, x: u64) -> (u64, Option<u64>) {
        let b = self.dag.radix();
        let next = tot as u128 * b as u128 + x as u128;
        if next > i64::MAX as u128 {
            (b + x, Some(tot))
        } else {
            (next as u64, None)
        }
    }

    /// Is graph node `u` run instrumented (in the DAG)?
    pub fn instrumented(&self, u: u32) -> bool {
        self.dag.present[u as usize]
    }

    /// `seg` when the function is entered.
    pub fn start(&self) -> u64 {
        self.dag
            .edge_of(self.dag.entry(), EdgeKind::Start)
            .map_or(0, |e| self.probe[e as usize])
    }

    fn segment_check(&self) -> Check {
        if self.method.t2() {
            let mut ids: Vec<u64> = self.interest_segments.keys().copied().collect();
            ids.sort_unstable();
            Check::Segment(ids)
        } else {
            Check::None
        }
    }

    fn pair_check(&self, set: &HashSet<(u64, u64)>) -> Check {
        let mut v: Vec<(u64, u64)> = set.iter().copied().collect();
        v.sort_unstable();
        Check::Pairs(v)
    }

    /// The probe on graph edge u → v (u instrumented).
    pub fn step(&self, u: u32, v: u32) -> Step {
        let d = &self.dag;
        let t1 = self.method.t1() && self.graph.out_degree(u) > 1;
        let after = |v: u32| {
            if t1 {
                self.pair_check(&self.t1_nodes[v as usize])
            } else {
                Check::None
            }
        };
        if d.cut.contains(&(u, v)) {
            let latch = d.edge_of(u, EdgeKind::Latch { from: u });
            let resume = d.edge_of(d.entry(), EdgeKind::Resume { to: v });
            return match (latch, resume) {
                (Some(l), Some(r)) => Step::Fold {
                    add: self.probe[l as usize],
                    reset: self.probe[r as usize],
                    check: self.segment_check(),
                    after: after(v),
                },
                _ => Step::Terminate,
            };
        }
        match d.real_edge(u, v) {
            Some(e) => Step::Go {
                add: self.probe[e as usize],
                check: after(v),
            },
            None => Step::Terminate,
        }
    }

    /// The probe on the exit of node u (u instrumented).
    pub fn exit_step(&self, u: u32) -> ExitStep {
        match self.dag.edge_of(u, EdgeKind::Exit { from: u }) {
            Some(e) => {
                let check = if self.method.t1() && self.graph.out_degree(u) > 1 {
                    self.pair_check(&self.t1_end)
                } else {
                    self.segment_check()
                };
                ExitStep::End {
                    add: self.probe[e as usize],
                    check,
                }
            }
            None => ExitStep::Terminate,
        }
    }

    /// The DAG segments of graph path `p` (None if an edge of it is not in
    /// the DAG).
    pub fn segments_of(&self, p: &[u32]) -> Option<Vec<Vec<u32>>> {
        let d = &self.dag;
        let mut segs = Vec::new();
        let mut cur = vec![d.edge_of(d.entry(), EdgeKind::Start)?];
        for w in p.windows(2) {
            let (u, v) = (w[0], w[1]);
            if d.cut.contains(&(u, v)) {
                cur.push(d.edge_of(u, EdgeKind::Latch { from: u })?);
                segs.push(std::mem::take(&mut cur));
                cur.push(d.edge_of(d.entry(), EdgeKind::Resume { to: v })?);
            } else {
                cur.push(d.real_edge(u, v)?);
            }
        }
        let last = *p.last()?;
        cur.push(d.edge_of(last, EdgeKind::Exit { from: last })?);
        segs.push(cur);
        Some(segs)
    }

    /// Run path `p` through the probes' arithmetic (module docs), ignoring
    /// checks; None if an edge of it has no probe.
    pub fn run(&self, p: &[u32]) -> Option<Run> {
        let mut tot = 1u64;
        let mut seg = self.start();
        let mut chunks = Vec::new();
        let mut states = vec![(tot, seg)];
        for w in p.windows(2) {
            match self.step(w[0], w[1]) {
                Step::Go { add, .. } => seg += add,
                Step::Fold { add, reset, .. } => {
                    let (next, chunk) = self.fold(tot, seg + add);
                    chunks.extend(chunk);
                    tot = next;
                    seg = reset;
                }
                Step::Terminate => return None,
            }
            states.push((tot, seg));
        }
        match self.exit_step(*p.last()?) {
            ExitStep::End { add, .. } => Some(Run {
                states,
                chunks,
                end: (tot, seg + add),
            }),
            ExitStep::Terminate => None,
        }
    }

    /// The segment ids of a record: the digits of every chunk and of the
    /// final `tot` (base radix, without the sentinel), then `seg`.
    pub fn digits(&self, chunks: &[u64], tot: u64, seg: u64) -> Option<Vec<u64>> {
        let b = self.dag.radix();
        let mut out = Vec::new();
        for &c in chunks.iter().chain(std::iter::once(&tot)) {
            if c == 0 {
                return None;
            }
            let mut rev = Vec::new();
            let mut x = c;
            while x > 1 {
                rev.push(x % b);
                x /= b;
            }
            out.extend(rev.into_iter().rev());
        }
        out.push(seg);
        Some(out)
    }

    /// The DAG edges of segment id `id` (None: not an id of this plan).
    pub fn segment(&self, id: u64) -> Option<Vec<u32>> {
        if self.by_table {
            self.interest_segments.get(&id).cloned()
        } else {
            self.dag.decode(id)
        }
    }

    /// The graph path of a record (I1, I2); None if it is not one.
    pub fn decode(&self, chunks: &[u64], tot: u64, seg: u64) -> Option<Vec<u32>> {
        let d = &self.dag;
        let mut path: Vec<u32> = Vec::new();
        let digits = self.digits(chunks, tot, seg)?;
        let n = digits.len();
        for (i, id) in digits.into_iter().enumerate() {
            let edges = self.segment(id)?;
            let first = d.edges[*edges.first()? as usize].kind;
            let last = d.edges[*edges.last()? as usize].kind;
            match (i, first) {
                (0, EdgeKind::Start) => {}
                (_, EdgeKind::Resume { to }) if i > 0 => {
                    let from = *path.last()?;
                    if !d.cut.contains(&(from, to)) {
                        return None;
                    }
                }
                _ => return None,
            }
            match last {
                EdgeKind::Exit { .. } if i + 1 == n => {}
                EdgeKind::Latch { .. } if i + 1 < n => {}
                _ => return None,
            }
            for &e in &edges {
                let dst = d.edges[e as usize].dst;
                if dst < d.n {
                    path.push(dst);
                }
            }
        }
        Some(path)
    }
}

/// Is DAG edge `k` on a path of interest (EI, in DAG terms)? Before the
/// DAG exists its cut edges are not known: a dummy counts when any edge of
/// interest meets its node (only the numbering order depends on it).
fn is_ei(k: &EdgeKind, ei: &HashSet<(u32, u32)>, ei_exits: &[bool]) -> bool {
    match *k {
        EdgeKind::Start => true,
        EdgeKind::Real { from, to } => ei.contains(&(from, to)),
        EdgeKind::Resume { to } => ei.iter().any(|&(_, v)| v == to),
        EdgeKind::Latch { from } => ei.iter().any(|&(u, _)| u == from),
        EdgeKind::Exit { from } => ei_exits[from as usize],
        EdgeKind::Stop { .. } => false,
    }
}

#[cfg(test)]
mod tests;
