//! Differential test: Debian's statically linked busybox (package
//! `busybox-static`, /bin/busybox) run natively and under hotlift, in both
//! chained, `--no-chain` and superblocks-everywhere (`--sb-threshold 1`) mode. Stdout, stderr and the raw wait status must
//! match byte for byte.
//!
//! Inputs (text, CSV, binary, a small directory tree with fixed mtimes) are
//! generated deterministically into a fresh temporary directory; every case
//! runs with that directory as its working directory, a fixed environment
//! (LC_ALL=C, TZ=UTC) and either /dev/null or one of the generated files as
//! stdin. The `sh-*` cases run shell scripts whose pipelines, subshells
//! and command substitutions fork and exec under hotlift; their `hotlift`
//! run also writes a profile per process of the tree with `--count-check`,
//! and every one must be exact and name its parent's.
//!
//! Environment:
//!   HOTLIFT_BUSYBOX_FILTER=SUBSTR   run only cases whose name contains SUBSTR
//!   HOTLIFT_BUSYBOX_TIMEOUT=SECS    per-run timeout (default 120)
//!   HOTLIFT_BUSYBOX_KEEP=1          keep the temporary input directory
//!   HOTLIFT_BUSYBOX_NOCHAIN_FULL=1  run --no-chain on the full-size inputs too
//!                                   (by default it gets inputs 10x smaller,
//!                                   compared against a native run on those)
//!   CI                              if set, a missing /bin/busybox is a failure
//!                                   instead of a skip

mod cases;
/// The suites' shared settings (tests/guest/mod.rs).
#[path = "../guest/mod.rs"]
mod guest;
mod inputs;
/// The tests' one random generator (tests/guest/rng.rs includes it too).
mod rng {
    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/test_rng.rs"));
}

use std::collections::BTreeSet;
use std::ffi::CString;
use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const BUSYBOX: &str = "/bin/busybox";
const HOTLIFT: &str = env!("CARGO_BIN_EXE_hotlift");
const THREADS: usize = 2;

/// The fixed environment every run gets (the rest is cleared).
fn fixed_env(dir: &Path) -> Vec<(String, String)> {
    vec![
        ("LC_ALL".into(), "C".into()),
        ("TZ".into(), "UTC".into()),
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("HOME".into(), dir.display().to_string()),
        ("HOTLIFT_TEST_VAR".into(), "some value with spaces".into()),
    ]
}

use cases::*;
use inputs::*;

// ---------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Native,
    Hotlift,
    HotliftNoChain,
    /// Superblocks at nearly every block (thresholds of 1).
    HotliftSbAll,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Native => "native",
            Mode::Hotlift => "hotlift",
            Mode::HotliftNoChain => "hotlift --no-chain",
            Mode::HotliftSbAll => "hotlift --sb-threshold 1",
        }
    }
    fn argv(self, args: &[String]) -> Vec<String> {
        let mut v: Vec<String> = match self {
            Mode::Native => vec![],
            Mode::Hotlift => vec![HOTLIFT.into(), "run".into(), "--".into()],
            Mode::HotliftNoChain => {
                vec![
                    HOTLIFT.into(),
                    "run".into(),
                    "--no-chain".into(),
                    "--".into(),
                ]
            }
            Mode::HotliftSbAll => [HOTLIFT, "run"]
                .into_iter()
                .chain(guest::SB_EVERYWHERE.iter().copied())
                .chain(["--"])
                .map(str::to_string)
                .collect(),
        };
        v.push(BUSYBOX.into());
        v.extend(args.iter().cloned());
        v
    }
}

struct Outcome {
    /// Raw wait status, or None on timeout / spawn failure.
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    error: Option<String>,
    elapsed: Duration,
}

fn spawn_reader(mut r: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        let _ = tx.send(v);
    });
    rx
}

