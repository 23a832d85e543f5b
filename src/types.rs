//! Typed addresses and ids shared by every layer.
//!
//! I1: a guest address never crosses a module boundary as a bare `u64`; a host
//! address into the code cache is a `HostAddr`, a position inside code memory a
//! `CodeOffset`.

use std::fmt;

/// An address in the guest's view of memory (which is also hotlift's: the
/// guest runs in hotlift's address space).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct GuestAddr(pub u64);

/// An address of host code or data (the code cache, hotlift's own memory).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HostAddr(pub u64);

/// A position inside the code cache, relative to its start.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct CodeOffset(pub u32);

/// Dense index of a translated block in the block table.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct BlockId(pub u32);

impl fmt::Debug for GuestAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}
impl fmt::Display for GuestAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}
impl fmt::Debug for HostAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "host:{:#x}", self.0)
    }
}

impl GuestAddr {
    pub fn offset(self, n: u64) -> GuestAddr {
        GuestAddr(self.0.wrapping_add(n))
    }
}
