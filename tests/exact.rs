//! hotlift's counts are exact, on every guest test, checked two ways from
//! one set of runs: the instruction total against the real CPU, and every
//! block's count against translated code counting its own blocks.
//!
//! For each line of `guest-tests/build/COUNT` (a program's tiny `count`
//! form from `guest-tests/manifest` where it has one, else its usual
//! runs), the harness runs the program once in each configuration of
//! [`CONFIGS`] and applies to that run every check it gets:
//! - **steps**: the profile's `totals.guest_instructions` equals the number
//!   of instructions the program retires natively, counted by
//!   single-stepping it with ptrace (`stepcount`, which counts every
//!   iteration of a `rep` string instruction);
//! - **blocks**: the count of every executed block equals the reference
//!   configuration's (`--count-inline`: no ring, no monitor; the first of
//!   [`CONFIGS`]);
//! - **in-run**: `--count-check` counted both ways in the one run (with
//!   superblocks everywhere) and found no difference;
//! - every hotlift run ends as the native run did, with the same stdout
//!   and stderr (guest_diff.rs leaves these lines to this harness, its
//!   D5).
//!
//! Invariants:
//! - E1. All runs of a line see the same machine: the same argv, the same
//!   environment ([`ENV`] plus `HOME` and `TMPDIR`), the same working
//!   directory path (made fresh and empty for each run), the same stdin,
//!   pipes for stdout and stderr, `ADDR_NO_RANDOMIZE` (glibc's string
//!   functions take alignment-dependent paths, so an ASLR-moved stack
//!   changes the native count), and the same single CPU (the program can
//!   read its affinity mask). `GLIBC_TUNABLES=glibc.pthread.rseq=0` makes
//!   the native glibc skip rseq registration, which fails with `ENOSYS`
//!   under hotlift: without it the two start-ups differ by an instruction.
//!   Nothing the test writes (counts, profiles) goes into that directory.
//! - E2. A line passes only if the native run ends as the manifest expects
//!   and every check of every configuration holds. A failure names the
//!   line, the configuration, both numbers and their difference.
//! - E3. The programs in [`COUNTS_VARY`], whose counts cannot be the same
//!   twice (each with the reason, listed in the README's known limits
//!   too), get the in-run check alone; an exclusion that names no program
//!   in the list is an error.
//! - E4. Single-stepping costs ~20 us per instruction when the tracer and
//!   the program share a CPU (three times less than across CPUs), so every
//!   run of a worker is pinned to that worker's CPU, one worker per allowed
//!   CPU (at most `HOTLIFT_EXACT_JOBS`). `stepcount --max-steps` bounds
//!   each native run, so a count form that grew too large fails at once.
//!
//! Environment knobs:
//! - `HOTLIFT_EXACT_FILTER=substr` runs only lines containing `substr`.
//! - `HOTLIFT_EXACT_JOBS=N` caps the workers (default 2).
//! - `HOTLIFT_EXACT_MAX_STEPS=N` is the native budget per line (default
//!   2,000,000).
//! - `HOTLIFT_EXACT_TIMEOUT=SECS` is the timeout per run (default 300).
//!
//! Usage: `cargo test --release --test exact -- --nocapture`. To see where
//! an instruction count parts ways, run `stepcount --trace FILE` under the
//! same conditions and compare the addresses with the profile's blocks.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod guest;

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use guest::{
    diff_summary, env_or, outcome_matches, Dirs, Launch, RunResult, TestCase, COUNTS_VARY,
    PISAT_EAGER, SB_EVERYWHERE,
};

/// The environment of every run besides `HOME` and `TMPDIR` (E1).
const ENV: &[(&str, &str)] = &[
    ("PATH", "/usr/bin:/bin"),
    ("LC_ALL", "C"),
    ("GLIBC_TUNABLES", "glibc.pthread.rseq=0"),
];

/// What a configuration's run is checked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checks {
    /// Its block counts (the reference's are the first configuration's).
    /// Inline counting counts blocks only: its instruction total leaves
    /// out `rep` iterations and instructions that did not retire.
    Blocks,
    /// Its instruction total and its block counts.
    StepsAndBlocks,
    /// `--count-check`'s own finding, and no superblock record error.
    InRun,
}

