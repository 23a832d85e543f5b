//! The code cache: code memory, the block table, exit sites and the
//! indirect-branch lookup table.
//!
//! I1: code memory is one shared anonymous object mapped twice (the
//!     second view by `mremap`, codemem.rs), a read-execute view that runs
//!     (placed within ±2 GiB of the guest image, so RIP-relative operands
//!     re-encode) and a read-write view hotlift writes; no page is ever
//!     writable and executable at once.
//! I2: a patch is one aligned 4-byte store of a rel32 field, so a running
//!     thread sees either the old or the new jump, never half of one.
//! I3: `BlockId`s are dense indices into the [`BlockTable`] and are not
//!     reused within an id epoch (dispatch/epoch.rs): a flush keeps the
//!     entries (without pc maps) and only later ids are live; `by_guest`
//!     maps a guest entry address to its live
//!     block.
//! I4: a thread's lookup table ([`IblTable`], one per thread) holds only
//!     live blocks; after a flush each thread empties its own before it
//!     runs translated code again.
//! I5: [`CodeCache`] is the dispatcher's, behind the translation lock;
//!     [`CodeView`] is what any thread's signal handler may read without
//!     a lock (the block table, the superblock registry, the shared stubs).
//! I6: a thread that left translated code through an exit site may reach
//!     the dispatcher only after another thread flushed: the exit sites of
//!     a flushed generation stay readable until every thread has entered
//!     code of a newer one.
//! I7: code memory is populated ahead of the cursor in 256 KiB steps
//!     (`MADV_POPULATE_WRITE` on the read-write view, `_READ` on the
//!     read-execute one): a page of new code otherwise cost two page faults
//!     (its write, then its first run), about 3,000 of them in a python
//!     start-up.
//! I8: after a fork, parent and child share the code memory both keep
//!     until one of them writes there: every write to code memory first
//!     makes its chunk the writer's own (sharing.rs S1–S3), so no process
//!     runs a link or code another wrote, and a fork copies no code.
//!     A direct exit in a chunk still shared is linked only once it has
//!     gone through the dispatcher [`LINK_SHARED_AFTER`] times
//!     ([`CodeCache::link_due`]): a forked child that runs a few exits
//!     into its new code and exits copies no chunk for them (two 64 KB
//!     chunks a python child before).
#![allow(unsafe_code)]

mod blocks;
mod codemem;
mod drop;
mod ibl;
mod layered;
pub mod shared;
pub mod sharing;

pub use blocks::{BlockCode, BlockMeta, BlockTable, DEAD};
pub use codemem::{CacheError, CodeMem};
pub use ibl::{ibl_hash, IblTable, IBL_ENTRIES};
pub use shared::{Arena, CacheShared, SbIds, SbRegistry};

use crate::ir::{ExitKind, TrapKind};
use crate::types::{BlockId, GuestAddr, HostAddr};

/// Where a host address lies in translated code: the block and the index
/// of the guest instruction (in `pc_map`) whose code holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcLocation {
    /// The block, or None inside a superblock.
    pub block: Option<BlockId>,
    pub guest: GuestAddr,
    /// `pc` is the first host instruction of that guest instruction.
    pub exact: bool,
    /// Counted instructions of its block (or superblock member) after it;
    /// 0 where nothing is counted (the one-instruction restart after a
    /// store into code, superblock glue outside a pass).
    pub after: u32,
    /// It is a `rep` string instruction whose ECX goes to the ring before
    /// and after (backend `Emitted::rep_ring`).
    pub rep_ring: bool,
    /// Its execution was counted.
    pub counted: bool,
    /// It is a block's terminator (its exit's code, where the block's exit
    /// word is pushed; contract).
    pub term: bool,
    /// The first host instruction of the code `pc` lies in, and whether
    /// the guest's machine state is exact there (a guest instruction's
    /// start, not glue): with `exact` false, the host code from there to
    /// `pc` tells what of the guest state moved (backend/recreate.rs).
    pub host_start: u64,
    pub start_exact: bool,
}

/// What an exit site does when reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteKind {
    /// A direct transfer whose rel32 field at `field` can be linked.
    Direct {
        field: HostAddr,
    },
    Syscall,
    Trap(TrapKind),
}

/// A way out of translated code back to the dispatcher.
#[derive(Debug, Clone, Copy)]
pub struct ExitSite {
    pub kind: SiteKind,
    /// Where the guest continues (the trap's own address for traps).
    pub target: GuestAddr,
    /// The guest address and exit of the block it leaves: what that block
    /// was, kept here because a site may be read after an id epoch ended
    /// (dispatch/epoch.rs), when its block's id names another block.
    pub from: GuestAddr,
    pub from_exit: ExitKind,
}

