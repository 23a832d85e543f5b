//! The per-unit slots the per-entry loop reads and writes: one cache line
//! per ring word value, in one table indexed by the word itself, so that a
//! block and a superblock unit cost the loop exactly the same (no branch
//! on which it is).
//!
//! I1: the table is one `MAP_NORESERVE` mapping of [`CAPACITY`] slots:
//!     block ids below `UNIT_BASE`, superblock units from `UNIT_BASE` on;
//!     only the slots in use take memory.
//! I2: a slot is read only after it was initialised: block slots up to
//!     `Tables::block_hw` (grown from the block table), unit slots up to
//!     `Tables::unit_hw` (made when the superblock is added, before its
//!     code can run: superblock/mod.rs I2).
#![allow(unsafe_code)]

use super::super::{BlockMeta, ExitKind, UNIT_BASE, UNIT_LIMIT};
use super::SbConfig;

/// No block (an empty way, no previous unit).
pub(super) const NONE: u32 = u32::MAX;
/// `Slot::flags`: the unit ends with a call / a return / an indirect
/// transfer (returns and indirect calls too).
pub(super) const F_CALL: u8 = 1;
pub(super) const F_RETURN: u8 = 2;
pub(super) const F_INDIRECT: u8 = 4;
/// Flags that need `call_or_return`.
pub(super) const F_SHADOW: u8 = F_CALL | F_RETURN;
/// A superblock unit (not a block).
pub(super) const F_UNIT: u8 = 8;
/// A superblock unit whose path has calls or returns between members
/// (replayed when it arrives, units.rs I1).
pub(super) const F_OPS: u8 = 16;

/// Slots in the table: every block id and every unit id (I1).
pub(super) const CAPACITY: usize = (UNIT_BASE + UNIT_LIMIT) as usize;

/// `Slot::size`: instructions in the low bits, blocks above.
pub(super) const INSNS_MASK: u32 = (1 << 24) - 1;
pub(super) const BLOCKS_SHIFT: u32 = 24;

/// What the per-entry loop keeps per unit: one cache line.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Slot {
    pub count: u64,
    /// Transitions to each way's successor.
    pub way_n: [u64; 2],
    /// Successors seen, by their first block (NONE = free).
    pub way: [u32; 2],
    /// Call units: the return address pushed.
    pub ret: u64,
    /// The unit's first block (the block itself, or a superblock's head).
    pub first: u32,
    /// Instructions of the unit, and its blocks << BLOCKS_SHIFT.
    pub size: u32,
    /// Ask for a superblock here when `count` reaches this (u32::MAX: no).
    pub trigger: u32,
    /// Indirect units: ask for one at a successor when a way's count
    /// reaches this.
    pub way_trigger: u32,
    pub flags: u8,
    /// `F_OPS` units: how many calls and returns the path has, from
    /// `Tables::unit_ops[ops_at]` on (units.rs I1).
    pub ops_n: u16,
    pub ops_at: u32,
}

/// The flags of a unit that ends the way block `m` does.
pub(super) fn exit_flags(m: &BlockMeta) -> u8 {
    match m.exit {
        ExitKind::Call => F_CALL,
        ExitKind::IndirectCall => F_CALL | F_INDIRECT,
        ExitKind::Return => F_RETURN | F_INDIRECT,
        ExitKind::IndirectJump => F_INDIRECT,
        _ => 0,
    }
}

impl Slot {
    /// The slot of block `id` (described by `m`).
    pub fn block(id: u32, m: &BlockMeta, sb: &SbConfig) -> Slot {
        let flags = exit_flags(m);
        let on = |t: u32| {
            if sb.enabled && sb.pisat.is_none() {
                t
            } else {
                u32::MAX
            }
        };
        Slot {
            count: 0,
            way_n: [0; 2],
            way: [NONE; 2],
            ret: m.next,
            first: id,
            size: m.insns.min(INSNS_MASK) | 1 << BLOCKS_SHIFT,
            trigger: on(sb.block_threshold),
            way_trigger: if flags & F_INDIRECT != 0 {
                on(sb.edge_threshold)
            } else {
                u32::MAX
            },
            flags,
            ops_n: 0,
            ops_at: 0,
        }
    }
}

/// The table of slots (I1).
#[derive(Debug)]
pub(super) struct SlotTable {
    base: *mut Slot,
}

// SAFETY: the table is owned by one `Tables`, used by one thread at a time.
unsafe impl Send for SlotTable {}

impl Default for SlotTable {
    fn default() -> Self {
        let bytes = CAPACITY * std::mem::size_of::<Slot>();
        let p = crate::anon::map(bytes, libc::MAP_NORESERVE)
            .unwrap_or_else(|e| panic!("cannot map the monitor's {bytes}-byte slot table: {e}"));
        SlotTable {
            base: p as *mut Slot,
        }
    }
}

impl Drop for SlotTable {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `default`, no longer referenced.
        unsafe {
            libc::munmap(
                self.base as *mut libc::c_void,
                CAPACITY * std::mem::size_of::<Slot>(),
            )
        };
    }
}

impl SlotTable {
    /// The first slot, for a loop that keeps within the initialised ones
    /// (I2) on its own.
    pub fn as_mut_ptr(&mut self) -> *mut Slot {
        self.base
    }
}

impl std::ops::Index<usize> for SlotTable {
    type Output = Slot;
    #[inline(always)]
    fn index(&self, i: usize) -> &Slot {
        assert!(i < CAPACITY, "slot {i} out of the table");
        // SAFETY: i < CAPACITY, inside the mapping; zeroed memory is a
        // valid Slot (I2 says which ones mean something).
        unsafe { &*self.base.add(i) }
    }
}

impl std::ops::IndexMut<usize> for SlotTable {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut Slot {
        assert!(i < CAPACITY, "slot {i} out of the table");
        // SAFETY: as for `index`; `&mut self` makes it the only reference.
        unsafe { &mut *self.base.add(i) }
    }
}
