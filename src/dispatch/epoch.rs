//! Id epochs: block ids given again (issue 19's bounded memory under code
//! rewritten for ever). Every translation takes a block id; tables indexed
//! by id (the block table, the monitor's word tables) grow with them, and
//! the ring's word format holds ids below `BLOCK_ID_LIMIT`. Once a
//! process has used `--id-epoch` ids, at least twice as many as its live
//! translations, the dispatcher ends the epoch: every translation is
//! dropped, the monitor folds what it knows by id into entries merged by
//! guest block (monitor/tables/epoch.rs), and ids start from 0 again. The
//! live code is translated again as it runs, like after a full code cache.
//!
//! E1: locks in fork.rs F1's order: `forking`, then the translation lock.
//!     So no fork runs meanwhile (a fork pauses the monitor before it takes
//!     the translation lock: the monitor this waits for could not go on).
//! E2: an epoch ends only with every other guest thread out of translated
//!     code, every translation dropped (a full flush, cause `id_epoch`),
//!     and the monitor's fold done (monitor I7); then the block table
//!     starts its ids again (cache/blocks.rs I3).
//! E3: what keeps block ids across the run forgets or renames them at the
//!     fold: `--store`'s pre-building and `--selector pisat`'s mining
//!     forget them (store/feed.rs I5, monitor/tables/epoch.rs I5), `hotlift
//!     paths` names its reference trace's blocks by what they were and
//!     makes its unit again (paths/collect.rs I3). With `--id-epoch 0` a
//!     run stops at `BLOCK_CAPACITY` ids.
//! E4: the counters of `--count-inline` and `--count-check` (by id in
//!     translated code) fold by block at the same stop, keyed as the
//!     monitor's entries (profiling/inline.rs).

use std::sync::atomic::Ordering;

use super::process::{FlushCause, STOP_LIMIT};
use super::{Ending, Vm};
use crate::monitor::EpochEnd;

/// How long the dispatcher waits for the monitor's fold (E2) before it
/// gives up on the run.
const FOLD_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The block count at which a process first looks at ending an epoch
/// (u32::MAX: never, E3).
pub(super) fn first_check(opts: &crate::options::RunOptions) -> u32 {
    if opts.id_epoch == 0 {
        u32::MAX
    } else {
        opts.id_epoch
    }
}

impl Vm {
    /// End the id epoch if its time has come (module docs); called where a
    /// block may be translated next, before the translation lock is taken
    /// (E1).
    #[inline]
    pub(super) fn id_epoch_if_due(&mut self) {
        let next = self.proc.epoch_next.load(Ordering::Relaxed);
        if self.proc.prof.blocks.len() >= next {
            self.end_id_epoch();
        }
    }

    #[cold]
    #[inline(never)]
    fn end_id_epoch(&mut self) {
        let proc = self.proc.clone();
        let _one = proc.forking.lock().unwrap_or_else(|e| e.into_inner());
        let mut l = proc.lock();
        let blocks = &proc.prof.blocks;
        let (used, live) = (blocks.len(), l.cache.by_guest.len() as u32);
        if used < proc.epoch_next.load(Ordering::Relaxed) {
            // Another thread ended it meanwhile.
            return;
        }
        if used < live.saturating_mul(2) {
            // Most ids name live code: look again once as many more came
            // as the epoch allows (a large program's working set is not
            // dropped again and again).
            let step = proc.opts.id_epoch.max(1);
            proc.epoch_next
                .store(used.saturating_add(step), Ordering::Relaxed);
            return;
        }
        proc.flush_causes[FlushCause::IdEpoch as usize].fetch_add(1, Ordering::Relaxed);
        if let Err(e) = proc.threads.stop_others(&self.entry, STOP_LIMIT) {
            return self.give_up(&format!("{e}: cannot end the id epoch"));
        }
        proc.flush_stopped(&mut l);
        // E2: the monitor folds what it knows of the old ids.
        let metas = blocks.published().to_vec();
        let images: Vec<u32> = {
            let log = proc.prof.images();
            let base = blocks.epoch_base();
            metas
                .iter()
                .enumerate()
                .map(|(id, m)| {
                    let seq = base + id as u64;
                    let r = log.records.iter().rposition(|r| r.holds(m.guest, seq));
                    r.map_or(u32::MAX, |i| i as u32)
                })
                .collect()
        };
        let epochs = proc
            .prof
            .monitor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|m| m.epochs());
        // E4: the inline counters fold beside the monitor.
        proc.prof.fold_inline(&metas, &images);
        let folded = epochs.is_none_or(|e| e.end_epoch(EpochEnd { metas, images }, FOLD_LIMIT));
        if !folded {
            return self.give_up("the monitor did not take the end of an id epoch");
        }
        blocks.new_epoch();
        proc.prof.inherited_blocks.store(0, Ordering::Release);
        proc.epoch_next
            .store(proc.opts.id_epoch.max(1), Ordering::Relaxed);
        proc.threads.go();
        drop(l);
        self.sync_ibl();
    }

    /// The epoch cannot end: the run stops with its profile (status 125).
    fn give_up(&mut self, why: &str) {
        crate::host::say!("hotlift: {why}");
        let code = crate::status::EXIT_HOTLIFT_FAILED;
        self.finish(Ending::Exit { code });
        // SAFETY: _exit has no preconditions.
        unsafe { libc::_exit(code) }
    }
}
