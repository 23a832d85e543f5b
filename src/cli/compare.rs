//! `hotlift compare [OPTIONS] -- PROGRAM [ARGS...]`: run PROGRAM natively
//! and under hotlift and compare them (compare/, docs/COMPARE.md). Prints
//! the report on stdout; exit 0 when equivalent, 1 on a mismatch, 2 when it
//! could not run (a one-line error on stderr).

use std::ffi::OsString;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::{EXIT_MISMATCH, EXIT_OK, EXIT_TOOL_ERROR};
use crate::compare::{self, spawn::Setup, CompareOptions};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Write the result as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the result as JUnit XML to FILE (one test case per check)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Feed FILE to both runs as stdin (default: hotlift's own stdin, read once; /dev/null from a terminal)
    #[arg(long, value_name = "FILE")]
    pub stdin: Option<PathBuf>,
    /// Run in DIR (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Do not compare stdout
    #[arg(long, conflicts_with = "filter_stdout")]
    pub ignore_stdout: bool,
    /// Do not compare stderr
    #[arg(long, conflicts_with = "filter_stderr")]
    pub ignore_stderr: bool,
    /// Drop stdout lines matching REGEX before comparing (repeatable)
    #[arg(long, value_name = "REGEX")]
    pub filter_stdout: Vec<String>,
    /// Drop stderr lines matching REGEX before comparing (repeatable)
    #[arg(long, value_name = "REGEX")]
    pub filter_stderr: Vec<String>,
    /// Do not trace and compare the syscall sequences
    #[arg(long)]
    pub no_syscalls: bool,
    /// Leave syscall NAME out of both traces (repeatable)
    #[arg(long, value_name = "NAME", conflicts_with = "no_syscalls")]
    pub ignore_syscall: Vec<String>,
    /// Replace every match of REGEX in syscall lines by `*` (repeatable)
    #[arg(long, value_name = "REGEX", conflicts_with = "no_syscalls")]
    pub syscall_mask: Vec<String>,
    /// Lines of context around differences in diffs
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub context: usize,
    /// Also count the native run's instructions and compare with hotlift's
    /// exact count: with the hardware counter where the kernel offers one,
    /// else by ptrace single-stepping (stepcount), which is slow (about
    /// 20–60 µs per instruction): for small programs only. Every run is then
    /// pinned to one CPU, without ASLR and with glibc's rseq off
    #[arg(long)]
    pub count_native: bool,
    /// With --count-native: how to count the native run
    #[arg(
        long,
        value_enum,
        value_name = "METHOD",
        default_value = "auto",
        requires = "count_native"
    )]
    pub count_method: compare::CountMethod,
    /// With --count-native, give up (exit 2) after N native instructions (single-step)
    #[arg(long, value_name = "N", requires = "count_native")]
    pub max_steps: Option<u64>,
    /// With --count-native, accept counts that differ by at most PCT percent
    #[arg(
        long,
        value_name = "PCT",
        default_value_t = 0.0,
        requires = "count_native"
    )]
    pub count_tolerance: f64,
    /// Fail when hotlift's wall time is more than X times the native one
    #[arg(long, value_name = "X")]
    pub max_slowdown: Option<f64>,
    /// Kill a run after SECS seconds (it then counts as a mismatch)
    #[arg(long, value_name = "SECS", default_value_t = compare::DEFAULT_TIMEOUT.as_secs())]
    pub timeout: u64,
    /// Pass OPTION to `hotlift run` (repeatable), e.g. --run-option=--no-chain
    #[arg(long, value_name = "OPTION", allow_hyphen_values = true)]
    pub run_option: Vec<String>,
    /// The program and its arguments (after `--`)
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, value_name = "PROGRAM [ARGS...]")]
    pub program: Vec<OsString>,
}

pub fn main(args: CompareArgs) -> i32 {
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            // One line: anyhow's chain joined with ": ".
            crate::host::say!("hotlift compare: {}", format!("{e:#}").replace('\n', " "));
            EXIT_TOOL_ERROR
        }
    }
}

fn bad_regex(option: &str, r: &str, e: regex::Error) -> anyhow::Error {
    let why = e.to_string();
    let why = why.lines().last().unwrap_or("").trim().to_string();
    anyhow::anyhow!("bad {option} regex {r:?}: {why}")
}

fn regexes(v: &[String]) -> anyhow::Result<Vec<regex::bytes::Regex>> {
    v.iter()
        .map(|r| regex::bytes::Regex::new(r).map_err(|e| bad_regex("--filter", r, e)))
        .collect()
}

