//! Pisat: superblocks from sequential patterns mined in the block streams
//! (design S2), the second selector beside counting (`--selector pisat`).
//!
//! Where the data comes from: every guest thread's stream is cut into
//! windows. Every `interval` ring entries of a thread, the monitor's
//! per-entry loop copies the next `window` block ids of that thread into
//! a buffer (monitor/tables/mine.rs: a countdown per entry, a store while a window
//! is open) — the design's fixed-size buffer of an instance, holding its
//! latest blocks when it becomes a sequence. A finished window is offered
//! to the [`Miner`]: it becomes a sequence of the database, which holds
//! at most `sequences` of them (the oldest leaves, and leaves the tree).
//! So the database's sequences are guest threads and successive windows
//! of each: several threads running the same code are the design's "many
//! instances".
//!
//! The mining itself never runs per entry: the second tier gives the
//! miner a time budget in every round of the monitor thread, between
//! draining the rings and building superblocks (round.rs, tier.rs), and
//! the miner feeds windows to
//! the PST-tree ([`tree`]) element by element until the budget is spent.
//! When a window has been fed to its end, the paths that became patterns
//! while it was fed are merged ([`merge`]) and the merged patterns not yet
//! asked for become superblock requests with an explicit path
//! (`Request::path`), which the builder checks with `select::check_path`
//! and builds exactly like counted ones.
//!
//! From a pattern to a path: a sequential pattern is a subsequence, a
//! superblock needs blocks that run one after another. The tree admits a
//! block after another only along a transition the monitor has seen
//! (tree/mod.rs `Admit`; the rule is round.rs I1), and never a block
//! ending in a syscall or trap. Every pattern is then a path `check_path`
//! keeps whole (up to the size limits and other superblocks' heads).
//!
//! I1: a window waits in a queue of at most `QUEUE` windows; a window
//!     offered to a full queue pushes the oldest waiting one out (counted):
//!     the miner's work per second is bounded by its budget, whatever the
//!     guest produces.
//! I2: patterns are merged only after their window was fed to its end,
//!     so what one window shows is asked for as its merged paths, not as
//!     the short prefixes that reach the support first.

pub mod merge;
pub mod round;
pub mod tree;

use std::collections::VecDeque;
use std::time::Instant;

use merge::{Pattern, Store};
use tree::{Admit, SeqId, Support, Tree};

/// Windows that may wait for the miner (I1).
pub const QUEUE: usize = 4;
/// Patterns the merge store keeps (merge.rs I2).
const STORE: usize = 4096;
/// Elements fed between two looks at the clock.
const CHUNK: usize = 32;
/// Shortest pattern worth a superblock.
const MIN_LENGTH: usize = 2;

/// How Pisat mines (from the run options).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Block ids per window (sequence).
    pub window: u32,
    /// Ring entries of a thread from one window's start to the next.
    pub interval: u64,
    /// Sequences the database holds.
    pub sequences: u32,
    pub support: Support,
    /// Most PST-tree nodes.
    pub max_nodes: u32,
    /// Longest pattern (the superblock block limit).
    pub max_depth: u32,
    /// Mining time per monitor round, in microseconds.
    pub budget_us: u32,
}

/// What mining cost and found (the profile's `pisat` section).
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct PisatStats {
    pub windows_captured: u64,
    /// Windows pushed out of the queue unmined (I1).
    pub windows_dropped: u64,
    pub windows_mined: u64,
    /// Block ids fed to the tree.
    pub elements_mined: u64,
    /// Monitor rounds that mined, and their time.
    pub rounds: u64,
    pub mining_seconds: f64,
    pub max_round_seconds: f64,
    /// Mining time over every ring entry of the run (filled at the end).
    pub mining_ns_per_ring_entry: f64,
    pub tree_nodes: u64,
    pub peak_tree_nodes: u64,
    /// Nodes not made because the tree was full.
    pub nodes_refused: u64,
    /// Estimated bytes of the tree at its largest.
    pub peak_tree_bytes: u64,
    /// Paths that became patterns, and those long enough to keep.
    pub patterns_found: u64,
    pub merge: merge::MergeStats,
    pub patterns_kept: u64,
    /// Superblock requests made from patterns.
    pub requests: u64,
}

