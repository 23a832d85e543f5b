//! The command line: `hotlift run [OPTIONS] -- PROGRAM [ARGS...]`.
//!
//! Exit statuses of hotlift itself (the guest's own status passes through):
//! 125 hotlift failed (bad option, resource, unsupported guest behaviour),
//! 126 the program is not a runnable x86-64 static ELF, 127 it was not found.

mod run;

use clap::{Parser, Subcommand};

use crate::options::RunOptions;

pub const EXIT_HOTLIFT_FAILED: i32 = 125;
pub const EXIT_NOT_RUNNABLE: i32 = 126;
pub const EXIT_NOT_FOUND: i32 = 127;

#[derive(Parser, Debug)]
#[command(name = "hotlift", version, about = "Run Linux x86-64 programs under dynamic binary translation")]
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
}

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_HOTLIFT_FAILED } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Run { opts, program } => run::main(opts, program),
    }
}
