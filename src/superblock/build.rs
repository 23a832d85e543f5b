//! The superblock builder: runs on the monitor thread, between drain
//! rounds. It takes the tables' requests, selects members, lifts them
//! again from guest memory, emits the superblock into the arena, registers
//! it, tells the tables about it, and publishes it by patching the head
//! block's first instruction into a jump (cache/shared.rs I1). It also
//! links exits that left to the dispatcher once their targets have code.
//!
//! I1: the guest thread never waits for a build: everything but the
//!     final patches happens without the publish lock, and the lock is
//!     held only for a generation check and a few aligned stores.
//! I2: a head's first instruction is the 8-byte `backend::PATCH_NOP` every
//!     block that pushes exit words starts with (16-byte aligned block
//!     start): the patch replaces it with `jmp rel32` + `int3`s in one
//!     store, so a thread sees the nop or the jump, and no thread can be
//!     inside those bytes.
//! I3: what is published (head patched, under the publish lock) goes into
//!     the process's [`super::Published`] log in the same critical
//!     section, and the arena's use ([`CacheShared::arena_used`]) follows
//!     the cursor: a fork, which holds the publish lock, sees exactly the
//!     superblocks whose heads are patched, and the child's builder takes
//!     them over ([`Builder::take_inherited`]) instead of taking them back.
#![allow(unsafe_code)]

use std::sync::Arc;
use std::time::Instant;

use hashbrown::{HashMap, HashSet};

use super::record::{IrText, MemberRecord, SbRecord};
use super::select::shape;
use super::select::{Graph, FRAGMENT};
use super::{check_path, select, Limits, Member, Plan, Request};
use crate::backend::{emit_superblock, SbEmitEnv};
use crate::cache::CacheShared;
use crate::cache::{BlockMeta, BlockTable};
use crate::frontend::lift_block;
use crate::ir::Terminator;
use crate::monitor::tables::SbExitAcct;
use crate::monitor::tables::{AccountSource, InheritedSb, SbAccount};
use crate::monitor::{ExitKind, Tables};
use crate::types::GuestAddr;

/// What the builder was told at start.
#[derive(Debug, Clone)]
pub struct BuildConfig {
    pub limits: Limits,
    /// `--max-block-insns`: members are lifted again exactly as translated.
    pub max_block_insns: usize,
    /// `--count-check` (backend::SbEmitEnv::count_check).
    pub count_check: bool,
    /// `--dump-superblocks`: write each superblock's dump as it is built.
    pub dump: Option<SbDump>,
    /// `--sb-warmup`: requests wait until the monitor has taken in this
    /// many ring words (tier.rs `warm`).
    pub warmup: u64,
}

/// Where superblock dumps go and how they are written: the profile's text
/// dump (`profile::dump::render_record`), passed in by the dispatcher, since
/// the profile is a layer above the monitor.
#[derive(Debug, Clone)]
pub struct SbDump {
    pub dir: std::path::PathBuf,
    pub render: fn(&SbRecord) -> String,
}

/// Why nothing was built for a request.
#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct BuildStats {
    pub requests: u64,
    pub built: u64,
    /// Nothing to gain: one block going nowhere hot, or two whose pass
    /// would cost as many ring words as their blocks (see `build`).
    pub single_member: u64,
    pub stale: u64,
    pub lift_mismatch: u64,
    pub emit_errors: u64,
    pub arena_full: u64,
    pub registry_full: u64,
    /// Superblock units ran out (monitor UNIT_LIMIT).
    #[serde(default)]
    pub units_full: u64,
    pub exits_linked: u64,
    /// In a forked child: superblocks taken over from its parent's
    /// monitor (I3), and how many of them ran here.
    #[serde(default)]
    pub inherited: u64,
    #[serde(default)]
    pub inherited_run: u64,
    /// Superblocks taken back for covering too few blocks per ring word
    /// (review.rs; absent before 2026-11-25).
    #[serde(default)]
    pub retired: u64,
    /// Requests still waiting for `--sb-warmup` when the run ended
    /// (absent before 2026-12-05).
    #[serde(default)]
    pub deferred: u64,
    pub build_seconds: f64,
}

