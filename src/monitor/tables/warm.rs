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
//! I1: an armed word (warm, `End::Direct`, a block's word: [`armed`])
//!     keeps its state in its own cache line, in fields only calls and
//!     superblock units use otherwise: its bias in `ret` (its count is
//!     `count - ret`, wrapping), its count at its last check-in (already
//!     added to its target's total) in `memo_node` and `memo_n`, and the
//!     listed executions to pass over (I4) in `ops_at`. A separate table
//!     of them, by word, was megabytes a python process (and each forked
//!     child's monitor) had to fault in. [`Tables::n`] reads any word's
//!     count; `finish` takes every bias off (`Tables::disarm`).
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
//!     checkpoint are passed over (`ops_at`, I1), so the trigger fires at
//!     the execution counting would have fired it at (one word), and
//!     `skip` is 0 again by the end of the segment.

use super::words::{End, Word, NONE, SPECIAL};
use super::Tables;
use crate::contract::UNIT_BASE;
use crate::monitor::{Request, Trigger};

/// An armed word's fields (I1): bias, last check-in, executions to pass
/// over.
fn arm_of(h: &Word) -> (u64, u64, u32) {
    (
        h.ret,
        u64::from(h.memo_node) | u64::from(h.memo_n) << 32,
        h.ops_at,
    )
}

fn set_arm(h: &mut Word, bias: u64, last: u64, skip: u32) {
    h.ret = bias;
    h.memo_node = last as u32;
    h.memo_n = (last >> 32) as u32;
    h.ops_at = skip;
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

    /// A block's word that ends `end` (returning to `ret`, for a call),
    /// just made warm on `slot` with count 0: armed (I1) if it ends in a
    /// direct transfer. Its first count field and its `ret` (an armed
    /// word's bias). A warm call counts every entry (I3).
    pub(super) fn arm_new(&mut self, end: End, slot: u32, ret: u64) -> (u64, u64) {
        self.warm_k[slot as usize] += 1;
        if end != End::Direct {
            return (SPECIAL, ret);
        }
        let stored = SPECIAL - (self.share(slot) - 1);
        (stored, stored)
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
        let h = &self.words[w];
        if h.warm && armed(w, h.end) {
            h.count.wrapping_sub(h.ret)
        } else {
            h.n()
        }
    }

    /// Take word `w`'s bias off if it is armed (I1): its count is final.
    pub(super) fn disarm(&mut self, w: u32) {
        let h = &mut self.words[w];
        if h.warm && armed(w, h.end) {
            h.count = h.count.wrapping_sub(h.ret);
            h.warm = false;
            set_arm(h, 0, 0, 0);
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
        let (bias, last, skip) = arm_of(&self.words[w]);
        if skip > 0 {
            self.words[w].ops_at = skip - 1;
            return;
        }
        let later = rest.iter().filter(|&&x| x == w).count() as u64;
        let real = self.words[w].count.wrapping_sub(bias);
        let now = real - later;
        let (slot, target) = (self.words[w].warm_at, self.words[w].target);
        let n = self.warm_n[slot as usize];
        if n != u32::MAX {
            let add = u32::try_from(now - last).unwrap_or(u32::MAX);
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
                let h = &mut self.words[w];
                h.count = real.wrapping_add(bias);
                // Listed already: the executions in `rest` before the next
                // checkpoint.
                set_arm(h, bias, now, (s - 1).min(later) as u32);
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
        self.disarm(w);
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
