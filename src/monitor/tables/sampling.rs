//! Where sampling meets the per-entry loop (monitor/sampler.rs I1): a
//! batch is processed in pieces that end where the thread's next sampling
//! event falls, so the loop itself is unchanged and, with sampling off,
//! a batch is one piece.

use super::Tables;
use crate::monitor::BlockTable;

impl Tables {
    /// Process a batch of entries of guest thread `t` (monitor I1),
    /// sampling its calling context as `self.sampler` asks.
    pub fn process(&mut self, t: usize, entries: &[u32], blocks: &BlockTable) {
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