/// Entries a superblock had before a partial flush for its request to be
/// asked again (`Builder::built`).
const AGAIN_MIN: u64 = 1000;

/// The builder's state (monitor thread only).
#[derive(Debug)]
pub struct Builder {
    pub(super) cfg: BuildConfig,
    pub(super) shared: Arc<CacheShared>,
    blocks: Arc<BlockTable>,
    pub(super) gen: u64,
    /// The last full flush's generation (cache/shared.rs I1).
    base: u64,
    /// The requests that built this generation's superblocks (with
    /// their ids), asked again after a partial flush (whose blocks mostly
    /// live on) took every superblock away: those entered at least
    /// [`AGAIN_MIN`] times (node, rebuilding every one after each of its
    /// stores into code, spent more on building than it saved).
    built: Vec<(u32, Request)>,
    again: Vec<(u32, Request)>,
    cursor: usize,
    /// Head block id → superblock id, this generation.
    pub(super) heads: HashMap<u32, u32>,
    /// Heads of fragments (select/mod.rs I3): selection goes on through them.
    fragments: HashSet<u32>,
    /// Heads that failed this generation (not asked again).
    pub(super) failed: HashSet<u32>,
    /// Guest address → latest block id, and how many ids were looked at,
    /// in the id epoch whose id 0 is block number `epoch_base`.
    by_guest: HashMap<u64, u32>,
    seen: u32,
    epoch_base: u64,
    /// Direct exits without a target block: (rel32 field address, guest).
    unresolved: Vec<(u64, u64)>,
    linked_upto: u32,
    next_id: u32,
    started: Instant,
    pub records: super::record::Records,
    pub stats: BuildStats,
    /// What review.rs needs to take published superblocks back.
    pub(super) review: super::review::Review,
    /// Stored traces to ask for as their blocks appear (store/feed.rs).
    prebuild: Option<Box<dyn Prebuilder>>,
    /// I3: everything published this generation, for a fork.
    published: super::Published,
    /// `published` may hold a forked parent's superblocks, not taken over
    /// yet ([`Builder::take_inherited`]).
    inherit_pending: bool,
}

/// Superblocks asked for from outside the monitor's counting, with their
/// paths, as their blocks appear: the profile store's pre-building
/// (store/feed.rs `Prebuild`, a layer above the monitor). The builder
/// polls it before it takes the tables' requests.
pub trait Prebuilder: Send + std::fmt::Debug {
    /// Anything to do in code-cache generation `gen`? (Cheap: called after
    /// every drain round.)
    fn has_work(&self, gen: u64) -> bool;
    /// Add the requests whose blocks all exist now (in generation `gen`,
    /// the last full flush having made `base`: cache/shared.rs I1);
    /// `by_guest` maps guest addresses to their latest block ids.
    fn poll(
        &mut self,
        base_gen: (u64, u64),
        by_guest: &HashMap<u64, u32>,
        requests: &mut Vec<Request>,
    );
    /// The run is ending: account for what the run's blocks show, asking
    /// for nothing.
    fn settle(&mut self, by_guest: &HashMap<u64, u32>);
}

/// Selection's view: the tables' counts, the block table, the builder's
/// heads (select/mod.rs Graph).
struct View<'a> {
    tables: &'a Tables,
    metas: &'a [BlockMeta],
    blocks: &'a BlockTable,
    heads: &'a HashMap<u32, u32>,
    fragments: &'a HashSet<u32>,
    gen: u64,
    /// The last full flush's generation (cache/shared.rs I1).
    base: u64,
}

