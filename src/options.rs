//! Every tunable of `hotlift run`, declared once: name, type, default and a
//! one-line description. clap builds `--help` from this, the README's option
//! table is checked against it (tests/readme.rs), and the profile header
//! will record it.

use clap::Args;

#[derive(Args, Debug, Clone)]
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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            no_chain: false,
            max_block_insns: 128,
            cache_mib: 256,
            verbose: false,
            strace: false,
        }
    }
}
