//! The hierarchical time tree (design S4): timed stack samples arranged so
//! that the sample counts per stack type of any time window come from a
//! few nodes instead of a scan of every sample.
//!
//! A sample is a time (nanoseconds; the profile uses the monitor's clock,
//! monitor/sampler.rs) and a stack type (a small id). [`TimeTree::build`]
//! sorts the samples by time; the root covers all of them. A node holding
//! fewer than M (`leaf_capacity`) samples is a leaf and keeps them raw (a
//! range of `times`/`stacks`). Otherwise it is an inner node: it counts
//! the stack types of its samples, sorts them by count (ties: smaller id
//! first) and keeps the most frequent with their counts until they cover
//! P % (`coverage_percent`) of its samples (`top`), and its samples are
//! split into N (`fanout`) children, built the same way.
//!
//! [`TimeTree::window`] answers `[from, to]` (inclusive, ns) from the root
//! down: a node disjoint from the window is skipped; an inner node inside
//! it gives its stored counts; a leaf that overlaps it (partly or fully)
//! has its raw samples enumerated; an inner node that overlaps it partly
//! is recursed into. [`Cost`] counts what a query touched.
//!
//! The design says "split the interval into N children" without saying
//! how; hotlift splits by sample count (children of ⌊n/N⌋ or ⌈n/N⌉
//! samples), not into equal time spans, so the depth is logarithmic in the
//! number of samples whatever their spread in time (idle gaps, bursts).
//!
//! I1: `times` is nondecreasing. The root's range is `[0, n)`; an inner
//!     node's children are consecutive in `nodes`, after it, non-empty, and
//!     partition its range in order. So the nodes of one depth are in time
//!     order, their sizes differ by at most one, and a node's `first` and
//!     `last` are the times of its first and last sample.
//! I2: an inner node's `top` holds exact counts of its range, in
//!     descending order, with Σ `top` ≥ P/100 · (its samples); leaves have
//!     no `top` and inner nodes a non-empty one.
//! I3 (the loss bound): for a window holding w samples, `total` = w
//!     exactly, and for every stack type s the answer is a lower bound:
//!     c(s) − (unattributed) ≤ answer(s) ≤ c(s), where
//!     `unattributed` = Σ_s (c(s) − answer(s)) ≤ (1 − P/100) · w: the loss
//!     comes only from inner nodes taken whole, each losing at most
//!     (1 − P/100) of its own samples, and those nodes are disjoint and
//!     inside the window. At P = 100 the answer is exact.
//! I4 (the cost bound): at most two nodes per depth overlap a window
//!     partly (one per edge, by I1), so a query tests at most 1 + 2·N·D
//!     nodes (D = depth) and reads at most 2·(N − 1)·D stored `top`
//!     lists. Node sizes at one depth differ by at most one, so leaves
//!     are on at most two depths and the leaves whose samples are
//!     enumerated (children of partly overlapping nodes) hold at most
//!     4·N·M samples, whatever the number of samples n; D ≈ log_N(n/M).
//!
//! Usage: `let t = TimeTree::build(samples, Params::default());
//! let w = t.window(from_ns, to_ns);` (`w.counts`, `w.total`, `w.cost`).

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// One timed sample: when, and which stack type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub t: u64,
    pub stack: u32,
}

/// The tree's shape: M, P and N of the design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// M: a node with fewer samples than this is a leaf (≥ 2).
    pub leaf_capacity: u32,
    /// P: inner nodes keep the most frequent stack types covering this
    /// percentage of their samples (0 < P ≤ 100).
    pub coverage_percent: f64,
    /// N: children per inner node (≥ 2).
    pub fanout: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            leaf_capacity: 100,
            coverage_percent: 95.0,
            fanout: 2,
        }
    }
}

/// One node: a range of samples and, for an inner node, its children and
/// stored counts (I1, I2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Time of the first and the last sample of the range.
    pub first: u64,
    pub last: u64,
    /// The range `[lo, hi)` of `times`/`stacks` (a leaf's raw samples).
    pub lo: u32,
    pub hi: u32,
    /// Inner nodes: the index of the first child and the number of
    /// children (I1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<(u32, u32)>,
    /// Inner nodes: (stack type, count), most frequent first (I2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<(u32, u64)>,
}

impl Node {
    fn samples(&self) -> u64 {
        u64::from(self.hi - self.lo)
    }
}

/// The tree (I1..I4), as the profile stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeTree {
    #[serde(flatten)]
    pub params: Params,
    /// Every sample's time, in time order (I1).
    pub times: Vec<u64>,
    /// Every sample's stack type, in the same order.
    pub stacks: Vec<u32>,
    /// Node 0 is the root; empty when there are no samples.
    pub nodes: Vec<Node>,
}