impl Graph for View<'_> {
    fn meta(&self, id: u32) -> Option<BlockMeta> {
        self.metas.get(id as usize).copied()
    }
    fn hottest(&self, id: u32) -> Option<(u32, u64, u64)> {
        self.tables.hottest(id)
    }
    fn live(&self, id: u32) -> bool {
        self.blocks.live(id, self.base, self.gen).is_some()
    }
    fn stops_at(&self, id: u32) -> bool {
        self.heads.contains_key(&id) && !self.fragments.contains(&id)
            || self
                .metas
                .get(id as usize)
                .is_some_and(|m| self.tables.is_landing_site(m.guest))
    }
    fn successors(&self, id: u32) -> Option<([(u32, u64); 2], u64)> {
        self.tables.successors(id)
    }
    fn targets(&self, id: u32) -> Option<(Vec<(u32, u64)>, u64)> {
        self.tables.targets(id)
    }
}

impl Builder {
    pub fn new(cfg: BuildConfig, shared: Arc<CacheShared>, blocks: Arc<BlockTable>) -> Builder {
        Builder {
            cfg,
            gen: shared.gen(),
            base: shared.full_gen(),
            built: Vec::new(),
            again: Vec::new(),
            shared,
            blocks,
            cursor: 0,
            heads: HashMap::new(),
            fragments: HashSet::new(),
            failed: HashSet::new(),
            by_guest: HashMap::new(),
            seen: 0,
            epoch_base: 0,
            unresolved: Vec::new(),
            linked_upto: 0,
            next_id: 0,
            started: Instant::now(),
            records: Default::default(),
            review: super::review::Review::default(),
            stats: BuildStats::default(),
            prebuild: None,
            published: super::Published::default(),
            inherit_pending: false,
        }
    }

    /// I3: record what is published in `log` (a fork reads it); in a
    /// forked child it holds the parent's builder's superblocks, which
    /// [`Builder::take_inherited`] takes over.
    pub fn with_published(mut self, log: super::Published) -> Builder {
        self.published = log;
        self.inherit_pending = true;
        self
    }

    /// The block table it builds from.
    pub fn blocks(&self) -> &Arc<BlockTable> {
        &self.blocks
    }

    /// I3, a forked child's side, once, as its monitor's first round is
    /// about to begin (never, for a child that execs or exits before its
    /// monitor wakes: done at the fork it was 0.63 ms of each python
    /// child): take over the superblocks the log holds from the parent's
    /// builder. Their code stays where the arena's use ended
    /// (cache/shared.rs I4), their heads stay patched, and this builder
    /// goes on above them with ids and units of its own (nothing else
    /// moves the arena's use or the ids meanwhile; a flush meanwhile is
    /// met by the first round's `sync_gen`). What the tables need of
    /// each (monitor/tables/units.rs I4), read from the log alone: the
    /// accounts are not touched (see [`super::Adoptable`]).
    pub fn take_inherited(&mut self) -> Vec<InheritedSb> {
        if !std::mem::take(&mut self.inherit_pending) {
            return Vec::new();
        }
        let log = self.published.clone();
        let mut l = log.lock().unwrap_or_else(|e| e.into_inner());
        l.retain(|a| a.gen == self.gen);
        if l.is_empty() {
            return Vec::new();
        }
        self.cursor = self.shared.arena_used();
        self.next_id = l.iter().map(|a| a.id + 1).max().unwrap_or(0);
        self.heads.reserve(l.len());
        for a in l.iter() {
            self.heads.insert(a.head, a.id);
            if a.fragment {
                self.fragments.insert(a.head);
            }
        }
        self.stats.inherited = l.len() as u64;
        l.iter().map(|a| a.sb.clone()).collect()
    }

    /// Where the tables copy an inherited superblock's account from when
    /// its units are made (monitor/tables/units.rs I4): the log, which
    /// keeps it for this child's own forks. The log is in id order (ids
    /// are given upward and a child's own go above its parent's).
    pub fn account_source(&self) -> AccountSource {
        let log = self.published.clone();
        AccountSource(Box::new(move |id| {
            let l = log.lock().unwrap_or_else(|e| e.into_inner());
            let i = l
                .binary_search_by_key(&id, |a| a.id)
                .ok()
                .or_else(|| l.iter().position(|a| a.id == id))?;
            Some((*l[i].acc).clone())
        }))
    }

