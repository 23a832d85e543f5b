//! Every tunable of `hotlift run`, declared once: name, type, default and a
//! one-line description. clap builds `--help` from this, docs/USAGE.md's option
//! table is checked against it (tests/cli.rs), and the profile header
//! will record it.

use clap::Args;

use crate::profile::StoreMode;

/// The `--help` section of the options that tune hotlift's machinery (for
/// experiments and measurements; `-h` leaves them out).
const TUNING: &str = "Tuning (experiments and measurements; -h leaves these out)";

/// `--sb-warmup`'s default: ring words before the first superblock is
/// built. A warm `python3.11 -c pass` takes in 5-7 million, `cc1` of an
/// empty file 9-11 million; with a profile written, the superblocks they
/// built (~190 and ~460) were a sixth and a quarter of their run (the
/// monitor, not the guest, is a start-up's critical path) and most never
/// paid back. Alone, this many words cost programs of 0.1 to 0.3 s whose
/// hot loops start at once (c-qsort, c-threads) 25 to 30 %: they warm up
/// sooner, by their words a block (superblock/tier.rs `warm`).
pub const SB_WARMUP: u64 = 16_000_000;

#[derive(Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunOptions {
    /// Do not link translated blocks: every block exit returns to the dispatcher
    #[arg(help_heading = TUNING, hide_short_help = true, long)]
    pub no_chain: bool,

    /// Maximum number of guest instructions in one translated block
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_block_insns: u32,

    /// Size of the code cache in MiB (it is flushed and refilled when full)
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub cache_mib: u32,

    /// Block ids one id epoch uses before they are given again (then every translation is dropped and the live code translated again): code rewritten for ever keeps hotlift's memory and profile bounded; 0: never, and a run stops after 4,194,304 translations
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 1 << 18, value_parser = clap::value_parser!(u32).range(0..=(1 << 21)))]
    pub id_epoch: u32,

    /// Report every unsupported syscall (the first of each number is always reported), guest traps and faults with their guest address
    #[arg(long, short = 'v')]
    pub verbose: bool,

    /// Log every guest syscall with decoded arguments and result to stderr
    #[arg(long)]
    pub strace: bool,

    /// Write the --strace log to FILE instead of stderr (implies --strace)
    #[arg(long, value_name = "FILE")]
    pub strace_file: Option<std::path::PathBuf>,

    /// Run without the monitor thread: no ring, no profile
    #[arg(long, conflicts_with_all = ["count_inline", "profile"])]
    pub no_monitor: bool,

    /// Count block executions in translated code itself (no ring, no monitor); the check for the monitor's counts
    #[arg(help_heading = TUNING, hide_short_help = true, long)]
    pub count_inline: bool,

    /// Count block executions both ways in one run (the monitor from the ring, and translated code itself, per thread) and record in the profile where they differ: the exactness check for threaded programs
    #[arg(long, conflicts_with_all = ["count_inline", "no_monitor"])]
    pub count_check: bool,

    /// Ring capacity in 32-bit entries per guest thread (two segments)
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 1 << 22, value_parser = clap::value_parser!(u64).range(2048..=(1 << 30)))]
    pub ring_entries: u64,

    /// Write the JSON profile to FILE when the guest ends
    #[arg(long, value_name = "FILE")]
    pub profile: Option<std::path::PathBuf>,

    /// Write /tmp/perf-PID.map when the guest ends, naming its translated code by guest function, so that `perf record -- hotlift run --perf-map ...; perf report` shows the guest's functions (each process of a tree writes its own; works with --no-monitor too)
    #[arg(long)]
    #[serde(default)]
    pub perf_map: bool,

    /// Do not build superblocks (the monitor still profiles)
    #[arg(long)]
    pub no_superblocks: bool,

    /// Build a superblock at a block entered this many times by direct transfers (1 for experiments: nearly everything runs in superblocks)
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 3000, value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    pub sb_threshold: u32,

    /// Build no superblock before the monitor has taken in this many ring words (about a python or cc1 start-up), or 1000 a block made if that is fewer (a program of hot loops warms at once): what a start-up or a short process asks for is left unbuilt (`superblock_stats.deferred`), a longer one's requests are built then (0: build from the start)
    #[arg(help_heading = TUNING, hide_short_help = true, long, value_name = "WORDS", default_value_t = SB_WARMUP)]
    #[serde(default)]
    pub sb_warmup: u64,

    /// Build a superblock at the target of an indirect edge taken this many times
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    pub sb_edge_threshold: u32,

    /// Most blocks in one superblock
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub sb_max_blocks: u32,

    /// Most guest instructions in one superblock
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=8192))]
    pub sb_max_insns: u32,

    /// Most blocks in one superblock tree, all its paths counted (at most --sb-max-blocks: straight traces only)
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub sb_tree_blocks: u32,

    /// Lay out a branch's cold side, or another target of an indirect jump, call or return, in the superblock too (a tree) when at least this share of its passes should take it
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 0.02, value_parser = parse_share)]
    pub sb_tree_share: f64,

    /// Push a ring word for every pass of a superblock that loops back to its head, instead of counting such passes in the thread's loop counters and pushing the counts when the loop is left
    #[arg(help_heading = TUNING, hide_short_help = true, long)]
    pub sb_no_loop_counters: bool,

    /// Push the loop counters' record after at most this many passes of one loop exit, also while the thread stays in the loop (1 pushes a record every pass: for tests)
    #[arg(help_heading = TUNING, hide_short_help = true, long, value_name = "N", default_value_t = crate::contract::LOOP_LIMIT, value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::contract::LOOP_PASSES_N)))]
    pub sb_loop_limit: u32,

    /// Lay a loop closed at a superblock's head out up to this many times in a row (1: no unrolling)
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub sb_unroll: u32,

    /// Build a counted superblock only where its passes should cover this many blocks per ring word they cost, and take one back whose passes cover fewer than 7/8 of it (0: build every superblock selected, never take one back; for experiments and tests)
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = crate::superblock::select::PAYS_OFF, value_parser = parse_yield)]
    pub sb_min_yield: f64,

    /// Write a text dump of each superblock into DIR as it is built
    #[arg(long, value_name = "DIR")]
    pub dump_superblocks: Option<std::path::PathBuf>,

    /// Run the programs the guest starts with execve natively (default: under hotlift, with the same options, each process writing its own profile)
    #[arg(long)]
    pub no_follow: bool,

    /// Sample each guest thread's call stack every N µs of its running time (monitor clock), for the profile's time tree (`hotlift report`)
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=60_000_000))]
    pub sample_us: u64,

    /// Sample each guest thread's call stack after every K of its ring entries instead of by time (the same samples in every run of a single-threaded program with --no-superblocks)
    #[arg(help_heading = TUNING, hide_short_help = true, long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub sample_entries: Option<u64>,

    /// Take no call-stack samples: the profile has no time tree
    #[arg(long, conflicts_with = "sample_entries")]
    pub no_sampling: bool,

    /// Time tree: a node with fewer samples than M is a leaf that keeps them raw
    #[arg(help_heading = TUNING, hide_short_help = true, long, value_name = "M", default_value_t = 100, value_parser = clap::value_parser!(u32).range(2..=1_000_000))]
    pub tree_leaf: u32,

    /// Time tree: inner nodes keep the most frequent stacks until they cover PCT percent of their samples (100: every window's counts are exact)
    #[arg(help_heading = TUNING, hide_short_help = true, long, value_name = "PCT", default_value_t = 95.0, value_parser = coverage_percent)]
    pub tree_coverage: f64,

    /// Time tree: children per inner node
    #[arg(help_heading = TUNING, hide_short_help = true, long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..=64))]
    pub tree_fanout: u32,

    /// How superblock heads and paths are chosen: `counting` (execution and edge counts past the thresholds) or `pisat` (sequential patterns mined from windows of the block streams)
    #[arg(help_heading = TUNING, hide_short_help = true, long, value_enum, default_value_t = Selector::Counting)]
    pub selector: Selector,

    /// Pisat: block ids per window (one sequence of the database)
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(8..=65536))]
    pub pisat_window: u32,

    /// Pisat: ring entries of a guest thread from the start of one window to the next
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 8192, value_parser = clap::value_parser!(u64).range(8..=(1 << 40)))]
    pub pisat_interval: u64,

    /// Pisat: sequences the database holds (the oldest leaves)
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub pisat_sequences: u32,

    /// Pisat: a path is a pattern when this fraction of the database's sequences (at least two) hold it
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 0.5, value_parser = parse_fraction)]
    pub pisat_support1: f64,

    /// Pisat: a path is a pattern when it repeats this many times (distinct starts) in one sequence
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub pisat_support2: u32,

    /// Pisat: most nodes of the PST-tree
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 65536, value_parser = clap::value_parser!(u32).range(16..=(1 << 24)))]
    pub pisat_nodes: u32,

    /// Pisat: mining time the monitor spends per round, in microseconds
    #[arg(help_heading = TUNING, hide_short_help = true, long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub pisat_budget_us: u32,
    /// Share superblocks across runs through the profile store at URL (a file path or sqlite:PATH for SQLite, postgres://... for PostgreSQL): pre-build the stored ones at start, merge this run's at exit
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,

    /// What the run does with --store: read it (pre-build), write it (merge at exit), or both
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        default_value = "both",
        requires = "store"
    )]
    pub store_mode: StoreMode,

    /// Pre-build only stored superblocks that at least N runs built
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..), requires = "store")]
    pub store_min_runs: u32,

    /// Keep what a run learns about its modules (their symbols, their translations) in DIR for the next run (default: $XDG_CACHE_HOME/hotlift, else ~/.cache/hotlift; `hotlift cache` shows and clears it)
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache_dir: Option<std::path::PathBuf>,

    /// Most MiB the cache directory holds: a run that writes an entry past it removes the entries used least recently
    #[arg(long, value_name = "MIB", default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    #[serde(default = "default_cache_max_mib")]
    pub cache_max_mib: u64,

    /// Use no cache directory: every module is read from scratch
    #[arg(long)]
    pub no_cache: bool,
}

