//! Timed samples of the guest threads' call stacks, for the time tree
//! (design S4, src/timetree): every N µs of a thread's running time,
//! or after every K of its ring entries, the monitor notes the thread's
//! calling context (calltree.rs: a context id is an interned shadow call
//! stack).
//!
//! What a sample's time means. The monitor processes a ring's entries
//! with some lag and in bursts (it naps when caught up, catches up fast
//! after building a superblock), so the time at which it processes an
//! entry says little about when the guest ran it. Instead, at every drain
//! round the monitor reads each ring's producer position and then its
//! clock ([`Sampler::checkpoint`]): the entries between two reads of one
//! ring were produced between the two times. A sample's time is the time
//! its entry was produced, interpolated linearly within that interval, in
//! nanoseconds of the monitor's clock (`CLOCK_MONOTONIC`) since the
//! monitor started. The reads are at most ~50 µs apart while the monitor
//! keeps up with a busy guest (its nap; 0.4 ms while the rings only
//! trickle; 2 ms when it shares one core with the guest), longer while it
//! is busy.
//!
//! Time mode (`Period::Micros`): a thread's running time grows by the
//! length of each interval in which it produced entries; an interval with
//! none is idle (the thread blocked, or stopped) and adds nothing, so
//! samples are of running code, as a CPU profiler's are. Each time the
//! running time passes a multiple of N µs, the entry produced then (by
//! interpolation) is sampled. Entry mode (`Period::Entries`): after every
//! K-th entry of the thread, whatever the time (the same entries in every
//! run of a deterministic single-threaded guest without superblocks).
//!
//! I1: the per-entry loop pays nothing for sampling: tables/sampling.rs
//!     cuts each batch at the next sample's entry ([`Sampler::until`]);
//!     the clock is read once per ring per drain round.
//! I2: a stack type is a (thread index, context) pair, interned in the
//!     order first sampled; at most [`MAX_SAMPLES`] samples are kept,
//!     later ones are counted in `dropped`. Samples of different threads
//!     are not in time order (the tree sorts them).
//! I3: within one thread, sample times are nondecreasing: intervals
//!     follow each other and interpolation is monotonic within one.
//! I4: a counted loop's record (contract I2) carries the time stamp
//!     counter of when it was made, and a loop pushes few words for the
//!     time it runs; so the records of a batch are found before it is
//!     processed ([`Sampler::stamps`]) and the interpolation goes through
//!     them (piecewise linear: exact at each record), once the time stamp
//!     counter's rate is known (after a millisecond of checkpoints).
//!
//! Usage: `Sampler::new(config)`; per drain of thread t's ring
//! `checkpoint(t, lag)`; then per piece of the batch `until(t)` and
//! `passed(t, n, node)` after processing n ≤ until(t) entries of thread
//! t, which is then in context `node`.

use std::time::Instant;

use hashbrown::HashMap;

use crate::timetree::{Params, Sample};

/// Samples kept at most (I2): 16 Mi, about 200 MB of profile JSON.
pub const MAX_SAMPLES: usize = 1 << 24;

/// When samples are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    /// Every this many µs of a thread's running time.
    Micros(u64),
    /// After every this many ring entries of a thread.
    Entries(u64),
}

/// What the run's options ask for (options.rs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleConfig {
    pub period: Period,
    pub tree: Params,
}

/// One thread's position in its entries and in time.
#[derive(Debug, Clone, Copy, Default)]
struct ThreadClock {
    /// Entries of the thread processed so far.
    done: u64,
    /// The current interval: entries `(e0, e1]` were produced in
    /// `(t0, t1]`.
    e0: u64,
    e1: u64,
    t0: u64,
    t1: u64,
    /// A checkpoint has been seen.
    seen: bool,
    /// Time mode: running time before the current interval, and the
    /// running time of the next sample.
    run: u64,
    due_run: u64,
    /// The entry count at which the next sample is taken (u64::MAX: none
    /// known yet), and its time (time mode).
    next: u64,
    next_t: u64,
}

