//! Differential guest tests: every program in `guest-tests/` runs natively
//! and under hotlift, and the two runs must agree byte for byte.
//!
//! The real CPU is the oracle. The test builds the guest programs once
//! (`make -C guest-tests -j2`), reads the run list `guest-tests/build/TESTS`
//! (generated from `guest-tests/manifest`, one run per line:
//! `NAME [ARG...] [< STDIN] expect=exit:N|signal:SIGNAME`), and runs every
//! line in every mode: natively, under `hotlift run --`, under
//! `hotlift run --no-chain --`, with superblocks nearly everywhere
//! (`sb-all`), and with the Pisat selector mining eagerly (`pisat`).
//!
//! Invariants (D1-D3 are kept by `guest/mod.rs`, which starts every run):
//! - D1. Native and translated runs get the same argv (the program's
//!   absolute path first), the same fixed environment, the same stdin, and
//!   a fresh empty working directory of their own (`HOME` and `TMPDIR`
//!   point at it), so file-I/O tests cannot collide.
//! - D2. Every child starts with `RLIMIT_CORE` = 0 and in its own process
//!   group, so deaths by signal compare equal (no core-dump bit) and the
//!   whole group can be killed.
//! - D3. Every run has a timeout; on expiry the process group is killed and
//!   the run is reported as timed out. Nothing here can hang.
//! - D4. A translated run passes only if stdout, stderr and the full wait
//!   status (exit code, or terminating signal) equal the native run's. A
//!   native run passes only if its status is the manifest's `expect=`.
//! - D5. Each (program line, configuration) runs once in the suite: a
//!   line that `guest-tests/build/COUNT` lists too (the programs without a
//!   smaller `count` form) is left to `exact.rs`, which runs it natively
//!   and in these configurations (its `sb-all` with records every third
//!   loop pass) and compares the outputs as D4 does; but the programs
//!   whose counts vary (`guest::COUNTS_VARY`), which it runs only to count
//!   both ways at once.
//!
//! Environment knobs:
//! - `HOTLIFT_GUEST_FILTER=substr` runs only lines containing `substr`.
//! - `HOTLIFT_GUEST_MODES=native,hotlift,no-chain,sb-all,pisat` picks modes
//!   (default all).
//! - `HOTLIFT_GUEST_JOBS=N` sets the worker threads (default 2).
//! - `HOTLIFT_GUEST_TIMEOUT=SECS` sets the per-run timeout (default 60).
//!
//! Usage: `cargo test --test guest_diff` (add `-- --nocapture` to watch
//! progress); `make -C guest-tests check` checks the programs natively alone.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod guest;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use guest::{
    diff_summary, env_or, exact_compares_output, outcome_matches, parse_tests, tail_text, Dirs,
    Expect, Launch, RunResult, TestCase, PISAT_EAGER, SB_EVERYWHERE,
};

