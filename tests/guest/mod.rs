//! What the guest-program tests share: the run list (`guest-tests/build/TESTS`,
//! `COUNT`) and how one run of a guest program is started, watched and
//! ended, and building one guest test (`build_one`). Used by `guest_diff.rs`
//! (native vs hotlift output), `exact.rs` (native single-step
//! count vs hotlift's count) and the other suites that run guest tests.
//!
//! Invariants (the `D` rules of `guest_diff.rs` live here):
//! - D1. Every run gets the argv, fixed environment and stdin its [`Launch`]
//!   names, and a fresh empty working directory (`HOME` and `TMPDIR` point
//!   at it).
//! - D2. Every child starts with `RLIMIT_CORE` = 0 and in its own process
//!   group, so deaths by signal compare equal (no core-dump bit) and the
//!   whole group can be killed.
//! - D3. Every run has a timeout; on expiry the process group is killed and
//!   the run is reported as timed out. Nothing here can hang.
//! - D4. hotlift keeps its cache directory (`--cache-dir`) in
//!   [`CACHE_DIR`], never under the guest's `HOME`: the guest's working
//!   directory holds only what the guest makes (a `readdir` of it counts
//!   the same natively), and every run after the first of a program is a
//!   warm start, so the suites check warm runs against native ones.
// Each test crate that includes this module uses a different part of it.
#![allow(dead_code)]

pub mod postgres;
pub mod rng;

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// `tests/hostile/rewrite.c` (a guest rewriting a function, with an
/// optional hot loop between rewrites) built static in a fresh directory
/// named for `what`: (the directory, the program).
pub fn rewrite_guest(what: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("hotlift-{what}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("rewrite");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/rewrite.c");
    gcc(&src, &exe, &["-static"]);
    (dir, exe)
}

/// Build the C file `src` into `exe` with `gcc -O1` and `flags`.
///
/// # Panics
/// When gcc cannot be run or fails.
pub fn gcc(src: &Path, exe: &Path, flags: &[&str]) {
    let st = Command::new("gcc")
        .arg("-O1")
        .args(flags)
        .arg("-o")
        .arg(exe)
        .arg(src)
        .status()
        .expect("gcc");
    assert!(st.success(), "gcc failed on {}", src.display());
}

/// Why a multi-threaded guest test is left out of the count checks.
pub const THREADS_VARY: &str = "its threads contend for locks and run as long as \
    the main thread lets them, so the instructions they retire differ from \
    run to run (natively too)";

/// Why a guest test that parses its own memory map is left out of them.
pub const ADDRESSES_VARY: &str = "it parses its own /proc/self/maps, whose addresses \
    (and so the instructions that read them) differ from run to run with \
    address-space randomisation (natively too)";

pub const STEPS_ITSELF: &str = "it single-steps itself with the trap flag, which \
    the native count cannot reproduce: stepcount's ptrace single-steps with \
    the same flag (its output differs under stepcount)";

pub const QUEUES_FAULTS: &str = "it queues fault signals with a positive si_code \
    to itself, which the kernel delivers ahead of the queuing syscall's \
    single-step report (its dequeue_synchronous_signal takes them for \
    faults): the native count misses that syscall where the signal kills";

/// `hotlift run` options that build superblocks nearly everywhere
/// (thresholds of 1, any yield, no warm-up): the suites' stress setting.
pub const SB_EVERYWHERE: &[&str] = &[
    "--sb-threshold",
    "1",
    "--sb-edge-threshold",
    "1",
    "--sb-min-yield",
    "0",
    "--sb-warmup",
    "0",
];

/// `hotlift run` options of the Pisat selector mining often and with a
/// low support and no warm-up, so that even short tests run in mined
/// superblocks.
pub const PISAT_EAGER: &[&str] = &[
    "--sb-warmup",
    "0",
    "--selector",
    "pisat",
    "--pisat-window",
    "128",
    "--pisat-interval",
    "512",
    "--pisat-support2",
    "3",
];

/// Why a program that takes address space or kernel mappings until none
/// is left has counts of its own on each run.
pub const EXHAUSTS: &str = "it maps address space (or splits mappings) until none is left, so \
     how many fit depends on where the kernel and hotlift put everything else";