    /// Also build the stored traces `p` finds (store/feed.rs).
    pub fn with_prebuild(mut self, p: Option<Box<dyn Prebuilder>>) -> Builder {
        self.prebuild = p;
        self
    }

    /// Anything to do? (Cheap: called after every drain round.)
    pub fn has_work(&self, tables: &Tables) -> bool {
        !tables.requests.is_empty()
            || self.shared.gen() != self.gen
            || (!self.unresolved.is_empty() && self.blocks.len() != self.linked_upto)
            || self
                .prebuild
                .as_ref()
                .is_some_and(|p| p.has_work(self.shared.gen()))
    }

    /// Build what was asked for and link what can be linked now.
    pub fn work(&mut self, tables: &mut Tables) {
        let t0 = Instant::now();
        self.sync_gen();
        // Stored traces first: when counting asks for the same head in the
        // same round, the stored path wins.
        let mut requests = Vec::new();
        if self.prebuild.is_some() {
            self.follow_blocks();
        }
        if let Some(p) = self.prebuild.as_mut() {
            p.poll((self.base, self.gen), &self.by_guest, &mut requests);
        }
        for (id, req) in std::mem::take(&mut self.again) {
            if tables
                .sb_summary(id)
                .is_some_and(|s| s.entries >= AGAIN_MIN)
            {
                requests.push(req);
            }
        }
        requests.append(&mut tables.requests);
        if !requests.is_empty() {
            self.follow_blocks();
        }
        for req in requests {
            self.stats.requests += 1;
            // A path given from outside (a stored trace, a mined pattern)
            // that cannot be built does not stop counting from choosing
            // one at that head later.
            let (head, explicit) = (req.head, req.path.is_some());
            let failed_before = self.failed.contains(&head);
            self.build(req, tables);
            if explicit && !failed_before {
                self.failed.remove(&head);
            }
        }
        self.link_exits();
        self.stats.build_seconds += t0.elapsed().as_secs_f64();
    }

    /// The run is ending: the stored traces' last accounts (store/feed.rs
    /// `Prebuild::settle`), with the blocks published until now.
    pub fn settle(&mut self) {
        if self.shared.gen() != self.gen {
            // A flush the builder has not followed: its map is of the
            // generation before.
            return;
        }
        if self.prebuild.is_none() {
            return;
        }
        self.follow_blocks();
        if let Some(p) = self.prebuild.as_mut() {
            p.settle(&self.by_guest);
        }
    }

    /// An id epoch ends (monitor/tables/epoch.rs): the flush before it
    /// dropped every superblock, and every block id named so far will name
    /// another block: nothing kept by id stays.
    pub fn epoch(&mut self, tables: &mut Tables) {
        self.sync_gen();
        self.built.clear();
        self.again.clear();
        self.by_guest.clear();
        self.seen = 0;
        self.linked_upto = 0;
        self.review = Default::default();
        tables.requests.clear();
    }

    /// Follow the code cache: a flush dropped every superblock (and its
    /// arena space), and new blocks may have appeared.
    fn sync(&mut self) {
        self.sync_gen();
        self.follow_blocks();
    }

    /// Follow a flush (every superblock and its arena space dropped). The
    /// map of blocks by guest address follows only where a round reads
    /// it ([`Builder::follow_blocks`]): a forked python child's monitor,
    /// asked for nothing, spent a fifth of its time mapping the 38,000
    /// blocks its parent had published.
    fn sync_gen(&mut self) {
        let gen = self.shared.gen();
        if gen != self.gen {
            self.gen = gen;
            let base = self.shared.full_gen();
            let built = std::mem::take(&mut self.built);
            if base == self.base {
                self.again = built;
            }
            self.base = base;
            self.cursor = 0;
            self.shared.set_arena_used(0);
            self.published
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
            self.heads.clear();
            self.fragments.clear();
            self.failed.clear();
            self.unresolved.clear();
        }
    }

