//! The PST-tree of Pisat (design S2): candidate sequential patterns as
//! paths from the root, each node holding, per sequence of the database,
//! the set of timestamps at which the path's pattern was found.
//!
//! The update is the design's, element by element. When sequence `s` gets
//! its element `e` at timestamp `ct` (its position in the sequence):
//! - the root's child labelled `e` gets `ct` for `s` (created if missing);
//! - every other node `n` that holds `s`, where `e` is not on the path
//!   root→n, passes the latest timestamp of `s` in `n` to its child
//!   labelled `e` (created if missing);
//! - after a node is updated, it is a pattern when at least
//!   `support.sequences_needed(|Db|)` sequences are in its list or one
//!   sequence has `support2` timestamps in it.
//!
//! The design visits the tree in post-order so that a node's children are
//! updated before the node itself: an element then never extends a node
//! that the same element created or updated. Here the nodes that hold `s`
//! are collected before the element is applied, which has the same effect
//! (an update only touches nodes labelled `e`, which `e` cannot extend).
//! Sequences never affect each other's lists, so feeding them one at a
//! time is the same as feeding the design's set ES of new elements.
//!
//! What a node's timestamp set means: the timestamp passed down is always
//! the one its root child got, so `T(n, s)` holds, for every end `t` of an
//! occurrence of the pattern in `s`, the latest start from which the
//! pattern can be matched up to `t`. `|T(n, s)|` counts those distinct
//! starts: how often the pattern repeats in one sequence (support2).
//!
//! hotlift's addition is an admission rule, [`Admit`]: a node labelled `p`
//! is extended by `e` only when `admits(Some(p), e)`, and a root child made
//! only when `admits(None, e)`. The tree is then exactly the design's tree
//! cut down to the patterns whose every consecutive pair is admitted: the
//! lists of the nodes kept do not depend on the nodes left out, because a
//! node's list depends only on its ancestors' (and an admitted path's
//! prefixes are admitted). With `|_, _| true` it is the design's tree.
//!
//! I1: a node's sequences are a subset of its parent's (a child gets `s`
//!     only from a parent holding `s`); so removing a sequence empties
//!     children before parents.
//! I2: per (node, sequence) the timestamps are appended in non-decreasing
//!     order: the set is a sorted vector, deduplicated against its last.
//! I3: no label repeats on a path; a path is at most `max_depth` long; at
//!     most `max_nodes` nodes live at once (more are refused and counted).
//! I4: a node with an empty list is removed (with a sequence that leaves
//!     the database): the tree holds no candidate that no sequence has.
//!
//! Usage: `let s = tree.add_sequence(); tree.push(s, e, &mut admit)` for
//! each element; `tree.found` lists the nodes that became patterns;
//! `tree.remove_sequence(s)` when `s` leaves the database.

use std::collections::BTreeMap;

use hashbrown::HashMap;

/// A sequence of the database.
pub type SeqId = u32;

/// No node (the root's parent).
const NONE: u32 = u32::MAX;

/// Which consecutive labels may form a pattern (module docs).
pub trait Admit {
    /// May `e` follow `prev` in a pattern (`None`: may `e` start one)?
    fn admits(&mut self, prev: Option<u32>, e: u32) -> bool;
}

impl<F: FnMut(Option<u32>, u32) -> bool> Admit for F {
    fn admits(&mut self, prev: Option<u32>, e: u32) -> bool {
        self(prev, e)
    }
}

/// When a path is a pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Support {
    /// Fraction of the database's sequences that must hold the pattern.
    pub support1: f64,
    /// Timestamps one sequence must have in the node.
    pub support2: u32,
}

impl Support {
    /// Sequences a pattern must be in when the database holds `db`:
    /// `support1 × db`, rounded up, and never fewer than two (a pattern
    /// of one sequence is a matter for support2).
    pub fn sequences_needed(&self, db: usize) -> usize {
        ((self.support1 * db as f64).ceil() as usize).max(2)
    }
}

/// Size bounds of the tree (I3).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_depth: usize,
    pub max_nodes: usize,
}

#[derive(Debug, Clone, Default)]
struct Node {
    label: u32,
    parent: u32,
    depth: u16,
    live: bool,
    frequent: bool,
    /// Bit `label % 64` of every label on the path: most "is `e` on the
    /// path?" questions are answered without walking up (I3).
    labels: u64,
    children: Vec<(u32, u32)>,
    /// Per sequence, its timestamps (I2).
    lists: Vec<(SeqId, Vec<u32>)>,
}

impl Node {
    fn list(&self, s: SeqId) -> Option<&Vec<u32>> {
        self.lists.iter().find(|(x, _)| *x == s).map(|(_, t)| t)
    }
}

