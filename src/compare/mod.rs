//! `hotlift compare`: run a program natively and under hotlift with the
//! same arguments, environment, working directory and stdin, and compare
//! what the two runs did (docs/COMPARE.md).
//!
//! Runs, in order: the program natively (status, output, times); natively
//! again under ptrace syscall tracing (systrace.rs; skipped with
//! `syscalls: false`); under `hotlift run --profile … --strace-file …`
//! (status, output, times, syscalls, exact instruction count); and with
//! `count_native`, counted natively: by the hardware instruction counter
//! where the kernel offers one (hwcount.rs), else under the `stepcount`
//! single-step counter.
//!
//! I1: every run gets the same `spawn::Setup` (spawn I1), so differences
//!     are the program's or hotlift's, not the harness's.
//! I2: one `Check` per compared property, in a fixed order: exit status,
//!     stdout, stderr, syscalls, instructions, time. A check is `Pass`,
//!     `Fail` (a real difference) or `Skip` (not asked for, or ignored).
//! I3: `Report::equivalent()` is true iff no check failed; only a run that
//!     could not be started (or the harness failing) is a `CompareError`.
//! I4: outputs are compared byte for byte after dropping the lines a
//!     filter matches; syscall lines after normalise.rs's rules (N1–N5),
//!     then the user's `ignore_syscalls` and `syscall_masks`.
//!
//! Usage: `let report = compare::run(&opts)?; print!("{}", report.text());`

pub mod hwcount;
pub mod normalise;
pub mod report;
pub mod spawn;
pub mod systrace;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use regex::bytes::Regex;
use thiserror::Error;

pub use report::{Check, Outcome, Report};
use spawn::{RunResult, Setup, Status};

#[derive(Debug, Error)]
pub enum CompareError {
    #[error("cannot run {program} natively: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    #[error("{0}")]
    Setup(String),
    #[error("hotlift could not run the program ({status}): {stderr}")]
    Hotlift { status: String, stderr: String },
}

/// What to compare and how (the CLI's options, parsed).
#[derive(Debug, Clone)]
pub struct CompareOptions {
    pub program: Vec<OsString>,
    pub setup: Setup,
    pub ignore_stdout: bool,
    pub ignore_stderr: bool,
    pub filter_stdout: Vec<Regex>,
    pub filter_stderr: Vec<Regex>,
    pub syscalls: bool,
    /// Syscalls left out of both traces (by name).
    pub ignore_syscalls: Vec<String>,
    /// Every match in a syscall line is replaced by `*` (run-dependent
    /// values such as temporary file names).
    pub syscall_masks: Vec<regex::Regex>,
    /// Lines of context around syscall and output differences.
    pub context: usize,
    pub count_native: bool,
    pub count_method: CountMethod,
    pub max_steps: Option<u64>,
    /// Allowed difference between the counts, in percent.
    pub count_tolerance: f64,
    /// Fail when hotlift's wall time exceeds the native one this many times.
    pub max_slowdown: Option<f64>,
    /// Extra `hotlift run` options.
    pub run_options: Vec<OsString>,
    pub hotlift: PathBuf,
    pub stepcount: PathBuf,
}

/// Drop the lines any of `filters` matches (I4).
fn filtered(bytes: &[u8], filters: &[Regex]) -> Vec<u8> {
    if filters.is_empty() {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if !filters.iter().any(|r| r.is_match(body)) {
            out.extend_from_slice(line);
        }
    }
    out
}

fn lines_of(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l).to_string())
        .collect()
}

fn output_check(
    name: &'static str,
    native: &[u8],
    hotlift: &[u8],
    ignore: bool,
    filters: &[Regex],
    context: usize,
) -> Check {
    if ignore {
        return Check::skip(name, "ignored (--ignore-".to_string() + name + ")");
    }
    let (a, b) = (filtered(native, filters), filtered(hotlift, filters));
    let dropped = |raw: &[u8], kept: &[u8]| {
        raw.iter().filter(|&&c| c == b'\n').count() - kept.iter().filter(|&&c| c == b'\n').count()
    };
    let note = if filters.is_empty() {
        String::new()
    } else {
        format!(
            " ({} native and {} hotlift lines filtered out)",
            dropped(native, &a),
            dropped(hotlift, &b)
        )
    };
    if a == b {
        Check::pass(name, format!("{} bytes, identical{note}", a.len()))
    } else {
        let first = a
            .iter()
            .zip(&b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        Check::fail(
            name,
            format!(
                "differ: {} bytes native, {} bytes hotlift, first difference at byte {first}{note}",
                a.len(),
                b.len()
            ),
            report::unified(&lines_of(&a), &lines_of(&b), context),
        )
    }
}

fn status_check(native: Status, hotlift: Status) -> Check {
    if native == Status::Timeout || hotlift == Status::Timeout {
        return Check::fail(
            "exit status",
            format!("native: {native}; hotlift: {hotlift} (--timeout)"),
            String::new(),
        );
    }
    if native == hotlift {
        Check::pass("exit status", format!("{native} in both runs"))
    } else {
        Check::fail(
            "exit status",
            format!("native: {native}; hotlift: {hotlift}"),
            String::new(),
        )
    }
}

/// One side's syscall lines, its pid, and whether it died of a signal.
type Trace<'a> = (&'a [String], u32, bool);