fn run(argv: &[String], stdin: Option<&Path>, dir: &Path, timeout: Duration) -> Outcome {
    let start = Instant::now();
    let deadline = start + timeout;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(dir)
        .env_clear()
        .envs(fixed_env(dir))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // No core files (they would also set the core-dump bit in the status).
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &lim);
            Ok(())
        });
    }
    match stdin {
        Some(p) => match fs::File::open(p) {
            Ok(f) => cmd.stdin(Stdio::from(f)),
            Err(e) => {
                return Outcome {
                    status: None,
                    stdout: vec![],
                    stderr: vec![],
                    error: Some(format!("open stdin {}: {e}", p.display())),
                    elapsed: start.elapsed(),
                }
            }
        },
        None => cmd.stdin(Stdio::null()),
    };
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                status: None,
                stdout: vec![],
                stderr: vec![],
                error: Some(format!("spawn {}: {e}", argv[0])),
                elapsed: start.elapsed(),
            }
        }
    };
    let pid = child.id() as i32;
    let out_rx = spawn_reader(child.stdout.take().unwrap());
    let err_rx = spawn_reader(child.stderr.take().unwrap());
    let (st_tx, st_rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = st_tx.send(child.wait());
    });
    let kill_group = || unsafe {
        libc::kill(-pid, libc::SIGKILL);
    };
    let mut error = None;
    let status = match st_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(st)) => Some(st.into_raw()),
        Ok(Err(e)) => {
            error = Some(format!("wait: {e}"));
            None
        }
        Err(_) => {
            kill_group();
            let _ = st_rx.recv();
            error = Some(format!(
                "timed out after {:.0} s (killed)",
                timeout.as_secs_f64()
            ));
            None
        }
    };
    // The pipes close when every process holding them is gone; a straggler
    // (some forked child) would keep them open, so bound that wait as well.
    let mut collect = |rx: mpsc::Receiver<Vec<u8>>| -> Vec<u8> {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_secs(2));
        match rx.recv_timeout(left) {
            Ok(v) => v,
            Err(_) => {
                kill_group();
                if error.is_none() {
                    error = Some("output pipe held open after exit (stray process killed)".into());
                }
                rx.recv().unwrap_or_default()
            }
        }
    };
    let stdout = collect(out_rx);
    let stderr = collect(err_rx);
    Outcome {
        status,
        stdout,
        stderr,
        error,
        elapsed: start.elapsed(),
    }
}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSYS => "SIGSYS",
        _ => "",
    };
    format!("signal {sig} {name}").trim_end().to_string()
}

fn describe_status(raw: Option<i32>) -> String {
    match raw {
        None => "no status".into(),
        Some(raw) => {
            let st = std::process::ExitStatus::from_raw(raw);
            if let Some(code) = st.code() {
                format!("exit {code}")
            } else if let Some(sig) = st.signal() {
                let core = if st.core_dumped() {
                    " (core dumped)"
                } else {
                    ""
                };
                format!("{}{core}", signal_name(sig))
            } else {
                format!("raw wait status {raw:#x}")
            }
        }
    }
}

fn expected_raw(e: Expect) -> i32 {
    match e {
        Expect::Exit(code) => code << 8,
        Expect::Signal(sig) => sig,
    }
}

fn show_line(l: Option<&[u8]>) -> String {
    let Some(l) = l else {
        return "<end of output>".into();
    };
    let mut s = String::from("\"");
    for &b in l.iter().take(150) {
        match b {
            b'\t' => s.push_str("\\t"),
            b'\r' => s.push_str("\\r"),
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(b as char),
            _ => write!(s, "\\x{b:02x}").unwrap(),
        }
    }
    s.push('"');
    if l.len() > 150 {
        write!(s, "... ({} bytes)", l.len()).unwrap();
    }
    s
}

/// Explains where `got` first differs from `want`.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    let byte = want
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    let wl: Vec<&[u8]> = want.split(|&b| b == b'\n').collect();
    let gl: Vec<&[u8]> = got.split(|&b| b == b'\n').collect();
    let line = (0..wl.len().max(gl.len()))
        .find(|&i| wl.get(i) != gl.get(i))
        .unwrap_or(0);
    format!(
        "{} vs {} bytes, first difference at byte {byte}, line {}:\n        native:  {}\n        hotlift: {}",
        want.len(),
        got.len(),
        line + 1,
        show_line(wl.get(line).copied()),
        show_line(gl.get(line).copied())
    )
}

struct CaseReport {
    name: String,
    failures: Vec<String>,
    times: Vec<(String, Duration)>,
}

