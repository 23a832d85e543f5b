//! The command line: `hotlift run [OPTIONS] -- PROGRAM [ARGS...]`, one file
//! per subcommand.
//!
//! Exit statuses of `run` and `profile` (the guest's own status passes
//! through): 125 hotlift failed (bad option, resource, unsupported guest
//! behaviour, a profile that could not be written at the end), 126 the
//! program is not a runnable x86-64 ELF, 127 it (or its interpreter) was
//! not found. `compare`, `diff`, `export`, `report`, `dump`, `store` and
//! `cache` (tools): 0 all equivalent / within the threshold, 1 a mismatch / past
//! the threshold, 2 they could not do their work (bad options and output
//! that cannot be written included).

mod cache;
mod compare;
mod diff;
mod dump;
mod export;
mod paths;
mod report;
mod run;
mod store;
mod summary;

use clap::{Parser, Subcommand};

use crate::options::RunOptions;

pub use crate::status::{
    EXIT_HOTLIFT_FAILED, EXIT_MISMATCH, EXIT_NOT_FOUND, EXIT_NOT_RUNNABLE, EXIT_OK, EXIT_TOOL_ERROR,
};

#[derive(Parser, Debug)]
#[command(
    name = "hotlift",
    version,
    about = "Run Linux x86-64 programs under dynamic binary translation"
)]
pub struct Cli {
    /// Show C++ and Rust function names as the symbol tables spell them (mangled)
    #[arg(long, global = true)]
    pub no_demangle: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run PROGRAM under translation; exit with its status or die of its signal
    Run {
        #[command(flatten)]
        opts: RunOptions,
        /// How an image's execve hands its program over (dispatch/exec.rs)
        #[arg(long = "exec-state", hide = true, value_name = "JSON")]
        exec_state: Option<String>,
        /// The program and its arguments (after `--`)
        #[arg(required = true, num_args = 1.., trailing_var_arg = true, value_name = "PROGRAM [ARGS...]")]
        program: Vec<std::ffi::OsString>,
    },
    /// Run PROGRAM under translation, write its exact profile and print a summary
    Profile {
        /// Where to write the JSON profile
        #[arg(
            short = 'o',
            long = "output",
            value_name = "FILE",
            default_value = "hotlift-profile.json"
        )]
        output: std::path::PathBuf,
        #[command(flatten)]
        opts: RunOptions,
        /// The program and its arguments (after `--`)
        #[arg(required = true, num_args = 1.., trailing_var_arg = true, value_name = "PROGRAM [ARGS...]")]
        program: Vec<std::ffi::OsString>,
    },
    /// Show the superblocks a profiled run built: members, exits, counts, IR, guest and host code
    Dump {
        /// The JSON profile
        profile: std::path::PathBuf,
        /// Only this superblock
        #[arg(long, value_name = "ID")]
        superblock: Option<u32>,
        /// Only the N hottest superblocks (most passes)
        #[arg(long, value_name = "N", conflicts_with = "superblock")]
        top: Option<usize>,
        /// Output format (dot: one graph, a cluster per superblock)
        #[arg(long, value_enum, default_value = "text")]
        format: dump::DumpFormat,
    },
    /// Run PROGRAM natively and under hotlift and compare status, output, syscalls, instructions and time (for CI)
    Compare(compare::CompareArgs),
    /// Compare two profiles of the same binary and show the largest changes
    Diff(diff::DiffArgs),
    /// Write a profile as drcov, callgrind, folded stacks, a flame graph SVG, a perf map, or line coverage (lcov, Cobertura)
    Export(export::ExportArgs),
    /// Print the summary of saved profiles (one, or a process tree's): totals, functions, top blocks, syscalls, the monitor's cost
    Summary(summary::SummaryArgs),
    /// Look after a profile store (run --store): list, show, prune, export
    Store(store::StoreArgs),
    /// Show or clear the cache directory where runs keep what they learn about modules for the next run
    Cache(cache::CacheArgs),
    /// What ran in a time window of a profiled run (from the profile's time tree), and a timeline of its phases
    Report(report::ReportArgs),
    /// Run PROGRAM and profile the paths of one of its functions (Ball–Larus and PAP ids, paths of interest, PSP0–PSP3)
    Paths(paths::PathsArgs),
}

/// Write a tool's output to standard output: an error writing it (a full
/// disk, `/dev/full`) is the tool's error, said and exit 2, where
/// `print!` panicked (status 134) or the error went unsaid with exit 0; a
/// reader that went away (`hotlift dump … | head`, EPIPE) is not an error.
pub(crate) fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("cannot write to standard output"))
        }
        _ => Ok(()),
    }
}

/// Is this a CI tool subcommand (exit 2 on bad usage)?
fn tool_subcommand() -> bool {
    matches!(
        std::env::args().nth(1).as_deref(),
        Some("cache" | "compare" | "diff" | "export" | "report" | "store" | "summary")
    )
}

/// clap's error as one line: its message and its tips (a similar
/// subcommand or option), without the usage footer.
fn one_line(e: &clap::Error) -> String {
    let rendered = e.to_string();
    let lines: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:"))
        .filter(|l| !l.is_empty())
        .collect();
    let mut msg = String::new();
    for l in lines {
        if !msg.is_empty() {
            // A list after "…:" goes on the same line.
            msg.push_str(if msg.ends_with(':') { " " } else { "; " });
        }
        msg.push_str(l);
    }
    msg.strip_prefix("error: ").unwrap_or(&msg).to_string()
}

