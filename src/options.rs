//! Every tunable of `hotlift run`, declared once: name, type, default and a
//! one-line description. clap builds `--help` from this, the README's option
//! table is checked against it (tests/readme.rs), and the profile header
//! will record it.

use clap::Args;

#[derive(Args, Debug, Clone, serde::Serialize)]
pub struct RunOptions {
    /// Do not link translated blocks: every block exit returns to the dispatcher
    #[arg(long)]
    pub no_chain: bool,

    /// Maximum number of guest instructions in one translated block
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_block_insns: u32,

    /// Size of the code cache in MiB (it is flushed and refilled when full)
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub cache_mib: u32,

    /// Report unhandled syscalls, guest traps and faults with their guest address
    #[arg(long, short = 'v')]
    pub verbose: bool,

    /// Log every guest syscall with decoded arguments and result to stderr
    #[arg(long)]
    pub strace: bool,

    /// Write the --strace log to FILE instead of stderr (implies --strace)
    #[arg(long, value_name = "FILE")]
    pub strace_file: Option<std::path::PathBuf>,

    /// Run without the monitor thread: no ring, no profile
    #[arg(long, conflicts_with = "count_inline")]
    pub no_monitor: bool,

    /// Count block executions in translated code itself (no ring, no monitor); the check for the monitor's counts
    #[arg(long)]
    pub count_inline: bool,

    /// Count block executions both ways in one run (the monitor from the ring, and translated code itself, per thread) and record in the profile where they differ: the exactness check for threaded programs
    #[arg(long, conflicts_with_all = ["count_inline", "no_monitor"])]
    pub count_check: bool,

    /// Ring capacity in 32-bit entries per guest thread (two segments)
    #[arg(long, default_value_t = 1 << 22, value_parser = clap::value_parser!(u64).range(2048..=(1 << 30)))]
    pub ring_entries: u64,

    /// Write the JSON profile to FILE when the guest ends
    #[arg(long, value_name = "FILE")]
    pub profile: Option<std::path::PathBuf>,

    /// Do not build superblocks (the monitor still profiles)
    #[arg(long)]
    pub no_superblocks: bool,

    /// Build a superblock at a block entered this many times by direct transfers (1 for experiments: nearly everything runs in superblocks)
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    pub sb_threshold: u32,

    /// Build a superblock at the target of an indirect edge taken this many times
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    pub sb_edge_threshold: u32,

    /// Most blocks in one superblock
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub sb_max_blocks: u32,

    /// Most guest instructions in one superblock
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=8192))]
    pub sb_max_insns: u32,

    /// Lay a loop closed at a superblock's head out up to this many times in a row (1: no unrolling)
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub sb_unroll: u32,

    /// Write a text dump of each superblock into DIR as it is built
    #[arg(long, value_name = "DIR")]
    pub dump_superblocks: Option<std::path::PathBuf>,

    /// Path profiling of one function (set by `hotlift paths`, not an
    /// option of `run`).
    #[arg(skip)]
    #[serde(skip)]
    pub paths: Option<std::sync::Arc<crate::paths::PathsConfig>>,
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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            no_chain: false,
            max_block_insns: 128,
            cache_mib: 256,
            verbose: false,
            strace: false,
            strace_file: None,
            no_monitor: false,
            count_inline: false,
            count_check: false,
            ring_entries: 1 << 22,
            profile: None,
            no_superblocks: false,
            sb_threshold: 3000,
            sb_edge_threshold: 5000,
            sb_max_blocks: 16,
            sb_max_insns: 512,
            sb_unroll: 4,
            dump_superblocks: None,
            paths: None,
        }
    }
}
