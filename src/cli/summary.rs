//! `hotlift summary PROFILE... [--top N]`: the summary `hotlift profile`
//! prints when the guest ends, again from saved profiles; several
//! profiles of a process tree (`p.json p.json.*`) give one line per
//! process and tables over all of them (profile/summary.rs); profiles of
//! different runs, one summary each. Exit 0, or 2
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
                crate::host::say!("hotlift summary: {e}");
                return EXIT_TOOL_ERROR;
            }
        }
    }
    // One summary per process tree, its processes in the order they
    // began.
    let mut text = String::new();
    for tree in summary::trees(docs) {
        let images: Vec<Images> = tree.iter().map(Images::open).collect();
        let pairs: Vec<_> = tree.iter().zip(&images).collect();
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&summary::summary(&pairs, args.top));
    }
    match super::write_stdout(&text) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            crate::host::say!("hotlift summary: {e:#}");
            EXIT_TOOL_ERROR
        }
    }
}
