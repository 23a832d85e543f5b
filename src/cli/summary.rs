//! `hotlift summary PROFILE... [--top N]`: the summary `hotlift profile`
//! prints when the guest ends, again from saved profiles; several
//! profiles (a process tree's: `p.json p.json.*`) give one line per
//! process and tables over all of them (profile/summary.rs). Exit 0, or 2
//! with a one-line error.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_OK, EXIT_TOOL_ERROR};
use crate::profile::export::images::Images;
use crate::profile::{read, summary};

#[derive(Args, Debug)]
pub struct SummaryArgs {
    /// The JSON profiles (one, or a process tree's)
    #[arg(value_name = "PROFILE", required = true, num_args = 1..)]
    pub profiles: Vec<PathBuf>,
    /// How many functions to list
    #[arg(long, value_name = "N", default_value_t = summary::TOP_FUNCTIONS)]
    pub top: usize,
}

pub fn main(args: SummaryArgs) -> i32 {
    let mut docs = Vec::new();
    for p in &args.profiles {
        match read::read_file(p) {
            Ok(d) => docs.push(d),
            Err(e) => {
                eprintln!("hotlift summary: {e}");
                return EXIT_TOOL_ERROR;
            }
        }
    }
    // A tree's processes in the order they began.
    docs.sort_by_key(|d| d.process.as_ref().map_or((0, 0), |p| (p.pid, p.image)));
    let images: Vec<Images> = docs.iter().map(Images::open).collect();
    let pairs: Vec<_> = docs.iter().zip(&images).collect();
    match super::write_stdout(&summary::summary(&pairs, args.top)) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("hotlift summary: {e:#}");
            EXIT_TOOL_ERROR
        }
    }
}
