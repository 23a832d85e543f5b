//! The code index: every translated block's host range and pc map, in an
//! append-only array that signal handlers on any thread read without a
//! lock, while the dispatcher holding the translation lock appends.
//!
//! I1: entries below `len` are initialised; an entry is written before
//!     `len` covers it (release) and does not change while `len` covers it,
//!     except at a flush, which happens with every other guest thread out
//!     of translated code (dispatch stop-the-world): then the dropped
//!     entries lose their pc maps and `live_from` moves past them.
//! I2: a reader looks only at entries in `[live_from, len)`, whose host
//!     ranges ascend (code memory is committed in ascending order).
//! I3: only the holder of the translation lock calls the `&self` methods
//!     that write (`push`, `flush`); the type does not check it.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{BlockInfo, PcLocation};
use crate::types::{BlockId, GuestAddr};

/// Translated blocks, indexed by `BlockId` (module docs).
#[derive(Debug)]
pub struct CodeIndex {
    base: *mut BlockInfo,
    cap: usize,
    len: AtomicUsize,
    live_from: AtomicUsize,
}

// SAFETY: the protocol in the module docs decides who touches which entry.
unsafe impl Send for CodeIndex {}
// SAFETY: as above.
unsafe impl Sync for CodeIndex {}

impl CodeIndex {
    pub fn new(cap: usize) -> std::io::Result<CodeIndex> {
        let bytes = cap * std::mem::size_of::<BlockInfo>();
        let p = crate::anon::map(bytes, libc::MAP_NORESERVE)?;
        Ok(CodeIndex {
            base: p as *mut BlockInfo,
            cap,
            len: AtomicUsize::new(0),
            live_from: AtomicUsize::new(0),
        })
    }

    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn live_from(&self) -> usize {
        self.live_from.load(Ordering::Acquire)
    }

    /// Append `info` (I3); its id.
    pub fn push(&self, info: BlockInfo) -> BlockId {
        let n = self.len.load(Ordering::Relaxed);
        assert!(n < self.cap, "more than {} translations", self.cap);
        // SAFETY: n < cap and not yet published (I1).
        unsafe { self.base.add(n).write(info) };
        self.len.store(n + 1, Ordering::Release);
        BlockId(n as u32)
    }

    /// Block `id` (any id below `len`).
    pub fn block(&self, id: BlockId) -> &BlockInfo {
        let n = self.len();
        assert!((id.0 as usize) < n, "block {} not in the index ({n})", id.0);
        // SAFETY: below len: initialised and stable (I1).
        unsafe { &*self.base.add(id.0 as usize) }
    }

    fn live(&self) -> &[BlockInfo] {
        let (from, to) = (self.live_from(), self.len());
        // SAFETY: [live_from, len) is initialised and stable (I1, I2).
        unsafe { std::slice::from_raw_parts(self.base.add(from), to - from) }
    }

    /// Drop every live block's pc map (I1: other threads are out of
    /// translated code; I3).
    pub fn flush(&self) {
        let (from, to) = (self.live_from(), self.len());
        for i in from..to {
            // SAFETY: initialised; no reader looks at it now (I1).
            unsafe {
                let b = &mut *self.base.add(i);
                b.pc_map = Box::new([]);
                b.rep_ring = Box::new([]);
                b.host_len = 0;
            }
        }
        self.live_from.store(to, Ordering::Release);
    }

    /// The live block whose host code contains `pc`, and the guest
    /// instruction there. Async-signal-safe.
    pub fn locate(&self, pc: u64) -> Option<PcLocation> {
        let live = self.live();
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
        let (start, guest): (u32, GuestAddr) = b.pc_map[index];
        Some(PcLocation {
            block: Some(BlockId((self.live_from() + i - 1) as u32)),
            guest,
            exact: start == off,
            after: if b.counted {
                b.insns.saturating_sub(index as u32 + 1)
            } else {
                0
            },
            rep_ring: b.rep_ring.contains(&(index as u32)),
            counted: b.counted,
            term: index + 1 == b.pc_map.len(),
            host_start: b.host.0 + start as u64,
            start_exact: true,
        })
    }
}