/// Runs one case: natively and under hotlift on the full-size inputs, and
/// (when `small` is given) natively and under `hotlift --no-chain` on the
/// reduced inputs in `small`; otherwise `--no-chain` also uses `full`.
fn run_case(case: &Case, full: &Path, small: Option<&Path>, timeout: Duration) -> CaseReport {
    let mut report = CaseReport {
        name: case.name.clone(),
        failures: vec![],
        times: vec![],
    };
    let cmdline = format!("busybox {}", case.args.join(" "));
    let stdin_note = case
        .stdin
        .as_ref()
        .map(|f| format!(" < {f}"))
        .unwrap_or_default();
    let groups: Vec<(&Path, Vec<Mode>, &str)> = match small {
        Some(small) => vec![
            (full, vec![Mode::Hotlift, Mode::HotliftSbAll], ""),
            (small, vec![Mode::HotliftNoChain], " (small inputs)"),
        ],
        None => vec![(
            full,
            vec![Mode::Hotlift, Mode::HotliftSbAll, Mode::HotliftNoChain],
            "",
        )],
    };

    for (dir, modes, note) in groups {
        let stdin = case.stdin.as_ref().map(|f| dir.join(f));
        let stdin = stdin.as_deref();
        let native = run(&Mode::Native.argv(&case.args), stdin, dir, timeout);
        report.times.push((
            format!("native{}", if note.is_empty() { "" } else { " (small)" }),
            native.elapsed,
        ));
        // Sanity-check the native run, so that a broken case (e.g. an option
        // this busybox lacks) cannot pass by failing identically everywhere.
        let mut native_problems = vec![];
        if let Some(e) = &native.error {
            native_problems.push(e.clone());
        } else if native.status != Some(expected_raw(case.expect)) {
            native_problems.push(format!(
                "status {} (expected {}); stderr: {}",
                describe_status(native.status),
                describe_status(Some(expected_raw(case.expect))),
                show_line(native.stderr.split(|&b| b == b'\n').next())
            ));
        }
        if native.stdout.is_empty() && !case.empty_ok {
            native_problems.push("empty stdout".into());
        }
        if !native_problems.is_empty() {
            report.failures.push(format!(
                "{} [native{note}] test case itself is broken: {}\n      command: {cmdline}{stdin_note}",
                case.name,
                native_problems.join("; ")
            ));
            return report;
        }

        for mode in modes {
            let profiled = mode == Mode::Hotlift && case.name.starts_with("sh-");
            let profile = std::env::temp_dir().join(format!(
                "hotlift-busybox-{}-{}.json",
                std::process::id(),
                case.name
            ));
            let mut argv = mode.argv(&case.args);
            if profiled {
                let at = argv.iter().position(|a| a == "--").expect("run ... --");
                let extra = ["--count-check".to_string(), "--profile".into()];
                argv.splice(
                    at..at,
                    extra.into_iter().chain([profile.display().to_string()]),
                );
            }
            let got = run(&argv, stdin, dir, timeout);
            report.times.push((mode.name().to_string(), got.elapsed));
            let mut diffs = vec![];
            if let Some(e) = &got.error {
                diffs.push(e.clone());
            }
            if got.status != native.status && got.error.is_none() {
                diffs.push(format!(
                    "wait status: native {}, hotlift {}",
                    describe_status(native.status),
                    describe_status(got.status)
                ));
            }
            if got.stdout != native.stdout {
                diffs.push(format!(
                    "stdout differs: {}",
                    first_difference(&native.stdout, &got.stdout)
                ));
            }
            if got.stderr != native.stderr {
                diffs.push(format!(
                    "stderr differs: {}",
                    first_difference(&native.stderr, &got.stderr)
                ));
            }
            if profiled {
                if let Err(e) = check_tree_profiles(&profile) {
                    diffs.push(format!("profiles: {e}"));
                }
            }
            if !diffs.is_empty() {
                report.failures.push(format!(
                    "{} [{}{note}]\n      command: {cmdline}{stdin_note}\n      {}",
                    case.name,
                    mode.name(),
                    diffs.join("\n      ")
                ));
            }
        }
    }
    report
}

/// The profiles of a process tree written to `base` and `base.N…`: each
/// exact by `--count-check`, each naming a parent profile of the tree;
/// removed afterwards.
fn check_tree_profiles(base: &Path) -> Result<(), String> {
    let dir = base.parent().expect("a directory");
    let name = base
        .file_name()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    let files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n == name.as_str() || n.starts_with(&format!("{name}."))
        })
        .collect();
    let result = (|| {
        if !files.contains(&base.to_path_buf()) {
            return Err("no profile of the shell".to_string());
        }
        for f in &files {
            let text = fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
            let p: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?;
            let c = &p["count_check"];
            if c["block_mismatch_total"] != 0
                || c["thread_mismatches"] != 0
                || c["blocks_compared"].as_u64().unwrap_or(0) == 0
            {
                return Err(format!("{}: count check {c}", f.display()));
            }
            if p["totals"]["guest_instructions"].as_u64().unwrap_or(0) == 0 {
                return Err(format!("{}: no instructions", f.display()));
            }
            if let Some(parent) = p["process"]["parent_profile"].as_str() {
                if !files.iter().any(|g| g == Path::new(parent)) {
                    return Err(format!("{}: parent {parent} not in the tree", f.display()));
                }
            }
        }
        Ok(())
    })();
    for f in &files {
        let _ = fs::remove_file(f);
    }
    result.map(|_| ())
}

