//! The per-entry loop's side of Pisat (design S2): cutting each guest
//! thread's block stream into windows, which the second tier takes
//! ([`Tables::take_windows`]) and mines into superblock requests
//! (superblock/pisat).
//!
//! I1: the per-entry loop pays one decrement and compare per ring entry
//!     (with `--selector counting` the countdown starts at 2^64-1 and never
//!     ends), and the fast loop one subtraction per run, as it never takes
//!     more entries than the countdown has left, nor a block id while a
//!     window is open (`quiet`); with Pisat, a call that stores the block
//!     id while a window is open (`window` block ids from every `interval`
//!     ring entries of the thread: records and superblock passes count towards the
//!     interval, so windows keep coming when most code runs in
//!     superblocks). Windows are handed over once per batch.
//! I2: a window holds block ids only, in the order the thread ran them;
//!     superblock passes (tagged records) are not in it, so what already
//!     runs as a superblock is not mined again.

use super::{Tables, ThreadState};

/// The windows `--selector pisat` cuts (I1): `window` block ids from
/// every `interval` ring entries of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    pub window: u32,
    pub interval: u64,
}

/// Where a thread's stream stands in its windows: `countdown` ring
/// entries until the next event (a window opens, or while it is open the
/// next block id is stored). `u64::MAX` without Pisat: never.
#[derive(Debug, Clone)]
pub(super) struct Capture {
    countdown: u64,
    buf: Vec<u32>,
    open: bool,
    /// Ring entries the open window may still span.
    span: u64,
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
            span: 0,
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

    /// Entries that may go by before the capture must see one, and
    /// whether they must be superblock passes (an open window takes every
    /// block id): the fast loop takes at most these and then
    /// [`Capture::skip`]s them, exactly as `push`/`tick` would have
    /// counted them down.
    #[inline(always)]
    pub(super) fn quiet(&self) -> (u64, bool) {
        if self.open {
            (self.span - 1, true)
        } else {
            (self.countdown - 1, false)
        }
    }

    /// `n` entries, at most [`Capture::quiet`]'s, went by in the fast loop.
    #[inline(always)]
    pub(super) fn skip(&mut self, n: u64) {
        if self.open {
            debug_assert!(n < self.span && self.countdown == 1);
            self.span -= n;
        } else {
            debug_assert!(n < self.countdown);
            self.countdown -= n;
        }
    }

    /// A tagged record's word went by: it counts towards the interval
    /// (superblock passes take time too), but a window opens only at a
    /// block id, and one open for `interval` entries closes with what it
    /// has (code running in superblocks leaves few block ids to take).
    #[inline(always)]
    pub(super) fn tick(&mut self) {
        if self.countdown > 1 {
            self.countdown -= 1;
        } else if self.open {
            self.span -= 1;
            if self.span == 0 {
                self.close();
            }
        }
    }

    /// A window opens at `e`, or takes `e`.
    #[cold]
    #[inline(never)]
    fn turn(&mut self, e: u32) {
        if !self.open {
            self.open = true;
            self.span = self.interval.max(1);
        }
        self.buf.push(e);
        self.span -= 1;
        if self.buf.len() < self.window as usize && self.span > 0 {
            self.countdown = 1;
        } else {
            self.close();
        }
    }

    /// An id epoch ended (tables/epoch.rs I5): the ids taken so far name
    /// other blocks now; an open window goes on from here.
    pub(super) fn epoch(&mut self) {
        self.buf.clear();
        self.done.clear();
    }

    /// The window is full (or spanned its interval): hand it over at the
    /// batch's end; the next opens `interval` entries after this one did.
    fn close(&mut self) {
        self.done.push(std::mem::take(&mut self.buf));
        self.open = false;
        self.countdown = self.span.max(1);
    }
}

impl Tables {
    /// Before and after each batch of a thread: hand its filled windows
    /// over (before its first batch, open its first window: the countdown
    /// runs through batches, so a large batch holds a window every
    /// `interval` entries, as a small one does).
    pub(super) fn window_turn(&mut self, st: &mut ThreadState) {
        let Some(cfg) = self.sb.windows else {
            return;
        };
        let c = &mut st.window;
        if c.window == 0 {
            c.window = cfg.window;
            c.interval = cfg.interval;
            c.countdown = 1;
        }
        self.windows.append(&mut c.done);
    }