#[derive(Debug, Clone, Default)]
struct SeqState {
    next: u32,
    /// The nodes holding this sequence, by their label.
    by_last: HashMap<u32, Vec<u32>>,
}

/// The PST-tree.
#[derive(Debug, Clone)]
pub struct Tree {
    /// Node 0 is the root.
    nodes: Vec<Node>,
    free: Vec<u32>,
    root_children: HashMap<u32, u32>,
    seqs: BTreeMap<SeqId, SeqState>,
    next_seq: SeqId,
    pub limits: Limits,
    pub support: Support,
    live: usize,
    /// Sizes for the memory estimate.
    list_entries: usize,
    timestamps: usize,
    child_entries: usize,
    /// Nodes that became patterns, in order (the caller drains it).
    pub found: Vec<u32>,
    /// Nodes not made because `max_nodes` were live (I3).
    pub refused: u64,
    work: Vec<u32>,
}

fn bit(label: u32) -> u64 {
    1u64 << (label % 64)
}

impl Tree {
    pub fn new(limits: Limits, support: Support) -> Tree {
        Tree {
            nodes: vec![Node {
                parent: NONE,
                live: true,
                ..Node::default()
            }],
            free: Vec::new(),
            root_children: HashMap::new(),
            seqs: BTreeMap::new(),
            next_seq: 0,
            limits,
            support,
            live: 0,
            list_entries: 0,
            timestamps: 0,
            child_entries: 0,
            found: Vec::new(),
            refused: 0,
            work: Vec::new(),
        }
    }

    /// A new, empty sequence in the database.
    pub fn add_sequence(&mut self) -> SeqId {
        let s = self.next_seq;
        self.next_seq += 1;
        self.seqs.insert(s, SeqState::default());
        s
    }

    /// Sequences in the database (|Db|).
    pub fn sequences(&self) -> usize {
        self.seqs.len()
    }

    /// Live nodes, the root not included.
    pub fn nodes(&self) -> usize {
        self.live
    }