fn run(args: CompareArgs) -> anyhow::Result<i32> {
    let scratch = std::env::temp_dir().join(format!("hotlift-compare-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let result = compare_in(&args, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn compare_in(args: &CompareArgs, scratch: &std::path::Path) -> anyhow::Result<i32> {
    if args.count_tolerance < 0.0 || args.count_tolerance.is_nan() {
        anyhow::bail!("--count-tolerance must be >= 0");
    }
    if args.max_slowdown.is_some_and(|x| x.is_nan() || x <= 0.0) {
        anyhow::bail!("--max-slowdown must be > 0");
    }
    if args.timeout == 0 {
        anyhow::bail!("--timeout must be at least 1 second");
    }
    let stdin = match &args.stdin {
        Some(p) => {
            std::fs::File::open(p).with_context(|| format!("--stdin {}", p.display()))?;
            p.clone()
        }
        None if std::io::stdin().is_terminal() => PathBuf::from("/dev/null"),
        None => {
            let mut bytes = Vec::new();
            match std::io::stdin().read_to_end(&mut bytes) {
                // A closed stdin is an empty one.
                Err(e) if e.raw_os_error() == Some(libc::EBADF) => PathBuf::from("/dev/null"),
                Err(e) => return Err(e).context("cannot read stdin"),
                Ok(_) => {
                    let p = scratch.join("stdin");
                    std::fs::write(&p, bytes).context("cannot save stdin")?;
                    p
                }
            }
        }
    };
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("no current directory")?,
    };
    if !cwd.is_dir() {
        anyhow::bail!("--cwd {}: not a directory", cwd.display());
    }
    // With --count-native, every run under the conditions that make native
    // counts reproducible (docs/COMPARE.md): one CPU, no ASLR, and glibc
    // without rseq on both sides.
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let exact = if args.count_native {
        let cpu = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
            .ok()
            .and_then(|set| {
                (0..nix::sched::CpuSet::count()).find(|&c| set.is_set(c).unwrap_or(false))
            })
            .context("cannot read the CPU affinity")?;
        let tunable = "glibc.pthread.rseq=0";
        match env.iter_mut().find(|(k, _)| k == "GLIBC_TUNABLES") {
            Some((_, v)) if !v.to_string_lossy().contains("glibc.pthread.rseq") => {
                v.push(format!(":{tunable}"));
            }
            Some(_) => {}
            None => env.push(("GLIBC_TUNABLES".into(), tunable.into())),
        }
        Some(cpu)
    } else {
        None
    };
    let me = std::env::current_exe().context("cannot find the hotlift executable")?;
    let stepcount = me.with_file_name("stepcount");
    let opts = CompareOptions {
        program: args.program.clone(),
        setup: Setup {
            env,
            cwd,
            stdin,
            timeout: Duration::from_secs(args.timeout),
            scratch: scratch.to_path_buf(),
            exact,
        },
        ignore_stdout: args.ignore_stdout,
        ignore_stderr: args.ignore_stderr,
        filter_stdout: regexes(&args.filter_stdout)?,
        filter_stderr: regexes(&args.filter_stderr)?,
        syscalls: !args.no_syscalls,
        ignore_syscalls: args.ignore_syscall.clone(),
        syscall_masks: args
            .syscall_mask
            .iter()
            .map(|r| regex::Regex::new(r).map_err(|e| bad_regex("--syscall-mask", r, e)))
            .collect::<anyhow::Result<_>>()?,
        context: args.context,
        count_native: args.count_native,
        count_method: args.count_method,
        max_steps: args.max_steps,
        count_tolerance: args.count_tolerance,
        max_slowdown: args.max_slowdown,
        run_options: args.run_option.iter().map(OsString::from).collect(),
        hotlift: me,
        stepcount,
    };
    // The reports' paths are checked before anything runs (a path that
    // cannot be written fails at once, not after both runs), without
    // creating or emptying a file: one bad path leaves the others as
    // they were.
    for p in args.json.iter().chain(&args.junit) {
        super::run::profile_writable(p)
            .map_err(|why| anyhow::anyhow!("cannot write {}: {why}", p.display()))?;
    }
    // A SIGINT or SIGTERM goes on to the runs, and the report says so.
    compare::spawn::forward_interrupts();
    let report = compare::run(&opts)?;
    print!("{}", report.text());
    let write = |p: &Option<PathBuf>, text: String| match p {
        Some(p) => std::fs::write(p, text).with_context(|| format!("cannot write {}", p.display())),
        None => anyhow::Ok(()),
    };
    write(
        &args.json,
        serde_json::to_string_pretty(&report.json())? + "\n",
    )?;
    write(&args.junit, report.junit())?;
    if let Some(sig) = compare::spawn::interrupted() {
        // As a shell reports a command a signal ended.
        return Ok(128 + sig);
    }
    Ok(if report.equivalent() {
        EXIT_OK
    } else {
        EXIT_MISMATCH
    })
}
