//! The translation lock's guest-address maps, in layers: a large one
//! written in batches, a small one every insert goes to first, and in a
//! forked child the parent's small one between them.
//!
//! A forked child shares its parent's pages copy-on-write, and an insert
//! into one large hash table touches a page at random: each of the blocks
//! a python fork or spawn child translated before it exited or exec'd
//! copied a page of `by_guest` or of the code pages (and, with its
//! monitor running, shot down the other core's TLB), and so did the
//! parent's after each fork. With the small layer in front, a process
//! writes the large one only when the small one is full ([`RECENT`]
//! entries), all at once: a python loop of 50 forks took 57,800 page
//! faults over all its processes, now 48,500 (`perf stat -e
//! page-faults`; 50 spawns 126,000 → 120,600).

use std::hash::Hash;

use hashbrown::HashMap;

/// Entries the small layer holds before they move to the large one.
const RECENT: usize = 4096;

#[derive(Debug)]
pub struct Layered<K, V> {
    base: HashMap<K, V>,
    /// L1: a parent's small layer, in a forked child.
    middle: HashMap<K, V>,
    recent: HashMap<K, V>,
}

impl<K: Hash + Eq + Copy, V: Copy> Default for Layered<K, V> {
    fn default() -> Self {
        Layered {
            base: HashMap::new(),
            middle: HashMap::new(),
            recent: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq + Copy, V: Copy> Layered<K, V> {
    pub fn get(&self, k: &K) -> Option<V> {
        // The middle layer is empty but in a forked child: not hashed then.
        self.recent
            .get(k)
            .or_else(|| self.middle_get(k))
            .or_else(|| self.base.get(k))
            .copied()
    }

    fn middle_get(&self, k: &K) -> Option<&V> {
        if self.middle.is_empty() {
            None
        } else {
            self.middle.get(k)
        }
    }

    pub fn contains_key(&self, k: &K) -> bool {
        self.recent.contains_key(k) || self.middle_get(k).is_some() || self.base.contains_key(k)
    }

    pub fn insert(&mut self, k: K, v: V) {
        self.recent.insert(k, v);
        if self.recent.len() >= RECENT {
            // The newer layer last: its entries win.
            self.base.extend(self.middle.drain());
            self.base.extend(self.recent.drain());
        }
    }

    pub fn remove(&mut self, k: &K) {
        self.recent.remove(k);
        self.middle.remove(k);
        self.base.remove(k);
    }

    pub fn len(&self) -> usize {
        // A key in two layers counts twice: a bound, as callers use it.
        self.base.len() + self.middle.len() + self.recent.len()
    }

    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.recent
            .keys()
            .chain(self.middle.keys())
            .chain(self.base.keys())
    }

    /// Forget every entry (L1: the tables go, unwritten).
    pub fn clear(&mut self) {
        *self = Layered::default();
    }

    /// L1, in a forked child: from here on the inherited layers are only
    /// read (until the next batch).
    pub fn forked(&mut self) {
        let recent = std::mem::take(&mut self.recent);
        if self.middle.is_empty() {
            self.middle = recent;
        } else {
            // A fork of a fork before any batch: rare, and small.
            self.middle.extend(recent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_insert_wins_in_either_layer() {
        let mut m = Layered::default();
        for k in 0..(3 * RECENT as u64 + 5) {
            m.insert(k, k);
        }
        m.insert(7, 70);
        assert_eq!(m.get(&7), Some(70));
        for k in 0..(2 * RECENT as u64) {
            m.insert(k, k + 1);
        }
        assert_eq!(m.get(&7), Some(8));
        assert_eq!(m.get(&(3 * RECENT as u64 + 4)), Some(3 * RECENT as u64 + 4));
        assert!(m.contains_key(&0) && !m.contains_key(&(4 * RECENT as u64)));
        assert!(m.keys().any(|&k| k == 3 * RECENT as u64));
        m.insert(1, 9);
        m.remove(&1);
        m.remove(&(3 * RECENT as u64));
        assert!(!m.contains_key(&1) && m.get(&(3 * RECENT as u64)).is_none());
        m.clear();
        assert_eq!((m.get(&7), m.len()), (None, 0));
    }

    /// L1: after `forked` the inherited small layer is read, not written;
    /// newer entries win over it and the base, through the next batch.
    #[test]
    fn a_forked_child_reads_its_parents_small_layer() {
        let mut m = Layered::default();
        for k in 0..(RECENT as u64 + 10) {
            m.insert(k, k);
        }
        m.forked();
        assert_eq!((m.recent.len(), m.middle.len()), (0, 10));
        m.insert(RECENT as u64 + 3, 1);
        m.forked();
        assert_eq!((m.recent.len(), m.middle.len()), (0, 10));
        m.insert(RECENT as u64 + 5, 2);
        assert_eq!(m.get(&(RECENT as u64 + 3)), Some(1));
        assert_eq!(m.get(&(RECENT as u64 + 5)), Some(2));
        assert_eq!(m.get(&(RECENT as u64 + 9)), Some(RECENT as u64 + 9));
        assert_eq!(m.get(&5), Some(5));
        for k in 0..RECENT as u64 {
            m.insert(k + 100_000, 0);
        }
        // One batch moved both small layers into the base.
        assert_eq!((m.recent.len(), m.middle.len()), (1, 0));
        assert_eq!(m.get(&(RECENT as u64 + 5)), Some(2));
        assert_eq!(m.get(&(RECENT as u64 + 3)), Some(1));
        m.remove(&(RECENT as u64 + 3));
        assert!(!m.contains_key(&(RECENT as u64 + 3)));
    }
}