/// What signal handlers read of the code cache, without a lock (I5).
#[derive(Debug)]
pub struct CodeView {
    pub blocks: std::sync::Arc<BlockTable>,
    pub shared: std::sync::Arc<CacheShared>,
    /// Execute range of code memory (blocks, stubs and superblocks).
    pub range: (u64, u64),
    /// First address above the shared stubs.
    pub floor: u64,
    /// Shared stub that leaves with `exit_reason::CODE_WRITE`.
    pub code_write_stub: HostAddr,
    /// Shared stub that leaves with `exit_reason::FATAL_SIGNAL`.
    pub fatal_stub: HostAddr,
    /// Where empty lookup-table entries point (ibl.rs I1).
    pub empty_ibl_stub: HostAddr,
    /// Shared stub that leaves with `exit_reason::KICKED`.
    pub kick_stub: HostAddr,
}

impl CodeView {
    /// The code generation: the number of flushes so far.
    pub fn gen(&self) -> u64 {
        self.shared.gen()
    }

    /// Is `pc` in code memory?
    pub fn contains(&self, pc: u64) -> bool {
        (self.range.0..self.range.1).contains(&pc)
    }

    /// The guest instruction whose code starts exactly at `pc`: there the
    /// machine state is the guest's state before that instruction.
    pub fn guest_pc_exact(&self, pc: u64) -> Option<GuestAddr> {
        self.locate(pc).filter(|l| l.exact).map(|l| l.guest)
    }

    /// The live block or superblock whose host code contains `pc`, and
    /// the guest instruction there (from the pc map). None in a block's
    /// prologue and outside translated code. Async-signal-safe.
    pub fn locate(&self, pc: u64) -> Option<PcLocation> {
        if pc >= self.shared.arena.rx {
            let w = self.shared.registry.find(self.gen(), pc)?;
            let counted = w.pc.member != u16::MAX;
            return Some(PcLocation {
                block: None,
                guest: GuestAddr(w.pc.guest),
                exact: w.pc.exact,
                after: if counted { w.pc.after as u32 } else { 0 },
                rep_ring: w.pc.rep,
                counted,
                term: false,
                host_start: w.start,
                start_exact: w.start_exact,
            });
        }
        self.blocks.locate(pc)
    }

    /// How many of the counted instructions of `loc`'s block come after
    /// the one at `loc` (0 for code that is not counted).
    pub fn counted_after(&self, loc: PcLocation) -> u32 {
        loc.after
    }

    /// The guest instruction whose code holds `pc` (a block's or a
    /// superblock's), for fault reports; async-signal-safe.
    pub fn guest_at(&self, pc: u64) -> Option<GuestAddr> {
        self.locate(pc).map(|l| l.guest)
    }

    pub fn block(&self, id: BlockId) -> &BlockCode {
        self.blocks.code(id)
    }
}

/// Everything translated, and where it lives (behind the translation
/// lock, I5).
#[derive(Debug)]
pub struct CodeCache {
    pub mem: CodeMem,
    pub by_guest: layered::Layered<GuestAddr, BlockId>,
    pub sites: Vec<ExitSite>,
    /// Guest pages (address >> 12) holding translated code.
    pub code_pages: layered::Layered<u64, ()>,
    pub flushes: u64,
    pub view: std::sync::Arc<CodeView>,
    /// Exit sites of flushed generations that a thread may still have
    /// left through (I6): the generations `.0 ..= .1` had the sites `.2`.
    retired_sites: Vec<(u64, u64, Vec<ExitSite>)>,
    /// The generation `sites` began in: a partial flush (drop.rs) keeps
    /// them, a full one starts them again.
    sites_from: u64,
    /// The listed blocks on each guest page (drop.rs; stale ids too).
    page_blocks: drop::Appended<u64, BlockId>,
    /// The direct exits linked to each block since the last full flush:
    /// (rel32 field, where it pointed before), to unlink (drop.rs).
    links_in: drop::Appended<u32, (HostAddr, HostAddr)>,
    /// Dispatcher passes of direct exits whose rel32 field lies in code
    /// memory still shared with a forked process (I8), by field.
    shared_passes: hashbrown::HashMap<u64, u32>,
}

/// Dispatcher passes after which a direct exit in shared code memory is
/// linked, its chunk copied (I8): a chunk's copy costs about what 100
/// passes do.
pub const LINK_SHARED_AFTER: u32 = 32;

