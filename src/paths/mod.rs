//! Path profiling of one guest function (design S3): Ball–Larus ids for
//! its loop-free paths, PAP's fold at loop back edges so that whole paths
//! through loops are counted exactly, paths of interest and the four
//! early-termination methods PSP0–PSP3.
//!
//! The pieces, in the order data flows: `resolve` finds the function in
//! an image's symbols; `cfg` discovers its control-flow graph from guest
//! memory when it is first entered; `dag` numbers it (Ball–Larus on the
//! graph with its back edges cut); `plan` decides what the probe on each
//! edge does for the chosen method (with `espp` for ESPP weights and probe
//! pushing); the backend emits an instrumented translation of the
//! function (paths/emit/mod.rs) that the dispatcher enters at the
//! function's entry (paths/engine/mod.rs); the probes push records to the
//! thread's ring, which the monitor collects together with the block
//! trace an independent reference is computed from (paths/collect.rs,
//! `reference`); `report` decodes, compares and prints.
//!
//! The feature lives here whole; the layers below know it only through
//! small hooks: the backend's block emitter (`emit` writes its probes and
//! stubs with it), the monitor's `StreamHook` (`collect`) and the
//! dispatcher's `PathProfiler` (`engine`). Beside them it needs only the
//! thread context's path fields and the `PATH_MISS` exit (contract).
//!
//! Usage: `hotlift paths --function NAME -- PROGRAM` (cli/paths.rs) makes a
//! [`PathsConfig`] and the engine's state from it, and hands that to the
//! run; everything else follows from it.

pub mod cfg;
pub mod collect;
pub mod dag;
pub mod emit;
pub mod engine;
pub mod espp;
pub mod interest;
pub mod plan;
pub mod reference;
pub mod report;
pub mod resolve;

use std::path::PathBuf;

pub use interest::{AddrSpec, InterestPath};
pub use plan::{Method, Plan};

/// Which function to profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FunctionSpec {
    Name(String),
    Addr(u64),
}

impl FunctionSpec {
    /// `0x401136` is an address, anything else a symbol name.
    pub fn parse(s: &str) -> FunctionSpec {
        match s
            .strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
        {
            Some(a) => FunctionSpec::Addr(a),
            None => FunctionSpec::Name(s.to_string()),
        }
    }
}

impl std::fmt::Display for FunctionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FunctionSpec::Name(n) => write!(f, "{n}"),
            FunctionSpec::Addr(a) => write!(f, "{a:#x}"),
        }
    }
}

/// Output format of `hotlift paths`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// What `hotlift paths` asked for.
#[derive(Clone, Debug)]
pub struct PathsConfig {
    pub function: FunctionSpec,
    pub interest: Vec<InterestPath>,
    pub method: Method,
    /// Compute the reference from the block stream and compare.
    pub reference: bool,
    pub format: Format,
    /// Where the report goes (stderr when None).
    pub output: Option<PathBuf>,
}
