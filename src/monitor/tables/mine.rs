//! The per-entry loop's side of Pisat (superblock/pisat/mod.rs): cutting
//! each guest thread's block stream into windows, and the monitor rounds
//! that feed them to the miner and turn its patterns into requests.
//!
//! I1: with `--selector counting` the per-entry loop pays one compare of a
//!     zero counter per block entry; with Pisat, a store more while a
//!     window is open. Everything else happens once per batch or round.
//! I2: a window holds block ids only, in the order the thread ran them;
//!     superblock passes (tagged records) are not in it, so what already
//!     runs as a superblock is not mined again.
//! I3: the admission rule: a pattern may start at any block that does not
//!     end in a syscall or trap, and continue into a block that can run
//!     right after the one before it — a direct exit's target
//!     (`select::follows`), or for an indirect exit a successor the
//!     monitor holds in that block's two ways — which is what
//!     `select::check_path` keeps.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Slot, Tables, ThreadState};
use crate::monitor::superblock::select::follows;
use crate::monitor::superblock::{Request, Trigger};
use crate::monitor::{BlockMeta, BlockTable, ExitKind};

/// A window being filled: `left` more block ids go into `buf`.
#[derive(Debug, Clone, Default)]
pub(super) struct Capture {
    buf: Vec<u32>,
    left: u32,
    /// Ring entries of the thread at which the next window opens.
    next_at: u64,
}

impl Capture {
    /// Block `e` ran (I1, I2).
    #[inline(always)]
    pub(super) fn push(&mut self, e: u32) {
        if self.left != 0 {
            self.buf.push(e);
            self.left -= 1;
        }
    }
}

impl Tables {
    /// After a batch of a thread: offer its full window to the miner, and
    /// open the next one when its interval has passed.
    pub(super) fn window_turn(&mut self, st: &mut ThreadState) {
        let Some(m) = self.pisat.as_mut() else {
            return;
        };
        let c = &mut st.window;
        if c.left == 0 && !c.buf.is_empty() {
            m.offer(std::mem::take(&mut c.buf));
        }
        if c.left == 0 && st.entries >= c.next_at {
            let cfg = m.config();
            c.left = cfg.window;
            c.buf.reserve(cfg.window as usize);
            c.next_at = st.entries + cfg.interval;
        }
    }

    /// Has the miner windows to feed?
    pub fn mining(&self) -> bool {
        self.pisat.as_ref().is_some_and(|m| m.has_work())
    }

    /// One round of mining within the configured budget; the patterns it
    /// settles become superblock requests with their paths.
    pub fn mine(&mut self, blocks: &BlockTable) {
        let Some(mut m) = self.pisat.take() else {
            return;
        };
        let metas = blocks.published();
        let slots = &self.slots;
        let deadline = Instant::now() + Duration::from_micros(m.config().budget_us as u64);
        let mut admit = |p: Option<u32>, e: u32| admits(metas, slots, p, e);
        for p in m.work(&mut admit, deadline) {
            self.requests.push(Request {
                head: p.path[0],
                trigger: Trigger::Mined {
                    length: p.path.len() as u32,
                    sequences: p.sequences,
                    repeats: p.repeats,
                    database: p.database,
                },
                path: Some(Arc::from(p.path)),
            });
        }
        self.pisat = Some(m);
    }
}

/// May block `e` start a pattern (`p` None) or follow block `p` (I3)?
fn admits(metas: &[BlockMeta], slots: &[Slot], p: Option<u32>, e: u32) -> bool {
    let Some(me) = metas.get(e as usize) else {
        return false;
    };
    if matches!(me.exit, ExitKind::Syscall | ExitKind::Trap) {
        return false;
    }
    let Some(p) = p else {
        return true;
    };
    let Some(mp) = metas.get(p as usize) else {
        return false;
    };
    match mp.exit {
        ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return => {
            slots.get(p as usize).is_some_and(|s| s.way.contains(&e))
        }
        _ => follows(mp, me),
    }
}