impl CodeCache {
    pub fn new(mem: CodeMem, view: std::sync::Arc<CodeView>) -> CodeCache {
        CodeCache {
            mem,
            by_guest: Default::default(),
            sites: Vec::new(),
            code_pages: Default::default(),
            flushes: 0,
            view,
            retired_sites: Vec::new(),
            sites_from: 0,
            page_blocks: Default::default(),
            links_in: Default::default(),
            shared_passes: Default::default(),
        }
    }

    /// Should the direct exit whose rel32 field is `field`, which has just
    /// gone through the dispatcher, be linked now (I8)? Always where its
    /// code is this process's own; in code shared with a forked process,
    /// at its [`LINK_SHARED_AFTER`]th pass.
    pub fn link_due(&mut self, field: HostAddr) -> bool {
        if !self.mem.shares(field) {
            return true;
        }
        let n = self.shared_passes.entry(field.0).or_insert(0);
        *n += 1;
        if *n < LINK_SHARED_AFTER {
            return false;
        }
        self.shared_passes.remove(&field.0);
        true
    }

    /// Exit site `id` of code generation `gen` (I6).
    pub fn site(&self, gen: u64, id: u32) -> ExitSite {
        let sites = if (self.sites_from..=self.flushes).contains(&gen) {
            &self.sites
        } else {
            &self
                .retired_sites
                .iter()
                .find(|(from, to, _)| (*from..=*to).contains(&gen))
                .unwrap_or_else(|| panic!("exit sites of generation {gen} were dropped (I6)"))
                .2
        };
        sites[id as usize]
    }

    pub fn lookup(&self, addr: GuestAddr) -> Option<BlockId> {
        self.by_guest.get(&addr)
    }

    pub fn block(&self, id: BlockId) -> &BlockCode {
        self.view.blocks.code(id)
    }

    /// What block `id` is (its guest address, size, exit).
    pub fn meta(&self, id: BlockId) -> BlockMeta {
        self.view.blocks.published()[id.0 as usize]
    }

    /// Record the code of the block reserved last (I3) and make it the
    /// block for its guest address.
    pub fn insert(&mut self, code: BlockCode) -> BlockId {
        let id = self.view.blocks.commit(code);
        let m = self.meta(id);
        let first = m.guest >> 12;
        let last = (m.guest + m.guest_len.max(1) as u64 - 1) >> 12;
        let guest = GuestAddr(m.guest);
        for p in first..=last {
            self.code_pages.insert(p, ());
            self.page_blocks.push(p, id);
        }
        self.by_guest.insert(guest, id);
        id
    }

    /// Record a block that runs once and is never looked up (it keeps its
    /// id so its exit sites and pc map work).
    pub fn insert_unlisted(&mut self, code: BlockCode) -> BlockId {
        self.view.blocks.commit(code)
    }

    /// Does any translated code lie in guest range [start, end)?
    pub fn has_code_in(&self, start: u64, end: u64) -> bool {
        if end <= start {
            return false;
        }
        let (a, b) = (start >> 12, (end - 1) >> 12);
        if b - a > self.code_pages.len() as u64 {
            return self.code_pages.keys().any(|p| (a..=b).contains(p));
        }
        (a..=b).any(|p| self.code_pages.contains_key(&p))
    }

    /// In a forked child: the guest-address maps it inherited are only
    /// read from here on (layered.rs L1).
    pub fn forked(&mut self) {
        self.by_guest.forked();
        self.code_pages.forked();
    }

    /// Drop every translation (I3, I4). Only call when no other thread
    /// runs translated code (dispatch stop-the-world); `oldest` is the
    /// oldest generation a thread may still have left from (I6).
    pub fn flush(&mut self, oldest: u64) {
        // First, so the monitor patches nothing in memory being reset
        // (shared.rs I1): superblocks go with everything they link to.
        self.view.shared.bump_gen();
        self.view.blocks.flush();
        self.by_guest.clear();
        let sites = std::mem::take(&mut self.sites);
        self.retired_sites.retain(|(_, to, _)| *to >= oldest);
        if oldest <= self.flushes {
            self.retired_sites
                .push((self.sites_from, self.flushes, sites));
        }
        self.sites_from = self.flushes + 1;
        self.page_blocks.clear();
        self.links_in.clear();
        self.code_pages.clear();
        self.mem.reset();
        self.flushes += 1;
        debug_assert_eq!(self.view.shared.gen(), self.flushes);
    }
}
