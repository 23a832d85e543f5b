//! The indirect-branch lookup table read by emitted code.
//!
//! A direct-mapped table of 2^16 entries `(-guest, host)` per guest thread,
//! right after the thread's context (runtime I4), so emitted code reaches
//! it as `gs:[index*8 + off::IBL]` and compares without touching RFLAGS:
//! `lea rcx, [rcx+rax]` is zero exactly on a hit and `jrcxz` tests it. The
//! hash is `(t + ror(t, 16)) & 0xffff`, computed with `rorx`/`lea`/`movzx`
//! (no flags). Only the thread's own dispatcher writes its table, so an
//! entry never changes under a lookup reading it.
//!
//! I1: an empty entry is all zero: its key matches target 0 alone, and
//!     target 0 looks only at slot `ibl_hash(0)` = 0, which holds the
//!     sentinel instead: key -1 (a non-canonical address, whose own slot
//!     is 0xfffe, so no target matches it there) and the host address of
//!     the `empty_hit` stub, which reports a miss. So a lookup can never
//!     jump anywhere but the right block or a miss, and a table of fresh
//!     (zero) memory is made empty by writing one entry: written entry by
//!     entry, the megabyte cost 0.65 ms of every process's start
//!     (`/bin/true`, AMD EPYC), its first thread's huge page included.
//! I2: an entry's host address is its block's indirect entry
//!     (contract I4), which loads the guest's RCX back; [`IblTable::insert`]
//!     and [`IblTable::get`] speak of the block's entry. So a hit is the
//!     table load, the host load beside it and one `jmp rcx`: the jump's
//!     target waits for no compare and no store (a lookup through a
//!     scratch slot and `jmp gs:[slot]` waited for two store-to-load
//!     forwards, which every mispredicted indirect jump paid).
//! I3: [`IblTable::clear`] zeroes the entries written since the last
//!     clear when it knows them (up to [`DIRTY_MAX`]), the whole table
//!     otherwise: a megabyte `memset` at every store into code was a
//!     quarter of a function-rewriting JIT's run (Intel Xeon model 207).

use crate::contract::INDIRECT_ENTRY_BACK;
use crate::types::{GuestAddr, HostAddr};

pub const IBL_ENTRIES: usize = 1 << 16;

/// Entries written since a clear that [`IblTable::clear`] zeroes one by
/// one (I3); past it, the whole table.
const DIRTY_MAX: usize = 4096;

/// The hash emitted code computes.
pub fn ibl_hash(t: u64) -> usize {
    (t.wrapping_add(t.rotate_right(16)) & 0xffff) as usize
}

#[derive(Debug)]
pub struct IblTable {
    base: *mut [u64; 2],
    empty_host: u64,
    pub inserts: u64,
    /// Entries written since the last clear, while at most `DIRTY_MAX`
    /// (I3); None past that.
    dirty: Option<Vec<u32>>,
}

impl IblTable {
    /// The table at `base` (IBL_ENTRIES entries after a thread context).
    pub fn at(base: *mut [u64; 2]) -> IblTable {
        IblTable {
            base,
            empty_host: 0,
            inserts: 0,
            dirty: None,
        }
    }

    /// Set the stub a hit on the sentinel jumps to (I1) and make the
    /// table, fresh zero memory, empty.
    pub fn set_empty_stub(&mut self, host: HostAddr) {
        self.empty_host = host.0;
        self.dirty = Some(Vec::new());
        self.write(ibl_hash(0), u64::MAX, self.empty_host);
    }

    /// Empty the table (I1).
    pub fn clear(&mut self) {
        match self.dirty.as_mut() {
            Some(d) => {
                for &i in d.iter() {
                    // SAFETY: `i` was written by `write`: below
                    // IBL_ENTRIES, inside the mapping; only this thread's
                    // dispatcher writes the table, while the thread runs
                    // no translated code.
                    unsafe { self.base.add(i as usize).write_volatile([0; 2]) };
                }
                d.clear();
            }
            // SAFETY: as above, the whole table.
            None => unsafe { std::ptr::write_bytes(self.base, 0, IBL_ENTRIES) },
        }
        self.dirty.get_or_insert_with(Vec::new);
        self.write(ibl_hash(0), u64::MAX, self.empty_host);
    }

