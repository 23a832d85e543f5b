//! The block table: every block ever translated, by `BlockId`, in
//! append-only arrays that the dispatcher (holding the translation lock)
//! appends to and every other reader takes without a lock: the monitor
//! (what a block is: guest address, size, instructions, how it exits, in a
//! dense array so the per-entry loop never hashes), signal handlers on any
//! thread (where its code lies and its pc map), the superblock builder
//! (whether its code may be linked to), and the profile (every
//! translation's host range, for perf maps).
//!
//! I1: a block's id is reserved with its [`BlockMeta`] ([`BlockTable::
//!     reserve`]) before its code is emitted (the code carries the id), and
//!     its code's record ([`BlockCode`]) is committed
//!     ([`BlockTable::commit`]) before the next id is reserved. An entry
//!     is written before the length that covers it is published
//!     (release); a reader looks only below a length it loaded (acquire).
//! I2: a block's meta never changes. Its code's record does not change
//!     while it is live, except at a flush, which happens with every other
//!     guest thread out of translated code (dispatch stop-the-world): then
//!     the live blocks lose their pc maps and `live_from` moves past them.
//!     Signal handlers look only at code records in `[live_from, coded)`,
//!     whose host ranges ascend (code memory is committed in ascending
//!     order).
//! I3: ids are not reused across code-cache flushes (the profile
//!     aggregates by guest address), only at the end of an id epoch
//!     ([`BlockTable::new_epoch`], dispatch/epoch.rs E2): every thread out
//!     of translated code, every translation dropped, the monitor past
//!     every word naming an old id (monitor/tables/epoch.rs I1).
//! I4: a block's linkable host address is set once, after its code is
//!     committed and before it runs (release); readers that see it
//!     non-zero also see the generation (cache/shared.rs) the code belongs
//!     to, or [`DEAD`] once a partial flush dropped it (cache/shared.rs
//!     I1). Code that may not be linked to (inside a path-profiled
//!     function) has none.
//! I5: only the holder of the translation lock calls the `&self` methods
//!     that write (`reserve`, `commit`, `set_host`, `set_dead`, `flush`,
//!     `new_epoch`); the type does not check it.
//! I6: a block's sequence number is its id plus the ids of the ended
//!     epochs ([`BlockTable::seq`]): it orders blocks over the whole run
//!     (images.rs I2).
//! I7: `new_epoch` sets the length to 0 before it moves the base on, so a
//!     reader on another thread (the superblock builder) that sees the
//!     new base sees the new epoch's blocks only: it forgets what it
//!     knew by id when the base moves.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::PcLocation;
use crate::ir::ExitKind;
use crate::types::{BlockId, GuestAddr, HostAddr};

/// The generation of a block a partial flush dropped (I4).
pub const DEAD: u64 = u64::MAX;

/// What a block is, as the monitor reads it (I2: never changes).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
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

/// Where a block's code lies (I1, I2).
#[derive(Debug, Clone)]
pub struct BlockCode {
    pub host: HostAddr,
    pub host_len: u32,
    /// Host offset (from `host`) of each guest instruction's code, ascending.
    pub pc_map: Box<[(u32, GuestAddr)]>,
    /// Its executions are counted (false only for the one-instruction
    /// restart after a store into code, which its original block counted,
    /// and for path profiling's stubs).
    pub counted: bool,
    /// `pc_map` indices of the `rep` string instructions that push ECX to
    /// the ring before and after (backend `Emitted::rep_ring`).
    pub rep_ring: Box<[u32]>,
}

/// A bit per block id, in memory that is made only where touched.
#[derive(Debug)]
struct IdBits {
    words: *mut AtomicU64,
    cap: u32,
}

impl IdBits {
    fn new(cap: u32) -> std::io::Result<IdBits> {
        let bytes = (cap as usize).div_ceil(64) * 8;
        Ok(IdBits {
            words: crate::anon::map(bytes, libc::MAP_NORESERVE)? as *mut AtomicU64,
            cap,
        })
    }

    fn set(&self, id: u32) {
        if id < self.cap {
            // SAFETY: id < cap: inside the mapping (zeroed: valid atomics).
            unsafe {
                (*self.words.add(id as usize / 64)).fetch_or(1 << (id % 64), Ordering::Relaxed)
            };
        }
    }

    fn get(&self, id: u32) -> bool {
        // SAFETY: as in `set`.
        id < self.cap
            && unsafe { (*self.words.add(id as usize / 64)).load(Ordering::Relaxed) }
                & 1 << (id % 64)
                != 0
    }

    /// Every bit below `n` cleared.
    fn clear_below(&self, n: u32) {
        for w in 0..(n.min(self.cap) as usize).div_ceil(64) {
            // SAFETY: w < cap / 64 rounded up: inside the mapping.
            unsafe { (*self.words.add(w)).store(0, Ordering::Relaxed) };
        }
    }
}

