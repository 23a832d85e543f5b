//! Where sampling meets the per-entry loop (monitor/sampler.rs I1): a
//! batch is processed in pieces that end where the thread's next sampling
//! event falls, so the loop itself is unchanged and, with sampling off,
//! a batch is one piece.

use super::Tables;
use crate::cache::BlockTable;
use crate::contract::{record_words, TAG, TAG_LOOP};

impl Tables {
    /// Process a batch of entries of guest thread `t` (monitor I1),
    /// sampling its calling context as `self.sampler` asks.
    pub fn process(&mut self, t: usize, entries: &[u32], blocks: &BlockTable) {
        if self.loops_counted && self.sampler.wants_stamps() {
            // sampler.rs I4: the counted loops' time stamps first.
            let skip = self.threads.get(t).map_or(0, |s| s.pending_need);
            let stamps = loop_stamps(entries, skip);
            if !stamps.is_empty() {
                self.sampler.stamps(t, &stamps);
            }
        }
        let mut rest = entries;
        while !rest.is_empty() {
            let n = self.sampler.until(t).min(rest.len());
            let (now, later) = rest.split_at(n);
            self.process_entries(t, now, blocks);
            let node = self.threads[t].node;
            self.sampler.passed(t, n, node);
            rest = later;
        }
    }
}

/// The offsets and time stamps of the counted loops' records in `entries`
/// (contract I2), the first `skip` words being the rest of a record begun
/// in the batch before.
fn loop_stamps(entries: &[u32], skip: usize) -> Vec<(usize, u64)> {
    let mut v = Vec::new();
    let mut i = skip;
    while i < entries.len() {
        // Sixteen words without a tag at a time (a vector OR): this scan
        // reads every word of every batch, and took 6 % of the monitor's
        // time word by word (python3 loop, Intel Xeon model 207). Sixteen
        // with a tag: straight to it (going on word by word, OR-ing the
        // sixteen from each, took 9 % of busybox gunzip's, AMD EPYC).
        if let Some(c) = entries.get(i..i + 16) {
            if c.iter().fold(0, |a, &w| a | w) & TAG == 0 {
                i += 16;
                continue;
            }
            i += c.iter().position(|&w| w & TAG != 0).unwrap_or(0);
        }
        let w = entries[i];
        if w & TAG == 0 {
            i += 1;
            continue;
        }
        if w == TAG_LOOP && i + 3 < entries.len() {
            v.push((
                i,
                u64::from(entries[i + 2]) | u64::from(entries[i + 3]) << 32,
            ));
        }
        i += 1 + record_words(w);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::TAG_REP;

    /// Records anywhere (across every 16-word boundary, a record begun in
    /// the batch before) are found as a word-by-word scan finds them.
    #[test]
    fn loop_stamps_finds_every_record() {
        let mut rng = super::super::TestRng::new(7);
        for _ in 0..200 {
            let mut words = Vec::new();
            let mut want = Vec::new();
            while words.len() < 300 {
                match rng.below(12) {
                    0 => {
                        want.push((words.len(), 5u64 << 32 | words.len() as u64));
                        words.extend_from_slice(&[TAG_LOOP, 9, words.len() as u32, 5]);
                    }
                    1 => words.extend_from_slice(&[TAG_REP | 7, 4, 9, 2]),
                    _ => words.push(rng.below(1 << 20) as u32),
                }
            }
            assert_eq!(loop_stamps(&words, 0), want);
            // A batch that starts inside a record skips its rest.
            if let Some(&(at, _)) = want.first() {
                let got = loop_stamps(&words[at + 1..], 3);
                let shifted: Vec<_> = want[1..].iter().map(|&(i, t)| (i - at - 1, t)).collect();
                assert_eq!(got, shifted);
            }
        }
    }
}
