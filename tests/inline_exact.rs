//! The monitor's block counts are exact, checked a second way on every
//! guest test: translated code that counts its own blocks
//! (`--count-inline`: no ring, no monitor) must give the same count for
//! every block as the monitor does from the ring — with chaining on and
//! off, with superblocks nearly everywhere, and with superblocks from
//! mined patterns (`--selector pisat`; the monitor then expands
//! superblock passes back into blocks).
//!
//! It runs each line of `guest-tests/build/COUNT` (the deterministic forms
//! the single-step test uses, see tests/stepcount_exact.rs) five times
//! under hotlift, all in the same environment, working directory path and
//! without ASLR, so the guest takes the same path every time. A sixth run
//! counts both ways at once (`--count-check`, superblocks everywhere) and
//! must find no difference; the multi-threaded tests, whose counts differ
//! from run to run, get only that one.
//! Filter: `HOTLIFT_INLINE_FILTER=substr`.

mod guest;

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use guest::{env_or, Dirs, Launch, TestCase, ADDRESSES_VARY, THREADS_VARY};

/// (name, hotlift options): the reference first.
const CONFIGS: &[(&str, &[&str])] = &[
    ("inline", &["run", "--count-inline"]),
    ("ring", &["run"]),
    ("inline no-chain", &["run", "--count-inline", "--no-chain"]),
    ("ring no-chain", &["run", "--no-chain"]),
    (
        "ring sb-all",
        &[
            "run",
            "--sb-threshold",
            "1",
            "--sb-edge-threshold",
            "1",
            "--sb-min-yield",
            "0",
            // Counted loops push their record every third pass: the
            // flush paths run often (contract I2).
            "--sb-loop-limit",
            "3",
        ],
    ),
    // Superblocks from mined patterns (as tests/guest_diff.rs's pisat).
    (
        "ring pisat",
        &[
            "run",
            "--selector",
            "pisat",
            "--pisat-window",
            "128",
            "--pisat-interval",
            "512",
            "--pisat-support2",
            "3",
        ],
    ),
];

const ENV: &[(&str, &str)] = &[("PATH", "/usr/bin:/bin"), ("LC_ALL", "C")];

/// Programs whose block counts depend on timing, with the reason.
const EXCLUDED: &[(&str, &str)] = &[
    (
        "asm-signal-selfjmp",
        "it spins in `jmp .` until a 50 ms ITIMER_REAL fires: its count is how \
     many jumps fit in 50 ms, different on every run",
    ),
    ("c-mmap-reuse", THREADS_VARY),
    ("cpie-mmap-reuse", THREADS_VARY),
    ("c-threads", THREADS_VARY),
    ("cpie-threads", THREADS_VARY),
    ("cdyn-threads", THREADS_VARY),
    ("cdyn-mmap-reuse", THREADS_VARY),
    ("c-threads-jit", THREADS_VARY),
    ("cpie-threads-jit", THREADS_VARY),
    ("cdyn-threads-jit", THREADS_VARY),
    ("c-threads-robust", THREADS_VARY),
    ("cpie-threads-robust", THREADS_VARY),
    ("cdyn-threads-robust", THREADS_VARY),
    ("c-tsc", THREADS_VARY),
    ("cpie-tsc", THREADS_VARY),
    ("cdyn-tsc", THREADS_VARY),
    ("c-selfmaps", ADDRESSES_VARY),
    ("cpie-selfmaps", ADDRESSES_VARY),
    ("cdyn-selfmaps", ADDRESSES_VARY),
];

/// Block counts by (module, offset), executed blocks only. Code generated
/// at run time (`[anon]`) lands wherever mmap puts it, which depends on
/// hotlift's own mappings (the ring, the counters, the monitor's tables),
/// and the profile adds up the blocks that ran at one address: so which
/// anonymous blocks share an address, and their order, can change from
/// run to run. Those are summed by shape (size and instructions); the
/// in-run check (`IN_RUN`) compares them block by block.
fn counts(profile: &Path) -> Result<BTreeMap<(String, u64), u64>, String> {
    let text = std::fs::read_to_string(profile).map_err(|e| format!("no profile: {e}"))?;
    let p: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut out = BTreeMap::new();
    for b in p["blocks"].as_array().ok_or("no blocks")? {
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
        *out.entry(key).or_insert(0) += count;
    }
    Ok(out)
}

