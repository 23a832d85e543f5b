//! Differential guest tests: every program in `guest-tests/` runs natively
//! and under hotlift, and the two runs must agree byte for byte.
//!
//! The real CPU is the oracle. The test builds the guest programs once
//! (`make -C guest-tests -j2`), reads the run list `guest-tests/build/TESTS`
//! (generated from `guest-tests/manifest`, one run per line:
//! `NAME [ARG...] [< STDIN] expect=exit:N|signal:SIGNAME`), and runs every
//! line in every mode: natively, under `hotlift run --`, and under
//! `hotlift run --no-chain --`.
//!
//! Invariants:
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
//!
//! Environment knobs:
//! - `HOTLIFT_GUEST_FILTER=substr` runs only lines containing `substr`.
//! - `HOTLIFT_GUEST_MODES=native,hotlift,no-chain` picks modes (default all).
//! - `HOTLIFT_GUEST_JOBS=N` sets the worker threads (default 2).
//! - `HOTLIFT_GUEST_TIMEOUT=SECS` sets the per-run timeout (default 60).
//!
//! Usage: `cargo test --test guest_diff` (add `-- --nocapture` to watch
//! progress); `make -C guest-tests check` checks the programs natively alone.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::collections::VecDeque;
use std::fmt;
use std::fs;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How a run is started: natively, or through hotlift with these arguments
/// before the program path.
#[derive(Debug, Clone, Copy)]
struct Mode {
    name: &'static str,
    hotlift_args: Option<&'static [&'static str]>,
}

const MODES: &[Mode] = &[
    Mode {
        name: "native",
        hotlift_args: None,
    },
    Mode {
        name: "hotlift",
        hotlift_args: Some(&["run", "--"]),
    },
    Mode {
        name: "no-chain",
        hotlift_args: Some(&["run", "--no-chain", "--"]),
    },
    // Superblocks at nearly every block: thresholds of 1.
    Mode {
        name: "sb-all",
        hotlift_args: Some(&[
            "run",
            "--sb-threshold",
            "1",
            "--sb-edge-threshold",
            "1",
            "--",
        ]),
    },
];

/// The fixed environment every run gets (plus `HOME`/`TMPDIR`, see D1).
const GUEST_ENV: &[(&str, &str)] = &[("PATH", "/usr/bin:/bin"), ("LC_ALL", "C")];

/// What the manifest says a native run ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Exit(i32),
    Signal(i32),
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Expect::Exit(code) => write!(f, "exit {code}"),
            Expect::Signal(sig) => write!(f, "signal {} ({sig})", signal_name(sig).unwrap_or("?")),
        }
    }
}

/// One line of `build/TESTS`.
#[derive(Debug, Clone)]
struct TestCase {
    /// The line as written, used to name the run in reports.
    line: String,
    /// The program's file name in `guest-tests/build/`.
    name: String,
    args: Vec<String>,
    /// Relative to `guest-tests/`; `None` means /dev/null.
    stdin: Option<PathBuf>,
    expect: Expect,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// The raw wait status (exit code or signal, core-dump bit included).
    Status(i32),
    TimedOut(Duration),
    SpawnFailed(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Status(raw) => {
                let st = std::process::ExitStatus::from_raw(*raw);
                match (st.code(), st.signal()) {
                    (Some(code), _) => write!(f, "exit {code}"),
                    (None, Some(sig)) => {
                        write!(f, "signal {} ({sig})", signal_name(sig).unwrap_or("?"))?;
                        if st.core_dumped() {
                            write!(f, " with core dump")?;
                        }
                        Ok(())
                    }
                    _ => write!(f, "raw wait status {raw:#x}"),
                }
            }
            Outcome::TimedOut(d) => write!(
                f,
                "timed out after {:.1} s (process group killed)",
                d.as_secs_f64()
            ),
            Outcome::SpawnFailed(e) => write!(f, "could not start: {e}"),
        }
    }
}

#[derive(Debug, Clone)]
struct RunResult {
    outcome: Outcome,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    elapsed: Duration,
}

const SIGNALS: &[(&str, i32)] = &[
    ("SIGHUP", libc::SIGHUP),
    ("SIGINT", libc::SIGINT),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGILL", libc::SIGILL),
    ("SIGTRAP", libc::SIGTRAP),
    ("SIGABRT", libc::SIGABRT),
    ("SIGBUS", libc::SIGBUS),
    ("SIGFPE", libc::SIGFPE),
    ("SIGKILL", libc::SIGKILL),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGSEGV", libc::SIGSEGV),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGPIPE", libc::SIGPIPE),
    ("SIGALRM", libc::SIGALRM),
    ("SIGTERM", libc::SIGTERM),
    ("SIGSYS", libc::SIGSYS),
    ("SIGXCPU", libc::SIGXCPU),
    ("SIGXFSZ", libc::SIGXFSZ),
    ("SIGVTALRM", libc::SIGVTALRM),
    ("SIGPROF", libc::SIGPROF),
];

