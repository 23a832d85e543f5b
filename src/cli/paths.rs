//! `hotlift paths`: profile the paths of one guest function (src/paths).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use super::EXIT_HOTLIFT_FAILED;
use crate::options::RunOptions;
use crate::paths::{interest, Format, FunctionSpec, Method, PathsConfig};

#[derive(clap::Args, Debug)]
pub struct PathsArgs {
    /// The function whose paths are profiled: a symbol of the program or of a library it loads, or its address (0x...)
    #[arg(long, value_name = "FUNCTION")]
    pub function: String,
    /// Paths of interest, one per line: the addresses of its blocks in order (0x..., or FUNCTION+0x...)
    #[arg(long, value_name = "FILE")]
    pub interest: Option<PathBuf>,
    /// How paths not of interest stop costing (none: every path is numbered; psp0: T1, psp1: T2, psp2: T3, psp3: T2 and T3)
    #[arg(long, value_enum, default_value = "none", value_name = "METHOD")]
    pub method: Method,
    /// Also compute the paths from the full block stream (a brute-force reference, independent of the probes) and compare
    #[arg(long)]
    pub reference: bool,
    /// Report format
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: Format,
    /// Write the report to FILE (default: standard error)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub opts: RunOptions,
    /// The program and its arguments (after `--`)
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, value_name = "PROGRAM [ARGS...]")]
    pub program: Vec<OsString>,
}

pub fn main(args: PathsArgs) -> i32 {
    match config(&args) {
        Ok(c) => {
            let mut opts = args.opts;
            opts.paths = Some(Arc::new(c));
            super::run::main(opts, args.program, false)
        }
        Err(e) => {
            eprintln!("hotlift paths: {e:#}");
            EXIT_HOTLIFT_FAILED
        }
    }
}

fn config(args: &PathsArgs) -> anyhow::Result<PathsConfig> {
    if !args.opts.monitor() {
        anyhow::bail!("path profiling needs the monitor (drop --no-monitor and --count-inline)");
    }
    let function = FunctionSpec::parse(&args.function);
    let interest = match &args.interest {
        Some(path) => {
            let text = crate::profile::read::read_input(path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let text = String::from_utf8(text)
                .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))?;
            let name = match &function {
                FunctionSpec::Name(n) => Some(n.as_str()),
                FunctionSpec::Addr(_) => None,
            };
            let paths = interest::parse(&path.display().to_string(), &text, name)?;
            if paths.is_empty() {
                anyhow::bail!("{}: no path of interest in it", path.display());
            }
            paths
        }
        None => Vec::new(),
    };
    if args.method != Method::None && interest.is_empty() {
        anyhow::bail!(
            "--method {} needs paths of interest (--interest FILE)",
            args.method.name()
        );
    }
    Ok(PathsConfig {
        function,
        interest,
        method: args.method,
        reference: args.reference,
        format: args.format,
        output: args.output.clone(),
    })
}
