//! The per-entry loop's side of Pisat (superblock/pisat/mod.rs): cutting
//! each guest thread's block stream into windows, and the monitor rounds
//! that feed them to the miner and turn its patterns into requests.
//!
//! I1: the per-entry loop pays one decrement and compare per ring entry
//!     (with `--selector counting` the countdown starts at 2^64-1 and never
//!     ends), and the fast loop one subtraction per run, as it never takes
//!     more entries than the countdown has left, nor a block id while a
//!     window is open (`quiet`); with Pisat, a call that stores the block
//!     id while a window is open (`window` block ids from every `interval`
//!     ring entries of the thread: records and superblock passes count towards the
//!     interval, so windows keep coming when most code runs in
//!     superblocks). Handing windows over happens once per batch, mining
//!     once per round.
//! I2: a window holds block ids only, in the order the thread ran them;
//!     superblock passes (tagged records) are not in it, so what already
//!     runs as a superblock is not mined again.
//! I3: the admission rule: a pattern may start at any block that does not
//!     end in a syscall or trap, and continue into a block only along a
//!     transition the monitor has seen: the next block is one of the
//!     previous block's two ways (the first two successors it had, which
//!     for a branch are its two sides), and for a direct exit also one of
//!     its own targets (`select::follows`, what `select::check_path`
//!     keeps). A CFG edge alone is not enough: a block that can branch
//!     over another would make paths the program never runs in a row
//!     (1,3,4,0,2 from a loop 0..4 whose blocks can skip one) frequent as
//!     gapped subsequences.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Tables, ThreadState};
use crate::monitor::superblock::select::follows;
use crate::monitor::superblock::{Request, Trigger};
use crate::monitor::{BlockMeta, BlockTable, ExitKind};

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

    /// The window is full (or spanned its interval): hand it over at the
    /// batch's end; the next opens `interval` entries after this one did.
    fn close(&mut self) {
        self.done.push(std::mem::take(&mut self.buf));
        self.open = false;
        self.countdown = self.span.max(1);
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
        let slots = &*self;
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
fn admits(metas: &[BlockMeta], t: &Tables, p: Option<u32>, e: u32) -> bool {
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
    let seen = t.successor_blocks(p).contains(&e);
    seen && match mp.exit {
        ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return => true,
        _ => follows(mp, me),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::superblock::pisat::tree::Support;
    use crate::monitor::superblock::pisat::Config;
    use crate::monitor::SbConfig;

    /// A loop of `n` blocks: block i branches to i + 1 or i + 2.
    fn loop_table(n: u64) -> BlockTable {
        let t = BlockTable::new(64).unwrap();
        for i in 0..n {
            t.push(BlockMeta {
                guest: 0x1000 + 16 * i,
                target: 0x1000 + 16 * ((i + 1) % n),
                next: 0x1000 + 16 * ((i + 2) % n),
                guest_len: 16,
                insns: 4,
                exit: ExitKind::Branch,
            });
        }
        t
    }

    fn pisat() -> SbConfig {
        SbConfig {
            enabled: true,
            block_threshold: 3000,
            edge_threshold: 5000,
            pisat: Some(Config {
                window: 64,
                interval: 256,
                sequences: 4,
                support: Support {
                    support1: 0.5,
                    support2: 4,
                },
                max_nodes: 1 << 16,
                max_depth: 16,
                budget_us: 1_000_000,
            }),
        }
    }

    #[test]
    fn windows_are_cut_across_batches_and_mined_into_requests() {
        let blocks = loop_table(5);
        let mut t = Tables::new(pisat());
        let taken = |b: u32| crate::contract::block_word(b, crate::contract::EXIT_TAKEN);
        let stream: Vec<u32> = (0..5000u32).map(|i| taken(i % 5)).collect();
        for chunk in stream.chunks(777) {
            t.process(0, chunk, &blocks);
        }
        // The first batch opens the countdown at its first entry; then a
        // window opens every 256 entries, whatever the batch sizes.
        let m = t.pisat.as_ref().unwrap();
        assert_eq!(m.stats.windows_captured, (5000 - 64) / 256 + 1);
        while t.mining() {
            t.mine(&blocks);
        }
        // One loop: one request, the rotation starting at block 0.
        assert_eq!(t.requests.len(), 1, "{:?}", t.requests);
        let r = &t.requests[0];
        assert_eq!(r.path.as_deref(), Some(&[0, 1, 2, 3, 4][..]));
        assert!(matches!(r.trigger, Trigger::Mined { length: 5, .. }));
        // The counting triggers are off with Pisat.
        let low = |pisat| SbConfig {
            block_threshold: 100,
            pisat,
            ..self::pisat()
        };
        let mut counting = Tables::new(low(None));
        counting.process(0, &stream, &blocks);
        assert!(counting.pisat.is_none() && !counting.requests.is_empty());
        let mut mined = Tables::new(low(pisat().pisat));
        mined.process(0, &stream, &blocks);
        assert!(mined.requests.is_empty());
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
            let mut cfg = pisat();
            if let Some(c) = cfg.pisat.as_mut() {
                c.window = 1 + next(80) as u32;
                c.interval = 1 + next(300);
            }
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
                wf.extend(fast.pisat.as_mut().unwrap().take_pending());
                ws.extend(slow.pisat.as_mut().unwrap().take_pending());
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

    /// What the per-entry loop costs with and without Pisat, and what
    /// mining costs per element; prints only (a benchmark: run with
    /// `cargo test --release --lib tables::mine -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn cost_per_entry() {
        let blocks = loop_table(7);
        let stream: Vec<u32> = (0..1u32 << 22)
            .map(|i| crate::contract::block_word((i * 3 + i / 7) % 7, crate::contract::EXIT_FALL))
            .collect();
        let counting = SbConfig {
            pisat: None,
            block_threshold: u32::MAX,
            ..pisat()
        };
        // The default window and interval (options.rs).
        let mut default = pisat();
        if let Some(c) = default.pisat.as_mut() {
            c.window = 256;
            c.interval = 8192;
            c.sequences = 16;
            c.support.support2 = 8;
        }
        for (name, sb) in [("counting", counting), ("pisat", default)] {
            // The best of five passes over the stream (a busy machine
            // only ever makes a pass slower).
            let mut t = Tables::new(sb);
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t0 = Instant::now();
                for chunk in stream.chunks(1 << 16) {
                    t.process(0, chunk, &blocks);
                }
                best = best.min(t0.elapsed().as_secs_f64());
            }
            let per = best * 1e9 / stream.len() as f64;
            let t1 = Instant::now();
            while t.mining() {
                t.mine(&blocks);
            }
            let mined = t.pisat.as_ref().map_or(0, |m| m.stats.elements_mined);
            println!(
                "{name}: {per:.2} ns per entry in the loop; mining {:.0} ns per element ({mined} elements)",
                t1.elapsed().as_secs_f64() * 1e9 / mined.max(1) as f64
            );
        }
    }
}
