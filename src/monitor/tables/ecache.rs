//! The edge cache (tables I1): a word's indirect successors beyond its two
//! ways, counted in a direct-mapped table whose evicted entries go to the
//! edge map.
//!
//! I1: an all-zero slot is empty (`n == 0`).
//! I2: the table starts with no slots, is made small at the first
//!     transition that needs it, and grows (eight times, up to [`MAX`])
//!     once a quarter of its slots are filled, its entries moved to their
//!     slots in the larger table (one that finds its slot taken is
//!     evicted, as on any conflict). Made at its full megabyte at once,
//!     its slots were written at random from the start, each on a new page:
//!     256 page faults in every process that had a few indirect
//!     transitions, about 1.9 ms of the 17 ms `/bin/true` takes with a
//!     profile (AMD EPYC, `perf record`), most of it zeroing pages the VM
//!     had not touched; populating the megabyte at once cost as much.
//! I3: `used` lists every filled slot, once: the end and selection read
//!     those, not the whole table.

/// Slots of the largest table (16 bytes each: 1 MB).
const MAX: usize = 1 << 16;
/// Slots of the table first made (16 KB).
const FIRST: usize = 1 << 10;

/// An edge-cache entry: transitions from word `p` to first block `e`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct EdgeSlot {
    pub p: u32,
    pub e: u32,
    pub n: u64,
}

#[derive(Debug)]
pub(super) struct EdgeCache {
    /// In memory a forked child does not get (`anon::UnforkedVec`).
    slots: crate::anon::UnforkedVec<EdgeSlot>,
    /// 64 - log2 of the table's length (63 for no slots: every index
    /// then misses the empty table).
    shift: u32,
    used: Vec<u32>,
}

impl Default for EdgeCache {
    fn default() -> Self {
        EdgeCache {
            slots: crate::anon::UnforkedVec::with_capacity(0),
            shift: 63,
            used: Vec::new(),
        }
    }
}

impl EdgeCache {
    /// The slot of the edge from word `p` to block `e` (out of range while
    /// the table has no slots).
    #[inline(always)]
    pub fn index(&self, p: u32, e: u32) -> usize {
        let k = (u64::from(p) << 32 | u64::from(e)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (k >> self.shift) as usize
    }

    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut EdgeSlot> {
        self.slots.get_mut(i)
    }

    /// Make or grow the table when due (I2): the entries the move
    /// evicts (none but on a collision).
    pub fn grow_if_due(&mut self) -> Vec<EdgeSlot> {
        if self.used.len() * 4 < self.slots.len() || self.slots.len() >= MAX {
            return Vec::new();
        }
        let len = if self.slots.is_empty() {
            FIRST
        } else {
            (self.slots.len() * 8).min(MAX)
        };
        // SAFETY: an all-zero slot (three integers) is an empty one (I1).
        #[allow(unsafe_code)]
        let fresh = unsafe { crate::anon::UnforkedVec::zeroed(len) };
        // Probed before written, at random: made at once (anon.rs).
        fresh.populate();
        let old = std::mem::replace(&mut self.slots, fresh);
        self.shift = 64 - len.trailing_zeros();
        let mut evicted = Vec::new();
        for i in std::mem::take(&mut self.used) {
            let s = old[i as usize];
            let j = self.index(s.p, s.e);
            if self.slots[j].n == 0 {
                self.slots[j] = s;
                self.used.push(j as u32);
            } else {
                evicted.push(s);
            }
        }
        evicted
    }

    /// Put `new` in its slot (which the caller found not to hold its edge,
    /// after [`EdgeCache::grow_if_due`]): the entry it evicts, if any.
    pub fn put(&mut self, new: EdgeSlot) -> Option<EdgeSlot> {
        let i = self.index(new.p, new.e);
        let old = std::mem::replace(&mut self.slots[i], new);
        if old.n == 0 {
            self.used.push(i as u32);
            return None;
        }
        Some(old)
    }

    /// Every filled slot's entry (I3).
    pub fn entries(&self) -> impl Iterator<Item = EdgeSlot> + '_ {
        self.used.iter().map(|&i| self.slots[i as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Counting transitions through the cache, evictions into a map, gives
    /// every edge's exact count however the table grows.
    #[test]
    fn counts_survive_growth_and_eviction() {
        let mut c = EdgeCache::default();
        let mut spilled: HashMap<(u32, u32), u64> = HashMap::new();
        let mut want: HashMap<(u32, u32), u64> = HashMap::new();
        let mut rng = crate::test_rng::Seeded::new(1);
        for _ in 0..400_000 {
            let x = rng.next();
            // Few sources, many targets: past MAX / 4 distinct edges.
            let (p, e) = ((x % 61) as u32, ((x >> 20) % 700) as u32);
            *want.entry((p, e)).or_default() += 1;
            let i = c.index(p, e);
            match c.get_mut(i) {
                Some(s) if s.p == p && s.e == e && s.n != 0 => s.n += 1,
                _ => {
                    let mut evicted = c.grow_if_due();
                    evicted.extend(c.put(EdgeSlot { p, e, n: 1 }));
                    for o in evicted {
                        *spilled.entry((o.p, o.e)).or_default() += o.n;
                    }
                }
            }
        }
        assert_eq!(c.slots.len(), MAX, "grew to the largest table");
        for s in c.entries() {
            *spilled.entry((s.p, s.e)).or_default() += s.n;
        }
        assert_eq!(spilled, want);
        let mut used = c.used.clone();
        used.sort_unstable();
        used.dedup();
        assert_eq!(used.len(), c.used.len(), "each filled slot listed once");
        assert!(c.used.iter().all(|&i| c.slots[i as usize].n != 0));
    }
}
