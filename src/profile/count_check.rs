//! `--count-check`: the monitor's block counts against the inline
//! counters of the same run, recorded in the profile where they differ
//! (dispatch/profiling/end.rs builds it at the end).

use crate::monitor::{Retired, Snapshot, RETIRED_REF};

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

/// The inline counters' side of ended id epochs (dispatch/profiling/
/// inline.rs): their counts by entry, keyed as the monitor's, and each
/// thread's share.
#[derive(Debug)]
pub struct Folded<'a> {
    pub retired: &'a Retired,
    pub per_thread: &'a [u64],
}

impl CountCheck {
    /// The monitor's counts `t` against the counters: `per_thread` by live
    /// block id, `folded` for the ended epochs' blocks by entry.
    pub fn of(t: &Snapshot, per_thread: &[Vec<u64>], folded: Folded) -> CountCheck {
        let n = per_thread.first().map_or(0, |v| v.len());
        let mut c = CountCheck {
            blocks_compared: 0,
            block_mismatches: Vec::new(),
            block_mismatch_total: 0,
            threads: Vec::new(),
            thread_mismatches: 0,
        };
        let mut differ = |id: u32, ring: u64, inline: u64| {
            c.blocks_compared += 1;
            if inline != ring {
                c.block_mismatch_total += 1;
                if c.block_mismatches.len() < 20 {
                    c.block_mismatches.push((id, ring, inline));
                }
            }
        };
        for id in 0..n {
            differ(
                id as u32,
                t.count(id),
                per_thread.iter().map(|v| v[id]).sum(),
            );
        }
        // Ended epochs: entry by entry, both ways (an entry only one side
        // made counts 0 on the other).
        let (ring, inl) = (&t.retired, folded.retired);
        let count = |r: &Retired, m, image| r.find(m, image).map_or(0, |i| r.counts[i as usize]);
        for e in 0..ring.metas.len() {
            let inline = count(inl, ring.metas[e], ring.images[e]);
            differ(RETIRED_REF | e as u32, ring.counts[e], inline);
        }
        for e in 0..inl.metas.len() {
            if ring.find(inl.metas[e], inl.images[e]).is_none() {
                differ(RETIRED_REF | e as u32, 0, inl.counts[e]);
            }
        }
        for (i, &(_, blocks, _)) in t.threads.iter().enumerate() {
            let live: u64 = per_thread.get(i).map_or(0, |v| v.iter().sum());
            let inline = live + folded.per_thread.get(i).copied().unwrap_or(0);
            if inline != blocks {
                c.thread_mismatches += 1;
            }
            c.threads.push((blocks, inline));
        }
        c
    }
}