/// Guest programs whose counts depend on timing, with the reason: the
/// exact-count checks (`exact.rs`) give them the in-run check alone, and
/// `guest_diff.rs` compares their output itself.
pub const COUNTS_VARY: &[(&str, &str)] = &[
    (
        "asm-signal-selfjmp",
        "it spins in `jmp .` until a 50 ms ITIMER_REAL fires, so its count is \
     the number of jumps that fit in 50 ms: about 2,400 when single-stepped, \
     about 470,000 under hotlift, and different on every run",
    ),
    ("c-mmap-reuse", THREADS_VARY),
    ("cpie-mmap-reuse", THREADS_VARY),
    ("c-threads", THREADS_VARY),
    ("cpie-threads", THREADS_VARY),
    ("c-threads-jit", THREADS_VARY),
    ("cpie-threads-jit", THREADS_VARY),
    ("c-sigpending", THREADS_VARY),
    ("c-thread-name", THREADS_VARY),
    ("cpie-thread-name", THREADS_VARY),
    ("cpie-sigpending", THREADS_VARY),
    ("c-exhaust", EXHAUSTS),
    ("cpie-exhaust", EXHAUSTS),
    ("c-mapcount", EXHAUSTS),
    ("cpie-mapcount", EXHAUSTS),
    ("c-threads-robust", THREADS_VARY),
    ("cpie-threads-robust", THREADS_VARY),
    ("c-tsc", THREADS_VARY),
    ("cpie-tsc", THREADS_VARY),
    ("c-selfmaps", ADDRESSES_VARY),
    ("cpie-selfmaps", ADDRESSES_VARY),
    ("c-vdso", ADDRESSES_VARY),
    ("cpie-vdso", ADDRESSES_VARY),
    ("c-sig-queued", QUEUES_FAULTS),
    ("cpie-sig-queued", QUEUES_FAULTS),
    ("c-main-exit", THREADS_VARY),
    ("cpie-main-exit", THREADS_VARY),
    ("c-trapflag", STEPS_ITSELF),
    ("cpie-trapflag", STEPS_ITSELF),
];

/// Whether `exact.rs` runs `case` (a line of `COUNT`) natively and in
/// every configuration, comparing the outputs: not for [`COUNTS_VARY`].
pub fn exact_compares_output(case: &TestCase) -> bool {
    !COUNTS_VARY.iter().any(|(n, _)| case.name == *n)
}

/// What the manifest says a native run ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
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