fn signal_name(sig: i32) -> Option<&'static str> {
    SIGNALS
        .iter()
        .find(|&&(_, n)| n == sig)
        .map(|&(name, _)| name)
}

fn signal_number(name: &str) -> Option<i32> {
    SIGNALS
        .iter()
        .find(|&&(n, _)| n == name)
        .map(|&(_, sig)| sig)
}

/// Parses `build/TESTS` (see the module docs for the format).
fn parse_tests(text: &str) -> Result<Vec<TestCase>, String> {
    let mut cases = Vec::new();
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |msg: &str| format!("TESTS line {}: {msg}: {line}", lineno + 1);
        let mut words = line.split_whitespace();
        let name = words.next().ok_or_else(|| bad("empty"))?.to_string();
        let mut args = Vec::new();
        let mut stdin = None;
        let mut expect = Expect::Exit(0);
        while let Some(w) = words.next() {
            if w == "<" {
                let file = words.next().ok_or_else(|| bad("'<' without a file"))?;
                stdin = Some(PathBuf::from(file));
            } else if let Some(e) = w.strip_prefix("expect=") {
                expect = if let Some(code) = e.strip_prefix("exit:") {
                    Expect::Exit(code.parse().map_err(|_| bad("bad exit code"))?)
                } else if let Some(sig) = e.strip_prefix("signal:") {
                    Expect::Signal(signal_number(sig).ok_or_else(|| bad("unknown signal"))?)
                } else {
                    return Err(bad("bad expect="));
                };
            } else if stdin.is_some() {
                return Err(bad("arguments after '< FILE'"));
            } else {
                args.push(w.to_string());
            }
        }
        cases.push(TestCase {
            line: line.to_string(),
            name,
            args,
            stdin,
            expect,
        });
    }
    Ok(cases)
}

fn outcome_matches(outcome: &Outcome, expect: Expect) -> bool {
    let Outcome::Status(raw) = outcome else {
        return false;
    };
    let st = std::process::ExitStatus::from_raw(*raw);
    match expect {
        Expect::Exit(code) => st.code() == Some(code),
        Expect::Signal(sig) => st.signal() == Some(sig) && !st.core_dumped(),
    }
}

/// A fresh, empty working directory per run, removed when dropped.
struct RunDir(PathBuf);

