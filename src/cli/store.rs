//! `hotlift store list|show|prune|export STORE …`: look after a profile
//! store (src/store): the programs it knows, their traces, removing old
//! or rare ones, and a JSON copy of it all.
//!
//! Exit status: 0 done, 2 could not (no store there, a corrupt file, an
//! unreachable database, an unknown or ambiguous program, bad options),
//! with one line on stderr.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};

use super::{EXIT_OK, EXIT_TOOL_ERROR};
use crate::store::{Open, ProgramRow, Prune, Store, TraceRow};

#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
}

#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// The programs in the store: identity, name, version, traces
    List {
        /// The store: a file path, sqlite:PATH or postgres://...
        store: String,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
    },
    /// One program's traces, most-built first: count, members as module+offset <symbol>
    Show {
        /// The store: a file path, sqlite:PATH or postgres://...
        store: String,
        /// The program: its identity, a unique prefix of it, or its file name
        program: String,
        /// Only traces built by at least N runs
        #[arg(long, value_name = "N", default_value_t = 1)]
        min_count: u64,
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
    /// Remove traces built by few runs or not merged for a while, or a whole program
    Prune {
        /// The store: a file path, sqlite:PATH or postgres://...
        store: String,
        /// Only this program (alone: remove the program and all its traces)
        #[arg(long, value_name = "PROGRAM")]
        program: Option<String>,
        /// Traces built by fewer than N runs
        #[arg(long, value_name = "N")]
        below: Option<u64>,
        /// Traces last merged more than DAYS days ago
        #[arg(long, value_name = "DAYS")]
        older_than: Option<f64>,
    },
    /// The whole store (or one program) as JSON
    Export {
        /// The store: a file path, sqlite:PATH or postgres://...
        store: String,
        /// Only this program
        #[arg(long, value_name = "PROGRAM")]
        program: Option<String>,
        /// Write to FILE instead of stdout
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

pub fn main(args: StoreArgs) -> i32 {
    // What it prints goes out at the end, through write_stdout (a full
    // disk is an error, exit 2; println! panicked).
    let mut out = String::new();
    match run(args.command, &mut out).and_then(|()| super::write_stdout(&out)) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            crate::host::say!("hotlift store: {e:#}");
            EXIT_TOOL_ERROR
        }
    }
}

fn open(url: &str) -> Result<Store> {
    Ok(Store::open(url, Open::Existing)?)
}

fn when(t: i64) -> String {
    let ago = crate::store::now() - t;
    match ago {
        a if a < 120 => format!("{a} s ago"),
        a if a < 7200 => format!("{} min ago", a / 60),
        a if a < 172_800 => format!("{} h ago", a / 3600),
        a => format!("{} days ago", a / 86_400),
    }
}

fn run(cmd: StoreCommand, out: &mut String) -> Result<()> {
    match cmd {
        StoreCommand::List { store, json } => {
            let rows = open(&store)?.programs()?;
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
                return Ok(());
            }
            if rows.is_empty() {
                writeln!(out, "(no programs)")?;
            }
            for p in rows {
                writeln!(
                    out,
                    "{:<24} {}  version {}  {} traces  updated {}",
                    p.name,
                    p.identity,
                    p.version,
                    p.traces,
                    when(p.updated)
                )?;
            }
        }
        StoreCommand::Show {
            store,
            program,
            min_count,
            json,
        } => {
            let mut s = open(&store)?;
            let p = s.find_program(&program)?;
            let traces: Vec<TraceRow> = s
                .traces(&p.identity)?
                .into_iter()
                .filter(|t| t.count >= min_count)
                .collect();
            if json {
                let v = serde_json::json!({ "program": p, "traces": trace_json(&traces) });
                writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
                return Ok(());
            }
            writeln!(
                out,
                "{} {}  version {}  {} traces (showing {})",
                p.name,
                p.identity,
                p.version,
                p.traces,
                traces.len()
            )?;
            for t in &traces {
                match &t.path {
                    Ok(path) => {
                        writeln!(
                            out,
                            "trace {}  count {}  {} members  first {}, last {}",
                            t.key,
                            t.count,
                            path.members.len(),
                            when(t.first_seen),
                            when(t.last_seen)
                        )?;
                        for i in 0..path.members.len() {
                            writeln!(out, "    {}", path.describe(i))?;
                        }
                    }
                    Err(e) => writeln!(out, "trace {}  count {}  unreadable: {e}", t.key, t.count)?,
                }
            }
        }
        StoreCommand::Prune {
            store,
            program,
            below,
            older_than,
        } => {
            if program.is_none() && below.is_none() && older_than.is_none() {
                bail!("nothing to prune: give --program, --below or --older-than");
            }
            if let Some(d) = older_than {
                if !(d.is_finite() && d >= 0.0) {
                    bail!("--older-than must be a number of days, not {d}");
                }
            }
            let mut s = open(&store)?;
            let program = match program {
                Some(p) => Some(s.find_program(&p)?.identity),
                None => None,
            };
            let pruned = s.prune(&Prune {
                program,
                below,
                before: older_than.map(|d| crate::store::now() - (d * 86_400.0) as i64),
            })?;
            writeln!(
                out,
                "removed {} traces and {} programs",
                pruned.traces, pruned.programs
            )?;
        }
        StoreCommand::Export {
            store,
            program,
            output,
        } => {
            let mut s = open(&store)?;
            let programs: Vec<ProgramRow> = match program {
                Some(p) => vec![s.find_program(&p)?],
                None => s.programs()?,
            };
            let mut list = Vec::new();
            for p in programs {
                let traces = s.traces(&p.identity)?;
                list.push(serde_json::json!({
                    "identity": p.identity,
                    "name": p.name,
                    "version": p.version,
                    "updated": p.updated,
                    "traces": trace_json(&traces),
                }));
            }
            let doc = serde_json::json!({
                "store_schema": crate::store::SCHEMA,
                "programs": list,
            });
            let text = serde_json::to_string_pretty(&doc)? + "\n";
            match output {
                Some(f) => std::fs::write(&f, text)
                    .with_context(|| format!("cannot write {}", f.display()))?,
                None => out.push_str(&text),
            }
        }
    }
    Ok(())
}

fn trace_json(traces: &[TraceRow]) -> Vec<serde_json::Value> {
    traces
        .iter()
        .map(|t| {
            let mut v = serde_json::json!({
                "key": t.key,
                "count": t.count,
                "first_seen": t.first_seen,
                "last_seen": t.last_seen,
            });
            match &t.path {
                Ok(p) => {
                    v["modules"] = serde_json::to_value(&p.modules).unwrap_or_default();
                    v["members"] = serde_json::to_value(&p.members).unwrap_or_default();
                }
                Err(e) => v["unreadable"] = e.clone().into(),
            }
            v
        })
        .collect()
}
