//! The second tier as the monitor thread runs it (`monitor::SecondTier`):
//! between two drain rounds, Pisat's mining of the windows the per-entry
//! loop cut (pisat/round.rs), then the builder's work on the requests and
//! its review of what it published; after the last round, what it made,
//! handed to whoever started it through an [`Outcomes`] slot.
//!
//! I1: the tier reaches the profile consumer only through the tables'
//!     public methods; the consumer never reaches into the tier (the
//!     monitor knows it as a `SecondTier`).

use std::sync::{Arc, Mutex};

use super::build::{BuildStats, Builder};
use super::pisat::{round, Config, Miner, PisatStats};
use super::record::SbRecord;
use crate::monitor::{SecondTier, Tables};

/// What the second tier made in a run, for the profile.
#[derive(Debug, Default)]
pub struct Outcome {
    pub records: Vec<SbRecord>,
    pub stats: BuildStats,
    /// `--selector pisat`: the miner's statistics.
    pub pisat: Option<PisatStats>,
}

/// Where a run's [`Outcome`] is left at its end (I1).
pub type Outcomes = Arc<Mutex<Option<Outcome>>>;

/// What a process shares with its second tier: what the builder
/// published (a fork's child takes it over, build.rs I3), and where the
/// tier leaves its outcome.
#[derive(Debug, Clone, Default)]
pub struct Slots {
    pub published: super::Published,
    pub outcomes: Outcomes,
}

/// The builder, and the miner when superblocks come from Pisat.
#[derive(Debug)]
pub struct Tier {
    builder: Builder,
    miner: Option<Box<Miner>>,
    outcome: Outcomes,
}

impl Tier {
    pub fn new(builder: Builder, pisat: Option<Config>, outcome: Outcomes) -> Tier {
        Tier {
            builder,
            miner: pisat.map(|c| Box::new(Miner::new(c))),
            outcome,
        }
    }
}

impl SecondTier for Tier {
    fn begin(&mut self, tables: &mut Tables) {
        // monitor I8: what it makes, a forked child may read.
        let _system = crate::arena::Scope::set(false);
        let inherited = self.builder.take_inherited();
        if !inherited.is_empty() {
            let source = self.builder.account_source();
            tables.inherit(inherited, source, self.builder.blocks().clone());
        }
    }

    fn round(&mut self, tables: &mut Tables) {
        // monitor I8: what it makes, a forked child may read.
        let _system = crate::arena::Scope::set(false);
        if let Some(m) = self.miner.as_deref_mut() {
            round::offer(m, tables);
            round::mine(m, tables, self.builder.blocks().published());
        }
        // Requests wait for the warm-up, held out of the builder's sight.
        let waiting = (!warm(&self.builder, tables)).then(|| std::mem::take(&mut tables.requests));
        let b = &mut self.builder;
        if b.has_work(tables) {
            b.work(tables);
        }
        if let Some(w) = waiting {
            tables.requests = w;
        }
        b.review(tables);
    }

    fn epoch(&mut self, tables: &mut Tables) {
        // monitor I8: what it makes, a forked child may read.
        let _system = crate::arena::Scope::set(false);
        self.builder.epoch(tables);
        if let Some(m) = self.miner.as_deref_mut() {
            m.epoch();
        }
    }

    fn end(&mut self, tables: &mut Tables) {
        // monitor I8: what it makes, a forked child may read.
        let _system = crate::arena::Scope::set(false);
        let b = &mut self.builder;
        b.settle();
        let mut stats = std::mem::take(&mut b.stats);
        stats.inherited_run = tables.adopted;
        // The requests still waiting for the warm-up.
        if !warm(b, tables) {
            stats.deferred = tables.requests.len() as u64;
        }
        let pisat = self.miner.as_deref_mut().map(|m| {
            // The last round's windows, counted as offered (not mined).
            round::offer(m, tables);
            let mut s = m.stats.clone();
            s.mining_ns_per_ring_entry = s.mining_seconds * 1e9 / tables.entries.max(1) as f64;
            s
        });
        *self.outcome.lock().unwrap_or_else(|e| e.into_inner()) = Some(Outcome {
            records: b.records.take(),
            stats,
            pisat,
        });
    }
}

/// Past the warm-up: requests are built. Before, a request waits in
/// `tables.requests` (its trigger closed: it is not asked again) and is
/// built with the counts of when the warm-up ended; a run that ends first
/// builds none (`BuildStats::deferred`). Stored traces and requests asked
/// again after a flush do not wait. The warm-up ends at `--sb-warmup`
/// ring words, or sooner while the words are [`WARM_WORDS_PER_BLOCK`]
/// times the blocks made: a start-up runs much code a few hundred times
/// (python3.11 -c pass: 160 words a block, cc1 of an empty file 260,
/// perl -e 1 15), a program's hot loops run little code very often
/// (c-qsort 139,000, busybox wc 70,000), and those should have their
/// superblocks at once. Below `--sb-warmup` words this is the ratio now,
/// not a state: a program that makes blocks faster than that again (code
/// loaded late) waits again, and one that had a moment past it early (its
/// first blocks, before its libraries are loaded) does not stay warm (a
/// latch built a short C run's requests; tests/dump.rs).
fn warm(b: &Builder, tables: &Tables) -> bool {
    let blocks = u64::from(b.blocks().len());
    tables.entries
        >= b.cfg
            .warmup
            .min(WARM_WORDS_PER_BLOCK.saturating_mul(blocks))
}

/// See [`warm`].
const WARM_WORDS_PER_BLOCK: u64 = 1000;
