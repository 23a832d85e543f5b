//! The block table the monitor reads: what it needs to know about every
//! `BlockId` (guest address, size, instruction count, how it exits), in a
//! dense array indexed by id, so the per-entry loop never hashes.
//!
//! I1: append-only; an entry is written before `len` is published
//!     (release), and never changes afterwards. The monitor reads only ids
//!     below `len` (acquire). A block runs only after it was published, so
//!     every id found in a ring is below `len`.
//! I2: ids are never reused, also across code-cache flushes; the profile
//!     aggregates by guest address.
//! I3: a block's host address is set once, after its code is committed
//!     and before it runs (release); readers that see it non-zero also see
//!     the generation (cache/shared.rs) the code belongs to, or [`DEAD`]
//!     once a partial flush dropped it (cache/shared.rs I1).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The generation of a block a partial flush dropped (I3).
pub const DEAD: u64 = u64::MAX;

/// How a block ends: the IR's one exit classification.
pub use crate::ir::ExitKind;

/// One block, as published to the monitor.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
#[repr(C)]
pub struct BlockMeta {
    pub guest: u64,
    /// Branch: taken target; Call: callee; Jump/Fallthrough: target.
    pub target: u64,
    /// Branch: fall-through; Call/IndirectCall: return address.
    pub next: u64,
    pub guest_len: u32,
    pub insns: u32,
    pub exit: ExitKind,
}

/// Fixed-capacity, append-only table shared with the monitor (I1).
#[derive(Debug)]
pub struct BlockTable {
    base: *mut BlockMeta,
    /// Per id: host entry address once committed (0 before), and the
    /// code-cache generation it was made in (I3).
    hosts: *mut AtomicU64,
    gens: *mut AtomicU64,
    cap: u32,
    len: AtomicU32,
}

// SAFETY: entries below `len` are immutable (I1); only the single writer
// (the dispatcher, under its own lock once there are threads) appends.
unsafe impl Sync for BlockTable {}
// SAFETY: as above.
unsafe impl Send for BlockTable {}

impl BlockTable {
    /// Reserve room for `cap` blocks (virtual memory only until used).
    pub fn new(cap: u32) -> std::io::Result<BlockTable> {
        let bytes = cap as usize * std::mem::size_of::<BlockMeta>();
        let p = crate::anon::map(bytes, libc::MAP_NORESERVE)?;
        // Zeroed memory is a valid AtomicU64 0.
        let hosts = crate::anon::map(cap as usize * 8, libc::MAP_NORESERVE)?;
        let gens = crate::anon::map(cap as usize * 8, libc::MAP_NORESERVE)?;
        Ok(BlockTable {
            base: p as *mut BlockMeta,
            hosts: hosts as *mut AtomicU64,
            gens: gens as *mut AtomicU64,
            cap,
            len: AtomicU32::new(0),
        })
    }

    /// Append `meta`; its id, or None when the table is full.
    pub fn push(&self, meta: BlockMeta) -> Option<u32> {
        let id = self.len.load(Ordering::Relaxed);
        if id >= self.cap {
            return None;
        }
        // SAFETY: id < cap and not yet published: no reader looks at it.
        unsafe { self.base.add(id as usize).write(meta) };
        self.len.store(id + 1, Ordering::Release);
        Some(id)
    }

    /// Published entries (I1).
    pub fn published(&self) -> &[BlockMeta] {
        let n = self.len.load(Ordering::Acquire);
        // SAFETY: entries below len are initialised and immutable.
        unsafe { std::slice::from_raw_parts(self.base, n as usize) }
    }

    /// Record where block `id`'s code starts, made in generation `gen` (I3).
    pub fn set_host(&self, id: u32, host: u64, gen: u64) {
        assert!(id < self.len(), "host for unpublished block {id}");
        // SAFETY: id < cap; atomics in zeroed memory.
        unsafe {
            (*self.gens.add(id as usize)).store(gen, Ordering::Relaxed);
            (*self.hosts.add(id as usize)).store(host, Ordering::Release);
        }
    }

    /// Host entry and generation of block `id`, once its code exists (I3).
    pub fn host(&self, id: u32) -> Option<(u64, u64)> {
        if id >= self.len() {
            return None;
        }
        // SAFETY: id < cap; atomics in zeroed memory.
        unsafe {
            let h = (*self.hosts.add(id as usize)).load(Ordering::Acquire);
            (h != 0).then(|| (h, (*self.gens.add(id as usize)).load(Ordering::Acquire)))
        }
    }

    /// Block `id`'s code was dropped (I3); before the generation moves
    /// on (cache/shared.rs I1).
    pub fn set_dead(&self, id: u32) {
        if id < self.len() {
            // SAFETY: id < cap; atomics in zeroed memory.
            unsafe { (*self.gens.add(id as usize)).store(DEAD, Ordering::Release) };
        }
    }

    /// Host entry of block `id` if its code may run in generation `gen`,
    /// the last full flush having made generation `base` (cache/shared.rs
    /// I1): made since, and not dropped.
    pub fn live(&self, id: u32, base: u64, gen: u64) -> Option<u64> {
        self.host(id)
            .filter(|&(_, g)| (base..=gen).contains(&g))
            .map(|(h, _)| h)
    }

    pub fn len(&self) -> u32 {
        self.len.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
