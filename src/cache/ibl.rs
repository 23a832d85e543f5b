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
//! I1: an empty entry holds key -1 (a non-canonical address) and the host
//!     address of the `empty_hit` stub, which reports a miss for target -1;
//!     so a lookup can never jump anywhere but the right block or a miss.
//! I2: an entry's host address is its block's indirect entry
//!     (contract I4), which loads the guest's RCX back; [`IblTable::insert`]
//!     and [`IblTable::get`] speak of the block's entry. So a hit is the
//!     table load, the host load beside it and one `jmp rcx`: the jump's
//!     target waits for no compare and no store (a lookup through a
//!     scratch slot and `jmp gs:[slot]` waited for two store-to-load
//!     forwards, which every mispredicted indirect jump paid).

use crate::contract::INDIRECT_ENTRY_BACK;
use crate::types::{GuestAddr, HostAddr};

pub const IBL_ENTRIES: usize = 1 << 16;

/// The hash emitted code computes.
pub fn ibl_hash(t: u64) -> usize {
    (t.wrapping_add(t.rotate_right(16)) & 0xffff) as usize
}

#[derive(Debug)]
pub struct IblTable {
    base: *mut [u64; 2],
    empty_host: u64,
    pub inserts: u64,
}

impl IblTable {
    /// The table at `base` (IBL_ENTRIES entries after a thread context).
    pub fn at(base: *mut [u64; 2]) -> IblTable {
        IblTable {
            base,
            empty_host: 0,
            inserts: 0,
        }
    }

    /// Set the stub empty entries jump to (I1) and empty the table.
    pub fn set_empty_stub(&mut self, host: HostAddr) {
        self.empty_host = host.0;
        self.clear();
    }

    pub fn clear(&mut self) {
        for i in 0..IBL_ENTRIES {
            self.write(i, u64::MAX, self.empty_host);
        }
    }

    fn write(&mut self, i: usize, key: u64, host: u64) {
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