/// clap's tip for a subcommand one transposition away (`rnu`, `dfif`),
/// which its similarity measure does not find, in its words.
fn transposed_subcommand(typed: &str) -> String {
    let cmd = <Cli as clap::CommandFactory>::command();
    let found = cmd
        .get_subcommands()
        .map(|c| c.get_name())
        .find(|name| strsim::osa_distance(typed, name) == 1)
        .map(|name| format!("; tip: a similar subcommand exists: '{name}'"));
    found.unwrap_or_default()
}

pub fn main() -> i32 {
    crate::clock::mark_born();
    crate::dispatch::exec::remember_own_exe();
    // A guest's `execve` runs its program as `hotlift run --exec-state
    // JSON -- PROGRAM ARGS...` (dispatch/exec.rs), its options in the
    // state: that shape skips clap, whose parse (every subcommand's
    // arguments built) was 0.3-0.5 ms of each such image's start.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let [_, run, flag, state, dashes, program @ ..] = &args[..] {
        if run == "run"
            && flag == crate::dispatch::exec::EXEC_STATE_ARG
            && dashes == "--"
            && !program.is_empty()
        {
            if let Some(state) = state.to_str() {
                return run::main_exec(state, program.to_vec());
            }
        }
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            let _ = e.print(); // --help, --version
            return 0;
        }
        Err(_) if std::env::args_os().len() == 1 => {
            // Bare `hotlift`: what it does and how, as `--help` says it.
            eprint!("{}", <Cli as clap::CommandFactory>::command().render_help());
            return EXIT_HOTLIFT_FAILED;
        }
        Err(e) => {
            let sub = std::env::args().nth(1).unwrap_or_default();
            // An unknown subcommand has no help of its own.
            let unknown = e.kind() == clap::error::ErrorKind::InvalidSubcommand;
            let mut msg = one_line(&e);
            if unknown && !msg.contains("tip:") {
                msg.push_str(&transposed_subcommand(&sub));
            }
            crate::host::say!(
                "hotlift: {msg} (see hotlift {}--help)",
                if sub.starts_with('-') || sub.is_empty() || unknown {
                    String::new()
                } else {
                    format!("{sub} ")
                }
            );
            return if tool_subcommand() {
                EXIT_TOOL_ERROR
            } else {
                EXIT_HOTLIFT_FAILED
            };
        }
    };
    crate::profile::names::keep_raw(cli.no_demangle);
    match cli.command {
        Command::Run {
            exec_state: Some(state),
            program,
            ..
        } => run::main_exec(&state, program),
        Command::Run {
            opts,
            exec_state: None,
            program,
        } => run::main(opts, program, false),
        Command::Profile {
            output,
            mut opts,
            program,
        } => {
            if opts.no_monitor {
                crate::host::say!("hotlift: profile needs the monitor (drop --no-monitor)");
                return EXIT_HOTLIFT_FAILED;
            }
            opts.profile.get_or_insert(output);
            run::main(opts, program, true)
        }
        Command::Dump {
            profile,
            superblock,
            top,
            format,
        } => match dump::main(&profile, superblock, top, format) {
            Ok(()) => 0,
            Err(e) => {
                crate::host::say!("hotlift dump: {e:#}");
                2
            }
        },
        Command::Compare(args) => compare::main(args),
        Command::Diff(args) => diff::main(args),
        Command::Export(args) => export::main(args),
        Command::Store(args) => store::main(args),
        Command::Cache(args) => cache::main(args),
        Command::Summary(args) => summary::main(args),
        Command::Report(args) => report::main(args),
        Command::Paths(args) => paths::main(args),
    }
}

/// The option table of `hotlift run` in docs/USAGE.md, generated from the
/// one declaration in `options.rs` (tests/cli.rs keeps docs/USAGE.md equal).
pub fn run_options_markdown() -> String {
    options_markdown("run")
}

/// docs/USAGE.md's table of the options of `paths` itself (the run options it
/// passes through are in `run`'s table).
pub fn paths_options_markdown() -> String {
    let run = options_markdown("run");
    options_markdown("paths")
        .lines()
        .filter(|l| l.starts_with("| option") || l.starts_with("|---") || !run.contains(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// docs/USAGE.md's option table for subcommand `sub` (`"store prune"` for a
/// nested one), generated from its clap declaration (tests/cli.rs and
/// tests/readme_tools.rs keep docs/USAGE.md equal).
pub fn options_markdown(sub: &str) -> String {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let mut run = &cmd;
    for part in sub.split_whitespace() {
        run = run
            .find_subcommand(part)
            .unwrap_or_else(|| panic!("no subcommand {sub}"));
    }
    let mut s = String::from("| option | default | description |\n|---|---|---|\n");
    for a in run.get_arguments() {
        let Some(long) = a.get_long() else { continue };
        if long == "help" || long == "version" || a.is_hide_set() {
            continue;
        }
        let value = a
            .get_value_names()
            .and_then(|v| v.first())
            .map_or("N".to_string(), |v| v.to_string());
        let name = match (a.get_short(), a.get_action().takes_values()) {
            (Some(c), false) => format!("`-{c}`, `--{long}`"),
            (None, false) => format!("`--{long}`"),
            (Some(c), true) => format!("`-{c}`, `--{long} {value}`"),
            (None, true) => format!("`--{long} {value}`"),
        };
        let default: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        let default = if default.is_empty() {
            "off".to_string()
        } else {
            default.join(",")
        };
        let help = a
            .get_help()
            .map(|h| {
                h.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        let values: Vec<String> = a
            .get_possible_values()
            .iter()
            .map(|v| format!("`{}`", v.get_name()))
            .collect();
        let help = if a.get_action().takes_values() && !values.is_empty() {
            format!("{help}: {}", values.join(", "))
        } else {
            help
        };
        s.push_str(&format!("| {name} | {default} | {help} |\n"));
    }
    s
}