    /// Map the blocks published since the last look by guest address.
    fn follow_blocks(&mut self) {
        // A new id epoch in the table (dispatch/epoch.rs): its ids name
        // other blocks. The monitor's `epoch` above comes before the table
        // starts the new epoch, and a round between them maps the old ids
        // again: they are forgotten here, once the table has moved on
        // (cache/blocks.rs I7: its length is 0 by then).
        let base = self.blocks.epoch_base();
        if base != self.epoch_base {
            self.epoch_base = base;
            self.seen = 0;
            self.by_guest.clear();
        }
        let metas = self.blocks.published();
        for (id, m) in metas.iter().enumerate().skip(self.seen as usize) {
            self.by_guest.insert(m.guest, id as u32);
        }
        self.seen = metas.len() as u32;
    }

    /// Host entry and id of the live block at `guest` (this generation).
    fn resolve(&self, guest: u64) -> Option<(u64, u32)> {
        let id = self.id_at(guest)?;
        self.blocks.live(id, self.base, self.gen).map(|h| (h, id))
    }

    /// The latest block id at `guest`, if the table still says so: across
    /// an id epoch's start an id followed before names another block
    /// (`follow_blocks`).
    fn id_at(&self, guest: u64) -> Option<u32> {
        let id = *self.by_guest.get(&guest)?;
        let now = self.blocks.published().get(id as usize)?;
        (now.guest == guest).then_some(id)
    }

    /// Lift block `m` again from its guest bytes `bytes`, exactly as the
    /// dispatcher did.
    fn lift(&self, m: &BlockMeta, bytes: &[u8]) -> Option<crate::ir::IrBlock> {
        let ir = lift_block(bytes, GuestAddr(m.guest), self.cfg.max_block_insns).ok()?;
        let same_exit = matches!(
            (&ir.term, m.exit),
            (Terminator::Jump { .. }, ExitKind::Jump)
                | (Terminator::Branch { .. }, ExitKind::Branch)
                | (Terminator::Call { .. }, ExitKind::Call)
                | (Terminator::IndirectJump { .. }, ExitKind::IndirectJump)
                | (Terminator::IndirectCall { .. }, ExitKind::IndirectCall)
                | (Terminator::Return { .. }, ExitKind::Return)
                | (Terminator::Fallthrough { .. }, ExitKind::Fallthrough)
        );
        (same_exit && ir.end.0 - ir.start.0 == m.guest_len as u64 && ir.guest_insns() == m.insns)
            .then_some(ir)
    }