/// A hotlift configuration: its name, `hotlift` options (groups, joined),
/// checks.
struct Config {
    name: &'static str,
    opts: &'static [&'static [&'static str]],
    checks: Checks,
}

/// Every configuration, once per line; the block-count reference first.
const CONFIGS: &[Config] = &[
    Config {
        name: "inline",
        opts: &[&["run", "--count-inline"]],
        checks: Checks::Blocks,
    },
    Config {
        name: "inline no-chain",
        opts: &[&["run", "--count-inline", "--no-chain"]],
        checks: Checks::Blocks,
    },
    Config {
        name: "hotlift",
        opts: &[&["run"]],
        checks: Checks::StepsAndBlocks,
    },
    Config {
        name: "no-chain",
        opts: &[&["run", "--no-chain"]],
        checks: Checks::StepsAndBlocks,
    },
    // Superblocks at nearly every block, counted loops pushing their
    // record every third pass (the flush paths run often: contract I2).
    Config {
        name: "sb-all",
        opts: &[&["run"], SB_EVERYWHERE, &["--sb-loop-limit", "3"]],
        checks: Checks::StepsAndBlocks,
    },
    // Superblocks from mined patterns (as tests/guest_diff.rs's pisat):
    // the monitor expands their passes back into blocks.
    Config {
        name: "pisat",
        opts: &[&["run"], PISAT_EAGER],
        checks: Checks::StepsAndBlocks,
    },
    // Both ways of counting in one run (the only check the programs of
    // COUNTS_VARY get, E3): superblocks everywhere, loop records every
    // second pass.
    Config {
        name: "count-check",
        opts: &[
            &["run", "--count-check"],
            SB_EVERYWHERE,
            &["--sb-loop-limit", "2"],
        ],
        checks: Checks::InRun,
    },
];

/// Block counts by (module, offset), executed blocks only. Code generated
/// at run time (`[anon]`) lands wherever mmap puts it, which depends on
/// hotlift's own mappings (the ring, the counters, the monitor's tables),
/// and the profile adds up the blocks that ran at one address: so which
/// anonymous blocks share an address, and their order, can change from
/// run to run. Those are summed by shape (size and instructions); the
/// in-run check compares them block by block.
type Blocks = BTreeMap<(String, u64), u64>;

/// What a profile says: its instruction total and block counts.
fn read_profile(path: &Path) -> Result<(u64, Blocks), String> {
    let p = json(path)?;
    let steps = p["totals"]["guest_instructions"]
        .as_u64()
        .ok_or("the profile has no totals.guest_instructions")?;
    let mut blocks = BTreeMap::new();
    for b in p["blocks"].as_array().ok_or("the profile has no blocks")? {
        let count = b["count"].as_u64().unwrap_or(0);
        if count == 0 {
            continue;
        }
        let module = b["module"].as_str().unwrap_or("").to_string();
        let key = if module == "[anon]" {
            let shape =
                b["size"].as_u64().unwrap_or(0) << 16 | b["instructions"].as_u64().unwrap_or(0);
            ("[anon] size<<16|insns".to_string(), shape)
        } else {
            (module, b["offset"].as_u64().unwrap_or(0))
        };
        *blocks.entry(key).or_insert(0) += count;
    }
    Ok((steps, blocks))
}

fn json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("no profile at {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("the profile is not JSON: {e}"))
}

/// The in-run check's finding in the profile at `path`.
fn in_run(path: &Path) -> Result<(), String> {
    let p = json(path)?;
    let c = &p["count_check"];
    let (blocks, threads) = (
        c["block_mismatch_total"].as_u64(),
        c["thread_mismatches"].as_u64(),
    );
    if blocks != Some(0) || threads != Some(0) || c["blocks_compared"].as_u64().unwrap_or(0) == 0 {
        return Err(format!(
            "--count-check found {blocks:?} blocks and {threads:?} threads counted differently, first {}",
            c["block_mismatches"]
        ));
    }
    if p["superblock_stats"]["record_errors"] != 0 {
        return Err(format!(
            "superblock record errors: {}",
            p["superblock_stats"]["record_errors"]
        ));
    }
    Ok(())
}

/// The first block whose count differs between `want` and `got`.
fn first_difference(want: &Blocks, got: &Blocks, name: &str) -> String {
    want.iter()
        .find(|(k, v)| got.get(*k) != Some(*v))
        .map(|(k, v)| format!("{}+{:#x}: inline {v}, {name} {:?}", k.0, k.1, got.get(k)))
        .or_else(|| {
            got.iter()
                .find(|(k, _)| !want.contains_key(*k))
                .map(|(k, v)| format!("{}+{:#x}: inline none, {name} {v}", k.0, k.1))
        })
        .unwrap_or_default()
}

/// One worker's pinned CPU and its private paths.
struct Worker {
    cpu: usize,
    /// The guest's working directory: the same path for every run (E1).
    dir: PathBuf,
    /// Where counts and profiles go, outside `dir`.
    out: PathBuf,
}

struct Setup {
    dirs: Dirs,
    stepcount: PathBuf,
    hotlift: PathBuf,
    max_steps: u64,
    timeout: Duration,
}

/// One line's outcome: the native count (if any), the time the native
/// run took, and every failed check.
struct Checked {
    native: Option<u64>,
    native_elapsed: Duration,
    failures: Vec<String>,
}

/// The guest's stderr of a run under stepcount: without stepcount's own
/// lines (the children that ran uncounted, E2's count is the initial
/// thread's).
fn guest_stderr(stderr: &[u8]) -> Vec<u8> {
    stderr
        .split_inclusive(|&b| b == b'\n')
        .filter(|l| !l.starts_with(b"stepcount: "))
        .flatten()
        .copied()
        .collect()
}

fn describe(r: &RunResult) -> String {
    let err = String::from_utf8_lossy(&r.stderr);
    let last = err.lines().last().unwrap_or("").trim();
    if last.is_empty() {
        r.outcome.to_string()
    } else {
        format!("{} (stderr: {last})", r.outcome)
    }
}

/// Run `program` for `case` under `launcher` on the worker's CPU (E1).
fn run(s: &Setup, w: &Worker, case: &TestCase, launcher: (&Path, &[OsString])) -> RunResult {
    let stdin = case.stdin.as_ref().map(|rel| s.dirs.guest.join(rel));
    guest::run(&Launch {
        launcher: Some(launcher),
        program: &s.dirs.build.join(&case.name),
        args: &case.args,
        dir: &w.dir,
        env: ENV,
        stdin: stdin.as_deref(),
        timeout: s.timeout,
        cpu: Some(w.cpu),
        no_randomize: true,
    })
}

/// The native run under stepcount: its result and its count.
fn native(s: &Setup, w: &Worker, case: &TestCase) -> (RunResult, Result<u64, String>) {
    let count_file = w.out.join("count");
    let _ = std::fs::remove_file(&count_file);
    let pre: Vec<OsString> = vec![
        "--output".into(),
        count_file.clone().into(),
        "--max-steps".into(),
        s.max_steps.to_string().into(),
        "--".into(),
    ];
    let r = run(s, w, case, (&s.stepcount, &pre));
    let count = if String::from_utf8_lossy(&r.stderr).contains("--max-steps") {
        Err(format!(
            "it runs more than {} instructions natively: give it a smaller \
             `count` line in guest-tests/manifest (or raise HOTLIFT_EXACT_MAX_STEPS)",
            s.max_steps
        ))
    } else if !outcome_matches(&r.outcome, case.expect) {
        Err(format!(
            "the native run under stepcount ended with {}, the manifest expects {}",
            describe(&r),
            case.expect
        ))
    } else {
        std::fs::read_to_string(&count_file)
            .map_err(|e| format!("stepcount wrote no count ({e}): {}", describe(&r)))
            .and_then(|t| {
                t.trim()
                    .parse::<u64>()
                    .map_err(|e| format!("stepcount wrote {t:?}: {e}"))
            })
    };
    (r, count)
}

/// Every configuration's run of one line, each checked (E2); `in_run_only`
/// for the programs of COUNTS_VARY (E3).
fn check(s: &Setup, w: &Worker, case: &TestCase, in_run_only: bool) -> Checked {
    let mut failures = Vec::new();
    let (native_run, native_count) = if in_run_only {
        (None, None)
    } else {
        let (r, count) = native(s, w, case);
        if let Err(e) = &count {
            failures.push(format!("FAIL ({}, native): {e}", case.line));
        }
        (Some(r), count.ok())
    };
    let native_elapsed = native_run.as_ref().map_or(Duration::ZERO, |r| r.elapsed);
    let mut reference: Option<Blocks> = None;
    let profile = w.out.join("profile.json");
    for c in CONFIGS
        .iter()
        .filter(|c| !in_run_only || c.checks == Checks::InRun)
    {
        let fail = |why: String| format!("FAIL ({}, {}): {why}", case.line, c.name);
        guest::remove_profiles(&profile);
        let mut pre: Vec<OsString> = c.opts.concat().into_iter().map(OsString::from).collect();
        pre.extend(["--profile".into(), profile.clone().into(), "--".into()]);
        let r = run(s, w, case, (&s.hotlift, &pre));
        if let Some(n) = &native_run {
            if r.outcome != n.outcome {
                failures.push(fail(format!(
                    "it ended with {}, natively {}",
                    describe(&r),
                    n.outcome
                )));
                continue;
            }
            // The output too (E2): guest_diff.rs leaves these lines to
            // this harness.
            let diff: String = diff_summary("stdout", &n.stdout, &r.stdout)
                .into_iter()
                .chain(diff_summary("stderr", &guest_stderr(&n.stderr), &r.stderr))
                .collect();
            if !diff.is_empty() {
                failures.push(fail(format!(
                    "its output differs from the native run's:\n{diff}"
                )));
            }
        }
        match c.checks {
            Checks::InRun => {
                if let Err(e) = in_run(&profile) {
                    failures.push(fail(e));
                }
            }
            Checks::Blocks | Checks::StepsAndBlocks => {
                let (steps, blocks) = match read_profile(&profile) {
                    Ok(x) => x,
                    Err(e) => {
                        failures.push(fail(e));
                        continue;
                    }
                };
                let steps_checked = c.checks == Checks::StepsAndBlocks;
                if let Some(want) = native_count.filter(|&n| steps_checked && n != steps) {
                    failures.push(fail(format!(
                        "native {want} instructions, {} {steps} ({:+})",
                        c.name,
                        steps as i128 - want as i128
                    )));
                }
                match &reference {
                    None => reference = Some(blocks),
                    Some(want) if *want == blocks => {}
                    Some(want) => failures.push(fail(format!(
                        "block counts differ from inline counting ({} vs {} blocks), first {}",
                        blocks.len(),
                        want.len(),
                        first_difference(want, &blocks, c.name)
                    ))),
                }
            }
        }
    }
    guest::remove_profiles(&profile);
    Checked {
        native: native_count,
        native_elapsed,
        failures,
    }
}

/// Fails clearly if a program cannot be started under the conditions of E1
/// (a seccomp policy may refuse `personality(ADDR_NO_RANDOMIZE)`).
fn probe_conditions(cpu: usize) {
    let dir = std::env::temp_dir().join(format!("hotlift-exact-probe-{}", std::process::id()));
    let r = guest::run(&Launch {
        launcher: None,
        program: Path::new("/bin/true"),
        args: &[],
        dir: &dir,
        env: ENV,
        stdin: None,
        timeout: Duration::from_secs(30),
        cpu: Some(cpu),
        no_randomize: true,
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        outcome_matches(&r.outcome, guest::Expect::Exit(0)),
        "cannot run /bin/true pinned to CPU {cpu} with ADDR_NO_RANDOMIZE ({}): the count \
         check needs sched_setaffinity(2) and personality(2), or native counts are not \
         reproducible",
        r.outcome
    );
}

#[test]
fn counts_are_exact_on_every_guest_test() {
    let started = Instant::now();
    let dirs = Dirs::new();
    let cases = dirs.cases("COUNT", "HOTLIFT_EXACT_FILTER");
    if std::env::var("HOTLIFT_EXACT_FILTER").is_err() {
        for (name, _) in COUNTS_VARY {
            assert!(
                cases.iter().any(|c| c.name == *name),
                "COUNTS_VARY names {name}, which guest-tests/build/COUNT does not list (E3)"
            );
        }
    }
    let cpus = guest::allowed_cpus();
    assert!(!cpus.is_empty(), "sched_getaffinity failed");
    let jobs = env_or("HOTLIFT_EXACT_JOBS", 2usize).clamp(1, cpus.len());
    probe_conditions(cpus[0]);
    let setup = Arc::new(Setup {
        dirs,
        stepcount: PathBuf::from(env!("CARGO_BIN_EXE_stepcount")),
        hotlift: PathBuf::from(env!("CARGO_BIN_EXE_hotlift")),
        max_steps: env_or("HOTLIFT_EXACT_MAX_STEPS", 2_000_000),
        timeout: Duration::from_secs(env_or("HOTLIFT_EXACT_TIMEOUT", 300)),
    });

    let cases = Arc::new(cases);
    let queue = Arc::new(Mutex::new((0..cases.len()).collect::<VecDeque<usize>>()));
    let results: Arc<Mutex<Vec<Option<Checked>>>> =
        Arc::new(Mutex::new((0..cases.len()).map(|_| None).collect()));
    let tmp = std::env::temp_dir();
    let pid = std::process::id();
    let workers: Vec<_> = cpus[..jobs]
        .iter()
        .enumerate()
        .map(|(k, &cpu)| {
            let w = Worker {
                cpu,
                // Fixed width, so the environment is the same size every time.
                dir: tmp.join(format!("hotlift-exact-{pid:010}-{k}")),
                out: tmp.join(format!("hotlift-exact-{pid:010}-{k}.out")),
            };
            let (setup, cases, queue, results) =
                (setup.clone(), cases.clone(), queue.clone(), results.clone());
            thread::spawn(move || {
                std::fs::create_dir_all(&w.out).expect("output directory");
                while let Some(i) = guest::next_job(&queue) {
                    let case = &cases[i];
                    let excluded = COUNTS_VARY.iter().find(|(n, _)| case.name == *n);
                    let checked = check(&setup, &w, case, excluded.is_some());
                    let native = match (excluded, checked.native) {
                        (Some(_), _) => "excluded: in-run check only".to_string(),
                        (None, Some(n)) => format!(
                            "native {n:>9} ({:5.1} s)",
                            checked.native_elapsed.as_secs_f64()
                        ),
                        (None, None) => "native -".to_string(),
                    };
                    let verdict = if checked.failures.is_empty() {
                        "exact"
                    } else {
                        "DIFFERENT"
                    };
                    println!("[cpu {cpu}] {:<48} {native}: {verdict}", case.line);
                    results.lock().unwrap()[i] = Some(checked);
                }
                let _ = std::fs::remove_dir_all(&w.dir);
                let _ = std::fs::remove_dir_all(&w.out);
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker thread panicked");
    }

    let results = results.lock().unwrap();
    let mut failures = Vec::new();
    let mut steps = 0u64;
    for checked in results.iter() {
        let checked = checked.as_ref().expect("every line was checked");
        steps += checked.native.unwrap_or(0);
        failures.extend(checked.failures.iter().cloned());
    }
    let excluded = cases
        .iter()
        .filter(|c| COUNTS_VARY.iter().any(|(n, _)| c.name == *n))
        .count();
    let summary = format!(
        "{} lines ({excluded} with the in-run check only), {} configurations, \
         {steps} instructions single-stepped on {jobs} CPU(s) in {:.0} s",
        cases.len(),
        CONFIGS.len(),
        started.elapsed().as_secs_f64()
    );
    if !failures.is_empty() {
        panic!(
            "\n{}\n{} checks failed; {summary}\n",
            failures.join("\n"),
            failures.len(),
        );
    }
    println!("all counts exact: {summary}");
}
