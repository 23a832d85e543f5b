//! `hotlift cache show|clear [--cache-dir DIR]`: what the cache directory
//! (persist.rs, `run --cache-dir`) holds, and emptying it. Exit 0, or 2
//! with a one-line error.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{EXIT_OK, EXIT_TOOL_ERROR};

#[derive(Args, Debug)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
    /// The cache directory (default: the one runs use, $XDG_CACHE_HOME/hotlift, else ~/.cache/hotlift)
    #[arg(long, value_name = "DIR", global = true)]
    pub cache_dir: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum CacheAction {
    /// Where the cache is, and its entries and bytes by kind
    Show,
    /// Remove every entry: the next run of each program starts cold
    Clear,
}

pub fn main(args: CacheArgs) -> i32 {
    let Some(dir) = args.cache_dir.or_else(crate::persist::default_dir) else {
        crate::host::say!("hotlift cache: no cache directory: neither XDG_CACHE_HOME nor HOME is set; give --cache-dir");
        return EXIT_TOOL_ERROR;
    };
    let missing = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let text = match args.action {
        CacheAction::Show => match crate::persist::usage(&dir) {
            Ok(kinds) => {
                let mut t = format!("{}\n", dir.display());
                for (kind, n, bytes) in &kinds {
                    t.push_str(&format!(
                        "{kind:<8} {n:>8} entries {:>10.1} KiB\n",
                        *bytes as f64 / 1024.0
                    ));
                }
                if kinds.is_empty() {
                    t.push_str("empty\n");
                }
                t
            }
            Err(e) if missing(&e) => format!("{}\nempty (not made yet)\n", dir.display()),
            Err(e) => {
                crate::host::say!("hotlift cache: cannot read {}: {e}", dir.display());
                return EXIT_TOOL_ERROR;
            }
        },
        CacheAction::Clear => match crate::persist::clear(&dir) {
            Ok(n) => format!("{}: {n} entries removed\n", dir.display()),
            Err(e) if missing(&e) => format!("{}: empty (not made yet)\n", dir.display()),
            Err(e) => {
                crate::host::say!("hotlift cache: cannot clear {}: {e}", dir.display());
                return EXIT_TOOL_ERROR;
            }
        },
    };
    match super::write_stdout(&text) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            crate::host::say!("hotlift cache: {e:#}");
            EXIT_TOOL_ERROR
        }
    }
}