fn applet_list() -> BTreeSet<String> {
    let out = Command::new(BUSYBOX)
        .arg("--list")
        .output()
        .expect("run busybox --list");
    assert!(out.status.success(), "busybox --list failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|s| s.trim().to_string())
        .collect()
}

#[test]
fn busybox_matches_native() {
    if !Path::new(BUSYBOX).exists() {
        if std::env::var_os("CI").is_some() {
            panic!("{BUSYBOX} is missing but CI is set: install the busybox-static package");
        }
        println!(
            "SKIPPED busybox_matches_native: {BUSYBOX} not found \
             (apt-get install busybox-static); set CI=1 to make this a failure"
        );
        return;
    }
    let timeout = Duration::from_secs(
        std::env::var("HOTLIFT_BUSYBOX_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(120),
    );
    let filter = std::env::var("HOTLIFT_BUSYBOX_FILTER")
        .ok()
        .filter(|s| !s.is_empty());

    // --no-chain sends every block exit through the dispatcher and is far
    // slower, so by default it runs on inputs SMALL_SCALE times smaller.
    let nochain_full = std::env::var_os("HOTLIFT_BUSYBOX_NOCHAIN_FULL").is_some();
    let applets = applet_list();
    let dir = std::env::temp_dir().join(format!("hotlift-busybox-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let full = dir.join("full");
    setup_inputs(&full, &applets, 1);
    let small = if nochain_full {
        None
    } else {
        let small = dir.join("small");
        setup_inputs(&small, &applets, SMALL_SCALE);
        Some(small)
    };

    let all = cases();
    {
        let mut seen = BTreeSet::new();
        for c in &all {
            assert!(
                seen.insert(c.name.clone()),
                "duplicate case name {}",
                c.name
            );
        }
    }
    let mut skipped = vec![];
    let mut selected = vec![];
    for case in all {
        if let Some(f) = &filter {
            if !case.name.contains(f.as_str()) {
                continue;
            }
        }
        let missing: Vec<&String> = case
            .needs
            .iter()
            .filter(|a| !applets.contains(*a))
            .collect();
        if !missing.is_empty() {
            skipped.push(format!("{} (no applet {:?})", case.name, missing));
            continue;
        }
        selected.push(case);
    }
    println!(
        "busybox: {} cases selected, {} skipped, per-run timeout {} s, inputs in {}",
        selected.len(),
        skipped.len(),
        timeout.as_secs(),
        dir.display()
    );
    for s in &skipped {
        println!("  skip {s}");
    }
    // Debian's busybox-static has every applet a case needs: in CI (which
    // installs it) a case without its applet is a broken set-up.
    assert!(
        skipped.is_empty() || std::env::var_os("CI").is_none(),
        "CI is set but {} busybox cases lack an applet: {skipped:?}",
        skipped.len()
    );
    if let Some(f) = &filter {
        assert!(
            !selected.is_empty(),
            "HOTLIFT_BUSYBOX_FILTER={f:?} selects no case"
        );
    }

    let selected = Arc::new(selected);
    let next = Arc::new(AtomicUsize::new(0));
    let reports: Arc<Mutex<Vec<(usize, CaseReport)>>> = Arc::new(Mutex::new(vec![]));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (selected, next, reports, full, small) = (
                selected.clone(),
                next.clone(),
                reports.clone(),
                full.clone(),
                small.clone(),
            );
            thread::spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= selected.len() {
                    break;
                }
                let r = run_case(&selected[i], &full, small.as_deref(), timeout);
                let times: Vec<String> = r
                    .times
                    .iter()
                    .map(|(m, d)| format!("{} {:.2}s", m, d.as_secs_f64()))
                    .collect();
                println!(
                    "  {:<5} {:<18} {}",
                    if r.failures.is_empty() { "ok" } else { "FAIL" },
                    r.name,
                    times.join(", ")
                );
                reports.lock().unwrap().push((i, r));
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker thread panicked");
    }

    let mut reports = std::mem::take(&mut *reports.lock().unwrap());
    reports.sort_by_key(|(i, _)| *i);
    let failed: Vec<&CaseReport> = reports
        .iter()
        .map(|(_, r)| r)
        .filter(|r| !r.failures.is_empty())
        .collect();
    let failures: Vec<&String> = failed.iter().flat_map(|r| r.failures.iter()).collect();

    if std::env::var_os("HOTLIFT_BUSYBOX_KEEP").is_none() && failed.is_empty() {
        let _ = fs::remove_dir_all(&dir);
    }
    if !failures.is_empty() {
        let mut msg = format!(
            "{} of {} busybox cases failed ({} failing runs); inputs kept in {}\n",
            failed.len(),
            reports.len(),
            failures.len(),
            dir.display()
        );
        for f in failures {
            writeln!(msg, "  - {f}").unwrap();
        }
        writeln!(
            msg,
            "failed cases: {}",
            failed
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        )
        .unwrap();
        panic!("{msg}");
    }
    println!("busybox: all {} cases match native", reports.len());
}
