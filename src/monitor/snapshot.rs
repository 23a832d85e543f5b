//! What a finished monitor hands over: the exact profile as plain data,
//! by block id where dense. The profile (src/profile), the store and
//! `--count-check` read this, never the consumer's working tables, whose
//! layout serves the per-entry loop alone.
//!
//! I1: `counts[id]` is block `id`'s executions (its runs to either exit
//!     and those that stopped inside); an id past the end of `counts`, or
//!     one the monitor never met (`met[id]` false: a forked child's
//!     parent's block it did not run), ran 0 times here.
//! I2: `edges` holds every transition the monitor counted, by source
//!     block and target address (tables I1).

use std::collections::BTreeMap;

use hashbrown::HashMap;

use super::calltree::CallTree;
use super::sampler::Sampler;
use super::tables::{SbSummary, SyscallStat};

/// The monitor's exact profile at its end (module docs).
#[derive(Debug, Default)]
pub struct Snapshot {
    pub counts: Vec<u64>,
    pub met: Vec<bool>,
    /// (source block id, target guest address) → transitions (I2).
    pub edges: HashMap<(u32, u64), u64>,
    pub tree: CallTree,
    pub returns: u64,
    /// Returns that did not go back to the shadow stack's top (longjmp, …).
    pub unmatched_returns: u64,
    /// Indirect jumps into a landing site that unwound the shadow stack.
    pub unwinding_jumps: u64,
    /// Indirect exits whose target never came.
    pub unresolved_exits: u64,
    pub max_call_depth: usize,
    pub syscalls: BTreeMap<u64, SyscallStat>,
    pub syscall_log: Vec<(u64, i64)>,
    /// Ring words taken, the guest's waits for room and how long, and the
    /// most words a ring held unread.
    pub entries: u64,
    pub waits: u64,
    pub wait_ns: u64,
    pub max_lag: u64,
    /// Iterations of `rep` string instructions beyond their first, in all
    /// and per instruction (block, offset), and of those the ones that did
    /// not retire.
    pub rep_extra: u64,
    pub rep_sites: HashMap<(u32, u32), u64>,
    pub rep_unretired: HashMap<(u32, u32), u64>,
    /// (block, n): the last n instructions of the block did not retire, so
    /// many times; `unretired`, their sum.
    pub unretired_at: HashMap<(u32, u32), u64>,
    pub unretired: u64,
    /// Frames built for guest signal handlers.
    pub signals: u64,
    /// Per guest thread, in ring registration order: (instructions, block
    /// executions, ring entries), and its thread id.
    pub threads: Vec<(u64, u64, u64)>,
    pub thread_tids: Vec<i32>,
    /// By superblock id: how its passes ended (None: no such superblock).
    pub superblocks: Vec<Option<SbSummary>>,
    /// Ring words naming no block or unit (must stay 0).
    pub sb_record_errors: u64,
    /// `--sb-threshold` (the store keeps counted traces past it).
    pub block_threshold: u32,
    /// Timed samples of the threads' calling contexts.
    pub sampler: Sampler,
    /// Path profiling of one function, when asked for.
    pub paths: Option<Box<dyn super::StreamHook>>,
    /// The blocks of ended id epochs (tables/epoch.rs); the maps above
    /// may name their entries (a block id with `RETIRED_REF` set).
    pub retired: super::tables::Retired,
}

impl Snapshot {
    /// Counts made another way, no monitor (`--count-inline`; none with
    /// `--no-monitor`): each of `n` blocks met, `counts[id]` runs (0 past
    /// its end).
    pub fn from_counts(counts: &[u64], n: usize) -> Snapshot {
        let mut c = counts.to_vec();
        c.resize(n.max(c.len()), 0);
        Snapshot {
            met: vec![true; c.len()],
            counts: c,
            ..Snapshot::default()
        }
    }

    /// Executions of block `id` (I1).
    pub fn count(&self, id: usize) -> u64 {
        self.counts.get(id).copied().unwrap_or(0)
    }

    /// Block ids below `n` a profile lists (profile I1): every id from
    /// `inherited` up, and below it (a forked child's parent's blocks)
    /// those this monitor met.
    pub fn listed_blocks(&self, n: usize, inherited: usize) -> impl Iterator<Item = usize> + '_ {
        let below = inherited.min(n);
        (0..below)
            .filter(move |&id| self.met.get(id).copied().unwrap_or(false))
            .chain(below..n)
    }

    /// How superblock `id`'s passes ended.
    pub fn sb_summary(&self, id: u32) -> Option<&SbSummary> {
        self.superblocks.get(id as usize)?.as_ref()
    }

    /// How the passes of superblocks `ids` (the builds of one superblock:
    /// superblock/record.rs I1) ended, summed; None if none has a summary.
    pub fn sb_summary_of(&self, ids: impl IntoIterator<Item = u32>) -> Option<SbSummary> {
        let add = |to: &mut Vec<u64>, from: &[u64]| {
            if to.len() < from.len() {
                to.resize(from.len(), 0);
            }
            to.iter_mut().zip(from).for_each(|(t, f)| *t += f);
        };
        let mut sum: Option<SbSummary> = None;
        for s in ids.into_iter().filter_map(|id| self.sb_summary(id)) {
            let t = sum.get_or_insert_with(SbSummary::default);
            t.entries += s.entries;
            t.loops += s.loops;
            t.partial_exits += s.partial_exits;
            add(&mut t.member_runs, &s.member_runs);
            add(&mut t.exit_counts, &s.exit_counts);
        }
        sum
    }
}
