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

use super::CodeCache;
use crate::types::{BlockId, HostAddr};

impl CodeCache {
    /// Link direct exit `field` to block `to`, remembering where it
    /// jumped before (D2).
    pub fn link(&mut self, field: HostAddr, to: BlockId) -> Result<(), super::CacheError> {
        let was = self.mem.rel32_target(field);
        self.mem.patch_rel32(field, self.block(to).host)?;
        self.links_in.entry(to.0).or_default().push((field, was));
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
            for id in self.page_blocks.remove(&p).unwrap_or_default() {
                let guest = self.block(id).guest;
                if self.by_guest.get(&guest) == Some(id) {
                    self.by_guest.remove(&guest);
                    dead.push(id);
                }
            }
            // Its listed blocks are all gone (D1).
            self.code_pages.remove(&p);
        }
        for id in &dead {
            for (field, was) in self.links_in.remove(&id.0).unwrap_or_default() {
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
