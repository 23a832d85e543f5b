//! The tables' end: their exact profile as a [`Snapshot`] (plain data),
//! the working tables dropped.

use super::Tables;
use crate::monitor::snapshot::Snapshot;

impl Tables {
    /// The profile the tables hold, once [`Tables::finish`]ed.
    pub fn snapshot(mut self) -> Snapshot {
        self.finish();
        let n = self.block_hw;
        let counts = (0..n).map(|id| self.count(id)).collect();
        let met = (0..n).map(|id| self.block_made(id)).collect();
        let superblocks = (0..self.sbs.len() as u32)
            .map(|id| self.sb_summary(id))
            .collect();
        let threads = self.per_thread();
        Snapshot {
            counts,
            met,
            edges: std::mem::take(&mut self.edges),
            tree: std::mem::take(&mut self.tree),
            returns: self.returns,
            unmatched_returns: self.unmatched_returns,
            unwinding_jumps: self.unwinding_jumps,
            unresolved_exits: self.unresolved_exits,
            max_call_depth: self.max_shadow_depth,
            syscalls: std::mem::take(&mut self.syscalls),
            syscall_log: std::mem::take(&mut self.syscall_log),
            entries: self.entries,
            waits: self.waits,
            wait_ns: self.wait_ns,
            max_lag: self.max_lag,
            rep_extra: self.rep_extra,
            rep_sites: std::mem::take(&mut self.rep_sites),
            rep_unretired: std::mem::take(&mut self.rep_unretired),
            unretired_at: std::mem::take(&mut self.unretired_at),
            unretired: self.unretired,
            signals: self.signals,
            threads,
            thread_tids: std::mem::take(&mut self.thread_tids),
            superblocks,
            sb_record_errors: self.sb_record_errors,
            block_threshold: self.sb.block_threshold,
            sampler: std::mem::take(&mut self.sampler),
            paths: self.paths.take(),
            retired: std::mem::take(&mut self.retired),
        }
    }
}
