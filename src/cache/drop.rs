//! A partial flush: after a store into translated code, only the blocks
//! on the pages it changed go; every other translation stays where it is,
//! linked as it was (a JIT patching one function, or writing code beside
//! code it already ran, used to cost every translation of the process:
//! the JVM translated 1.2 M blocks for 250 such stores).
//!
//! D1: a listed block is in `page_blocks` under every guest page it
//!     overlaps (stale ids too: a block counts only while `by_guest`
//!     names it for its address).
//! D2: every direct exit linked to a block since the last full flush is
//!     in `links_in` under the block, with the rel32 target it had before
//!     (its cold stub): unlinking writes that back, so the exit leaves
//!     through its site again and the dispatcher finds the new
//!     translation.
//! D3: a dropped block is unreachable once (a) `by_guest` no longer names
//!     it (lookups, links made from now on), (b) no linked exit points at
//!     it (D2), (c) no thread's lookup table holds it and no superblock
//!     leads to it: the generation moves on, so each thread empties its
//!     lookup table (cache I4) and every superblock head is put back
//!     (cache/shared.rs I1), and (d) the monitor will not link a new
//!     superblock to it (its block table marks it dead first). Its code
//!     stays in code memory, unreachable, until a full flush; exit sites
//!     are kept (a thread may still leave through one of an older
//!     generation, I6).
//! D4: only while no other thread runs translated code (a stop).
//! D5: both lists are [`Appended`]: records go to the end of a log, and
//!     only a partial flush files them under their key. A forked child
//!     shares its parent's memory copy-on-write, and a hash table insert
//!     touches one of its pages at random: with both lists as tables, each
//!     block a python fork child translated copied two or three pages of
//!     the parent's (most processes never flush part of their code).

use hashbrown::HashMap;

use super::CodeCache;
use crate::types::{BlockId, GuestAddr, HostAddr};

/// Records under keys, appended to a log and filed in a table only when
/// asked for (D5).
#[derive(Debug)]
pub(super) struct Appended<K, V> {
    log: Vec<(K, V)>,
    filed: HashMap<K, Vec<V>>,
}

impl<K, V> Default for Appended<K, V> {
    fn default() -> Self {
        Appended {
            log: Vec::new(),
            filed: HashMap::new(),
        }
    }
}

impl<K: std::hash::Hash + Eq + Copy, V: Copy> Appended<K, V> {
    pub fn push(&mut self, k: K, v: V) {
        self.log.push((k, v));
    }

    /// Every record under `k` (in the order pushed), taken out.
    pub fn take(&mut self, k: K) -> Vec<V> {
        for (k, v) in self.log.drain(..) {
            self.filed.entry(k).or_default().push(v);
        }
        self.filed.remove(&k).unwrap_or_default()
    }

    pub fn clear(&mut self) {
        self.log.clear();
        self.filed.clear();
    }
}

impl CodeCache {
    /// Link direct exit `field` to block `to`, remembering where it
    /// jumped before (D2).
    pub fn link(&mut self, field: HostAddr, to: BlockId) -> Result<(), super::CacheError> {
        let was = self.mem.rel32_target(field);
        self.mem.patch_rel32(field, self.block(to).host)?;
        self.links_in.push(to.0, (field, was));
        Ok(())
    }

    /// Drop the listed blocks on the guest pages holding addresses
    /// `pages` (D1-D4), `mark_dead` telling the monitor of each before the
    /// generation moves on; `nop` is a block's first 8 bytes. How many
    /// went, or None when code shared with a forked process could not be
    /// written (cache I8): then the caller drops everything.
    pub fn drop_pages(
        &mut self,
        pages: &[u64],
        nop: [u8; 8],
        mark_dead: impl Fn(BlockId),
    ) -> Option<usize> {
        let mut dead = Vec::new();
        for &page in pages {
            let p = page >> 12;
            for id in self.page_blocks.take(p) {
                let guest = GuestAddr(self.meta(id).guest);
                if self.by_guest.get(&guest) == Some(id) {
                    self.by_guest.remove(&guest);
                    dead.push(id);
                }
            }
            // Its listed blocks are all gone (D1).
            self.code_pages.remove(&p);
        }
        for id in &dead {
            for (field, was) in self.links_in.take(id.0) {
                self.mem.patch_rel32(field, was).ok()?;
            }
        }
        let all = self.view.shared.bump_gen_dropping(nop, || {
            for &id in &dead {
                mark_dead(id);
            }
        });
        self.flushes += 1;
        debug_assert_eq!(self.view.shared.gen(), self.flushes);
        all.then_some(dead.len())
    }
}

#[cfg(test)]
mod tests {
    use super::Appended;

    #[test]
    fn appended_records_come_out_under_their_key_in_order() {
        let mut a: Appended<u32, u64> = Appended::default();
        let mut want: std::collections::HashMap<u32, Vec<u64>> = Default::default();
        let mut x = 0x9e37_79b9_u64;
        for step in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let k = (x % 97) as u32;
            if x.is_multiple_of(5) {
                assert_eq!(
                    a.take(k),
                    want.remove(&k).unwrap_or_default(),
                    "step {step}"
                );
            } else {
                a.push(k, step);
                want.entry(k).or_default().push(step);
            }
        }
        a.clear();
        assert!(a.take(3).is_empty());
    }
}