/// The user's syscall options: `ignore_syscalls`, then `syscall_masks`.
fn user_filtered(lines: Vec<String>, opts: &CompareOptions) -> Vec<String> {
    lines
        .into_iter()
        .filter(|l| {
            let name = l.split('(').next().unwrap_or("");
            !opts.ignore_syscalls.iter().any(|n| n == name)
        })
        .map(|l| {
            opts.syscall_masks
                .iter()
                .fold(l, |l, r| r.replace_all(&l, "*").into_owned())
        })
        .collect()
}

/// Compare the syscall sequences of the initial thread; `others` lines of
/// hotlift's other threads and processes were left out (systrace I3).
fn syscall_check(
    native: Trace<'_>,
    hotlift: Trace<'_>,
    others: usize,
    opts: &CompareOptions,
) -> Check {
    let ctx = opts.context;
    // N2 masks both runs' pids in both traces alike.
    let pids = [native.1, hotlift.1];
    // N6 masks both runs' child pids in both traces alike.
    let kids = [
        normalise::children(native.0),
        normalise::children(hotlift.0),
    ];
    let a = user_filtered(normalise::trace(native.0, &pids, &kids, native.2), opts);
    let b = user_filtered(normalise::trace(hotlift.0, &pids, &kids, hotlift.2), opts);
    if a == b {
        let rest = match others {
            0 => String::new(),
            n => format!(
                "; {n} syscalls of other threads and processes not compared (the native trace follows the initial thread only)"
            ),
        };
        return Check::pass(
            "syscalls",
            format!(
                "{} syscalls, the same sequence (after normalising){rest}",
                a.len()
            ),
        );
    }
    let first = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    Check::fail(
        "syscalls",
        format!(
            "{} native, {} hotlift; first difference at syscall #{}",
            a.len(),
            b.len(),
            first + 1
        ),
        report::unified(&a, &b, ctx),
    )
}

/// How `--count-native` counts the native run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CountMethod {
    /// The hardware counter where the kernel offers one, else single-step
    Auto,
    /// The hardware instruction counter (perf_event_open); an error without one
    Perf,
    /// ptrace single-stepping (stepcount): exact, slow
    Step,
}

/// hotlift's counts from its profile: all instructions, and `rep`
/// iterations beyond the first.
type HotCount = (u64, u64);

fn count_check(native: u64, hot: HotCount, method: CountMethod, tolerance: f64) -> Check {
    // hwcount I2: the hardware counts a rep instruction once.
    let (hotlift, what, how) = match method {
        CountMethod::Perf => (
            hot.0 - hot.1,
            "hotlift without rep iterations beyond the first",
            "hardware counter",
        ),
        _ => (hot.0, "hotlift (exact)", "single-step"),
    };
    let delta = hotlift as i128 - native as i128;
    let pct = delta.unsigned_abs() as f64 * 100.0 / native.max(1) as f64;
    let text = format!("{hotlift} {what}, {native} native ({how}); difference {delta:+}");
    if delta == 0 {
        Check::pass("instructions", text)
    } else if pct <= tolerance {
        Check::pass(
            "instructions",
            format!("{text} (within --count-tolerance {tolerance}%)"),
        )
    } else {
        Check::fail(
            "instructions",
            format!("{text} ({pct:.4}%, tolerance {tolerance}%)"),
            String::new(),
        )
    }
}

/// The hotlift side's syscall lines: those of the first process's initial
/// thread, and how many of other threads and processes were left out.
struct HotLines {
    lines: Vec<String>,
    others: usize,
}