/// The in-run check: both ways of counting in one run must agree.
const IN_RUN: &[&str] = &[
    "run",
    "--count-check",
    "--sb-threshold",
    "1",
    "--sb-edge-threshold",
    "1",
    "--sb-min-yield",
    "0",
    "--sb-loop-limit",
    "2",
];

/// The `count_check` section of a profile: problems found in it.
fn count_check(profile: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(profile).map_err(|e| format!("no profile: {e}"))?;
    let p: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
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

/// Run `case` in every configuration; the differences from the reference.
fn check(case: &TestCase, dirs: &Dirs, worker: usize, in_run_only: bool) -> Vec<String> {
    let hotlift = Path::new(env!("CARGO_BIN_EXE_hotlift"));
    let pid = std::process::id();
    let tmp = std::env::temp_dir();
    // The same path for every run of a line (the guest sees it).
    let dir = tmp.join(format!("hotlift-inline-{pid:010}-{worker}"));
    let out = tmp.join(format!("hotlift-inline-{pid:010}-{worker}.json"));
    let stdin = case.stdin.as_ref().map(|rel| dirs.guest.join(rel));
    let mut reference = None;
    let mut problems = Vec::new();
    let configs = CONFIGS
        .iter()
        .filter(|_| !in_run_only)
        .chain(std::iter::once(&("count-check", IN_RUN)));
    for &(name, opts) in configs {
        guest::remove_profiles(&out);
        let mut pre: Vec<OsString> = opts.iter().map(OsString::from).collect();
        pre.push("--profile".into());
        pre.push(out.clone().into());
        pre.push("--".into());
        guest::run(&Launch {
            launcher: Some((hotlift, pre.as_slice())),
            program: &dirs.build.join(&case.name),
            args: &case.args,
            dir: &dir,
            env: ENV,
            stdin: stdin.as_deref(),
            timeout: Duration::from_secs(120),
            cpu: None,
            no_randomize: true,
        });
        if name == "count-check" {
            if let Err(e) = count_check(&out) {
                problems.push(format!("{}: {e}", case.line));
            }
            continue;
        }
        let got = match counts(&out) {
            Ok(c) => c,
            Err(e) => {
                problems.push(format!("{}: {name}: {e}", case.line));
                continue;
            }
        };
        match &reference {
            None => reference = Some(got),
            Some(r) if *r == got => {}
            Some(r) => {
                let first = r
                    .iter()
                    .find(|(k, v)| got.get(*k) != Some(*v))
                    .map(|(k, v)| {
                        format!("{}+{:#x}: inline {v}, {name} {:?}", k.0, k.1, got.get(k))
                    })
                    .or_else(|| {
                        got.iter()
                            .find(|(k, _)| !r.contains_key(*k))
                            .map(|(k, v)| format!("{}+{:#x}: inline none, {name} {v}", k.0, k.1))
                    });
                problems.push(format!(
                    "{}: {name} differs from inline counting ({} vs {} blocks), first {}",
                    case.line,
                    got.len(),
                    r.len(),
                    first.unwrap_or_default()
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    guest::remove_profiles(&out);
    problems
}

#[test]
fn monitor_counts_equal_inline_counts_on_every_guest_test() {
    let dirs = Arc::new(Dirs::new());
    let mut cases = dirs.cases("COUNT", "HOTLIFT_INLINE_FILTER");
    cases.retain(|c| c.name != "asm-signal-selfjmp");
    let cases = Arc::new(cases);
    let queue = Arc::new(Mutex::new((0..cases.len()).collect::<VecDeque<_>>()));
    let problems = Arc::new(Mutex::new(Vec::new()));
    let jobs: usize = env_or("HOTLIFT_INLINE_JOBS", 2).max(1);
    let workers: Vec<_> = (0..jobs)
        .map(|w| {
            let (dirs, cases, queue, problems) =
                (dirs.clone(), cases.clone(), queue.clone(), problems.clone());
            thread::spawn(move || {
                while let Some(i) = queue.lock().unwrap().pop_front() {
                    let in_run_only = EXCLUDED.iter().any(|(n, _)| cases[i].name == *n);
                    let p = check(&cases[i], &dirs, w, in_run_only);
                    println!(
                        "{:<48} {}",
                        cases[i].line,
                        if p.is_empty() { "same" } else { "DIFFERENT" }
                    );
                    problems.lock().unwrap().extend(p);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let problems = problems.lock().unwrap();
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