impl RunDir {
    fn new() -> std::io::Result<RunDir> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("hotlift-guest-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path)?;
        Ok(RunDir(path))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn read_all(mut r: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Polls until the child has exited (without reaping it, so its pid and
/// process group id stay reserved) or the deadline passes.
fn wait_exited_or_deadline(child: &Child, deadline: Instant) -> bool {
    let pid = child.id() as libc::id_t;
    loop {
        // SAFETY: an all-zero siginfo_t is a valid value; waitid only writes it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child with WNOWAIT leaves it unreaped;
        // `info` is a valid, writable siginfo_t.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        // SAFETY: reading si_pid of the siginfo_t waitid filled in (0 if the
        // child has not exited yet).
        if rc == 0 && unsafe { info.si_pid() } != 0 {
            return true;
        }
        if rc != 0 || Instant::now() >= deadline {
            return rc != 0;
        }
        thread::sleep(Duration::from_millis(2));
    }
}

/// Runs one test case in one mode (see D1-D3).
fn run_case(case: &TestCase, mode: Mode, dirs: &Dirs, timeout: Duration) -> RunResult {
    let start = Instant::now();
    let failed = |e: String| RunResult {
        outcome: Outcome::SpawnFailed(e),
        stdout: Vec::new(),
        stderr: Vec::new(),
        elapsed: start.elapsed(),
    };
    let dir = match RunDir::new() {
        Ok(d) => d,
        Err(e) => return failed(format!("temporary directory: {e}")),
    };
    let program = dirs.build.join(&case.name);
    let mut cmd = match mode.hotlift_args {
        None => Command::new(&program),
        Some(pre) => {
            let mut c = Command::new(&dirs.hotlift);
            c.args(pre).arg(&program);
            c
        }
    };
    cmd.args(&case.args)
        .current_dir(&dir.0)
        .env_clear()
        .envs(GUEST_ENV.iter().copied())
        .env("HOME", &dir.0)
        .env("TMPDIR", &dir.0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match &case.stdin {
        None => cmd.stdin(Stdio::null()),
        Some(rel) => match fs::File::open(dirs.guest.join(rel)) {
            Ok(f) => cmd.stdin(f),
            Err(e) => return failed(format!("stdin {}: {e}", rel.display())),
        },
    };
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe functions (setrlimit, setpgid) on local data.
    unsafe {
        cmd.pre_exec(|| {
            let zero = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::setrlimit(libc::RLIMIT_CORE, &zero) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(format!("{}: {e}", cmd.get_program().to_string_lossy())),
    };
    let out = read_all(child.stdout.take().expect("stdout is piped"));
    let err = read_all(child.stderr.take().expect("stderr is piped"));
    let exited = wait_exited_or_deadline(&child, start + timeout);
    // Kill whatever is left of the process group (everything, on timeout;
    // stray descendants holding the pipes open, otherwise) before reaping.
    // SAFETY: plain kill(2) of the group we created in pre_exec; the leader
    // is not reaped yet, so the group id cannot have been reused.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
    }
    let status = child.wait();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let elapsed = start.elapsed();
    let outcome = match (exited, status) {
        (false, _) => Outcome::TimedOut(elapsed),
        (true, Ok(st)) => Outcome::Status(st.into_raw()),
        (true, Err(e)) => Outcome::SpawnFailed(format!("wait: {e}")),
    };
    RunResult {
        outcome,
        stdout,
        stderr,
        elapsed,
    }
}

struct Dirs {
    guest: PathBuf,
    build: PathBuf,
    hotlift: PathBuf,
}

fn build_guests(guest: &Path) {
    let out = Command::new("make")
        .arg("-C")
        .arg(guest)
        .arg("-j2")
        .output()
        .unwrap_or_else(|e| panic!("could not run make -C {}: {e}", guest.display()));
    if !out.status.success() {
        panic!(
            "make -C {} -j2 failed ({}):\n--- stdout ---\n{}\n--- stderr ---\n{}",
            guest.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A short description of where two outputs first differ.
fn diff_summary(what: &str, native: &[u8], other: &[u8]) -> Option<String> {
    if native == other {
        return None;
    }
    let a: Vec<&[u8]> = native.split(|&b| b == b'\n').collect();
    let b: Vec<&[u8]> = other.split(|&b| b == b'\n').collect();
    let first = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let show = |lines: &[&[u8]], i: usize| -> String {
        match lines.get(i) {
            None => "<end of output>".to_string(),
            Some(l) => {
                let s = String::from_utf8_lossy(l);
                let mut t: String = s.chars().take(160).collect();
                if s.chars().count() > 160 {
                    t.push_str("...");
                }
                format!("{t:?}")
            }
        }
    };
    let mut s = format!(
        "    {what} differs: native {} bytes / {} lines, translated {} bytes / {} lines; first difference at line {}\n",
        native.len(),
        a.len(),
        other.len(),
        b.len(),
        first + 1
    );
    for i in first..(first + 3) {
        if i >= a.len() && i >= b.len() {
            break;
        }
        s.push_str(&format!("      native     {:>4}: {}\n", i + 1, show(&a, i)));
        s.push_str(&format!("      translated {:>4}: {}\n", i + 1, show(&b, i)));
    }
    Some(s)
}

fn tail_text(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.lines().collect();
    let start = all.len().saturating_sub(lines);
    all[start..]
        .iter()
        .map(|l| format!("      | {l}\n"))
        .collect()
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not valid")),
        Err(_) => default,
    }
}

#[test]
fn guest_programs_match_native() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let guest = root.join("guest-tests");
    let dirs = Arc::new(Dirs {
        build: guest.join("build"),
        guest: guest.clone(),
        hotlift: PathBuf::from(env!("CARGO_BIN_EXE_hotlift")),
    });
    build_guests(&guest);
    let list = dirs.build.join("TESTS");
    let text = fs::read_to_string(&list).unwrap_or_else(|e| panic!("{}: {e}", list.display()));
    let mut cases = parse_tests(&text).unwrap_or_else(|e| panic!("{e}"));
    assert!(!cases.is_empty(), "{} lists no tests", list.display());

    if let Ok(filter) = std::env::var("HOTLIFT_GUEST_FILTER") {
        cases.retain(|c| c.line.contains(&filter));
        assert!(
            !cases.is_empty(),
            "HOTLIFT_GUEST_FILTER={filter:?} matches no test"
        );
    }
    let modes: Vec<Mode> = match std::env::var("HOTLIFT_GUEST_MODES") {
        Err(_) => MODES.to_vec(),
        Ok(v) => v
            .split(',')
            .map(|m| {
                let m = m.trim();
                *MODES.iter().find(|x| x.name == m).unwrap_or_else(|| {
                    panic!("HOTLIFT_GUEST_MODES: unknown mode {m:?} (known: native, hotlift, no-chain, sb-all)")
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
