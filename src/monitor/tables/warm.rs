//! Superblock triggers: direct entries into a block counted toward its
//! trigger (`--sb-threshold`) until it fires.
//!
//! A word that ends in a direct transfer to a block whose trigger is open
//! is *warm* (words.rs I3). Counting its entries one by one in the second
//! pass made every such word special: at a python start-up, where most
//! blocks run fewer times than the threshold, that was most words, and
//! the monitor's replayed cost was 17.5 ns a word against 9.4 without
//! triggers (AMD EPYC). So a block's warm *direct* word is *armed*
//! instead: its count runs up through a bias towards [`SPECIAL`], and it
//! becomes special (the first pass lists it) only at the execution that
//! reaches its checkpoint, where the second pass adds what it counted since
//! its last check-in to its target's total, fires the trigger, or arms it
//! again for its share of what is left.
//!
//! I1: an armed word `w` (warm, `End::Direct`, a block's word) has
//!     `arm[w]` with a `bias` other than 0: its count is
//!     `Word::count - bias` (wrapping), and `last` its count at its last
//!     check-in, already added to its target's total. Every other word has
//!     no bias ([`Tables::n`] reads both). `finish` takes every bias off.
//! I2: a word armed for `s` executions reaches [`SPECIAL`] at the `s`-th:
//!     `s` is what its target's trigger still needs, divided by the number
//!     of words counting toward it and by at least 2 (a word armed before
//!     the others were met checks in again at half of what is left), and
//!     at least 1. So one word entering a block fires its trigger at the
//!     threshold, after about log2(threshold) check-ins, and several fire
//!     it within half the threshold more (tests/warm.rs), where counting
//!     every entry fired it at the threshold.
//! I3: warm words that are special anyway (calls, and superblock units,
//!     which have no entry in `arm`) count every entry in the second pass
//!     ([`Tables::warm_entry`]).
//! I4: once its count passes its checkpoint, the first pass lists every
//!     later execution of an armed word in the segment (the count it
//!     tests has passed [`SPECIAL`]). The check-in at the first one
//!     counts the executions after it in the segment and judges at that
//!     execution; of the listed ones after it, those before the new
//!     checkpoint are passed over (`Arm::skip`), so the trigger fires at
//!     the execution counting would have fired it at (one word), and
//!     `skip` is 0 again by the end of the segment.

use super::words::{End, NONE, SPECIAL};
use super::Tables;
use crate::contract::UNIT_BASE;
use crate::monitor::{Request, Trigger};

/// An armed word's state (I1, I4).
#[derive(Debug, Clone, Copy)]
pub(super) struct Arm {
    /// Added to its count (0: not armed).
    pub bias: u64,
    /// Its count at its last check-in, added to its target's total.
    pub last: u64,
    /// Listed executions of the segment being taken to pass over before
    /// its next checkpoint.
    pub skip: u32,
}

impl Arm {
    pub const NONE: Arm = Arm {
        bias: 0,
        last: 0,
        skip: 0,
    };
}

/// Is warm word `w`, which ends `end`, armed (I1) rather than counting
/// every entry (I3)?
#[inline(always)]
pub(super) fn armed(w: u32, end: End) -> bool {
    end == End::Direct && w < UNIT_BASE
}

impl Tables {
    /// Does a word that ends `end` at `target` count toward a superblock
    /// trigger there (a direct transfer into a block whose trigger has not
    /// fired)? Its slot in `warm_n` if so.
    pub(super) fn open_trigger(&mut self, end: End, target: u64) -> Option<u32> {
        if !(end == End::Direct || end == End::Call) || target == 0 {
            return None;
        }
        let s = self.warm_slot(target);
        (self.warm_n[s as usize] != u32::MAX).then_some(s)
    }

    /// The slot of `target`'s superblock trigger in `warm_n`.
    pub(super) fn warm_slot(&mut self, target: u64) -> u32 {
        let next = u32::try_from(self.warm_n.len()).expect("fewer trigger slots than words");
        let s = *self.warm.entry(target).or_insert(next);
        if s == next {
            self.warm_n.push(0);
            self.warm_k.push(0);
        }
        s
    }

    /// Block word `w`, just made warm on `slot` with count 0: armed (I1) if
    /// it ends in a direct transfer; its first count. A warm call counts
    /// every entry (I3).
    pub(super) fn arm_new(&mut self, w: u32, end: End, slot: u32) -> u64 {
        self.warm_k[slot as usize] += 1;
        if end != End::Direct {
            return SPECIAL;
        }
        let i = w as usize;
        if self.arm.len() <= i {
            self.arm
                .resize((i + 1).next_power_of_two().max(1 << 12), Arm::NONE);
        }
        self.arm_for(w, slot)
    }

    /// Arm new word `w` (count 0) for its share of what its target's
    /// trigger still needs (I2); its count field.
    fn arm_for(&mut self, w: u32, slot: u32) -> u64 {
        let s = self.share(slot);
        let stored = SPECIAL - (s - 1);
        self.arm[w as usize] = Arm {
            bias: stored,
            last: 0,
            skip: 0,
        };
        stored
    }