/// The sequence database, the PST-tree and the merged patterns.
#[derive(Debug)]
pub struct Miner {
    cfg: Config,
    tree: Tree,
    pending: VecDeque<Vec<u32>>,
    /// The window being fed: its sequence, its elements, the next one.
    feeding: Option<(SeqId, Vec<u32>, usize)>,
    /// Sequences in the database, oldest first.
    db: VecDeque<SeqId>,
    store: Store,
    pub stats: PisatStats,
}

impl Miner {
    /// An id epoch ended (monitor/tables/epoch.rs I5): every block id in
    /// the tree, the database and the patterns names another block now;
    /// mining starts afresh (its counts go on).
    pub fn epoch(&mut self) {
        let stats = std::mem::take(&mut self.stats);
        *self = Miner::new(self.cfg);
        self.stats = stats;
    }

    pub fn new(cfg: Config) -> Miner {
        Miner {
            tree: Tree::new(
                tree::Limits {
                    max_depth: cfg.max_depth.max(1) as usize,
                    max_nodes: cfg.max_nodes as usize,
                },
                cfg.support,
            ),
            cfg,
            pending: VecDeque::new(),
            feeding: None,
            db: VecDeque::new(),
            store: Store::new(STORE),
            stats: PisatStats::default(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// A finished window (I1).
    pub fn offer(&mut self, window: Vec<u32>) {
        self.stats.windows_captured += 1;
        if window.is_empty() {
            return;
        }
        if self.pending.len() >= QUEUE {
            self.pending.pop_front();
            self.stats.windows_dropped += 1;
        }
        self.pending.push_back(window);
    }

    /// The windows waiting to be fed, taken (tests of the capture).
    #[cfg(test)]
    pub fn take_pending(&mut self) -> Vec<Vec<u32>> {
        self.pending.drain(..).collect()
    }

    pub fn has_work(&self) -> bool {
        self.feeding.is_some() || !self.pending.is_empty()
    }

    /// Feed windows until `deadline`; the merged patterns to ask
    /// superblocks for (I2).
    pub fn work(&mut self, admit: &mut impl Admit, deadline: Instant) -> Vec<Pattern> {
        let t0 = Instant::now();
        let mut out = Vec::new();
        loop {
            if self.feeding.is_none() {
                let Some(w) = self.pending.pop_front() else {
                    break;
                };
                if self.db.len() >= self.cfg.sequences as usize {
                    if let Some(old) = self.db.pop_front() {
                        self.tree.remove_sequence(old);
                    }
                }
                let s = self.tree.add_sequence();
                self.db.push_back(s);
                self.feeding = Some((s, w, 0));
            }
            let (s, w, pos) = self.feeding.as_mut().expect("a window is being fed");
            let end = (*pos + CHUNK).min(w.len());
            for &e in &w[*pos..end] {
                self.tree.push(*s, e, admit);
            }
            self.stats.elements_mined += (end - *pos) as u64;
            *pos = end;
            if end == w.len() {
                self.feeding = None;
                self.stats.windows_mined += 1;
                self.settle(&mut out, admit);
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        let nodes = self.tree.nodes() as u64;
        self.stats.tree_nodes = nodes;
        self.stats.peak_tree_nodes = self.stats.peak_tree_nodes.max(nodes);
        self.stats.peak_tree_bytes = self.stats.peak_tree_bytes.max(self.tree.bytes() as u64);
        self.stats.nodes_refused = self.tree.refused;
        self.stats.rounds += 1;
        let dt = t0.elapsed().as_secs_f64();
        self.stats.mining_seconds += dt;
        self.stats.max_round_seconds = self.stats.max_round_seconds.max(dt);
        self.stats.requests += out.len() as u64;
        out
    }

    /// A window was fed to its end: merge what became patterns (I2).
    fn settle(&mut self, out: &mut Vec<Pattern>, admit: &mut impl Admit) {
        let found = std::mem::take(&mut self.tree.found);
        self.stats.patterns_found += found.len() as u64;
        let database = self.tree.sequences() as u32;
        let mut patterns: Vec<Pattern> = found
            .into_iter()
            .filter(|&n| self.tree.is_live(n))
            .map(|n| {
                let (sequences, repeats) = self.tree.support_of(n);
                let path = self.tree.path(n);
                let closes = path.len() >= 2 && admit.admits(path.last().copied(), path[0]);
                Pattern {
                    path,
                    sequences: sequences as u32,
                    repeats: repeats as u32,
                    database,
                    closes,
                }
            })
            .filter(|p| p.path.len() >= MIN_LENGTH)
            .collect();
        // Strongest first (more repeats, more sequences, longer): a hot
        // loop and its rotations come in before the weaker paths that
        // contain it or leave it.
        patterns.sort_by_key(|p| std::cmp::Reverse((p.repeats, p.sequences, p.path.len())));
        for p in patterns {
            self.store.insert(p);
        }
        self.stats.merge = self.store.stats;
        self.stats.patterns_kept = self.store.entries.len() as u64;
        out.extend(self.store.take_new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config {
            window: 64,
            interval: 64,
            sequences: 3,
            support: Support {
                support1: 0.5,
                support2: 3,
            },
            max_nodes: 10_000,
            max_depth: 8,
            budget_us: 1_000_000,
        }
    }

    fn far() -> Instant {
        Instant::now() + std::time::Duration::from_secs(60)
    }

    /// A loop 10 → 11 → 12 → 10 (12 may also go to 13) in windows: the
    /// miner asks once for one rotation of it, headed at the lowest id.
    #[test]
    fn a_loop_in_windows_becomes_one_request() {
        let mut edges = |p: Option<u32>, e: u32| match p {
            None => true,
            Some(p) => matches!((p, e), (10, 11) | (11, 12) | (12, 10) | (12, 13)),
        };
        let mut m = Miner::new(cfg());
        let window: Vec<u32> = [10, 11, 12].repeat(5).into_iter().chain([13]).collect();
        m.offer(window.clone());
        let got = m.work(&mut edges, far());
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].path, vec![10, 11, 12]);
        assert_eq!(got[0].repeats, 5);
        // The next windows show the same loop and its way out, now in two
        // sequences (support1): the way out (11,12,13) is asked for, the
        // loop is not asked for again, and the path through the loop and
        // out (10,11,12,13) does not absorb it.
        m.offer(window.clone());
        m.offer(window);
        let more = m.work(&mut edges, far());
        let paths: Vec<&[u32]> = more.iter().map(|p| &p.path[..]).collect();
        assert_eq!(paths, vec![&[11, 12, 13][..]]);
        assert!(m
            .store
            .entries
            .iter()
            .any(|e| e.pattern.path == [10, 11, 12]));
        assert_eq!(m.stats.windows_mined, 3);
        // A fourth window: the oldest sequence leaves the database.
        m.offer(vec![13, 13]);
        m.work(&mut edges, far());
        assert_eq!(m.tree.sequences(), 3);
    }

    #[test]
    fn the_queue_drops_the_oldest_window() {
        let mut m = Miner::new(cfg());
        for i in 0..(QUEUE as u32 + 2) {
            m.offer(vec![i]);
        }
        assert_eq!(m.stats.windows_dropped, 2);
        assert_eq!(m.pending.front(), Some(&vec![2]));
    }

    #[test]
    fn a_spent_budget_stops_mid_window() {
        let mut m = Miner::new(cfg());
        m.offer((0..200).map(|i| i % 7).collect());
        m.work(&mut |_: Option<u32>, _: u32| true, Instant::now());
        assert!(m.has_work(), "one chunk, then the deadline");
        assert_eq!(m.stats.elements_mined, CHUNK as u64);
        while m.has_work() {
            m.work(&mut |_: Option<u32>, _: u32| true, far());
        }
        assert_eq!(m.stats.elements_mined, 200);
    }
}