    fn build(&mut self, req: Request, tables: &mut Tables) {
        let head = req.head;
        if self.heads.contains_key(&head) || self.failed.contains(&head) {
            return;
        }
        let again = req.clone();
        let metas = self.blocks.published();
        let view = View {
            tables,
            metas,
            blocks: &self.blocks,
            heads: &self.heads,
            fragments: &self.fragments,
            gen: self.gen,
            base: self.base,
        };
        let lim = self.cfg.limits;
        let chosen = match &req.path {
            Some(path) if path.first() == Some(&head) => {
                check_path(path, &view, lim).map(|t| shape(&t, &view, lim))
            }
            Some(_) => None,
            None => select(head, &view, lim).map(|t| shape(&t, &view, lim)),
        };
        let Some(chosen) = chosen else {
            self.stats.stale += 1;
            self.failed.insert(head);
            return;
        };
        if chosen.len() == 1 && chosen[0].next == super::Next::Leave {
            // Nothing to gain: one block going nowhere hot.
            self.stats.single_member += 1;
            self.failed.insert(head);
            return;
        }
        let mut members = Vec::with_capacity(chosen.len());
        // Each block read and lifted once (a loop's copies are clones),
        // all read in one system call: every read of guest memory is a
        // process_vm_readv, and one a member read twice was 6 % of the
        // monitor's time in python3 -c pass (AMD EPYC).
        let mut lifted: HashMap<u32, crate::ir::IrBlock> = HashMap::new();
        let mut bytes = super::members::read_blocks(metas, chosen.iter().map(|p| p.block));
        for p in &chosen {
            let ir = match lifted.get(&p.block) {
                Some(ir) => ir.clone(),
                None => {
                    let meta = &metas[p.block as usize];
                    let got = bytes.remove(&p.block).flatten();
                    let Some(ir) = got.and_then(|b| self.lift(meta, &b)) else {
                        self.stats.lift_mismatch += 1;
                        self.failed.insert(head);
                        return;
                    };
                    lifted.insert(p.block, ir.clone());
                    ir
                }
            };
            members.push(Member {
                block: p.block,
                ir,
                next: p.next,
                cold: p.cold,
                alt: p.alt,
            });
        }
        super::members::no_rep_after_ops(&mut members);
        let id = self.next_id;
        let mut plan = Plan::new(id, members);
        if !plan.check() {
            // A cold side the block's branch does not lead to (its ways
            // held something else): a bug of selection, never built.
            self.stats.stale += 1;
            self.failed.insert(head);
            return;
        }
        let units = (plan.exits.len() + plan.members.len()) as u32;
        let Some(unit_base) = tables.next_units(units) else {
            self.stats.units_full += 1;
            return;
        };
        let insns: Vec<u32> = plan.members.iter().map(|m| m.ir.guest_insns()).collect();
        let exits = plan
            .exits
            .iter()
            .map(|x| SbExitAcct {
                member: x.member,
                to_head: x.to == super::ExitTo::Loop,
                to: x.to,
            })
            .collect();
        let mut acc = SbAccount::new(
            plan.members.iter().map(|m| m.block).collect(),
            plan.parents(),
            &insns,
            exits,
            super::pass_ops(&plan),
            unit_base,
        );
        plan.count_loops = self.cfg.limits.count_loops
            && plan.loops_countable(|m| {
                let call = match plan.members[m].ir.term {
                    Terminator::Call { return_to, .. } => Some(return_to.0),
                    _ => None,
                };
                acc.loop_keeps_context(m, call)
            })
            && select::counting_pays(&chosen, &view, lim);
        acc.loops_counted = plan.count_loops;
        let host = self.shared.arena.rx + self.cursor as u64;
        let resolve = |g: u64| self.resolve(g);
        let env = SbEmitEnv {
            host_base: host,
            count_check: self.cfg.count_check,
            resolve: &resolve,
            unit_base,
            loop_limit: self.cfg.limits.loop_limit,
            stubs: self.shared.stubs,
        };
        let em = match emit_superblock(&plan, &env) {
            Ok(em) => em,
            Err(_) => {
                self.stats.emit_errors += 1;
                self.failed.insert(head);
                return;
            }
        };
        let size = em.code.len().next_multiple_of(16);
        if self.cursor + size > self.shared.arena.size {
            self.stats.arena_full += 1;
            return;
        }
        // SAFETY: arena space past the cursor: no code there runs
        // (cache/shared.rs I2).
        if unsafe { self.shared.write_code(host, &em.code) }.is_err() {
            self.stats.emit_errors += 1;
            self.failed.insert(head);
            return;
        }
        let loop_hdr = if plan.count_loops {
            crate::contract::TAG_LOOP | plan.loop_exits().len() as u32
        } else {
            0
        };
        let ids = crate::cache::SbIds {
            id,
            unit_base,
            partial_unit: unit_base + plan.exits.len() as u32,
            loop_hdr,
        };
        if !self
            .shared
            .registry
            .push(self.gen, host, em.code.len() as u32, ids, em.pcs)
        {
            self.stats.registry_full += 1;
            return;
        }
        self.cursor += size;
        self.shared.set_arena_used(self.cursor);
        self.next_id += 1;
        let adoptable = Arc::new(acc.clone());
        crate::monitor::trace::superblock(id, &acc);
        tables.add_superblock(id, acc, metas);
        let Some((head_host, _)) = self.blocks.host(head) else {
            return;
        };
        let mut jmp = [0xccu8; 8];
        jmp[0] = 0xe9;
        let rel = i32::try_from(host as i64 - (head_host as i64 + 5)).expect("rel32 to arena");
        jmp[1..5].copy_from_slice(&rel.to_le_bytes());
        {
            let mut heads = self
                .shared
                .publish
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if self.shared.gen() != self.gen {
                return;
            }
            // SAFETY: the head's code is live in this generation (checked
            // under the lock); I2 makes the store safe under a running
            // thread.
            unsafe {
                let first = std::slice::from_raw_parts(
                    (head_host as i64 - self.shared.arena.rw_delta) as *const u8,
                    8,
                );
                if first != crate::backend::PATCH_NOP {
                    return;
                }
                let original: [u8; 8] = first.try_into().expect("8 bytes");
                if self.shared.patch8(head_host, jmp).is_err() {
                    // Code shared with a forked process that could not be
                    // copied (cache I8): not published.
                    return;
                }
                // A partial flush puts it back (cache/shared.rs I1).
                heads.push(head_host);
                self.published
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(super::Adoptable {
                        id,
                        gen: self.gen,
                        head,
                        sb: InheritedSb {
                            id,
                            units: adoptable.unit_base..adoptable.unit_base + adoptable.units(),
                            head_guest: plan.members[0].ir.start.0,
                        },
                        fragment: plan.members.len() <= FRAGMENT,
                        acc: adoptable,
                    });
                self.review
                    .published(id, head, head_host, original, jmp, self.gen);
            }
        }
        self.unresolved
            .extend(em.unresolved.iter().map(|&(f, g)| (host + f as u64, g)));
        self.heads.insert(head, id);
        self.built.push((id, again));
        if plan.members.len() <= FRAGMENT {
            self.fragments.insert(head);
        }
        self.stats.built += 1;
        let rec = SbRecord {
            id,
            generation: self.gen,
            head: plan.members[0].ir.start.0,
            trigger: req.trigger,
            built_at_seconds: self.started.elapsed().as_secs_f64(),
            built_after_entries: tables.entries,
            members: plan
                .members
                .iter()
                .map(|m| {
                    let meta = &metas[m.block as usize];
                    // The bytes it was lifted from (Builder::lift read
                    // exactly the block's).
                    let code = m.ir.raw.get(..meta.guest_len as usize).unwrap_or_default();
                    MemberRecord {
                        block: m.block,
                        addr: meta.guest,
                        size: meta.guest_len,
                        instructions: meta.insns,
                        code: code.to_vec(),
                    }
                })
                .collect(),
            parents: plan.parents(),
            spine: Some(plan.spine() as u32),
            exits: plan.exits.clone(),
            host,
            host_size: em.code.len() as u32,
            guest_instructions: plan.guest_insns(),
            host_code: em.code,
            ir: IrText::Plan(Arc::new(plan)),
            retired_after_entries: None,
            builds: 1,
            earlier_ids: Vec::new(),
        };
        if let Some(dump) = &self.cfg.dump {
            let text = (dump.render)(&rec);
            let _ = std::fs::write(dump.dir.join(format!("superblock-{id}.txt")), text);
        }
        self.records.keep(rec);
    }

    /// Point direct exits that left to the dispatcher at their target's
    /// code once it exists (cache/shared.rs I1).
    fn link_exits(&mut self) {
        let len = self.blocks.len();
        if self.unresolved.is_empty() || len == self.linked_upto {
            return;
        }
        self.linked_upto = len;
        self.sync();
        let mut now = Vec::new();
        let mut unresolved = std::mem::take(&mut self.unresolved);
        unresolved.retain(|&(field, guest)| {
            let host = self.resolve(guest).map(|(h, _)| h);
            match host {
                // Still explicit: its stub pushes the exit record.
                Some(h) => {
                    now.push((field, h));
                    false
                }
                None => true,
            }
        });
        self.unresolved = unresolved;
        if now.is_empty() {
            return;
        }
        let _g = self
            .shared
            .publish
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if self.shared.gen() != self.gen {
            return;
        }
        for (field, h) in now {
            // SAFETY: an aligned rel32 of live superblock code; a running
            // thread sees the old or the new target (cache I2).
            if unsafe { self.shared.patch_rel32(field, h) }.is_ok() {
                self.stats.exits_linked += 1;
            }
        }
    }
}
