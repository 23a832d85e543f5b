//! Pre-building stored traces: the monitor's side of the store (S5: "queue
//! the downloaded traces for compilation when the program starts").
//!
//! A superblock's members must be translated blocks (ids in the block
//! table), and blocks are translated lazily, when the guest first runs
//! them. So a stored trace is built as soon as its blocks exist: its
//! module-relative members are turned into guest addresses once every
//! module it runs through is mapped in this run (the program at start,
//! libraries when the guest maps them: the image log says), the monitor
//! watches the blocks the dispatcher publishes, and when the head and
//! every member are there it asks the builder for a superblock with that
//! explicit path — without waiting for any count to reach a threshold.
//! The guest never waits for any of it (builder I1); reading the store
//! happens on a thread of its own (run.rs), so even a slow server only
//! delays the pre-building.
//!
//! Invariants:
//! - I1 (store I2): a member is used only for a module of the same
//!   identity, at its base plus the stored offset, and only when the block
//!   the dispatcher translated there has the stored size, instruction
//!   count and code hash; a trace with any member that differs is stale
//!   and never asked for. The builder then checks the path again
//!   (`select::check_path`: blocks that can run in a row, live in this
//!   code-cache generation) and lifts every member again from guest
//!   memory (`Builder::lift`), so what is built is always what memory
//!   holds now.
//! - I2: a trace is asked for at most once per code-cache generation; a
//!   flush drops every superblock, and stored traces are asked for again
//!   as their blocks come back.
//! - I3: the monitor never blocks on the image log: it copies the live
//!   records only when their change counter moved, and only if the lock
//!   is free (`try_lock`); otherwise it looks again next round.
//! - I4: a trace whose head is a later member of another stored trace is
//!   asked for only after that one (or once that one is known stale or
//!   cannot be resolved), so the longer path is not cut at the shorter
//!   one's head (`check_path` stops at other superblocks' heads). When
//!   both are ready in one round, the builder takes stored requests
//!   before counted ones.
//! - I5: once the block table is in a new id epoch (dispatch/epoch.rs)
//!   the block ids looked at and their code hashes are forgotten (each id
//!   names another block now) and every trace is looked at again.
//!
//! Usage: `run::RunStore` makes the [`Feed`] and a reader thread fills
//! it; the builder owns a [`Prebuild`] and calls [`Prebuild::poll`] before
//! it takes its requests, and [`Prebuild::settle`] when the run ends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use hashbrown::{HashMap, HashSet};

use super::{code_hash, Loaded, TracePath};
use crate::cache::BlockTable;
use crate::images::ImageLog;
use crate::superblock::build::Prebuilder;
use crate::superblock::{Request, Trigger};

/// What the reader thread found.
#[derive(Debug)]
pub enum LoadResult {
    /// The store's version for this program is newer than the run's (0).
    Loaded(Loaded),
    /// The store does not know the program (or has nothing newer).
    Nothing,
    /// The store could not be read (run.rs printed a warning).
    Failed(String),
}

/// Counters of the pre-building, for the profile (`store` section).
#[derive(Debug, Default)]
pub struct FeedStats {
    /// Traces whose modules are all mapped in this run (at some point).
    pub resolved: AtomicU64,
    /// Traces with a member whose block differs from the stored one (I1).
    pub stale: AtomicU64,
    /// Requests made (a trace may be asked for again after a flush).
    pub requests: AtomicU64,
}

/// What the reader thread, the monitor and the end of the run share.
#[derive(Debug)]
pub struct Feed {
    /// Set once by the reader thread.
    pub loaded: OnceLock<LoadResult>,
    pub images: Arc<Mutex<ImageLog>>,
    /// The image log's change counter (`ImageLog::changes`), read without
    /// the lock (I3).
    changes: Arc<AtomicU64>,
    pub stats: FeedStats,
}

impl Feed {
    pub fn new(images: Arc<Mutex<ImageLog>>) -> Feed {
        let changes = images
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .changes
            .clone();
        Feed {
            loaded: OnceLock::new(),
            images,
            changes,
            stats: FeedStats::default(),
        }
    }

    fn images_changes(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }
}

/// A live module of this run, as the monitor last copied it.
#[derive(Debug)]
struct LiveModule {
    identity: Option<String>,
    base: u64,
}