    /// Approximate bytes held (nodes, lists, timestamps, indexes).
    pub fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.nodes.capacity() * size_of::<Node>()
            + self.list_entries * (size_of::<(SeqId, Vec<u32>)>() + size_of::<u32>())
            + self.timestamps * size_of::<u32>()
            + self.child_entries * size_of::<(u32, u32)>()
            + self.root_children.capacity() * 2 * size_of::<u32>()
    }

    /// Feed element `e` of sequence `s` (module docs).
    pub fn push(&mut self, s: SeqId, e: u32, admit: &mut impl Admit) {
        let Some(st) = self.seqs.get_mut(&s) else {
            panic!("element {e} for sequence {s}, which is not in the database");
        };
        let ct = st.next;
        st.next += 1;
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        for (&last, nodes) in &st.by_last {
            // A node ending in `e` has `e` on its path.
            if last != e && admit.admits(Some(last), e) {
                work.extend_from_slice(nodes);
            }
        }
        if admit.admits(None, e) {
            if let Some(c) = self.root_child(e) {
                self.add(c, s, ct);
            }
        }
        for &n in &work {
            let node = &self.nodes[n as usize];
            if node.depth as usize >= self.limits.max_depth || self.on_path(n, e) {
                continue;
            }
            let latest = *node
                .list(s)
                .and_then(|t| t.last())
                .expect("a node indexed for a sequence holds it");
            if let Some(c) = self.child(n, e) {
                self.add(c, s, latest);
            }
        }
        self.work = work;
    }

    /// Is `e` a label on the path root→n?
    fn on_path(&self, mut n: u32, e: u32) -> bool {
        if self.nodes[n as usize].labels & bit(e) == 0 {
            return false;
        }
        while n != 0 {
            let node = &self.nodes[n as usize];
            if node.label == e {
                return true;
            }
            n = node.parent;
        }
        false
    }

    fn root_child(&mut self, e: u32) -> Option<u32> {
        if let Some(&c) = self.root_children.get(&e) {
            return Some(c);
        }
        let c = self.make(0, e)?;
        self.root_children.insert(e, c);
        Some(c)
    }

    fn child(&mut self, n: u32, e: u32) -> Option<u32> {
        if let Some(&(_, c)) = self.nodes[n as usize].children.iter().find(|c| c.0 == e) {
            return Some(c);
        }
        let c = self.make(n, e)?;
        self.nodes[n as usize].children.push((e, c));
        self.child_entries += 1;
        Some(c)
    }

    /// A new node labelled `e` under `parent`, unless the tree is full.
    fn make(&mut self, parent: u32, e: u32) -> Option<u32> {
        if self.live >= self.limits.max_nodes {
            self.refused += 1;
            return None;
        }
        let p = &self.nodes[parent as usize];
        let node = Node {
            label: e,
            parent,
            depth: p.depth + 1,
            live: true,
            frequent: false,
            labels: p.labels | bit(e),
            children: Vec::new(),
            lists: Vec::new(),
        };
        self.live += 1;
        Some(match self.free.pop() {
            Some(id) => {
                self.nodes[id as usize] = node;
                id
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        })
    }

    /// Timestamp `t` of sequence `s` into node `c` (I2), then the
    /// pattern check.
    fn add(&mut self, c: u32, s: SeqId, t: u32) {
        let node = &mut self.nodes[c as usize];
        let count = match node.lists.iter_mut().find(|(x, _)| *x == s) {
            Some((_, ts)) => {
                if *ts.last().expect("lists are never empty") != t {
                    debug_assert!(*ts.last().unwrap() < t, "I2");
                    ts.push(t);
                    self.timestamps += 1;
                }
                ts.len()
            }
            None => {
                node.lists.push((s, vec![t]));
                self.list_entries += 1;
                self.timestamps += 1;
                let label = node.label;
                self.seqs
                    .get_mut(&s)
                    .expect("sequence in the database")
                    .by_last
                    .entry(label)
                    .or_default()
                    .push(c);
                1
            }
        };
        let node = &self.nodes[c as usize];
        if !node.frequent
            && (node.lists.len() >= self.support.sequences_needed(self.seqs.len())
                || count >= self.support.support2 as usize)
        {
            self.nodes[c as usize].frequent = true;
            self.found.push(c);
        }
    }

    /// Sequence `s` leaves the database: out of every list, and nodes left
    /// with no sequence go (I1, I4).
    pub fn remove_sequence(&mut self, s: SeqId) {
        let Some(st) = self.seqs.remove(&s) else {
            return;
        };
        let mut held: Vec<u32> = st.by_last.into_values().flatten().collect();
        held.sort_unstable_by_key(|&n| std::cmp::Reverse(self.nodes[n as usize].depth));
        for n in held {
            let node = &mut self.nodes[n as usize];
            if let Some(i) = node.lists.iter().position(|(x, _)| *x == s) {
                let (_, ts) = node.lists.swap_remove(i);
                self.list_entries -= 1;
                self.timestamps -= ts.len();
            }
            if node.lists.is_empty() {
                self.drop_node(n);
            }
        }
    }

    fn drop_node(&mut self, n: u32) {
        let node = std::mem::take(&mut self.nodes[n as usize]);
        debug_assert!(node.children.is_empty(), "I1: children go first");
        if node.parent == 0 {
            self.root_children.remove(&node.label);
        } else {
            let p = &mut self.nodes[node.parent as usize];
            p.children.retain(|&(_, c)| c != n);
            self.child_entries -= 1;
        }
        self.live -= 1;
        self.free.push(n);
    }

    /// The labels on the path root→n.
    pub fn path(&self, mut n: u32) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.nodes[n as usize].depth as usize);
        while n != 0 && n != NONE {
            out.push(self.nodes[n as usize].label);
            n = self.nodes[n as usize].parent;
        }
        out.reverse();
        out
    }

    /// Is `n` a live node?
    pub fn is_live(&self, n: u32) -> bool {
        n != 0 && self.nodes.get(n as usize).is_some_and(|x| x.live)
    }

    /// (sequences holding node `n`, most timestamps of one sequence in it).
    pub fn support_of(&self, n: u32) -> (usize, usize) {
        let node = &self.nodes[n as usize];
        let most = node.lists.iter().map(|(_, t)| t.len()).max().unwrap_or(0);
        (node.lists.len(), most)
    }

    /// Does node `n` meet the support now (the check made at updates,
    /// made against the database as it is)?
    pub fn is_pattern_now(&self, n: u32) -> bool {
        let (seqs, most) = self.support_of(n);
        seqs >= self.support.sequences_needed(self.seqs.len())
            || most >= self.support.support2 as usize
    }

    /// Every live node: path → (sequence → timestamps), sorted (for tests
    /// and dumps).
    pub fn contents(&self) -> BTreeMap<Vec<u32>, BTreeMap<SeqId, Vec<u32>>> {
        (1..self.nodes.len() as u32)
            .filter(|&n| self.is_live(n))
            .map(|n| {
                let lists = self.nodes[n as usize].lists.iter().cloned().collect();
                (self.path(n), lists)
            })
            .collect()
    }

    /// Live nodes that meet the support now.
    pub fn patterns_now(&self) -> Vec<u32> {
        (1..self.nodes.len() as u32)
            .filter(|&n| self.is_live(n) && self.is_pattern_now(n))
            .collect()
    }
}

#[cfg(test)]
mod tests;