/// What one query touched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    /// Nodes whose interval was tested (the root, and every child of an
    /// inner node recursed into).
    pub nodes: u64,
    /// Raw samples enumerated in leaves.
    pub samples: u64,
    /// Stored (stack type, count) pairs read from inner nodes.
    pub counts: u64,
}

impl std::ops::AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        self.nodes += o.nodes;
        self.samples += o.samples;
        self.counts += o.counts;
    }
}

/// The answer for one window (I3).
#[derive(Debug, Clone, Default)]
pub struct Window {
    /// Samples in the window (exact).
    pub total: u64,
    /// Samples per stack type (a lower bound for each, I3).
    pub counts: HashMap<u32, u64>,
    /// Samples in the window not attributed to a stack type: those of
    /// types below an inner node's coverage cut.
    pub unattributed: u64,
    pub cost: Cost,
}

impl TimeTree {
    /// Build the tree of `samples` (any order; sorted by time here, stable
    /// for equal times). Panics if `params` are out of range (options.rs
    /// checks them) or there are 2^32 samples or more.
    pub fn build(mut samples: Vec<Sample>, params: Params) -> TimeTree {
        assert!(
            params.leaf_capacity >= 2
                && params.fanout >= 2
                && params.coverage_percent > 0.0
                && params.coverage_percent <= 100.0,
            "time tree parameters out of range: {params:?}"
        );
        assert!(
            samples.len() < u32::MAX as usize,
            "too many samples for a time tree: {}",
            samples.len()
        );
        samples.sort_by_key(|s| s.t);
        let mut tree = TimeTree {
            params,
            times: samples.iter().map(|s| s.t).collect(),
            stacks: samples.iter().map(|s| s.stack).collect(),
            nodes: Vec::new(),
        };
        if !samples.is_empty() {
            tree.nodes.push(tree.placeholder());
            tree.build_node(0, 0, samples.len() as u32);
        }
        tree
    }

    fn placeholder(&self) -> Node {
        Node {
            first: 0,
            last: 0,
            lo: 0,
            hi: 0,
            children: None,
            top: Vec::new(),
        }
    }

    /// Fill node `i` for samples `[lo, hi)` (non-empty); returns the
    /// counts of every stack type in the range (children's counts are
    /// merged, so each sample is counted once per tree, not once per depth).
    fn build_node(&mut self, i: usize, lo: u32, hi: u32) -> HashMap<u32, u64> {
        let n = hi - lo;
        {
            let node = &mut self.nodes[i];
            node.lo = lo;
            node.hi = hi;
        }
        self.nodes[i].first = self.times[lo as usize];
        self.nodes[i].last = self.times[hi as usize - 1];
        if n < self.params.leaf_capacity {
            let mut counts = HashMap::new();
            for &s in &self.stacks[lo as usize..hi as usize] {
                *counts.entry(s).or_insert(0) += 1;
            }
            return counts;
        }
        // I1: k non-empty children of ⌊n/k⌋ or ⌈n/k⌉ samples.
        let k = self.params.fanout.min(n);
        let start = self.nodes.len();
        for _ in 0..k {
            self.nodes.push(self.placeholder());
        }
        let mut counts: HashMap<u32, u64> = HashMap::new();
        for j in 0..k {
            let bound = |j: u32| lo + (u64::from(n) * u64::from(j) / u64::from(k)) as u32;
            let mut c = self.build_node(start + j as usize, bound(j), bound(j + 1));
            if c.len() > counts.len() {
                std::mem::swap(&mut c, &mut counts);
            }
            for (s, x) in c {
                *counts.entry(s).or_insert(0) += x;
            }
        }
        let node = &mut self.nodes[i];
        node.children = Some((start as u32, k));
        node.top = top_covering(&counts, u64::from(n), self.params.coverage_percent);
        counts
    }