/// The samples of one run (monitor side).
#[derive(Debug, Default)]
pub struct Sampler {
    /// None: sampling is off.
    pub config: Option<SampleConfig>,
    start: Option<Instant>,
    /// Time of the last checkpoint of any thread (a new thread's first
    /// interval starts there).
    last_checkpoint: u64,
    threads: Vec<ThreadClock>,
    interned: HashMap<(u32, u32), u32>,
    /// Per thread: (entry, time) of the time-stamped records found in the
    /// current interval, ascending (I4).
    knots: Vec<Vec<(u64, u64)>>,
    /// The time stamp counter and the clock at the first checkpoint and at
    /// the last one (I4).
    tsc_first: Option<(u64, u64)>,
    tsc_last: (u64, u64),
    /// Stack types: (thread index, context id) (I2).
    pub stacks: Vec<(u32, u32)>,
    pub samples: Vec<Sample>,
    pub dropped: u64,
}

impl Sampler {
    /// A sampler for `config` (None: off), its clock starting now.
    pub fn new(config: Option<SampleConfig>) -> Sampler {
        Sampler {
            config,
            start: Some(Instant::now()),
            ..Sampler::default()
        }
    }

    fn now(&self) -> u64 {
        self.start.map_or(0, |s| {
            u64::try_from(s.elapsed().as_nanos()).unwrap_or(u64::MAX)
        })
    }

    fn thread(&mut self, t: usize) -> &mut ThreadClock {
        if self.threads.len() <= t {
            let next = match self.config.map(|c| c.period) {
                Some(Period::Entries(k)) => k.max(1),
                _ => u64::MAX,
            };
            let due_run = match self.config.map(|c| c.period) {
                Some(Period::Micros(us)) => us.saturating_mul(1000).max(1),
                _ => 0,
            };
            self.threads.resize(
                t + 1,
                ThreadClock {
                    next,
                    due_run,
                    ..ThreadClock::default()
                },
            );
        }
        &mut self.threads[t]
    }

    /// The monitor read thread `t`'s producer position: `lag` entries are
    /// published and not processed yet. Reads the clock (I1).
    pub fn checkpoint(&mut self, t: usize, lag: u64) {
        let Some(cfg) = self.config else { return };
        let now = self.now();
        // SAFETY: rdtsc has no preconditions.
        let tsc = unsafe { std::arch::x86_64::_rdtsc() };
        self.tsc_first.get_or_insert((tsc, now));
        self.tsc_last = (tsc, now);
        if let Some(k) = self.knots.get_mut(t) {
            k.clear();
        }
        let last_any = std::mem::replace(&mut self.last_checkpoint, now);
        let c = self.thread(t);
        if !c.seen {
            c.seen = true;
            c.t1 = last_any.min(now);
        }
        if c.e1 > c.e0 {
            c.run += c.t1 - c.t0;
        }
        // Entries after `done` were published after the previous read.
        c.e0 = c.done;
        c.t0 = c.t1;
        c.e1 = c.done + lag;
        c.t1 = now.max(c.t0);
        if let Period::Micros(_) = cfg.period {
            // A sample due in an idle stretch is not taken late.
            c.due_run = c.due_run.max(c.run);
            schedule_time(c, &[]);
        }
    }

    /// Does the sampler place samples by time (then the records of counted
    /// loops are time stamps it wants, I4)?
    pub fn wants_stamps(&self) -> bool {
        matches!(self.config.map(|c| c.period), Some(Period::Micros(_)))
    }

    /// The clock's time of time stamp counter value `tsc`, once its rate
    /// is known (I4).
    fn tsc_ns(&self, tsc: u64) -> Option<u64> {
        let (t0, n0) = self.tsc_first?;
        let (t1, n1) = self.tsc_last;
        if n1.saturating_sub(n0) < 1_000_000 || t1 <= t0 {
            return None;
        }
        let rate = (n1 - n0) as f64 / (t1 - t0) as f64;
        let d = (tsc as i128 - t1 as i128) as f64 * rate;
        Some((n1 as f64 + d).max(0.0) as u64)
    }

    /// The next entries of thread `t` hold time-stamped records at these
    /// offsets (I4): interpolate through them.
    pub fn stamps(&mut self, t: usize, at: &[(usize, u64)]) {
        if !self.wants_stamps() {
            return;
        }
        let times: Vec<(usize, u64)> = at
            .iter()
            .filter_map(|&(i, tsc)| Some((i, self.tsc_ns(tsc)?)))
            .collect();
        if times.is_empty() {
            return;
        }
        if self.knots.len() <= t {
            self.knots.resize(t + 1, Vec::new());
        }
        let c = *self.thread(t);
        let knots = &mut self.knots[t];
        for (i, ns) in times {
            let pos = c.done + i as u64;
            let (lp, lt) = knots.last().copied().unwrap_or((c.e0, c.t0));
            if pos <= lp || pos >= c.e1 {
                continue;
            }
            // Within the interval, and never back in time (I3).
            knots.push((pos, ns.clamp(lt, c.t1)));
        }
        let c = &mut self.threads[t];
        if c.next != u64::MAX {
            schedule_time(c, &self.knots[t]);
        }
    }

