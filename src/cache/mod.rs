//! The code cache: code memory, the block table, exit sites and the
//! indirect-branch lookup table.
//!
//! I1: code memory is one memfd mapped twice, a read-execute view that runs
//!     (placed within ±2 GiB of the guest image, so RIP-relative operands
//!     re-encode) and a read-write view hotlift writes; no page is ever
//!     writable and executable at once.
//! I2: a patch is one aligned 4-byte store of a rel32 field, so a running
//!     thread sees either the old or the new jump, never half of one.
//! I3: `BlockId`s are dense indices into `blocks` and are never reused: a
//!     flush keeps the entries (without code) and only later ids are live;
//!     `by_guest` maps a guest entry address to its live block.
//! I4: the lookup table ([`IblTable`]) holds only blocks that are in
//!     `blocks`; a flush empties both.
#![allow(unsafe_code)]

mod codemem;
mod ibl;
pub mod shared;

pub use codemem::{CacheError, CodeMem};
pub use ibl::{ibl_hash, IblTable, IBL_ENTRIES};
pub use shared::{Arena, CacheShared, SbPc, SbRegistry};

use hashbrown::HashMap;

use crate::ir::{ExitClass, TrapKind};
use crate::types::{BlockId, GuestAddr, HostAddr};

/// A translated block.
#[derive(Debug, Clone)]
pub struct BlockInfo {
    pub guest: GuestAddr,
    pub guest_len: u32,
    pub insns: u32,
    pub host: HostAddr,
    pub host_len: u32,
    pub class: ExitClass,
    /// Host offset (from `host`) of each guest instruction's code, ascending.
    pub pc_map: Box<[(u32, GuestAddr)]>,
    /// Its executions are counted (false only for the one-instruction
    /// restart after a store into code, which its original block counted).
    pub counted: bool,
    /// `pc_map` indices of the `rep` string instructions that push ECX to
    /// the ring before and after (backend `Emitted::rep_ring`).
    pub rep_ring: Box<[u32]>,
}

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
    pub from: BlockId,
}

/// Everything translated, and where it lives.
#[derive(Debug)]
pub struct CodeCache {
    pub mem: CodeMem,
    pub blocks: Vec<BlockInfo>,
    pub by_guest: HashMap<GuestAddr, BlockId>,
    pub sites: Vec<ExitSite>,
    pub ibl: IblTable,
    /// Guest pages (address >> 12) holding translated code.
    pub code_pages: hashbrown::HashSet<u64>,
    pub flushes: u64,
    /// Blocks below this index were flushed (their ids stay taken).
    pub live_from: usize,
    /// Shared stub that leaves with `exit_reason::CODE_WRITE`.
    pub code_write_stub: HostAddr,
    /// Shared stub that leaves with `exit_reason::FATAL_SIGNAL`.
    pub fatal_stub: HostAddr,
    /// What the monitor shares: generation, superblock arena and registry.
    pub shared: std::sync::Arc<CacheShared>,
}

impl CodeCache {
    pub fn new(mem: CodeMem, ibl: IblTable, shared: std::sync::Arc<CacheShared>) -> CodeCache {
        CodeCache {
            mem,
            blocks: Vec::new(),
            by_guest: HashMap::new(),
            sites: Vec::new(),
            ibl,
            code_pages: hashbrown::HashSet::new(),
            flushes: 0,
            live_from: 0,
            code_write_stub: HostAddr(0),
            fatal_stub: HostAddr(0),
            shared,
        }
    }

    pub fn lookup(&self, addr: GuestAddr) -> Option<BlockId> {
        self.by_guest.get(&addr).copied()
    }

    pub fn block(&self, id: BlockId) -> &BlockInfo {
        &self.blocks[id.0 as usize]
    }

    /// Record a committed block (I3) and make it reachable by indirect
    /// lookups when `indirect` is set.
    pub fn insert(&mut self, info: BlockInfo, indirect: bool) -> BlockId {
        let id = BlockId(self.blocks.len() as u32);
        let first = info.guest.0 >> 12;
        let last = (info.guest.0 + info.guest_len.max(1) as u64 - 1) >> 12;
        for p in first..=last {
            self.code_pages.insert(p);
        }
        if indirect {
            self.ibl.insert(info.guest, info.host);
        }
        self.by_guest.insert(info.guest, id);
        self.blocks.push(info);
        id
    }