/// Run the hotlift side: the program under `hotlift run` with a profile and
/// a syscall log in the scratch directory.
fn run_hotlift(
    opts: &CompareOptions,
) -> Result<(RunResult, u32, HotLines, Option<HotCount>), CompareError> {
    let dir = &opts.setup.scratch;
    let (profile, log) = (
        dir.join("hotlift-profile.json"),
        dir.join("hotlift-strace.log"),
    );
    let mut argv: Vec<OsString> = vec![opts.hotlift.clone().into(), "run".into()];
    argv.extend(opts.run_options.iter().cloned());
    argv.push("--profile".into());
    argv.push(profile.clone().into());
    if opts.syscalls {
        argv.push("--strace-file".into());
        argv.push(log.clone().into());
    }
    argv.push("--".into());
    argv.extend(opts.program.iter().cloned());
    let started = spawn::start(&opts.setup, &argv, "hotlift", false)?;
    let pid = started.pid.as_raw() as u32;
    let run = spawn::wait(started)?;
    // hotlift's own failures (125–127) are not the program's behaviour,
    // unless the native run failed the same way (checked by the caller).
    let count = crate::profile::read::read_file(&profile)
        .ok()
        .map(|p| (p.totals.guest_instructions, p.totals.rep_extra_iterations));
    let mut lines = HotLines {
        lines: Vec::new(),
        others: 0,
    };
    if opts.syscalls {
        for l in std::fs::read_to_string(&log).unwrap_or_default().lines() {
            // The native trace follows the first process's initial thread
            // only (strace/sink.rs I2, systrace I3).
            if l.starts_with("[pid ") {
                lines.others += 1;
            } else {
                lines.lines.push(l.to_string());
            }
        }
    }
    Ok((run, pid, lines, count))
}

/// Count the native run's instructions with `stepcount`.
fn run_stepcount(opts: &CompareOptions) -> Result<(u64, RunResult), CompareError> {
    if !opts.stepcount.is_file() {
        return Err(CompareError::Setup(format!(
            "--count-native needs the stepcount binary, built with hotlift ({} not found)",
            opts.stepcount.display()
        )));
    }
    let out = opts.setup.scratch.join("stepcount.count");
    let mut argv: Vec<OsString> = vec![
        opts.stepcount.clone().into(),
        "--output".into(),
        out.clone().into(),
    ];
    if let Some(n) = opts.max_steps {
        argv.push("--max-steps".into());
        argv.push(n.to_string().into());
    }
    argv.push("--".into());
    argv.extend(opts.program.iter().cloned());
    let run = spawn::wait(spawn::start(&opts.setup, &argv, "stepcount", false)?)?;
    let count = std::fs::read_to_string(&out)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| {
            let err = String::from_utf8_lossy(&run.stderr);
            CompareError::Setup(format!(
                "stepcount did not count the native run ({}): {}",
                run.status,
                err.lines().last().unwrap_or("")
            ))
        })?;
    Ok((count, run))
}

/// Run both sides and compare them (I1–I4).
pub fn run(opts: &CompareOptions) -> Result<Report, CompareError> {
    // The counting method first: a missing counter stops before any run.
    let method = match (opts.count_native, opts.count_method, hwcount::unavailable()) {
        (false, ..) => None,
        (true, CountMethod::Auto, None) => Some(CountMethod::Perf),
        (true, CountMethod::Auto, Some(_)) => Some(CountMethod::Step),
        (true, CountMethod::Perf, Some(why)) => {
            return Err(CompareError::Setup(format!(
                "--count-method perf: no hardware instruction counter here ({why})"
            )))
        }
        (true, m, _) => Some(m),
    };
    let mut done = Done::default();
    let result = run_all(opts, method, &mut done);
    match spawn::interrupted() {
        Some(sig) => Ok(interrupted(opts, sig, done)),
        None => result,
    }
}

/// The runs that ended, for a report of an interrupted comparison.
#[derive(Default)]
struct Done {
    native: Option<RunResult>,
    hotlift: Option<RunResult>,
    /// The run in progress.
    during: &'static str,
}

/// The report of a comparison a signal interrupted (spawn.rs I6): one
/// failed check saying so and during which run, and the runs' results as
/// far as they got (the one interrupted killed by the signal, as it ended;
/// one that never started as not run, with no output).
fn interrupted(opts: &CompareOptions, sig: i32, done: Done) -> Report {
    let name = nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"));
    let what = format!("during {}", done.during);
    let none = RunResult {
        status: Status::NotRun,
        stdout: Vec::new(),
        stderr: Vec::new(),
        wall_seconds: 0.0,
        cpu_seconds: 0.0,
    };
    Report::new(
        opts,
        vec![Check::fail(
            "interrupted",
            format!("compare was interrupted by {name} {what}; the runs as far as they got are in the report"),
            String::new(),
        )],
        report::Runs {
            native: done.native.unwrap_or_else(|| none.clone()),
            hotlift: done.hotlift.unwrap_or(none),
            native_syscalls: None,
            hotlift_syscalls: None,
            native_instructions: None,
            hotlift_instructions: None,
            count_method: None,
            wall_ratio: 0.0,
            cpu_ratio: 0.0,
        },
    )
}

