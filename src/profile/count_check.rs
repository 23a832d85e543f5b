//! `--count-check`: the monitor's block counts against the inline
//! counters of the same run, recorded in the profile where they differ
//! (dispatch/profiling/end.rs builds it at the end).

use crate::monitor::Snapshot;

/// `--count-check`: the monitor's counts against the inline counters of
/// the same run.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct CountCheck {
    pub blocks_compared: u64,
    /// Blocks whose counts differ: (block id, monitor, inline), at most 20;
    /// a block of an ended id epoch is its entry with bit 31 set
    /// (dispatch/profiling/inline.rs). `blocks_compared` counts both.
    pub block_mismatches: Vec<(u32, u64, u64)>,
    pub block_mismatch_total: u64,
    /// Per thread (in start order): (monitor block executions, inline).
    pub threads: Vec<(u64, u64)>,
    pub thread_mismatches: u64,
}

impl CountCheck {
    pub fn of(t: &Snapshot, per_thread: &[Vec<u64>]) -> CountCheck {
        let n = per_thread.first().map_or(0, |v| v.len());
        let mut c = CountCheck {
            blocks_compared: n as u64,
            block_mismatches: Vec::new(),
            block_mismatch_total: 0,
            threads: Vec::new(),
            thread_mismatches: 0,
        };
        for id in 0..n {
            let inline: u64 = per_thread.iter().map(|v| v[id]).sum();
            let ring = t.count(id);
            if inline != ring {
                c.block_mismatch_total += 1;
                if c.block_mismatches.len() < 20 {
                    c.block_mismatches.push((id as u32, ring, inline));
                }
            }
        }
        for (i, &(_, blocks, _)) in t.threads.iter().enumerate() {
            let inline: u64 = per_thread.get(i).map_or(0, |v| v.iter().sum());
            if inline != blocks {
                c.thread_mismatches += 1;
            }
            c.threads.push((blocks, inline));
        }
        c
    }
}