fn default_cache_max_mib() -> u64 {
    2048
}

impl RunOptions {
    /// The cache directory this run uses (persist.rs), if any, and whether
    /// the user named it.
    pub fn cache(&self) -> (Option<std::path::PathBuf>, bool) {
        match (&self.cache_dir, self.no_cache) {
            (_, true) => (None, false),
            (Some(d), false) => (Some(d.clone()), true),
            (None, false) => (crate::persist::default_dir(), false),
        }
    }

    /// The options as the profile records them: the store URL without its
    /// password (an execed image gets them whole, dispatch/exec.rs).
    pub fn for_profile(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(url) = &self.store {
            v["store"] = redact(url).into();
        }
        v
    }
}

/// `--tree-coverage`: a percentage in (0, 100].
fn coverage_percent(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!("{s} is not a percentage in (0, 100]")),
    }
}

/// The superblock selectors (`--selector`).
#[derive(
    clap::ValueEnum,
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Selector {
    /// Execution and edge counts past thresholds (design S1).
    #[default]
    Counting,
    /// Sequential patterns mined from the block streams (design S2).
    Pisat,
}

/// A fraction in 0..=1.
fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("{s:?} is not a fraction between 0 and 1")),
    }
}

fn parse_yield(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=64.0).contains(&f) => Ok(f),
        _ => Err(format!("{s:?} is not a number of blocks between 0 and 64")),
    }
}

fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("{s:?} is not a share between 0 and 1")),
    }
}

impl RunOptions {
    /// Is the monitor thread running?
    pub fn monitor(&self) -> bool {
        !self.no_monitor && !self.count_inline
    }

    /// Does the monitor build superblocks?
    pub fn superblocks(&self) -> bool {
        self.monitor() && !self.no_superblocks
    }

    /// What the monitor samples for the time tree (None: nothing).
    pub fn sampling(&self) -> Option<crate::monitor::sampler::SampleConfig> {
        use crate::monitor::sampler::{Period, SampleConfig};
        (self.monitor() && !self.no_sampling).then_some(SampleConfig {
            period: match self.sample_entries {
                Some(k) => Period::Entries(k),
                None => Period::Micros(self.sample_us),
            },
            tree: crate::timetree::Params {
                leaf_capacity: self.tree_leaf,
                coverage_percent: self.tree_coverage,
                fanout: self.tree_fanout,
            },
        })
    }

    /// The Pisat configuration the options ask for, or None (counting).
    pub fn pisat(&self) -> Option<crate::superblock::pisat::Config> {
        use crate::superblock::pisat::{tree::Support, Config};
        (self.selector == Selector::Pisat).then_some(Config {
            window: self.pisat_window,
            interval: self.pisat_interval,
            sequences: self.pisat_sequences,
            support: Support {
                support1: self.pisat_support1,
                support2: self.pisat_support2,
            },
            max_nodes: self.pisat_nodes,
            max_depth: self.sb_max_blocks,
            budget_us: self.pisat_budget_us,
        })
    }
}

/// `url` with any password replaced by `***` (for messages and profiles:
/// [`RunOptions::for_profile`], src/store).
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.split_once('@') {
        Some(x) => x,
        None => return hide_password_param(url),
    };
    let auth = match auth.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => auth.to_string(),
    };
    hide_password_param(&format!("{scheme}://{auth}@{host}"))
}

fn hide_password_param(url: &str) -> String {
    let Some((head, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let q: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some(("password", _)) => "password=***".to_string(),
            _ => kv.to_string(),
        })
        .collect();
    format!("{head}?{}", q.join("&"))
}

/// `RunOptions` as the command line makes them, for [`Default`].
#[derive(clap::Parser)]
struct NoArguments {
    #[command(flatten)]
    run: RunOptions,
}

impl Default for RunOptions {
    /// The defaults declared above: a parse of no arguments, so they exist
    /// once.
    fn default() -> Self {
        use clap::Parser;
        NoArguments::parse_from(["hotlift"]).run
    }
}
