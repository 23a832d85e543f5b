//! The per-entry loop's side of Pisat (superblock/pisat/mod.rs): cutting
//! each guest thread's block stream into windows, and the monitor rounds
//! that feed them to the miner and turn its patterns into requests.
//!
//! I1: the per-entry loop pays one decrement and compare per block entry
//!     (with `--selector counting` the countdown starts at 2^64-1 and never
//!     ends); with Pisat, a call that stores the id while a window is
//!     open (`window` of every `interval` block entries of the thread).
//!     Handing windows over happens once per batch, mining once per round.
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

/// Where a thread's stream stands in its windows: `countdown` block
/// entries until the next event (a window opens, or while it is open the
/// next id is stored). `u64::MAX` without Pisat: never.
#[derive(Debug, Clone)]
pub(super) struct Capture {
    countdown: u64,
    buf: Vec<u32>,
    open: bool,
    window: u32,
    interval: u64,
    /// Windows filled since the last batch ended.
    done: Vec<Vec<u32>>,
}

impl Default for Capture {
    fn default() -> Self {
        Capture {
            countdown: u64::MAX,
            buf: Vec::new(),
            open: false,
            window: 0,
            interval: 0,
            done: Vec::new(),
        }
    }
}

impl Capture {
    /// Block `e` ran (I1, I2).
    #[inline(always)]
    pub(super) fn push(&mut self, e: u32) {
        self.countdown -= 1;
        if self.countdown == 0 {
            self.turn(e);
        }
    }

    /// A window opens at `e`, or takes `e`.
    #[cold]
    #[inline(never)]
    fn turn(&mut self, e: u32) {
        self.open = true;
        self.buf.push(e);
        if self.buf.len() < self.window as usize {
            self.countdown = 1;
            return;
        }
        self.done.push(std::mem::take(&mut self.buf));
        self.open = false;
        // The next window opens `interval` entries after this one did.
        self.countdown = self.interval.saturating_sub(self.window as u64).max(1);
    }
}

impl Tables {
    /// Before and after each batch of a thread: offer its filled windows
    /// to the miner (before its first batch, open its first window: the
    /// countdown runs through batches, so a large batch holds a window
    /// every `interval` entries, as a small one does).
    pub(super) fn window_turn(&mut self, st: &mut ThreadState) {
        let Some(m) = self.pisat.as_mut() else {
            return;
        };
        let c = &mut st.window;
        if c.window == 0 {
            let cfg = m.config();
            c.window = cfg.window;
            c.interval = cfg.interval;
            c.countdown = 1;
        }
        for w in c.done.drain(..) {
            m.offer(w);
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