/// One stored trace, on its way to being built.
#[derive(Debug)]
struct Pending {
    path: TracePath,
    count: u64,
    /// Members' guest addresses in this run, once every module is mapped.
    addrs: Option<Vec<u64>>,
    /// The generation it was last asked for in (I2).
    asked: Option<u64>,
    stale: bool,
    counted_resolved: bool,
    /// Traces that hold this one's head as a later member (I4): built
    /// first, they would be cut at this head otherwise.
    after: Vec<u32>,
    /// Traces whose `after` names this one.
    before_of: Vec<u32>,
}

/// The monitor's pre-building state (owned by the superblock builder).
#[derive(Debug)]
pub struct Prebuild {
    feed: Arc<Feed>,
    blocks: Arc<BlockTable>,
    /// None until the reader thread is done.
    state: Option<State>,
}

#[derive(Debug, Default)]
struct State {
    version: u64,
    traces: Vec<Pending>,
    /// The image log's change counter at the last copy (I3), and its
    /// identities by (path, base, first block).
    images_seen: Option<u64>,
    identities: HashMap<(std::path::PathBuf, u64, u64), Option<String>>,
    /// Guest address → the traces wanting a block there.
    wanted: HashMap<u64, Vec<u32>>,
    /// How many block ids were looked at.
    seen: u32,
    /// (Block id, its guest address) → its code hash (read once).
    hashes: HashMap<(u32, u64), String>,
    /// The block number of id 0 in the id epoch `seen` and `hashes`
    /// follow (I5).
    epoch_base: u64,
    /// Traces to look at again.
    dirty: HashSet<u32>,
    gen: u64,
    /// The generation of the last full flush: blocks made since live on
    /// unless dropped (cache/shared.rs I1).
    full_gen: u64,
}

impl Prebuilder for Prebuild {
    fn has_work(&self, gen: u64) -> bool {
        Prebuild::has_work(self, gen)
    }
    fn poll(
        &mut self,
        (base, gen): (u64, u64),
        by_guest: &HashMap<u64, u32>,
        requests: &mut Vec<Request>,
    ) {
        Prebuild::poll(self, (base, gen), by_guest, requests)
    }
    fn settle(&mut self, by_guest: &HashMap<u64, u32>) {
        Prebuild::settle(self, by_guest)
    }
}

impl Prebuild {
    pub fn new(feed: Arc<Feed>, blocks: Arc<BlockTable>) -> Prebuild {
        Prebuild {
            feed,
            blocks,
            state: None,
        }
    }

    /// Anything to do in code-cache generation `gen`? (Cheap: called after
    /// every drain round.)
    pub fn has_work(&self, gen: u64) -> bool {
        match &self.state {
            None => self.feed.loaded.get().is_some(),
            Some(s) if s.traces.is_empty() => false,
            Some(s) => {
                !s.dirty.is_empty()
                    || s.gen != gen
                    || s.epoch_base != self.blocks.epoch_base()
                    || s.seen != self.blocks.len()
                    || s.images_seen != Some(self.images_changes())
            }
        }
    }

    fn images_changes(&self) -> u64 {
        self.feed.images_changes()
    }

    /// Ask for the superblocks of stored traces whose blocks all exist now
    /// (in generation `gen`); `by_guest` maps guest addresses to their
    /// latest block ids (the builder's map, up to date).
    /// `base` is the last full flush's generation (cache/shared.rs I1).
    pub fn poll(
        &mut self,
        (base, gen): (u64, u64),
        by_guest: &HashMap<u64, u32>,
        requests: &mut Vec<Request>,
    ) {
        if self.state.is_none() {
            let Some(res) = self.feed.loaded.get() else {
                return;
            };
            let mut s = State {
                gen,
                ..State::default()
            };
            if let LoadResult::Loaded(l) = res {
                s.version = l.version;
                s.traces = l
                    .traces
                    .iter()
                    .map(|t| Pending {
                        path: t.path.clone(),
                        count: t.count,
                        addrs: None,
                        asked: None,
                        stale: false,
                        counted_resolved: false,
                        after: Vec::new(),
                        before_of: Vec::new(),
                    })
                    .collect();
                s.order();
            }
            self.state = Some(s);
        }
        let feed = self.feed.clone();
        let blocks = self.blocks.clone();
        let s = self.state.as_mut().expect("state made above");
        if s.traces.is_empty() {
            return;
        }
        s.full_gen = base;
        if s.gen != gen {
            // I2: everything may be asked for again.
            s.gen = gen;
            s.dirty.extend(0..s.traces.len() as u32);
        }
        s.follow_images(&feed);
        let base = blocks.epoch_base();
        if base != s.epoch_base {
            // I5 (the table's length is 0 by then: cache/blocks.rs I7).
            s.epoch_base = base;
            s.seen = 0;
            s.hashes.clear();
            s.dirty.extend(0..s.traces.len() as u32);
        }
        let metas = blocks.published();
        for m in metas.iter().skip(s.seen as usize) {
            if let Some(ts) = s.wanted.get(&m.guest) {
                s.dirty.extend(ts.iter().copied());
            }
        }
        s.seen = metas.len() as u32;
        let mut dirty: Vec<u32> = s.dirty.drain().collect();
        // The most-built traces first.
        dirty.sort_unstable();
        for t in dirty {
            match s.check(t as usize, &blocks, by_guest) {
                Check::Ready(path) => {
                    let p = &mut s.traces[t as usize];
                    p.asked = Some(gen);
                    let waiting = p.before_of.clone();
                    s.dirty.extend(waiting);
                    let p = &s.traces[t as usize];
                    feed.stats.requests.fetch_add(1, Ordering::Relaxed);
                    requests.push(Request {
                        head: path[0],
                        trigger: Trigger::Stored {
                            version: s.version,
                            count: p.count,
                        },
                        path: Some(path.into()),
                    });
                }
                Check::Later => {
                    s.dirty.insert(t);
                }
                Check::Stale => {
                    s.traces[t as usize].stale = true;
                    let waiting = s.traces[t as usize].before_of.clone();
                    s.dirty.extend(waiting);
                    feed.stats.stale.fetch_add(1, Ordering::Relaxed);
                }
                Check::Missing => {}
            }
        }
    }
}