/// [`run`]'s runs and checks; the runs that ended go into `done`.
fn run_all(
    opts: &CompareOptions,
    method: Option<CountMethod>,
    done: &mut Done,
) -> Result<Report, CompareError> {
    done.during = "the native run";
    let native = spawn::wait(spawn::start(&opts.setup, &opts.program, "native", false)?)?;
    done.native = Some(native.clone());
    if spawn::interrupted().is_some() {
        return Err(CompareError::Setup("interrupted".into()));
    }
    done.during = "the traced native run";
    let traced = if opts.syscalls {
        Some(systrace::run(&opts.setup, &opts.program)?)
    } else {
        None
    };
    if spawn::interrupted().is_some() {
        return Err(CompareError::Setup("interrupted".into()));
    }
    done.during = "the hotlift run";
    let (hot, hot_pid, hot_lines, hot_count) = run_hotlift(opts)?;
    done.hotlift = Some(hot.clone());
    if spawn::interrupted().is_some() {
        return Err(CompareError::Setup("interrupted".into()));
    }
    done.during = "the native count";
    if let Status::Exit { code: 125..=127 } = hot.status {
        if hot.status != native.status {
            let err = String::from_utf8_lossy(&hot.stderr);
            let line = err
                .lines()
                .rev()
                .find(|l| l.starts_with("hotlift"))
                .unwrap_or("")
                .to_string();
            return Err(CompareError::Hotlift {
                status: hot.status.to_string(),
                stderr: line,
            });
        }
    }
    let mut checks = vec![
        status_check(native.status, hot.status),
        output_check(
            "stdout",
            &native.stdout,
            &hot.stdout,
            opts.ignore_stdout,
            &opts.filter_stdout,
            opts.context,
        ),
        output_check(
            "stderr",
            &native.stderr,
            &hot.stderr,
            opts.ignore_stderr,
            &opts.filter_stderr,
            opts.context,
        ),
    ];
    checks.push(match &traced {
        Some(t) => {
            let killed = |s: Status| matches!(s, Status::Signal { .. });
            syscall_check(
                (&t.lines, t.pid, killed(t.run.status)),
                (&hot_lines.lines, hot_pid, killed(hot.status)),
                hot_lines.others,
                opts,
            )
        }
        None => Check::skip("syscalls", "not traced (--no-syscalls)".into()),
    });
    let mut native_count = None;
    let mut count_method = None;
    checks.push(match (opts.count_native, hot_count) {
        (false, Some((h, _))) => Check::skip(
            "instructions",
            format!("{h} hotlift (exact); give --count-native to count the native run"),
        ),
        (false, None) => Check::skip("instructions", "hotlift wrote no profile".into()),
        (true, None) => Check::fail(
            "instructions",
            "hotlift wrote no profile".into(),
            String::new(),
        ),
        (true, Some(h)) => {
            let method = method.unwrap_or(CountMethod::Step);
            let (n, _) = match method {
                CountMethod::Perf => hwcount::run(&opts.setup, &opts.program)?,
                _ => run_stepcount(opts)?,
            };
            native_count = Some(n);
            count_method = Some(method);
            count_check(n, h, method, opts.count_tolerance)
        }
    });
    let ratio = |h: f64, n: f64| if n > 0.0 { h / n } else { f64::INFINITY };
    let wall = ratio(hot.wall_seconds, native.wall_seconds);
    let cpu = ratio(hot.cpu_seconds, native.cpu_seconds);
    let text = format!(
        "wall {:.3} s native, {:.3} s hotlift (x{wall:.1}); CPU {:.3} s native, {:.3} s hotlift (x{cpu:.1})",
        native.wall_seconds, hot.wall_seconds, native.cpu_seconds, hot.cpu_seconds
    );
    checks.push(match opts.max_slowdown {
        Some(max) if wall > max => Check::fail(
            "time",
            format!("{text}; over --max-slowdown {max}"),
            String::new(),
        ),
        _ => Check::pass("time", text),
    });
    Ok(Report::new(
        opts,
        checks,
        report::Runs {
            native,
            hotlift: hot,
            native_syscalls: traced.as_ref().map(|t| t.lines.len()),
            hotlift_syscalls: opts.syscalls.then_some(hot_lines.lines.len()),
            native_instructions: native_count,
            hotlift_instructions: hot_count.map(|c| c.0),
            count_method: count_method.map(|m| match m {
                CountMethod::Perf => "hardware counter",
                _ => "single-step",
            }),
            wall_ratio: wall,
            cpu_ratio: cpu,
        },
    ))
}

/// The default `--timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