    /// The counts of the samples with `from <= t <= to` (I3), visiting the
    /// nodes the design says to visit (I4).
    pub fn window(&self, from: u64, to: u64) -> Window {
        let mut w = Window::default();
        if self.nodes.is_empty() || from > to {
            return w;
        }
        let mut todo = vec![0usize];
        while let Some(i) = todo.pop() {
            let node = &self.nodes[i];
            w.cost.nodes += 1;
            if node.last < from || node.first > to {
                continue;
            }
            let inside = from <= node.first && node.last <= to;
            match node.children {
                None => {
                    let (lo, hi) = (node.lo as usize, node.hi as usize);
                    w.cost.samples += (hi - lo) as u64;
                    for k in lo..hi {
                        let t = self.times[k];
                        if inside || (from <= t && t <= to) {
                            w.total += 1;
                            *w.counts.entry(self.stacks[k]).or_insert(0) += 1;
                        }
                    }
                }
                Some(_) if inside => {
                    let mut kept = 0;
                    for &(s, c) in &node.top {
                        *w.counts.entry(s).or_insert(0) += c;
                        kept += c;
                    }
                    w.cost.counts += node.top.len() as u64;
                    w.total += node.samples();
                    w.unattributed += node.samples() - kept;
                }
                Some((first, k)) => {
                    // Children in reverse, so they are visited in time order.
                    todo.extend((first as usize..(first + k) as usize).rev());
                }
            }
        }
        w
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Time of the first and the last sample.
    pub fn span(&self) -> Option<(u64, u64)> {
        Some((*self.times.first()?, *self.times.last()?))
    }

    /// Number of nodes on the longest path from the root to a leaf (0 for
    /// an empty tree).
    pub fn depth(&self) -> usize {
        let mut depth = vec![0usize; self.nodes.len()];
        let mut max = 0;
        for i in 0..self.nodes.len() {
            if i == 0 {
                depth[0] = 1;
            }
            max = max.max(depth[i]);
            if let Some((first, k)) = self.nodes[i].children {
                for c in first..first + k {
                    depth[c as usize] = depth[i] + 1;
                }
            }
        }
        max
    }

    /// Check I1 and I2's structure (a profile read from disk may be
    /// anything): after `Ok`, [`TimeTree::window`] cannot index out of
    /// range or loop. `stack_types` bounds the stack ids.
    pub fn validate(&self, stack_types: usize) -> Result<(), String> {
        let p = &self.params;
        if p.leaf_capacity < 2
            || p.fanout < 2
            || !(p.coverage_percent > 0.0 && p.coverage_percent <= 100.0)
        {
            return Err(format!(
                "parameters out of range (leaf_capacity {}, coverage_percent {}, fanout {})",
                p.leaf_capacity, p.coverage_percent, p.fanout
            ));
        }
        let n = self.times.len();
        if self.stacks.len() != n {
            return Err(format!("{n} times but {} stacks", self.stacks.len()));
        }
        if n >= u32::MAX as usize {
            return Err(format!("too many samples ({n})"));
        }
        if let Some(i) = self.times.windows(2).position(|w| w[0] > w[1]) {
            return Err(format!("sample times decrease at sample {}", i + 1));
        }
        if let Some(s) = self.stacks.iter().find(|&&s| s as usize >= stack_types) {
            return Err(format!("sample of stack {s}, of {stack_types} stacks"));
        }
        if n == 0 {
            return if self.nodes.is_empty() {
                Ok(())
            } else {
                Err("nodes but no samples".into())
            };
        }
        let root = self.nodes.first().ok_or("samples but no nodes")?;
        if (root.lo, root.hi) != (0, n as u32) {
            return Err(format!(
                "the root covers [{}, {}), not every sample",
                root.lo, root.hi
            ));
        }
        let mut parent_of = vec![usize::MAX; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            let bad = |what: &str| Err(format!("node {i}: {what}"));
            if i > 0 && parent_of[i] == usize::MAX {
                return bad("not a child of any node");
            }
            if node.lo >= node.hi || node.hi as usize > n {
                return bad("empty or out-of-range sample range");
            }
            if node.first != self.times[node.lo as usize]
                || node.last != self.times[node.hi as usize - 1]
            {
                return bad("first/last are not its samples' times");
            }
            let Some((first, k)) = node.children else {
                if !node.top.is_empty() {
                    return bad("a leaf with stored counts");
                }
                continue;
            };
            let end = u64::from(first) + u64::from(k);
            if first as usize <= i || k < 2 || end > self.nodes.len() as u64 {
                return bad("children out of order or range");
            }
            let mut at = node.lo;
            for c in first..first + k {
                let child = &self.nodes[c as usize];
                if parent_of[c as usize] != usize::MAX || child.lo != at || child.hi <= at {
                    return bad("children do not partition its range");
                }
                parent_of[c as usize] = i;
                at = child.hi;
            }
            if at != node.hi {
                return bad("children do not partition its range");
            }
            if node.top.is_empty() {
                return bad("an inner node without stored counts");
            }
            let mut sum = 0u64;
            for &(s, c) in &node.top {
                if s as usize >= stack_types || c == 0 {
                    return bad("stored count of an unknown stack or of 0");
                }
                sum = sum.saturating_add(c);
            }
            if sum > node.samples() {
                return bad("stored counts exceed its samples");
            }
        }
        Ok(())
    }
}

/// The most frequent stack types of `counts` (ties: smaller id first),
/// until they cover `percent` of `n` samples (I2).
fn top_covering(counts: &HashMap<u32, u64>, n: u64, percent: f64) -> Vec<(u32, u64)> {
    let mut v: Vec<(u32, u64)> = counts.iter().map(|(&s, &c)| (s, c)).collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let need = ((percent / 100.0) * n as f64).ceil().min(n as f64) as u64;
    let mut sum = 0;
    let keep = v
        .iter()
        .position(|&(_, c)| {
            sum += c;
            sum >= need
        })
        .map_or(v.len(), |i| i + 1);
    v.truncate(keep);
    v
}
