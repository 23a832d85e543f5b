//! The command line: `hotlift run [OPTIONS] -- PROGRAM [ARGS...]`.
//!
//! Exit statuses of hotlift itself (the guest's own status passes through):
//! 125 hotlift failed (bad option, resource, unsupported guest behaviour),
//! 126 the program is not a runnable x86-64 ELF, 127 it (or its interpreter)
//! was not found.

mod dump;
mod run;

use clap::{Parser, Subcommand};

use crate::options::RunOptions;

pub const EXIT_HOTLIFT_FAILED: i32 = 125;
pub const EXIT_NOT_RUNNABLE: i32 = 126;
pub const EXIT_NOT_FOUND: i32 = 127;

#[derive(Parser, Debug)]
#[command(
    name = "hotlift",
    version,
    about = "Run Linux x86-64 programs under dynamic binary translation"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run PROGRAM under translation; exit with its status or die of its signal
    Run {
        #[command(flatten)]
        opts: RunOptions,
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
        /// Output format (dot needs --superblock)
        #[arg(long, value_enum, default_value = "text")]
        format: dump::DumpFormat,
    },
}

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                EXIT_HOTLIFT_FAILED
            } else {
                0
            };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Run { opts, program } => run::main(opts, program, false),
        Command::Profile {
            output,
            mut opts,
            program,
        } => {
            if opts.no_monitor {
                eprintln!("hotlift: profile needs the monitor (drop --no-monitor)");
                return EXIT_HOTLIFT_FAILED;
            }
            opts.profile.get_or_insert(output);
            run::main(opts, program, true)
        }
        Command::Dump {
            profile,
            superblock,
            format,
        } => match dump::main(&profile, superblock, format) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("hotlift dump: {e:#}");
                EXIT_HOTLIFT_FAILED
            }
        },
    }
}

/// The README's option table for `hotlift run`, generated from the one
/// declaration in `options.rs` (tests/readme.rs keeps the README equal).
pub fn run_options_markdown() -> String {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let run = cmd.find_subcommand("run").expect("run subcommand");
    let mut s = String::from("| option | default | description |\n|---|---|---|\n");
    for a in run.get_arguments() {
        let Some(long) = a.get_long() else { continue };
        if long == "help" || long == "version" {
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
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        s.push_str(&format!("| {name} | {default} | {help} |\n"));
    }
    s
}
