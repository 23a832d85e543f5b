//! `--count-inline` and `--count-check` across id epochs (dispatch/
//! epoch.rs): the inline counters are indexed by block id, and an epoch
//! gives every id again, so at its end the counters of the ending
//! epoch's blocks are folded by block, as the monitor folds its own
//! (monitor/tables/epoch.rs), and set to zero.
//!
//! N1: a fold runs with every other guest thread stopped (E2): no
//!     counter moves under it. Its entries are keyed exactly as the
//!     monitor's (the same block metas and images of the same epoch end),
//!     so `--count-check` compares them entry by entry.
//! N2: the threads' totals go on across epochs: the folded part of each
//!     thread's counts is kept beside its entries.

use crate::cache::BlockMeta;
use crate::monitor::{Retired, Snapshot};
use crate::profile::count_check::{CountCheck, Folded};

/// The counters of ended epochs (N1, N2).
#[derive(Debug, Default)]
pub(super) struct InlineFolded {
    pub retired: Retired,
    /// Per thread, in start order: its counts folded so far.
    pub per_thread: Vec<u64>,
}

impl super::Profiling {
    /// N1: fold every thread's counters of the ending epoch's blocks
    /// (`metas`, `images` by id) and zero them.
    pub(crate) fn fold_inline(&self, metas: &[BlockMeta], images: &[u32]) {
        let Some(all) = &self.inline else {
            return;
        };
        let all = all.lock().unwrap_or_else(|e| e.into_inner());
        let mut f = self.inline_folded.lock().unwrap_or_else(|e| e.into_inner());
        let f = &mut *f;
        let n = metas.len().min(super::BLOCK_CAPACITY as usize);
        f.per_thread.resize(f.per_thread.len().max(all.len()), 0);
        for (t, c) in all.iter().enumerate() {
            // SAFETY: each array holds BLOCK_CAPACITY u64s; its thread is
            // stopped or gone (N1), so nothing else touches them now.
            let part = unsafe { std::slice::from_raw_parts_mut(c.0, n) };
            for (id, v) in part.iter_mut().enumerate() {
                if *v != 0 {
                    let image = images.get(id).copied().unwrap_or(u32::MAX);
                    let e = f.retired.entry(metas[id], image) as usize;
                    f.retired.counts[e] += *v;
                    f.per_thread[t] += *v;
                    *v = 0;
                }
            }
        }
        f.retired.epochs += 1;
    }

    /// A forked child's counters start afresh: the folded ones are its
    /// parent's.
    pub(super) fn forget_inline_folds(&self) {
        *self.inline_folded.lock().unwrap_or_else(|e| e.into_inner()) = InlineFolded::default();
    }

    /// `--count-inline`: the ended epochs' counts, for the snapshot made
    /// from the counters (the profile merges them as the monitor's).
    pub(super) fn inline_retired(&self) -> Retired {
        self.inline_folded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retired
            .clone()
    }

    /// `--count-check` over the ended epochs too (N1, N2).
    pub(super) fn count_check(&self, snapshot: &Snapshot, per_thread: &[Vec<u64>]) -> CountCheck {
        let f = self.inline_folded.lock().unwrap_or_else(|e| e.into_inner());
        let folded = Folded {
            retired: &f.retired,
            per_thread: &f.per_thread,
        };
        CountCheck::of(snapshot, per_thread, folded)
    }
}