/// Every translated block, by id (module docs).
#[derive(Debug)]
pub struct BlockTable {
    metas: *mut BlockMeta,
    codes: *mut BlockCode,
    /// Per id: linkable host entry address (0 before, I4), and the
    /// code-cache generation it was made in.
    hosts: *mut AtomicU64,
    gens: *mut AtomicU64,
    cap: u32,
    /// Ids reserved (metas written).
    len: AtomicU32,
    /// Code records committed (I1: `len` or `len - 1`).
    coded: AtomicU32,
    /// The first live code record (I2).
    live_from: AtomicU32,
    /// Ids the ended epochs used (I6).
    base: AtomicU64,
    /// A bit per id of this epoch: the monitor met the block (it ran).
    ran: IdBits,
    /// A bit per id of this epoch: placed with a plan (dispatch/kept/ K6):
    /// a plain block, counted, that the monitor may make ahead
    /// (monitor/tables/ahead.rs A2).
    planned: IdBits,
    /// The monitor took in every word pushed before the process's end:
    /// `ran` holds every block that ran.
    ran_complete: std::sync::atomic::AtomicBool,
}

// SAFETY: the protocol in the module docs decides who touches which entry.
unsafe impl Send for BlockTable {}
// SAFETY: as above.
unsafe impl Sync for BlockTable {}