    fn write(&mut self, i: usize, key: u64, host: u64) {
        if let Some(d) = self.dirty.as_mut() {
            if d.len() < DIRTY_MAX {
                d.push(i as u32);
            } else {
                self.dirty = None;
            }
        }
        // SAFETY: i < IBL_ENTRIES, inside the mapping. Entries are written
        // only by the dispatcher while no guest thread runs translated code
        // (one guest thread so far); concurrent replacement needs a 16-byte
        // atomic entry update before threads arrive (issue 5).
        unsafe {
            let e = self.base.add(i);
            std::ptr::write_volatile(&mut (*e)[1], host);
            std::ptr::write_volatile(&mut (*e)[0], key.wrapping_neg());
        }
    }

    /// The entry of the block emitted code would jump to for `guest` (I2),
    /// if the table holds it.
    pub fn get(&self, guest: GuestAddr) -> Option<HostAddr> {
        // SAFETY: the index is below IBL_ENTRIES, inside the mapping; only
        // this thread writes its table.
        let [key, host] = unsafe { std::ptr::read_volatile(self.base.add(ibl_hash(guest.0))) };
        (key == guest.0.wrapping_neg() && guest.0 != u64::MAX)
            .then_some(HostAddr(host + INDIRECT_ENTRY_BACK))
    }

    /// Make the block whose entry is `entry` the target for `guest` (I2).
    pub fn insert(&mut self, guest: GuestAddr, entry: HostAddr) {
        self.inserts += 1;
        self.write(ibl_hash(guest.0), guest.0, entry.0 - INDIRECT_ENTRY_BACK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What emitted code does with the entry at `t`'s slot: the host
    /// address it jumps to on a hit (stored key + target == 0), None on a
    /// miss.
    fn lookup(t: &IblTable, target: u64) -> Option<u64> {
        // SAFETY: the slot lies inside the table.
        let [key, host] = unsafe { *t.base.add(ibl_hash(target)) };
        (key.wrapping_add(target) == 0).then_some(host)
    }

    /// I1: an empty table (fresh zero memory with its sentinel, or
    /// cleared) sends every target to a miss or to the empty stub, 0 and
    /// -1 included; inserted targets hit their block.
    #[test]
    fn an_empty_table_never_hits_a_block() {
        let mut mem = vec![[0u64; 2]; IBL_ENTRIES];
        let mut t = IblTable::at(mem.as_mut_ptr());
        let stub = 0x7000_0000u64;
        t.set_empty_stub(HostAddr(stub));
        let mut rng = crate::test_rng::Seeded::new(1);
        let mut targets = vec![0, 1, u64::MAX, u64::MAX - 1, 0x1_0000, 0xffff];
        for _ in 0..200_000 {
            let x = rng.next();
            targets.push(x);
            targets.push(x & 0xffff_ffff);
        }
        let empty = |t: &IblTable| {
            for &g in &targets {
                assert!(lookup(t, g).is_none_or(|h| h == stub), "target {g:#x}");
                assert_eq!(t.get(GuestAddr(g)), None, "target {g:#x}");
            }
        };
        empty(&t);
        let block = 0x5000_1000u64;
        for &g in &[0u64, 0x401000, 0x7f00_1234_5678] {
            t.insert(GuestAddr(g), HostAddr(block + INDIRECT_ENTRY_BACK));
            assert_eq!(lookup(&t, g), Some(block));
            assert_eq!(
                t.get(GuestAddr(g)),
                Some(HostAddr(block + INDIRECT_ENTRY_BACK))
            );
        }
        t.clear();
        empty(&t);
        // I3: entry by entry, then the whole table past DIRTY_MAX.
        for n in [3usize, DIRTY_MAX + 10] {
            for k in 0..n as u64 {
                t.insert(
                    GuestAddr(0x40_0000 + 16 * k),
                    HostAddr(block + INDIRECT_ENTRY_BACK),
                );
            }
            assert_eq!(t.dirty.is_some(), n < DIRTY_MAX);
            t.clear();
            empty(&t);
            assert!(mem.iter().enumerate().all(|(i, e)| i == 0 || *e == [0; 2]));
        }
    }
}