    /// Record a block that runs once and is never looked up (it keeps its
    /// id so its exit sites and pc map work).
    pub fn insert_unlisted(&mut self, info: BlockInfo) -> BlockId {
        let id = BlockId(self.blocks.len() as u32);
        self.blocks.push(info);
        id
    }

    /// The guest instruction whose code starts exactly at `pc`: there the
    /// machine state is the guest's state before that instruction.
    pub fn guest_pc_exact(&self, pc: u64) -> Option<GuestAddr> {
        self.locate(pc).filter(|l| l.exact).map(|l| l.guest)
    }

    /// The live block whose host code contains `pc`, and the guest
    /// instruction there (from the pc map). None in a block's prologue
    /// and outside translated blocks.
    pub fn locate(&self, pc: u64) -> Option<PcLocation> {
        if pc >= self.shared.arena.rx {
            let w = self.shared.registry.find(self.flushes, pc)?;
            let counted = w.pc.member != u16::MAX;
            return Some(PcLocation {
                block: None,
                guest: GuestAddr(w.pc.guest),
                exact: w.pc.exact,
                after: if counted { w.pc.after as u32 } else { 0 },
                rep_ring: w.pc.rep,
                counted,
            });
        }
        // Live blocks are committed in ascending host order.
        let live = &self.blocks[self.live_from..];
        let i = live.partition_point(|b| b.host.0 <= pc);
        let b = live.get(i.checked_sub(1)?)?;
        if pc >= b.host.0 + b.host_len as u64 {
            return None;
        }
        let off = (pc - b.host.0) as u32;
        let index = b
            .pc_map
            .partition_point(|&(o, _)| o <= off)
            .checked_sub(1)?;
        let (start, guest) = b.pc_map[index];
        Some(PcLocation {
            block: Some(BlockId((self.live_from + i - 1) as u32)),
            guest,
            exact: start == off,
            after: if b.counted {
                b.insns.saturating_sub(index as u32 + 1)
            } else {
                0
            },
            rep_ring: b.rep_ring.contains(&(index as u32)),
            counted: b.counted,
        })
    }

    /// How many of the counted instructions of `loc`'s block come after
    /// the one at `loc` (0 for code that is not counted).
    pub fn counted_after(&self, loc: PcLocation) -> u32 {
        loc.after
    }

    /// Does any translated code lie in guest range [start, end)?
    pub fn has_code_in(&self, start: u64, end: u64) -> bool {
        if end <= start {
            return false;
        }
        let (a, b) = (start >> 12, (end - 1) >> 12);
        if b - a > self.code_pages.len() as u64 {
            return self.code_pages.iter().any(|p| (a..=b).contains(p));
        }
        (a..=b).any(|p| self.code_pages.contains(&p))
    }

    /// Drop every translation (I4). Only call when no thread runs
    /// translated code.
    pub fn flush(&mut self) {
        // First, so the monitor patches nothing in memory being reset
        // (shared.rs I1): superblocks go with everything they link to.
        self.shared.bump_gen();
        // I3: ids are never reused; the dropped blocks' host code is gone.
        for b in &mut self.blocks[self.live_from..] {
            b.pc_map = Box::new([]);
            b.host_len = 0;
        }
        self.live_from = self.blocks.len();
        self.by_guest.clear();
        self.sites.clear();
        self.code_pages.clear();
        self.ibl.clear();
        self.mem.reset();
        self.flushes += 1;
        debug_assert_eq!(self.shared.gen(), self.flushes);
    }

    /// The guest instruction whose code holds `pc` (a block's or a
    /// superblock's), for fault reports; async-signal-safe.
    pub fn guest_at(&self, pc: u64) -> Option<GuestAddr> {
        self.locate(pc).map(|l| l.guest)
    }
}