impl BlockTable {
    /// Reserve room for `cap` blocks (virtual memory only until used).
    pub fn new(cap: u32) -> std::io::Result<BlockTable> {
        let map = |size: usize| crate::anon::map(cap as usize * size, libc::MAP_NORESERVE);
        // Zeroed memory is a valid AtomicU64 0.
        Ok(BlockTable {
            metas: map(std::mem::size_of::<BlockMeta>())? as *mut BlockMeta,
            codes: map(std::mem::size_of::<BlockCode>())? as *mut BlockCode,
            hosts: map(8)? as *mut AtomicU64,
            gens: map(8)? as *mut AtomicU64,
            cap,
            len: AtomicU32::new(0),
            coded: AtomicU32::new(0),
            live_from: AtomicU32::new(0),
            base: AtomicU64::new(0),
            ran: IdBits::new(cap)?,
            planned: IdBits::new(cap)?,
            ran_complete: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Reserve the next id for a block described by `meta` (I1, I5); None
    /// when the table is full.
    pub fn reserve(&self, meta: BlockMeta) -> Option<u32> {
        let id = self.len.load(Ordering::Relaxed);
        assert_eq!(
            id,
            self.coded.load(Ordering::Relaxed),
            "block {id}'s id reserved before the last block's code was committed"
        );
        if id >= self.cap {
            return None;
        }
        // SAFETY: id < cap and not yet published: no reader looks at it.
        unsafe { self.metas.add(id as usize).write(meta) };
        self.len.store(id + 1, Ordering::Release);
        Some(id)
    }

    /// The code of the block reserved last (I1, I5); its id.
    pub fn commit(&self, code: BlockCode) -> BlockId {
        let id = self.coded.load(Ordering::Relaxed);
        assert!(
            id < self.len.load(Ordering::Relaxed),
            "code committed for block {id}, whose id was not reserved"
        );
        // SAFETY: id < len <= cap, not yet published (I1).
        unsafe { self.codes.add(id as usize).write(code) };
        self.coded.store(id + 1, Ordering::Release);
        BlockId(id)
    }

    /// Append a block known only by its meta, with no code: a replay of
    /// the monitor's record (monitor/trace.rs), tests of the monitor.
    pub fn push_meta(&self, meta: BlockMeta) -> Option<u32> {
        let id = self.reserve(meta)?;
        self.commit(BlockCode {
            host: HostAddr(0),
            host_len: 0,
            pc_map: Box::new([]),
            counted: false,
            rep_ring: Box::new([]),
        });
        Some(id)
    }

    /// Blocks whose code is committed: the id of the next code record
    /// (I1: the block reserved last, until its code is committed).
    pub fn coded(&self) -> u32 {
        self.coded.load(Ordering::Acquire)
    }

    /// Ids reserved so far.
    pub fn len(&self) -> u32 {
        self.len.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sequence numbers given so far (I6): the next block's.
    pub fn seq(&self) -> u64 {
        self.base.load(Ordering::Acquire) + u64::from(self.len())
    }

    /// The sequence number of id 0 of this epoch (I6).
    pub fn epoch_base(&self) -> u64 {
        self.base.load(Ordering::Acquire)
    }

    /// End the id epoch (I3, I5): ids start from 0 again. Every code
    /// record was flushed before ([`BlockTable::flush`]: no reader looks
    /// at them).
    pub fn new_epoch(&self) {
        let (n, coded) = (self.len(), self.coded());
        // Readers take [live_from, coded): empty from the first store on.
        self.live_from.store(coded, Ordering::Release);
        self.coded.store(0, Ordering::Release);
        self.live_from.store(0, Ordering::Release);
        self.ran.clear_below(n);
        self.planned.clear_below(n);
        for i in 0..n as usize {
            // SAFETY: i < len <= cap; no reader looks at old ids (I3).
            unsafe {
                (*self.hosts.add(i)).store(0, Ordering::Relaxed);
                (*self.gens.add(i)).store(0, Ordering::Relaxed);
                if i < coded as usize {
                    std::ptr::drop_in_place(self.codes.add(i));
                }
            }
        }
        // I7: the length first, then the base.
        self.len.store(0, Ordering::Release);
        self.base.fetch_add(u64::from(n), Ordering::AcqRel);
    }

    /// Block `id` of this epoch ran (the monitor's count at the end).
    pub fn set_ran(&self, id: u32) {
        self.ran.set(id);
    }

    /// Did block `id` of this epoch run (complete once
    /// [`Self::ran_complete`])?
    pub fn ran(&self, id: u32) -> bool {
        self.ran.get(id)
    }

    /// Block `id` of this epoch was placed with a plan.
    pub fn set_planned(&self, id: u32) {
        self.planned.set(id);
    }

    pub fn planned(&self, id: u32) -> bool {
        self.planned.get(id)
    }

    /// The monitor drained every ring at the process's end: [`Self::ran`]
    /// is complete.
    pub fn set_ran_complete(&self) {
        self.ran_complete.store(true, Ordering::Release);
    }

    pub fn ran_complete(&self) -> bool {
        self.ran_complete.load(Ordering::Acquire)
    }

    /// Reserved blocks' metas (I1, I2).
    pub fn published(&self) -> &[BlockMeta] {
        let n = self.len();
        // SAFETY: entries below len are initialised and immutable (I2).
        unsafe { std::slice::from_raw_parts(self.metas, n as usize) }
    }

    /// The code record of committed block `id`.
    pub fn code(&self, id: BlockId) -> &BlockCode {
        let n = self.coded.load(Ordering::Acquire);
        assert!(id.0 < n, "block {} has no code in the table ({n})", id.0);
        // SAFETY: below coded: initialised; stable while the caller holds
        // the translation lock or the block is live (I2).
        unsafe { &*self.codes.add(id.0 as usize) }
    }

    /// Committed block `id`'s translation: (host address, host size,
    /// guest address). Its host code begins at its indirect entry
    /// (contract I4), so a perf sample there is named too. A flushed
    /// block keeps its translation (I2: only its pc map goes).
    pub fn translation(&self, id: BlockId) -> Option<(u64, u32, u64)> {
        if id.0 >= self.coded() {
            return None;
        }
        let back = crate::contract::INDIRECT_ENTRY_BACK;
        // SAFETY: below coded: initialised; host and host_len never
        // change (I2: a flush, which a thread that stopped for good may
        // have left half done, writes only the other fields), nor does
        // the meta. Read field by field: no reference to the record.
        let (host, len, guest) = unsafe {
            let c = self.codes.add(id.0 as usize);
            (
                std::ptr::addr_of!((*c).host).read(),
                std::ptr::addr_of!((*c).host_len).read(),
                (*self.metas.add(id.0 as usize)).guest,
            )
        };
        // No code: a block known by its meta only (`push_meta`).
        (len > 0).then(|| (host.0 - back, len + back as u32, guest))
    }

    /// Record where block `id`'s code may be linked to, made in generation
    /// `gen` (I4).
    pub fn set_host(&self, id: u32, host: u64, gen: u64) {
        assert!(id < self.len(), "host for unpublished block {id}");
        // SAFETY: id < cap; atomics in zeroed memory.
        unsafe {
            (*self.gens.add(id as usize)).store(gen, Ordering::Relaxed);
            (*self.hosts.add(id as usize)).store(host, Ordering::Release);
        }
    }

    /// Linkable host entry and generation of block `id`, once set (I4).
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

    /// Block `id`'s code was dropped (I4); before the generation moves
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

    /// Drop every live block's pc map (I2: other threads are out of
    /// translated code; I5).
    pub fn flush(&self) {
        let (from, to) = (self.live_from(), self.coded.load(Ordering::Acquire));
        for i in from..to {
            // SAFETY: initialised; no reader looks at these fields now
            // (I2).
            unsafe {
                let b = self.codes.add(i as usize);
                *std::ptr::addr_of_mut!((*b).pc_map) = Box::new([]);
                *std::ptr::addr_of_mut!((*b).rep_ring) = Box::new([]);
            }
        }
        self.live_from.store(to, Ordering::Release);
    }

    fn live_from(&self) -> u32 {
        self.live_from.load(Ordering::Acquire)
    }

    /// The live code records (I2).
    fn live_codes(&self) -> &[BlockCode] {
        let (from, to) = (self.live_from(), self.coded.load(Ordering::Acquire));
        // An epoch ending (`new_epoch`) may show coded below live_from:
        // nothing live.
        let to = to.max(from);
        // SAFETY: [live_from, coded) is initialised and stable (I2).
        unsafe { std::slice::from_raw_parts(self.codes.add(from as usize), (to - from) as usize) }
    }

    /// The live block whose host code contains `pc`, and the guest
    /// instruction there. Async-signal-safe.
    pub fn locate(&self, pc: u64) -> Option<PcLocation> {
        let from = self.live_from();
        let live = self.live_codes();
        let i = live.partition_point(|b| b.host.0 <= pc);
        let b = live.get(i.checked_sub(1)?)?;
        if pc >= b.host.0 + b.host_len as u64 {
            return None;
        }
        let id = from + i as u32 - 1;
        let off = (pc - b.host.0) as u32;
        let index = b
            .pc_map
            .partition_point(|&(o, _)| o <= off)
            .checked_sub(1)?;
        let (start, guest): (u32, GuestAddr) = b.pc_map[index];
        // SAFETY: id < coded <= len: its meta is initialised (I1, I2).
        let insns = unsafe { (*self.metas.add(id as usize)).insns };
        Some(PcLocation {
            block: Some(BlockId(id)),
            guest,
            exact: start == off,
            after: if b.counted {
                insns.saturating_sub(index as u32 + 1)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(guest: u64, insns: u32) -> BlockMeta {
        BlockMeta {
            guest,
            insns,
            ..Default::default()
        }
    }

    fn code(host: u64, len: u32, counted: bool) -> BlockCode {
        BlockCode {
            host: HostAddr(host),
            host_len: len,
            // Three guest instructions at host offsets 0, 4 and 9.
            pc_map: vec![
                (0, GuestAddr(0x10)),
                (4, GuestAddr(0x12)),
                (9, GuestAddr(0x15)),
            ]
            .into_boxed_slice(),
            counted,
            rep_ring: Box::new([1]),
        }
    }

    #[test]
    fn one_id_for_what_a_block_is_and_where_its_code_lies() {
        let t = BlockTable::new(8).unwrap();
        assert_eq!(t.reserve(meta(0x10, 3)), Some(0));
        // Reserved, not committed: the monitor sees it, signal handlers
        // and the profile's translations do not.
        assert_eq!(t.published().len(), 1);
        assert_eq!(t.coded(), 0);
        assert_eq!(t.translation(BlockId(0)), None);
        assert_eq!(t.commit(code(0x1000, 16, true)), BlockId(0));
        assert_eq!(t.reserve(meta(0x30, 3)), Some(1));
        assert_eq!(t.commit(code(0x1040, 16, false)), BlockId(1));

        let l = t.locate(0x1004 + 2).unwrap();
        assert_eq!(l.block, Some(BlockId(0)));
        assert_eq!((l.guest, l.exact, l.after), (GuestAddr(0x12), false, 1));
        assert!(l.rep_ring && l.counted && !l.term);
        let l = t.locate(0x1049).unwrap();
        assert_eq!((l.block, l.exact, l.term), (Some(BlockId(1)), true, true));
        assert_eq!(l.after, 0, "an uncounted block has nothing after");
        assert_eq!(t.locate(0x1010), None, "between the two blocks");

        let back = crate::contract::INDIRECT_ENTRY_BACK;
        let want = Some((0x1040 - back, 16 + back as u32, 0x30));
        assert_eq!(t.translation(BlockId(1)), want);
        // A flush takes the pc maps: nothing is found by host address,
        // and the translations (perf maps of the whole run) stay.
        t.set_host(1, 0x1040, 0);
        t.flush();
        assert_eq!(t.locate(0x1004), None);
        assert_eq!(t.translation(BlockId(1)), want);
        assert_eq!(t.host(1), Some((0x1040, 0)), "the builder's view stays");
        assert_eq!(t.reserve(meta(0x50, 1)), Some(2));
        t.commit(code(0x2000, 16, true));
        assert_eq!(t.locate(0x2000).and_then(|l| l.block), Some(BlockId(2)));
    }

    #[test]
    #[should_panic(expected = "before the last block's code was committed")]
    fn a_reserved_id_gets_its_code_before_the_next() {
        let t = BlockTable::new(8).unwrap();
        t.reserve(meta(0x10, 1));
        t.reserve(meta(0x20, 1));
    }

    #[test]
    fn a_full_table_reserves_nothing() {
        let t = BlockTable::new(1).unwrap();
        assert_eq!(t.push_meta(meta(0x10, 1)), Some(0));
        assert_eq!(t.push_meta(meta(0x20, 1)), None);
    }
}
