//! Superblock triggers: direct entries into a block counted toward its
//! trigger (`--sb-threshold`) until it fires.
//!
//! A word that ends in a direct transfer or a direct call to a block whose
//! trigger is open is *warm* (words.rs I3). Counting each of its entries
//! in the second pass makes it special on every execution: at a python
//! start-up, where most blocks run fewer times than the threshold, that
//! is most of the 5 M words. But most blocks entered directly are entered
//! through one word only (the python start-up: 23,950 of 27,581 such
//! blocks, 63.5 % of the direct entries), and then that word's own count
//! is its target's count of entries: such a word is *armed* and counts in
//! the first pass alone, until the execution that reaches the threshold.
//!
//! I1: a trigger's in-words (`Tables::warm_in`): none yet, one *armed*
//!     word, or several ([`SHARED`]: each counts every entry,
//!     [`Warm::Each`]). Only a block's word ending `End::Direct`, made
//!     while its target's trigger has no in-word, is armed: a call is
//!     special anyway, and a superblock unit or a second word joining
//!     makes the trigger shared for good.
//! I2: an armed word's count runs from a bias, `SPECIAL - (r - 1)` where
//!     `r` is what its trigger still needs, kept in its `ret` (a direct
//!     end's `ret` is unused): its count is `count - ret` ([`Word::n`]),
//!     and the first pass lists it (its count before the execution has
//!     [`SPECIAL`]) from its `r`-th execution on, so the trigger fires at
//!     the execution counting each entry would have fired it at.
//! I3: a word joins or a trigger closes only between segments (a word is
//!     made when the loop first meets it, pass.rs, and a superblock is
//!     added between batches), when the armed word's count holds exactly
//!     the executions before that point of the stream: the trigger takes
//!     them as entries counted one by one, and the word counts each entry
//!     from then on. So triggers fire, in order and at their counts,
//!     exactly as when every warm word counted every entry
//!     (tests/triggers.rs compares the two on random streams).

use super::words::{End, Warm, NONE, SPECIAL};
use super::Tables;
use crate::monitor::{Request, Trigger};

/// `Tables::warm_in`: a trigger with several in-words, or one that is not
/// armed (I1).
pub(super) const SHARED: u32 = NONE - 1;

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
            self.warm_in.push(NONE);
        }
        s
    }

    /// Word `w`, just made with count 0 and ending `end`, counts toward
    /// the open trigger in `slot` (I1); `armable`: a block's word. Its
    /// warm state, first count and `ret` (`ret` as given, or an armed
    /// word's bias, I2).
    pub(super) fn join_trigger(
        &mut self,
        slot: u32,
        w: u32,
        end: End,
        armable: bool,
        ret: u64,
    ) -> (Warm, u64, u64) {
        let s = slot as usize;
        let left = self.sb.block_threshold.saturating_sub(self.warm_n[s]);
        if self.warm_in[s] == NONE && armable && self.arm && end == End::Direct && left >= 2 {
            self.warm_in[s] = w;
            let bias = SPECIAL - (u64::from(left) - 1);
            return (Warm::Armed, bias, bias);
        }
        self.share_trigger(slot);
        (Warm::Each, SPECIAL, ret)
    }

    /// The trigger in `slot` gets an in-word other than its armed one, if
    /// it has one (I3): the armed word's executions so far are its
    /// entries, and it counts each entry from now on.
    fn share_trigger(&mut self, slot: u32) {
        let s = slot as usize;
        let a = std::mem::replace(&mut self.warm_in[s], SHARED);
        if a == NONE || a == SHARED {
            return;
        }
        let n = self.count_each(a);
        self.warm_n[s] = self.warm_n[s].saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
    }

    /// Armed word `w` counts each entry from now on (I3); its count.
    fn count_each(&mut self, w: u32) -> u64 {
        let n = self.disarm(w);
        let h = &mut self.words[w];
        h.warm = Warm::Each;
        h.count = n | SPECIAL;
        n
    }

    /// The trigger in `slot` is done (a superblock heads its block): its
    /// armed word, if any, counts plainly (I3).
    pub(super) fn close_trigger(&mut self, slot: u32) {
        let s = slot as usize;
        self.warm_n[s] = u32::MAX;
        let a = std::mem::replace(&mut self.warm_in[s], SHARED);
        if a != NONE && a != SHARED {
            self.disarm(a);
        }
    }

    /// Take armed word `w`'s bias off (I2): it counts plainly (a direct end
    /// is not special); its count.
    fn disarm(&mut self, w: u32) -> u64 {
        let h = &mut self.words[w];
        debug_assert_eq!(h.warm, Warm::Armed);
        let n = h.n();
        h.count = n;
        h.ret = 0;
        h.warm = Warm::No;
        n
    }

    /// Every armed word counts plainly (the end: counts are read).
    pub(super) fn disarm_all(&mut self) {
        for s in 0..self.warm_in.len() {
            let a = self.warm_in[s];
            if a != NONE && a != SHARED {
                self.warm_in[s] = SHARED;
                self.disarm(a);
            }
        }
    }

    /// Armed word `w`, listed by the first pass: this execution reaches
    /// its trigger's threshold (I2). The first pass counted the whole
    /// segment, and lists the executions after this one too: they find
    /// the word plain (the trigger fired) or counting each entry (its
    /// block is not among the monitor's yet, as `warm_reached` waits).
    #[cold]
    #[inline(never)]
    pub(super) fn armed_reached(&mut self, w: u32) {
        let slot = self.words[w].warm_at;
        let threshold = self.sb.block_threshold;
        self.warm_n[slot as usize] = threshold;
        let head = self.block_at(self.words[w].target);
        if head == NONE {
            self.count_each(w);
            self.warm_in[slot as usize] = SHARED;
            return;
        }
        self.close_trigger(slot);
        self.fire(head, u64::from(threshold));
    }

    /// One more direct entry by word `w` into its target, counted toward
    /// the target's superblock trigger (I1: [`Warm::Each`]); once it
    /// fired, `w` stops counting (words.rs I3). Inline up to the count: at
    /// a start-up many words count, and the call alone was a tenth of the
    /// monitor's time there.
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
            i.warm = Warm::No;
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
        self.close_trigger(slot);
        self.fire(head, u64::from(count));
    }

    /// Ask for a superblock at block `head`, whose trigger fired at
    /// `count` entries.
    fn fire(&mut self, head: u32, count: u64) {
        self.requests.push(Request::counted(
            head,
            Trigger::Block {
                count,
                threshold: u64::from(self.sb.block_threshold),
            },
        ));
    }
}