    /// Entries of thread `t` that can be processed before its next sample
    /// (usize::MAX when sampling is off or none is known).
    #[inline]
    pub fn until(&mut self, t: usize) -> usize {
        if self.config.is_none() {
            return usize::MAX;
        }
        let c = self.thread(t);
        usize::try_from(c.next.saturating_sub(c.done)).unwrap_or(usize::MAX)
    }

    /// `n` entries of thread `t` were processed (n ≤ `until(t)`); the
    /// thread is now in context `node`.
    #[inline]
    pub fn passed(&mut self, t: usize, n: usize, node: u32) {
        let Some(cfg) = self.config else { return };
        self.thread(t);
        let c = &mut self.threads[t];
        c.done += n as u64;
        if c.done < c.next {
            return;
        }
        let knots = self.knots.get(t).map_or(&[][..], |k| k.as_slice());
        let at = match cfg.period {
            Period::Entries(k) => {
                let e = c.next;
                c.next = c.next.saturating_add(k.max(1));
                if c.e1 > c.e0 && (c.e0..=c.e1).contains(&e) {
                    let f = (e - c.e0) as f64 / (c.e1 - c.e0) as f64;
                    Some(c.t0 + ((c.t1 - c.t0) as f64 * f) as u64)
                } else {
                    // No interval holds it (no checkpoint: unit tests).
                    None
                }
            }
            Period::Micros(us) => {
                let at = c.next_t;
                c.due_run = c.due_run.saturating_add(us.saturating_mul(1000).max(1));
                schedule_time(c, knots);
                Some(at)
            }
        };
        let at = at.unwrap_or_else(|| self.now());
        self.sample(t as u32, node, at);
    }

    /// Note that thread `t` was in context `node` at time `at` (I2).
    fn sample(&mut self, t: u32, node: u32, at: u64) {
        if self.samples.len() >= MAX_SAMPLES {
            self.dropped += 1;
            return;
        }
        let next = self.stacks.len() as u32;
        let stack = *self.interned.entry((t, node)).or_insert(next);
        if stack == next {
            self.stacks.push((t, node));
        }
        self.samples.push(Sample { t: at, stack });
    }
}

