//! `hotlift diff A.json B.json [--threshold PCT] [--top N]`: compare two
//! profiles of the same binary (profile/diff.rs) and print the largest
//! changes. Exit 0 within the threshold, 1 past it, 2 when a profile cannot
//! be read or the two are of different binaries.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_MISMATCH, EXIT_OK, EXIT_TOOL_ERROR};
use crate::profile::diff::ProfileDiff;
use crate::profile::read;

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The baseline profile
    #[arg(value_name = "A.json")]
    pub a: PathBuf,
    /// The profile to compare with it
    #[arg(value_name = "B.json")]
    pub b: PathBuf,
    /// Exit 1 when total instructions, one function's instructions or the
    /// syscall count change by more than PCT percent of A's total
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub threshold: f64,
    /// How many of the largest changes to show per kind
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
}

pub fn main(args: DiffArgs) -> i32 {
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            crate::host::say!("hotlift diff: {e:#}");
            EXIT_TOOL_ERROR
        }
    }
}

fn run(args: &DiffArgs) -> anyhow::Result<i32> {
    if !(args.threshold >= 0.0 && args.threshold.is_finite()) {
        anyhow::bail!(
            "--threshold must be a percentage >= 0, not {}",
            args.threshold
        );
    }
    let a = read::read_file(&args.a)?;
    let b = read::read_file(&args.b)?;
    let d = ProfileDiff::new(&a, &b)?;
    let mut out = d.report(args.top);
    let past = d.exceeds(args.threshold);
    if past {
        out.push_str(&format!(
            "past the threshold of {}% (exit {EXIT_MISMATCH})\n",
            args.threshold
        ));
    }
    super::write_stdout(&out)?;
    Ok(if past { EXIT_MISMATCH } else { EXIT_OK })
}
