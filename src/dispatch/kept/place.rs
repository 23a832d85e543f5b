//! Placing kept blocks and keeping new ones: the dispatcher's side of
//! kept translations (kept/mod.rs K1-K4).

use super::{Inputs, Made, Recipe};
use crate::backend::reloc::{relocate, Placement};
use crate::backend::{EmitEnv, Emitted, Prologue};
use crate::dispatch::process::Locked;
use crate::dispatch::{Vm, VmError};
use crate::ir::IrBlock;
use crate::types::{BlockId, GuestAddr};

/// The class of a block that exits as `e` (`Terminator::class`).
impl Vm {
    /// Are translations kept and placed now (K2)? Decided at the first
    /// translation from the process's options.
    pub(in crate::dispatch) fn kept_on(&self, l: &mut Locked) -> bool {
        if !l.kept.decided {
            l.kept.decided = true;
            if crate::persist::active()
                && self.proc.paths.is_none()
                && !(self.proc.opts.count_inline || self.proc.opts.count_check)
            {
                l.kept.enable(Inputs {
                    max_block_insns: self.proc.opts.max_block_insns,
                    ring: self.prof.ring.is_some(),
                });
            }
        }
        l.kept.enabled() && !crate::frontend::tsc_traps()
    }

    /// Place the kept block for `addr`, if there is one that K1 allows,
    /// as `translate_with` would commit its translation (translation
    /// began at `began`); None to translate it.
    pub(in crate::dispatch) fn place_kept(
        &mut self,
        l: &mut Locked,
        addr: GuestAddr,
        began: u64,
    ) -> Result<Option<BlockId>, VmError> {
        // Decoded into the one recipe kept for it (no allocation a block).
        let mut r = std::mem::take(&mut l.kept.spare);
        let placed = self.place_recipe(l, addr, began, &mut r);
        // K6: the first block needed of a module brings its plan.
        let batch = match placed {
            Ok(_) => l.kept.take_batch(&self.proc.prof.images(), addr.0),
            Err(_) => None,
        };
        let flushes = l.cache.flushes;
        let placed = match batch {
            // A flush while placing them took `addr`'s block too.
            Some(batch) => self
                .place_batch(l, &batch, &mut r)
                .map(|()| placed.ok().flatten().filter(|_| l.cache.flushes == flushes)),
            None => placed,
        };
        l.kept.spare = r;
        placed
    }

    /// Place the blocks at `batch` (K6) that are not translated yet, then
    /// link the exits between them that placing each one could not (its
    /// target was placed after it).
    fn place_batch(
        &mut self,
        l: &mut Locked,
        batch: &[u64],
        r: &mut Recipe,
    ) -> Result<(), VmError> {
        let first_site = l.cache.sites.len();
        let flushes = l.cache.flushes;
        let mut placed = std::collections::HashSet::with_capacity(batch.len());
        // Not past the ids the epoch allows (epoch.rs: checked before each
        // translation, not within this one), nor half the capacity.
        let room = self
            .proc
            .epoch_next
            .load(std::sync::atomic::Ordering::Relaxed)
            .min(crate::dispatch::profiling::BLOCK_CAPACITY / 2);
        for &g in batch {
            if self.proc.prof.blocks.len() >= room {
                break;
            }
            if l.cache.lookup(GuestAddr(g)).is_some() {
                continue;
            }
            if let Some(id) = self.place_recipe(l, GuestAddr(g), crate::clock::ticks(), r)? {
                placed.insert(g);
                self.proc.prof.blocks.set_planned(id.0);
                let seq = self.proc.prof.blocks.epoch_base() + u64::from(id.0);
                l.kept.batch_placed(&self.proc.prof.images(), g, seq);
            }
            if l.cache.flushes != flushes {
                // What was placed is gone; the rest is placed as needed.
                return Ok(());
            }
        }
        l.kept.batched += placed.len() as u64;
        self.prelink_to(l, first_site, Some(&placed))
    }

    fn place_recipe(
        &mut self,
        l: &mut Locked,
        addr: GuestAddr,
        began: u64,
        r: &mut Recipe,
    ) -> Result<Option<BlockId>, VmError> {
        let found = {
            let proc = &self.proc;
            let images = proc.prof.images();
            l.kept
                .find(&images, addr.0, || proc.threads.count() <= 1, r)
        };
        if !found {
            return Ok(None);
        }
        let end = addr.0 + r.guest.len() as u64;
        if r.ring != self.prof.ring.is_some() || l.mem.exec_end(addr.0).is_none_or(|e| e < end) {
            return Ok(None);
        }
        // [addr, end) lies in executable guest memory, which on x86-64 is
        // readable (guest_mem G2).
        if !crate::guest_mem::mapped_equals(addr.0, &r.guest) {
            return Ok(None);
        }
        // Before anything is committed: it may flush (smc.rs).
        self.protect_code(l, addr.0, end.max(addr.0 + 1));
        if r.em.code.len() + 64 > l.cache.mem.remaining() {
            // The translator makes room.
            return Ok(None);
        }
        let first_site = l.cache.sites.len();
        let to = Placement {
            host: l.cache.mem.next_block().0,
            guest: r.base,
            block: self.proc.view.blocks.len(),
            first_site: first_site as u32,
            stubs: l.cache.view.shared.stubs.site,
        };
        if !relocate(&mut r.em.code, &r.em.relocs, &r.from, &to) {
            return Ok(None);
        }
        let prologue = self.publish_meta(r.meta, true)?;
        assert!(
            matches!(
                (prologue, r.ring),
                (Prologue::Ring { id }, true) if id == to.block
            ) || matches!((prologue, r.ring), (Prologue::None, false)),
            "a kept block's prologue is the one its translation would have"
        );
        let (id, host) = self.commit_block(l, &mut r.em, true, true)?;
        self.prelink(l, first_site)?;
        l.translate_ticks += crate::clock::ticks().saturating_sub(began);
        l.kept.placed += 1;
        l.kept.placed_at(&self.proc.prof.images(), addr.0);
        // Block table I4 (no path profiling: K2).
        self.proc
            .prof
            .blocks
            .set_host(id.0, host.0, l.cache.flushes);
        Ok(Some(id))
    }

    /// Keep block `b`, emitted as `em` with `env`, for the end (K3).
    pub(in crate::dispatch) fn keep(
        &self,
        l: &mut Locked,
        b: &IrBlock,
        env: &EmitEnv,
        em: &Emitted,
    ) {
        let (Some(id), ring) = (
            match env.prologue {
                Prologue::Ring { id } => Some(id),
                Prologue::None => Some(self.proc.view.blocks.coded()),
                _ => None,
            },
            env.prologue.ring_id().is_some(),
        ) else {
            return;
        };
        // What the translation was made from (another thread may have
        // written the code since).
        let guest = &b.raw[..];
        let made = Made {
            meta: crate::dispatch::profiling::block_meta(b),
            ring,
            at: Placement {
                host: env.host_base,
                guest: 0,
                block: id,
                first_site: env.first_site,
                stubs: env.stubs.site,
            },
            em,
            guest,
        };
        let images = self.proc.prof.images();
        l.kept.record(&images, &made);
    }
}