/// How a run is started: natively, or through hotlift with these arguments
/// before the program path (groups, joined).
#[derive(Debug, Clone, Copy)]
struct Mode {
    name: &'static str,
    hotlift_args: Option<&'static [&'static [&'static str]]>,
}

const MODES: &[Mode] = &[
    Mode {
        name: "native",
        hotlift_args: None,
    },
    Mode {
        name: "hotlift",
        hotlift_args: Some(&[&["run", "--"]]),
    },
    Mode {
        name: "no-chain",
        hotlift_args: Some(&[&["run", "--no-chain", "--"]]),
    },
    Mode {
        name: "sb-all",
        hotlift_args: Some(&[&["run"], SB_EVERYWHERE, &["--"]]),
    },
    Mode {
        name: "pisat",
        hotlift_args: Some(&[&["run"], PISAT_EAGER, &["--"]]),
    },
];

/// The fixed environment every run gets (plus `HOME`/`TMPDIR`, see D1).
const GUEST_ENV: &[(&str, &str)] = &[("PATH", "/usr/bin:/bin"), ("LC_ALL", "C")];

/// Runs one test case in one mode (see D1-D3), in a working directory of
/// its own.
fn run_case(case: &TestCase, mode: Mode, dirs: &Dirs, timeout: Duration) -> RunResult {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("hotlift-guest-{}-{n}", std::process::id()));
    let hotlift = Path::new(env!("CARGO_BIN_EXE_hotlift"));
    let pre: Vec<OsString> = mode
        .hotlift_args
        .unwrap_or_default()
        .concat()
        .into_iter()
        .map(OsString::from)
        .collect();
    let stdin = case.stdin.as_ref().map(|rel| dirs.guest.join(rel));
    let result = guest::run(&Launch {
        launcher: mode.hotlift_args.map(|_| (hotlift, pre.as_slice())),
        program: &dirs.build.join(&case.name),
        args: &case.args,
        dir: &dir,
        env: GUEST_ENV,
        stdin: stdin.as_deref(),
        timeout,
        cpu: None,
        no_randomize: false,
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[test]
fn guest_programs_match_native() {
    let dirs = Arc::new(Dirs::new());
    let mut cases = dirs.cases("TESTS", "HOTLIFT_GUEST_FILTER");
    // D5: the lines exact.rs runs natively and in these configurations
    // (its COUNT lines but COUNTS_VARY), comparing the outputs, are left
    // to it: each (program, configuration) runs once.
    let count = dirs.build.join("COUNT");
    let count =
        std::fs::read_to_string(&count).unwrap_or_else(|e| panic!("{}: {e}", count.display()));
    let covered: std::collections::HashSet<String> = parse_tests(&count)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter(exact_compares_output)
        .map(|c| c.line)
        .collect();
    let before = cases.len();
    cases.retain(|c| !covered.contains(&c.line));
    println!(
        "{} of {before} lines left to tests/exact.rs, which runs them in these configurations too",
        before - cases.len()
    );
    assert!(!cases.is_empty(), "every line is left to tests/exact.rs");
    let modes: Vec<Mode> = match std::env::var("HOTLIFT_GUEST_MODES") {
        Err(_) => MODES.to_vec(),
        Ok(v) => v
            .split(',')
            .map(|m| {
                let m = m.trim();
                *MODES.iter().find(|x| x.name == m).unwrap_or_else(|| {
                    panic!("HOTLIFT_GUEST_MODES: unknown mode {m:?} (known: native, hotlift, no-chain, sb-all, pisat)")
                })
            })
            .collect(),
    };
    // Translated runs are compared with the native run, so it always runs.
    let mut modes_run = vec![MODES[0]];
    modes_run.extend(modes.iter().copied().filter(|m| m.hotlift_args.is_some()));
    let jobs: usize = env_or("HOTLIFT_GUEST_JOBS", 2).max(1);
    let timeout = Duration::from_secs(env_or("HOTLIFT_GUEST_TIMEOUT", 60));

    let cases = Arc::new(cases);
    let queue: VecDeque<(usize, usize)> = (0..cases.len())
        .flat_map(|c| (0..modes_run.len()).map(move |m| (c, m)))
        .collect();
    let total = queue.len();
    let queue = Arc::new(Mutex::new(queue));
    let results: Arc<Mutex<Vec<Option<RunResult>>>> = Arc::new(Mutex::new(vec![None; total]));
    let modes_run = Arc::new(modes_run);
    let workers: Vec<_> = (0..jobs)
        .map(|_| {
            let (queue, results, cases, modes_run, dirs) = (
                queue.clone(),
                results.clone(),
                cases.clone(),
                modes_run.clone(),
                dirs.clone(),
            );
            thread::spawn(move || loop {
                let Some((c, m)) = queue.lock().unwrap().pop_front() else {
                    break;
                };
                let r = run_case(&cases[c], modes_run[m], &dirs, timeout);
                println!(
                    "[{:<8}] {:<48} {} ({:.2} s)",
                    modes_run[m].name,
                    cases[c].line,
                    r.outcome,
                    r.elapsed.as_secs_f64()
                );
                results.lock().unwrap()[c * modes_run.len() + m] = Some(r);
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker thread panicked");
    }

    let results = results.lock().unwrap();
    let nmodes = modes_run.len();
    let mut failures: Vec<String> = Vec::new();
    let mut report = String::new();
    for (ci, case) in cases.iter().enumerate() {
        let native = results[ci * nmodes]
            .as_ref()
            .expect("every native run finished");
        let native_ok = outcome_matches(&native.outcome, case.expect);
        if !native_ok && modes.iter().any(|m| m.name == "native") {
            failures.push(format!("({}, native)", case.line));
            report.push_str(&format!(
                "FAIL ({}, native): {}, manifest expects {}\n{}{}",
                case.line,
                native.outcome,
                case.expect,
                tail_text(&native.stdout, 5),
                tail_text(&native.stderr, 5)
            ));
        }
        for (mi, mode) in modes_run.iter().enumerate().skip(1) {
            let r = results[ci * nmodes + mi]
                .as_ref()
                .expect("every run finished");
            let mut why = String::new();
            if r.outcome != native.outcome {
                why.push_str(&format!(
                    "    status: native {}, {} {}\n",
                    native.outcome, mode.name, r.outcome
                ));
            }
            why.extend(diff_summary("stdout", &native.stdout, &r.stdout));
            why.extend(diff_summary("stderr", &native.stderr, &r.stderr));
            if !why.is_empty() {
                failures.push(format!("({}, {})", case.line, mode.name));
                report.push_str(&format!("FAIL ({}, {}):\n{why}", case.line, mode.name));
                if r.outcome != native.outcome && !r.stderr.is_empty() {
                    report.push_str(&format!(
                        "    {} stderr tail:\n{}",
                        mode.name,
                        tail_text(&r.stderr, 5)
                    ));
                }
            }
        }
    }
    let names: Vec<&str> = modes_run.iter().map(|m| m.name).collect();
    if !failures.is_empty() {
        panic!(
            "\n{report}\n{} of {} (test, mode) runs failed across {} tests x modes {:?}:\n  {}\n",
            failures.len(),
            total,
            cases.len(),
            names,
            failures.join("\n  ")
        );
    }
    println!(
        "all {} runs passed ({} tests x modes {:?})",
        total,
        cases.len(),
        names
    );
}

#[test]
fn tests_list_format_parses() {
    let cases = parse_tests(
        "# comment\n\
         asm-exit-status expect=exit:42\n\
         c-auxv one two expect=exit:0\n\
         asm-syscalls < inputs/short.txt expect=exit:0\n\
         asm-trap-int3 expect=signal:SIGTRAP\n",
    )
    .expect("valid list");
    assert_eq!(cases.len(), 4);
    assert_eq!(cases[0].expect, Expect::Exit(42));
    assert_eq!(cases[1].args, ["one", "two"]);
    assert_eq!(
        cases[2].stdin.as_deref(),
        Some(Path::new("inputs/short.txt"))
    );
    assert_eq!(cases[3].expect, Expect::Signal(libc::SIGTRAP));
    assert!(parse_tests("x < in extra").is_err());
    assert!(parse_tests("x expect=signal:SIGNOPE").is_err());
    assert!(parse_tests("x expect=bogus").is_err());
}
