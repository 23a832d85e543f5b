//! The blocks a profile is built from: this id epoch's by block id, then
//! the entries of the ended epochs (monitor/tables/epoch.rs), numbered
//! after them, so that one loop aggregates both by guest address
//! (profile I1).
//!
//! I1: id `i` below `live` is block `i` of the block table; id `live + e`
//!     is retired entry `e`. A key of the snapshot's maps with
//!     `RETIRED_REF` set names an entry (epoch.rs I2).

use std::borrow::Cow;

use crate::cache::BlockMeta;
use crate::monitor::{Snapshot, RETIRED_REF};

pub(super) struct Ids<'a> {
    /// Every block's meta, by id (I1).
    pub metas: Cow<'a, [BlockMeta]>,
    /// Blocks of this epoch.
    pub live: usize,
    /// The sequence number of this epoch's block 0 (images.rs I2).
    base: u64,
    t: &'a Snapshot,
}

impl<'a> Ids<'a> {
    pub fn new(blocks: &'a [BlockMeta], t: &'a Snapshot, base: u64) -> Ids<'a> {
        let r = &t.retired;
        let metas = if r.is_empty() {
            Cow::Borrowed(blocks)
        } else {
            Cow::Owned(blocks.iter().chain(&r.metas).copied().collect())
        };
        Ids {
            metas,
            live: blocks.len(),
            base,
            t,
        }
    }

    pub fn snapshot(&self) -> &'a Snapshot {
        self.t
    }

    /// The id of a key of the snapshot's maps (I1).
    pub fn of(&self, key: u32) -> usize {
        if crate::monitor::tables::is_retired(key) {
            self.live + (key & !RETIRED_REF) as usize
        } else {
            key as usize
        }
    }

    /// Executions of block `id`.
    pub fn count(&self, id: usize) -> u64 {
        match id.checked_sub(self.live) {
            None => self.t.count(id),
            Some(e) => self.t.retired.counts.get(e).copied().unwrap_or(0),
        }
    }

    /// The ids a profile lists: this epoch's as `Snapshot::listed_blocks`
    /// says (a forked child's inherited blocks only where it met them),
    /// then every entry.
    pub fn listed(&self, inherited: usize) -> impl Iterator<Item = usize> + '_ {
        self.t
            .listed_blocks(self.live, inherited)
            .chain(self.live..self.metas.len())
    }

    /// The image (module list index: one module per image record,
    /// dispatch/module_files.rs) block `id` was in: an entry's was found at
    /// its fold; a block of this epoch's by its sequence number.
    pub fn module(&self, modules: &mut super::Modules, id: usize) -> usize {
        let guest = self.metas[id].guest;
        match id.checked_sub(self.live) {
            None => modules.index(guest, Some(self.base + id as u64)),
            Some(e) => match self.t.retired.images.get(e) {
                Some(&i) if i != u32::MAX => modules.index_of_image(i as usize, guest),
                _ => modules.index(guest, None),
            },
        }
    }

    /// Every transition: (source id, target guest address, count).
    pub fn edges(&self) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
        let live = self
            .t
            .edges
            .iter()
            .map(|(&(s, to), &c)| (self.of(s), to, c));
        let old = self.t.retired.edges.iter();
        live.chain(old.map(|(&(e, to), &c)| (self.live + e as usize, to, c)))
    }

    /// A map keyed by (block, n) of the snapshot and its retired twin, by
    /// id.
    pub fn keyed<'m>(
        &'m self,
        live: &'m hashbrown::HashMap<(u32, u32), u64>,
        old: &'m hashbrown::HashMap<(u32, u32), u64>,
    ) -> impl Iterator<Item = ((usize, u32), u64)> + 'm {
        let l = live.iter().map(|(&(b, n), &c)| ((self.of(b), n), c));
        l.chain(
            old.iter()
                .map(|(&(e, n), &c)| ((self.live + e as usize, n), c)),
        )
    }
}