/// What one look at a trace found.
enum Check {
    /// Every member is a live block matching the stored one: the path.
    Ready(Vec<u32>),
    /// A member's code is being committed: look again next round.
    Later,
    /// A member's block differs from the stored one (I1).
    Stale,
    /// Not resolved, already asked for, or a member not translated yet
    /// (its publication marks the trace again).
    Missing,
}

impl Prebuild {
    /// The run is ending and nothing more is built: every resolved trace
    /// whose blocks all exist is compared with them now, in any order, so
    /// that `stale` counts every trace this run's code differs from,
    /// however few builder rounds the run left for the ordered checks (I4:
    /// a trace waiting for another is looked at only after it).
    pub fn settle(&mut self, by_guest: &HashMap<u64, u32>) {
        let (feed, blocks) = (self.feed.clone(), self.blocks.clone());
        let Some(s) = self.state.as_mut() else {
            return;
        };
        s.follow_images(&feed);
        for t in 0..s.traces.len() {
            if !s.traces[t].stale && matches!(s.check_members(t, &blocks, by_guest), Check::Stale) {
                s.traces[t].stale = true;
                feed.stats.stale.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl State {
    /// Resolve the traces again if the guest's images changed (I3: only
    /// when the log is free).
    fn follow_images(&mut self, feed: &Feed) {
        if self.images_seen == Some(feed.images_changes()) {
            return;
        }
        if let Ok(log) = feed.images.try_lock() {
            let changes = log.changes.load(Ordering::Acquire);
            let live = self.live_modules(&log);
            drop(log);
            self.images_seen = Some(changes);
            self.resolve(&live, &feed.stats);
        }
    }

    /// I4: which traces wait for which. A trace whose head is a later
    /// member of another waits for that one (the run that stored the other
    /// built it first, and laid this head out inside it); when two hold
    /// each other's heads, the one read first (built by more runs) goes
    /// first.
    fn order(&mut self) {
        fn key(t: &Pending, i: usize) -> (&str, u64) {
            let m = &t.path.members[i];
            (&t.path.modules[m.module as usize].identity, m.offset)
        }
        let heads: HashMap<(&str, u64), Vec<usize>> =
            self.traces
                .iter()
                .enumerate()
                .fold(HashMap::new(), |mut h, (i, t)| {
                    h.entry(key(t, 0)).or_default().push(i);
                    h
                });
        let mut edges = Vec::new();
        for (u, t) in self.traces.iter().enumerate() {
            for i in 1..t.path.members.len() {
                for &w in heads.get(&key(t, i)).into_iter().flatten() {
                    // w waits for u, unless u also waits for w and w
                    // comes first.
                    let tw = &self.traces[w];
                    let mutual = (1..tw.path.members.len()).any(|j| key(tw, j) == key(t, 0));
                    if w != u && !(mutual && w < u) {
                        edges.push((w, u));
                    }
                }
            }
        }
        drop(heads);
        for (w, u) in edges {
            self.traces[w].after.push(u as u32);
            self.traces[u].before_of.push(w as u32);
        }
    }

    /// The live images with their identities (computed once per image;
    /// hashing a file only for images a trace might need).
    fn live_modules(&mut self, log: &ImageLog) -> Vec<LiveModule> {
        let needed: HashSet<&str> = self
            .traces
            .iter()
            .flat_map(|t| t.path.modules.iter())
            .filter(|m| !m.identity.starts_with("build-id:"))
            .map(|m| m.name.as_str())
            .collect();
        let mut live = Vec::new();
        for r in log.records.iter().filter(|r| r.end_block.is_none()) {
            let key = (r.path.clone(), r.base, r.first_block);
            let identity = match self.identities.get(&key) {
                Some(i) => i.clone(),
                None => {
                    let i = if r.build_id.as_deref().is_some_and(|b| !b.is_empty())
                        || needed.contains(r.file_name().as_str())
                    {
                        super::module_identity(r)
                    } else {
                        None
                    };
                    self.identities.insert(key, i.clone());
                    i
                }
            };
            live.push(LiveModule {
                identity,
                base: r.base,
            });
        }
        live
    }

    /// Guest addresses of every trace whose modules are all live.
    fn resolve(&mut self, live: &[LiveModule], stats: &FeedStats) {
        self.wanted.clear();
        for (i, t) in self.traces.iter_mut().enumerate() {
            if t.stale {
                continue;
            }
            let bases: Option<Vec<u64>> = t
                .path
                .modules
                .iter()
                .map(|m| {
                    live.iter()
                        .find(|l| l.identity.as_deref() == Some(m.identity.as_str()))
                        .map(|l| l.base)
                })
                .collect();
            let addrs = bases.map(|b| {
                t.path
                    .members
                    .iter()
                    .map(|m| b[m.module as usize].wrapping_add(m.offset))
                    .collect::<Vec<u64>>()
            });
            if addrs != t.addrs {
                t.addrs = addrs;
                self.dirty.insert(i as u32);
            }
            if let Some(a) = &t.addrs {
                if !t.counted_resolved {
                    t.counted_resolved = true;
                    stats.resolved.fetch_add(1, Ordering::Relaxed);
                }
                for &addr in a {
                    self.wanted.entry(addr).or_default().push(i as u32);
                }
            }
        }
    }

    fn check(&mut self, t: usize, blocks: &BlockTable, by_guest: &HashMap<u64, u32>) -> Check {
        let p = &self.traces[t];
        if p.addrs.is_none() || p.stale || p.asked == Some(self.gen) {
            return Check::Missing;
        }
        // I4: a trace that would be cut at this head goes first; asking
        // for it (or finding it stale) marks this one again.
        let waits = p.after.iter().any(|&u| {
            let u = &self.traces[u as usize];
            u.addrs.is_some() && !u.stale && u.asked != Some(self.gen)
        });
        if waits {
            return Check::Missing;
        }
        self.check_members(t, blocks, by_guest)
    }

    /// [`State::check`]'s look at the members of resolved trace `t`.
    fn check_members(
        &mut self,
        t: usize,
        blocks: &BlockTable,
        by_guest: &HashMap<u64, u32>,
    ) -> Check {
        let p = &self.traces[t];
        let Some(addrs) = p.addrs.as_ref() else {
            return Check::Missing;
        };
        let metas = blocks.published();
        let mut path = Vec::with_capacity(addrs.len());
        let mut later = false;
        for (m, &addr) in p.path.members.iter().zip(addrs) {
            let Some(&id) = by_guest.get(&addr) else {
                return Check::Missing;
            };
            // I5: the builder's map may name an id of an ended epoch for
            // a round: look again next round.
            let Some(meta) = metas.get(id as usize).filter(|m| m.guest == addr) else {
                return Check::Later;
            };
            if meta.guest_len != m.size || meta.insns != m.insns {
                return Check::Stale;
            }
            let code = self.hashes.entry((id, addr)).or_insert_with(|| {
                crate::guest_mem::read_bytes(meta.guest, meta.guest_len as usize)
                    .map(|b| code_hash(&b))
                    .unwrap_or_default()
            });
            if *code != m.code {
                return Check::Stale;
            }
            // Live as the builder sees it (cache/shared.rs I1); a block
            // translated before and dropped since: its new translation
            // will mark the trace again.
            if blocks.live(id, self.full_gen, self.gen).is_none() {
                if blocks.host(id).is_some() {
                    return Check::Missing;
                }
                later = true;
            }
            path.push(id);
        }
        if later {
            Check::Later
        } else {
            Check::Ready(path)
        }
    }
}
