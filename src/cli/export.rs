//! `hotlift export PROFILE... --format FORMAT [-o FILE]`: write a profile
//! in a format other tools read (profile/export, docs/EXPORTS.md); the
//! coverage formats take a process tree's profiles together. Exit 0, or 2
//! with a one-line error.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};

use super::{EXIT_OK, EXIT_TOOL_ERROR};
use crate::profile::export::{export, Format, Options};
use crate::profile::read;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The JSON profile to export (lcov and cobertura: one or more, e.g. a
    /// process tree's `p.json p.json.*`, added up)
    #[arg(value_name = "PROFILE", required = true, num_args = 1..)]
    pub profiles: Vec<PathBuf>,
    /// The output format
    #[arg(long, short = 'f', value_enum)]
    pub format: Format,
    /// Write to FILE instead of standard output
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// lcov, cobertura: keep source files under /usr/ (system headers,
    /// libraries' sources), which are left out by default
    #[arg(long)]
    pub system_sources: bool,
}

pub fn main(args: ExportArgs) -> i32 {
    match run(&args) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            crate::host::say!("hotlift export: {e:#}");
            EXIT_TOOL_ERROR
        }
    }
}

fn run(args: &ExportArgs) -> anyhow::Result<()> {
    if args.profiles.len() > 1 && !args.format.merges() {
        let name = args
            .format
            .to_possible_value()
            .map(|v| v.get_name().to_string());
        anyhow::bail!(
            "--format {} exports one profile at a time; lcov and cobertura take several",
            name.unwrap_or_default()
        );
    }
    // The output first: a bad path fails before any work.
    if let Some(path) = &args.output {
        super::run::profile_writable(path)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    let docs = args
        .profiles
        .iter()
        .map(|p| read::read_file(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut buf = Vec::new();
    let opts = Options {
        system_sources: args.system_sources,
    };
    let warnings = export(&docs, args.format, opts, &mut buf)?;
    for w in warnings {
        crate::host::say!("hotlift export: warning: {w}");
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