/// One line of `build/TESTS` or `build/COUNT`.
#[derive(Debug, Clone)]
pub struct TestCase {
    /// The line as written, used to name the run in reports.
    pub line: String,
    /// The program's file name in `guest-tests/build/`.
    pub name: String,
    pub args: Vec<String>,
    /// Relative to `guest-tests/`; `None` means /dev/null.
    pub stdin: Option<PathBuf>,
    pub expect: Expect,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
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
pub struct RunResult {
    pub outcome: Outcome,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

pub const SIGNALS: &[(&str, i32)] = &[
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
    ("SIGRTMAX", 64),
];

pub fn signal_name(sig: i32) -> Option<&'static str> {
    SIGNALS
        .iter()
        .find(|&&(_, n)| n == sig)
        .map(|&(name, _)| name)
}

pub fn signal_number(name: &str) -> Option<i32> {
    SIGNALS
        .iter()
        .find(|&&(n, _)| n == name)
        .map(|&(_, sig)| sig)
}

/// Parses `build/TESTS` or `build/COUNT` (`NAME [ARG...] [< STDIN] expect=...`).
pub fn parse_tests(text: &str) -> Result<Vec<TestCase>, String> {
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

pub fn outcome_matches(outcome: &Outcome, expect: Expect) -> bool {
    let Outcome::Status(raw) = outcome else {
        return false;
    };
    let st = std::process::ExitStatus::from_raw(*raw);
    match expect {
        Expect::Exit(code) => st.code() == Some(code),
        Expect::Signal(sig) => st.signal() == Some(sig) && !st.core_dumped(),
    }
}

pub fn read_all(mut r: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Polls until the child has exited (without reaping it, so its pid and
/// process group id stay reserved) or the deadline passes.
pub fn wait_exited_or_deadline(child: &Child, deadline: Instant) -> bool {
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

/// hotlift's cache directory in every suite's runs (D4): one for the whole
/// target directory, shared by concurrent runs as `make -j` would share it.
pub const CACHE_DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/hotlift-cache");

/// `pre` with `--cache-dir CACHE_DIR` after hotlift's subcommand when the
/// launcher is hotlift running a program (D4); any other launcher's
/// arguments unchanged.
fn with_cache_dir(tool: &Path, pre: &[OsString]) -> Vec<OsString> {
    let hotlift = tool.file_name().is_some_and(|n| n == "hotlift");
    let mut args = pre.to_vec();
    if hotlift && pre.first().is_some_and(|s| s == "run" || s == "profile") {
        args.splice(1..1, ["--cache-dir".into(), CACHE_DIR.into()]);
    }
    args
}

/// How to start one run of a guest program (D1-D4).
pub struct Launch<'a> {
    /// A tool that starts the program (hotlift, stepcount) and its
    /// arguments before the program's path; `None` runs it directly.
    pub launcher: Option<(&'a Path, &'a [OsString])>,
    pub program: &'a Path,
    pub args: &'a [String],
    /// The working directory (also `HOME` and `TMPDIR`). Made fresh (emptied)
    /// before the run; the caller removes it.
    pub dir: &'a Path,
    /// The environment besides `HOME` and `TMPDIR`.
    pub env: &'a [(&'a str, &'a str)],
    /// `None` means /dev/null.
    pub stdin: Option<&'a Path>,
    pub timeout: Duration,
    /// Run on this CPU only (`sched_setaffinity`), inherited by everything
    /// the run starts.
    pub cpu: Option<usize>,
    /// Run with `ADDR_NO_RANDOMIZE` (as `setarch -R`): no ASLR.
    pub no_randomize: bool,
}

/// Runs `l` and collects how it ended and what it printed (D1-D4).
pub fn run(l: &Launch) -> RunResult {
    let start = Instant::now();
    let failed = |e: String| RunResult {
        outcome: Outcome::SpawnFailed(e),
        stdout: Vec::new(),
        stderr: Vec::new(),
        elapsed: start.elapsed(),
    };
    let _ = fs::remove_dir_all(l.dir);
    if let Err(e) = fs::create_dir_all(l.dir) {
        return failed(format!("working directory {}: {e}", l.dir.display()));
    }
    let mut cmd = match l.launcher {
        None => Command::new(l.program),
        Some((tool, pre)) => {
            let mut c = Command::new(tool);
            c.args(with_cache_dir(tool, pre)).arg(l.program);
            c
        }
    };
    cmd.args(l.args)
        .current_dir(l.dir)
        .env_clear()
        .envs(l.env.iter().copied())
        .env("HOME", l.dir)
        .env("TMPDIR", l.dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match l.stdin {
        None => cmd.stdin(Stdio::null()),
        Some(path) => match fs::File::open(path) {
            Ok(f) => cmd.stdin(f),
            Err(e) => return failed(format!("stdin {}: {e}", path.display())),
        },
    };
    // SAFETY: an all-zero cpu_set_t is a valid (empty) set; CPU_SET writes
    // one bit inside it (the index is below CPU_SETSIZE or ignored).
    let cpus = l.cpu.map(|cpu| unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    });
    let no_randomize = l.no_randomize;
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe functions (setrlimit, setpgid,
    // sched_setaffinity, personality) on data copied before the fork.
    unsafe {
        cmd.pre_exec(move || {
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
            if let Some(set) = &cpus {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if no_randomize {
                let current = libc::personality(0xffff_ffff);
                if current == -1
                    || libc::personality((current | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) == -1
                {
                    return Err(std::io::Error::last_os_error());
                }
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
    let exited = wait_exited_or_deadline(&child, start + l.timeout);
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

/// The CPUs this process may run on (its affinity mask), ascending.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: an all-zero cpu_set_t is valid; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET reads one bit of a valid set.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Where the guest tests and the tools live.
pub struct Dirs {
    /// `guest-tests/`
    pub guest: PathBuf,
    /// `guest-tests/build/`
    pub build: PathBuf,
}

impl Dirs {
    pub fn new() -> Dirs {
        let guest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("guest-tests");
        Dirs {
            build: guest.join("build"),
            guest,
        }
    }

    /// Builds the guest programs and reads the run list `build/NAME`
    /// (`TESTS` or `COUNT`), keeping the lines that contain the value of
    /// the environment variable `filter_var`, if set.
    pub fn cases(&self, list: &str, filter_var: &str) -> Vec<TestCase> {
        build_guests(&self.guest);
        let path = self.build.join(list);
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut cases = parse_tests(&text).unwrap_or_else(|e| panic!("{e}"));
        assert!(!cases.is_empty(), "{} lists no tests", path.display());
        if let Ok(filter) = std::env::var(filter_var) {
            cases.retain(|c| c.line.contains(&filter));
            assert!(!cases.is_empty(), "{filter_var}={filter:?} matches no test");
        }
        cases
    }
}

/// Build one guest test (`make -C guest-tests build/NAME`; make is
/// incremental) and return its path.
pub fn build_one(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest-tests");
    let st = Command::new("make")
        .args(["-s", "-C"])
        .arg(&root)
        .arg(format!("build/{name}"))
        .status()
        .expect("make (guest-tests)");
    assert!(st.success(), "building guest test {name}");
    root.join("build").join(name)
}

pub fn build_guests(guest: &Path) {
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
pub fn diff_summary(what: &str, native: &[u8], other: &[u8]) -> Option<String> {
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

pub fn tail_text(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.lines().collect();
    let start = all.len().saturating_sub(lines);
    all[start..]
        .iter()
        .map(|l| format!("      | {l}\n"))
        .collect()
}

/// The next job of a queue that worker threads share, the lock released
/// before the job runs. (`while let Some(j) = q.lock().unwrap().pop_front()`
/// holds the lock through the loop's body: the other workers wait, and
/// the jobs run one at a time.)
pub fn next_job<T>(queue: &std::sync::Mutex<std::collections::VecDeque<T>>) -> Option<T> {
    queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
}

pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not valid")),
        Err(_) => default,
    }
}

/// Remove the profile at `path` and the per-process profiles forked
/// children write beside it (`PATH.PID`, `PATH.PID.N`: README, Profiles
/// of a process tree).
pub fn remove_profiles(path: &Path) {
    let _ = fs::remove_file(path);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let prefix = format!("{}.", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let n = entry.file_name();
        let n = n.to_string_lossy();
        let rest = n.strip_prefix(&prefix).unwrap_or("");
        if !rest.is_empty()
            && rest
                .split('.')
                .all(|p| p.bytes().all(|b| b.is_ascii_digit()) && !p.is_empty())
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}