    /// The windows filled since the last call, oldest first (for the
    /// second tier to mine).
    pub fn take_windows(&mut self) -> Vec<Vec<u32>> {
        std::mem::take(&mut self.windows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::tables::loop_table;
    use crate::monitor::SbConfig;

    fn windowed(window: u32, interval: u64) -> SbConfig {
        SbConfig {
            enabled: true,
            block_threshold: 3000,
            edge_threshold: 5000,
            windows: Some(Windows { window, interval }),
        }
    }

    #[test]
    fn windows_are_cut_across_batches() {
        let blocks = loop_table(5);
        let mut t = Tables::new(windowed(64, 256));
        let taken = |b: u32| crate::contract::block_word(b, crate::contract::EXIT_TAKEN);
        let stream: Vec<u32> = (0..5000u32).map(|i| taken(i % 5)).collect();
        let mut windows = Vec::new();
        for chunk in stream.chunks(777) {
            t.process(0, chunk, &blocks);
            windows.extend(t.take_windows());
        }
        // The first batch opens the countdown at its first entry; then a
        // window opens every 256 entries, whatever the batch sizes, and
        // holds the next 64 block ids, as they ran.
        assert_eq!(windows.len(), (5000 - 64) / 256 + 1);
        for (k, w) in windows.iter().enumerate() {
            assert_eq!(w.len(), 64, "window {k}");
            assert!(
                w.windows(2).all(|p| p[1] == (p[0] + 1) % 5),
                "window {k}: {w:?}"
            );
        }
        // The counting triggers are off with windows; without, they ask.
        let low = |windows| SbConfig {
            block_threshold: 100,
            windows,
            ..windowed(64, 256)
        };
        let mut counting = Tables::new(low(None));
        counting.process(0, &stream, &blocks);
        assert!(counting.take_windows().is_empty() && !counting.requests.is_empty());
        let mut mined = Tables::new(low(Some(Windows {
            window: 64,
            interval: 256,
        })));
        mined.process(0, &stream, &blocks);
        assert!(mined.requests.is_empty());
        // Nor are windows cut for tables that ask for no superblocks.
        let off = SbConfig {
            enabled: false,
            ..windowed(64, 256)
        };
        let mut off = Tables::new(off);
        off.process(0, &stream, &blocks);
        assert!(off.take_windows().is_empty());
    }

    /// The fast loop takes the entries between windows, and the passes
    /// while one is open (I1): the windows are the general loop's,
    /// whatever the batches, records and superblock passes.
    #[test]
    fn the_fast_loop_cuts_the_windows_the_general_one_does() {
        use crate::monitor::tables::{SbAccount, SbExitAcct};
        let blocks = loop_table(7);
        let metas = blocks.published().to_vec();
        // A superblock of blocks 0 and 1, leaving from 1 by either side.
        let sb = |t: &mut Tables| {
            let base = t.next_units(4).unwrap();
            let exits = vec![
                SbExitAcct::direct(1, 0x1000 + 16 * 2),
                SbExitAcct::direct(1, 0x1000 + 16 * 3),
            ];
            let acc = SbAccount::new(vec![0, 1], vec![u16::MAX, 0], &[4, 4], exits, vec![], base);
            t.add_superblock(0, acc, &metas);
            base
        };
        for seed in 1..20u64 {
            let mut rng = crate::monitor::tables::TestRng::new(seed);
            let mut next = |n: u64| rng.below(n);
            let mut stream = Vec::new();
            let mut b = 0u32;
            let passes = next(4);
            let cfg = windowed(1 + next(80) as u32, 1 + next(300));
            let mut fast = Tables::new(cfg);
            let mut slow = Tables::new(cfg);
            slow.fast = false;
            let unit = sb(&mut fast);
            assert_eq!(unit, sb(&mut slow));
            for _ in 0..20_000 {
                let t = next(2) as u32;
                if b == 0 && next(4) < passes {
                    // The pass leaves block 1 by its taken or its
                    // fall-through side.
                    stream.push(unit + t);
                    b = 1;
                } else {
                    let k = if t == 0 {
                        crate::contract::EXIT_TAKEN
                    } else {
                        crate::contract::EXIT_FALL
                    };
                    stream.push(crate::contract::block_word(b, k));
                }
                b = (b + 1 + t) % 7;
                if next(50) == 0 {
                    // A rep record: the fast loop leaves it to the general.
                    let w = crate::contract::block_word(b, 0);
                    stream.extend_from_slice(&[crate::monitor::TAG_REP | 2, w, 9, 2]);
                }
            }
            let (mut wf, mut ws) = (Vec::new(), Vec::new());
            let mut i = 0;
            while i < stream.len() {
                let n = (1 + next(600) as usize).min(stream.len() - i);
                fast.process(0, &stream[i..i + n], &blocks);
                slow.process(0, &stream[i..i + n], &blocks);
                wf.extend(fast.take_windows());
                ws.extend(slow.take_windows());
                i += n;
            }
            assert!(ws.len() > 10, "seed {seed}: {} windows", ws.len());
            assert_eq!(wf, ws, "seed {seed}");
            fast.finish();
            slow.finish();
            assert_eq!(fast.count(0), slow.count(0));
            assert_eq!(fast.edges(), slow.edges());
        }
    }
}
