//! `hotlift export PROFILE --format FORMAT [-o FILE]`: write a profile in a
//! format other tools read (profile/export, docs/EXPORTS.md). Exit 0, or 2
//! with a one-line error.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::{EXIT_OK, EXIT_TOOL_ERROR};
use crate::profile::export::{export, Format};
use crate::profile::read;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The JSON profile to export
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    /// The output format
    #[arg(long, short = 'f', value_enum)]
    pub format: Format,
    /// Write to FILE instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn main(args: ExportArgs) -> i32 {
    match run(&args) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("hotlift export: {e:#}");
            EXIT_TOOL_ERROR
        }
    }
}

fn run(args: &ExportArgs) -> anyhow::Result<()> {
    let doc = read::read_file(&args.profile)?;
    let mut buf = Vec::new();
    let warnings = export(&doc, args.format, &mut buf)?;
    for w in warnings {
        eprintln!("hotlift export: warning: {w}");
    }
    match &args.output {
        Some(path) => std::fs::write(path, &buf)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&buf)
                .and_then(|_| out.flush())
                .context("cannot write to standard output")?;
        }
    }
    Ok(())
}