/// Time mode: where in the current interval the next sample falls (the
/// entry produced when the running time reaches `due_run`), or none yet;
/// through the interval's time-stamped `knots` (I4).
fn schedule_time(c: &mut ThreadClock, knots: &[(u64, u64)]) {
    let len = c.t1 - c.t0;
    c.next = u64::MAX;
    if c.e1 <= c.e0 || c.due_run >= c.run + len {
        return;
    }
    let into = c.due_run - c.run;
    let at = c.t0 + into;
    // The stretch of the interval that holds time `at`: knots are in time
    // order (`stamps`), and a long interval can hold many thousands of
    // them (a monitor that was descheduled for a second, counted loops
    // stamping all along), so searched, not scanned: a scan per sample
    // made the monitor quadratic there (busybox `sort -n` with every
    // loop in a superblock took minutes, not a second, on a loaded VM).
    let i = knots.partition_point(|k| k.1 < at);
    let from = i.checked_sub(1).map_or((c.e0, c.t0), |j| knots[j]);
    let to = knots.get(i).copied().unwrap_or((c.e1, c.t1));
    let f = (at - from.1) as f64 / (to.1 - from.1).max(1) as f64;
    let e = from.0 + ((to.0 - from.0) as f64 * f).ceil() as u64;
    // Never behind what was processed (the ring's lag may be off by a
    // few entries at a segment switch), never an inverted range.
    let lo = (c.e0 + 1).max(c.done);
    c.next = e.clamp(lo, c.e1.max(lo));
    c.next_t = c.t0 + into;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(s: &mut Sampler, t: usize, mut entries: usize, node: u32) {
        while entries > 0 {
            let n = s.until(t).min(entries);
            s.passed(t, n, node);
            entries -= n;
        }
    }

    fn got(s: &Sampler) -> Vec<(u32, u32)> {
        s.samples
            .iter()
            .map(|x| s.stacks[x.stack as usize])
            .collect()
    }

    #[test]
    fn entry_mode_samples_every_kth_entry_per_thread() {
        let mut s = Sampler::new(Some(SampleConfig {
            period: Period::Entries(10),
            tree: Params::default(),
        }));
        s.checkpoint(0, 30);
        drive(&mut s, 0, 25, 3);
        drive(&mut s, 1, 9, 4);
        drive(&mut s, 0, 5, 5);
        drive(&mut s, 1, 1, 4);
        // Thread 0: entries 10, 20 in context 3, 30 in 5; thread 1: 10.
        assert_eq!(got(&s), vec![(0, 3), (0, 3), (0, 5), (1, 4)]);
        assert_eq!(s.stacks.len(), 3, "(0,3) interned once");
        let t0: Vec<u64> = s.samples[..3].iter().map(|x| x.t).collect();
        assert!(t0.windows(2).all(|w| w[0] <= w[1]), "I3: {t0:?}");
    }

    #[test]
    fn time_mode_spreads_samples_over_the_produced_entries() {
        let mut s = Sampler::new(Some(SampleConfig {
            period: Period::Micros(1000),
            tree: Params::default(),
        }));
        s.checkpoint(0, 0);
        std::thread::sleep(std::time::Duration::from_millis(20));
        // 20 ms of running, 2000 entries: about 20 samples, spread evenly
        // (one per ~100 entries), in context 1 then 2.
        s.checkpoint(0, 2000);
        // However long the sleep really was (a loaded machine oversleeps):
        // one sample per whole millisecond of it.
        let ms = (s.threads[0].t1 - s.threads[0].t0) / 1_000_000;
        drive(&mut s, 0, 1000, 1);
        drive(&mut s, 0, 1000, 2);
        let n = s.samples.len() as u64;
        assert!(ms >= 20 && n.abs_diff(ms) <= 1, "{n} samples in {ms} ms");
        let ones = got(&s).iter().filter(|x| x.1 == 1).count();
        assert!(
            (ones as u64).abs_diff(n - ones as u64) <= 2,
            "{ones} of {n} in the first half"
        );
        assert!(s.samples.windows(2).all(|w| w[0].t < w[1].t), "I3");
        // Idle: an interval without entries adds no running time.
        s.checkpoint(0, 0);
        std::thread::sleep(std::time::Duration::from_millis(20));
        s.checkpoint(0, 0);
        s.checkpoint(0, 10);
        drive(&mut s, 0, 10, 3);
        assert!(
            got(&s).iter().filter(|x| x.1 == 3).count() <= 1,
            "idle time sampled"
        );
        let mut off = Sampler::new(None);
        off.checkpoint(0, 5);
        assert_eq!(off.until(0), usize::MAX);
        off.passed(0, 5, 1);
        assert!(off.samples.is_empty());
    }

    /// I4: among many knots (a long interval of counted loops), the next
    /// sample's entry is the one a scan of the knots in order finds,
    /// before, between, on and after knots, with equal times repeated.
    #[test]
    fn time_mode_finds_the_stretch_among_many_knots() {
        let (e0, e1, t0, t1) = (100u64, 100_100u64, 1_000u64, 1_001_000u64);
        let knots: Vec<(u64, u64)> = (1..10_000u64)
            .map(|i| (e0 + i * 10, t0 + (i / 2) * 200))
            .collect();
        for due in (0..1_000_000u64).step_by(997).chain([0, 200, 400, 999_999]) {
            let mut c = ThreadClock {
                e0,
                e1,
                t0,
                t1,
                seen: true,
                due_run: due,
                ..ThreadClock::default()
            };
            schedule_time(&mut c, &knots);
            let at = t0 + due;
            let (mut from, mut to) = ((e0, t0), (e1, t1));
            for &k in &knots {
                if k.1 < at {
                    from = k;
                } else {
                    to = k;
                    break;
                }
            }
            let f = (at - from.1) as f64 / (to.1 - from.1).max(1) as f64;
            let e = from.0 + ((to.0 - from.0) as f64 * f).ceil() as u64;
            assert_eq!(c.next, e.clamp(e0 + 1, e1), "due {due}");
            assert_eq!(c.next_t, at);
        }
    }
}
