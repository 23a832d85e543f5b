//! The guest's share of the address space: which pages the guest owns, with
//! what protection, and the emulated program break.
//!
//! The guest runs in hotlift's own address space. hotlift tracks every
//! mapping the guest made (through the loader or its own syscalls) so it can
//! (a) bound decoding to executable guest memory and (b) refuse requests that
//! would touch hotlift's own mappings.
//!
//! I1: regions are page aligned, sorted and never overlap.
//! I2: a page hotlift reports as guest-owned was mapped by the loader or by a
//!     guest syscall that the kernel completed.
//! I3: `mmap_ceiling` is the top of the guest's own top-down mmap area: the
//!     guest's mappings without a usable address hint go into the highest
//!     free gap below it (syscall/mem.rs), as the kernel's go below its
//!     `mmap_base`, so they come in the kernel's order whatever hotlift
//!     itself maps meanwhile.

use std::collections::BTreeMap;

use crate::loader::Prot;

pub const PAGE: u64 = 4096;

pub fn page_down(a: u64) -> u64 {
    a & !(PAGE - 1)
}
pub fn page_up(a: u64) -> u64 {
    a.saturating_add(PAGE - 1) & !(PAGE - 1)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub end: u64,
    pub prot: Prot,
}

#[derive(Debug, Default)]
pub struct GuestMem {
    regions: BTreeMap<u64, Region>,
    /// I3; `None`: guest mmaps go where the kernel puts them.
    pub mmap_ceiling: Option<u64>,
}

impl GuestMem {
    pub fn new() -> GuestMem {
        GuestMem::default()
    }

    /// The region containing `addr`, as (start, region).
    pub fn find(&self, addr: u64) -> Option<(u64, Region)> {
        let (&s, &r) = self.regions.range(..=addr).next_back()?;
        (addr < r.end).then_some((s, r))
    }

    /// Forget [start, end) (I1: splits regions that straddle the edges).
    pub fn remove(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        if let Some((s, r)) = self.find(start) {
            if s < start {
                self.regions.insert(
                    s,
                    Region {
                        end: start,
                        prot: r.prot,
                    },
                );
                self.regions.insert(start, r);
            }
        }
        if let Some((s, r)) = self.find(end) {
            if s < end {
                self.regions.insert(s, Region { end, prot: r.prot });
                self.regions.insert(end, r);
            }
        }
        let keys: Vec<u64> = self.regions.range(start..end).map(|(&k, _)| k).collect();
        for k in keys {
            self.regions.remove(&k);
        }
    }

    /// Record [start, end) as guest memory with `prot`.
    pub fn insert(&mut self, start: u64, end: u64, prot: Prot) {
        let (start, end) = (page_down(start), page_up(end));
        self.remove(start, end);
        if end > start {
            self.regions.insert(start, Region { end, prot });
        }
    }

    /// Change the protection of the guest-owned parts of [start, end).
    pub fn protect(&mut self, start: u64, end: u64, prot: Prot) {
        let (start, end) = (page_down(start), page_up(end));
        let owned: Vec<(u64, u64)> = self
            .regions
            .range(..end)
            .filter(|(&s, r)| r.end > start && s < end)
            .map(|(&s, r)| (s.max(start), r.end.min(end)))
            .collect();
        for (s, e) in owned {
            self.insert(s, e, prot);
        }
    }

    /// Is every page of [start, end) guest memory?
    pub fn owns_all(&self, start: u64, end: u64) -> bool {
        let (mut at, end) = (page_down(start), page_up(end));
        while at < end {
            match self.find(at) {
                Some((_, r)) => at = r.end,
                None => return false,
            }
        }
        true
    }

    /// End of the executable guest memory that continues from `addr`, if
    /// `addr` is executable guest memory.
    pub fn exec_end(&self, addr: u64) -> Option<u64> {
        let (_, mut r) = self.find(addr)?;
        if !r.prot.x {
            return None;
        }
        while let Some((_, next)) = self.find(r.end) {
            if !next.prot.x {
                break;
            }
            r = next;
        }
        Some(r.end)
    }

    pub fn regions(&self) -> impl Iterator<Item = (u64, Region)> + '_ {
        self.regions.iter().map(|(&s, &r)| (s, r))
    }
}

/// The emulated program break: a reservation the guest's `brk` grows into.
#[derive(Debug)]
pub struct Brk {
    pub start: u64,
    pub cur: u64,
    /// Mapped (read-write) up to here.
    pub mapped: u64,
    pub limit: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const RW: Prot = Prot {
        r: true,
        w: true,
        x: false,
    };
    const RX: Prot = Prot {
        r: true,
        w: false,
        x: true,
    };

    #[test]
    fn insert_remove_split() {
        let mut m = GuestMem::new();
        m.insert(0x1000, 0x5000, RW);
        m.remove(0x2000, 0x3000);
        assert!(m.owns_all(0x1000, 0x2000));
        assert!(!m.owns_all(0x1000, 0x3000));
        assert!(m.owns_all(0x3000, 0x5000));
        assert_eq!(m.find(0x2800), None);
        assert_eq!(m.regions().count(), 2);
    }

    #[test]
    fn protect_and_exec_end() {
        let mut m = GuestMem::new();
        m.insert(0x400000, 0x402000, RX);
        m.insert(0x402000, 0x404000, RX);
        m.insert(0x404000, 0x405000, RW);
        assert_eq!(m.exec_end(0x400010), Some(0x404000));
        m.protect(0x401000, 0x402000, RW);
        assert_eq!(m.exec_end(0x400010), Some(0x401000));
        assert_eq!(m.exec_end(0x401010), None);
        assert_eq!(m.exec_end(0x300000), None);
    }
}