    /// How many executions a word counting toward `slot` is armed for
    /// (I2).
    fn share(&self, slot: u32) -> u64 {
        let (n, k) = (self.warm_n[slot as usize], self.warm_k[slot as usize]);
        let left = self.sb.block_threshold.saturating_sub(n);
        u64::from((left / k.max(2)).max(1))
    }

    /// Execution count of exit word `w` (I1).
    #[inline]
    pub(super) fn n(&self, w: u32) -> u64 {
        match self.arm.get(w as usize) {
            Some(a) if a.bias != 0 => self.words[w].count.wrapping_sub(a.bias),
            _ => self.words[w].n(),
        }
    }

    /// Take every bias off (I1): the counts are final.
    pub(super) fn disarm_all(&mut self) {
        for i in 0..self.arm.len() {
            let bias = self.arm[i].bias;
            if bias != 0 {
                let h = &mut self.words[i as u32];
                h.count = h.count.wrapping_sub(bias);
                h.warm = false;
                self.arm[i] = Arm::NONE;
            }
        }
    }

    /// Armed word `w`, listed as special by the first pass: at its
    /// checkpoint (I2), add what it counted to its target's total, fire the
    /// trigger there, or arm it again; `rest` is the segment after this
    /// execution. The first pass counted the whole segment, so its count
    /// now holds the executions in `rest` too, and it listed every one
    /// of them once the count passed its checkpoint: the check-in takes
    /// those back to judge at this execution, as counting each entry
    /// did, and skips the ones before the next checkpoint (I4).
    #[cold]
    #[inline(never)]
    pub(super) fn warm_check_in(&mut self, w: u32, rest: &[u32]) {
        let a = self.arm[w as usize];
        if a.skip > 0 {
            self.arm[w as usize].skip -= 1;
            return;
        }
        let later = rest.iter().filter(|&&x| x == w).count() as u64;
        let real = self.words[w].count.wrapping_sub(a.bias);
        let now = real - later;
        let (slot, target) = (self.words[w].warm_at, self.words[w].target);
        let n = self.warm_n[slot as usize];
        if n != u32::MAX {
            let add = u32::try_from(now - a.last).unwrap_or(u32::MAX);
            let n = n.saturating_add(add).min(u32::MAX - 1);
            self.warm_n[slot as usize] = n;
            let threshold = self.sb.block_threshold;
            let head = if n >= threshold {
                self.block_at(target)
            } else {
                NONE
            };
            if head == NONE {
                // Below the threshold, or its block is not among the
                // monitor's yet (then at its next entry: `left` is 0).
                let s = self.share(slot);
                let bias = (SPECIAL - (s - 1)).wrapping_sub(now);
                self.words[w].count = real.wrapping_add(bias);
                self.arm[w as usize] = Arm {
                    bias,
                    last: now,
                    // Listed already: the executions in `rest` before the
                    // next checkpoint.
                    skip: (s - 1).min(later) as u32,
                };
                return;
            }
            self.warm_n[slot as usize] = u32::MAX;
            self.requests.push(Request::counted(
                head,
                Trigger::Block {
                    count: u64::from(n),
                    threshold: u64::from(threshold),
                },
            ));
        }
        // The trigger fired (here or through another word): `w` counts
        // plainly from now on (a direct end is not special), and the
        // executions in `rest` it was listed for find it not warm.
        let h = &mut self.words[w];
        h.count = real;
        h.warm = false;
        self.arm[w as usize] = Arm::NONE;
    }

    /// One more direct entry by word `w` into its target, counted toward
    /// the target's superblock trigger (I3); once it fired, `w` stops
    /// counting (words.rs I3). Inline up to the count.
    #[inline(always)]
    pub(super) fn warm_entry(&mut self, w: u32) {
        let slot = self.words[w].warm_at;
        let n = &mut self.warm_n[slot as usize];
        if *n < self.sb.block_threshold.saturating_sub(1) {
            *n += 1;
            return;
        }
        self.warm_reached(w);
    }

    /// [`Tables::warm_entry`] at its target's threshold, or past its
    /// trigger.
    #[cold]
    #[inline(never)]
    fn warm_reached(&mut self, w: u32) {
        let (target, slot) = (self.words[w].target, self.words[w].warm_at);
        let threshold = self.sb.block_threshold;
        let n = &mut self.warm_n[slot as usize];
        if *n == u32::MAX {
            let i = &mut self.words[w];
            i.warm = false;
            i.refresh_special();
            return;
        }
        *n += 1;
        let count = *n;
        if count < threshold {
            return;
        }
        let head = self.block_at(target);
        if head == NONE {
            // Not among the monitor's blocks yet: at a later entry.
            return;
        }
        self.warm_n[slot as usize] = u32::MAX;
        let count = u64::from(count);
        self.requests.push(Request::counted(
            head,
            Trigger::Block {
                count,
                threshold: u64::from(threshold),
            },
        ));
    }
}
