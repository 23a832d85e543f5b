//! Running one side of a comparison: a command with a given stdin file,
//! environment and working directory, its stdout and stderr captured in
//! files, under a timeout, with its wall and CPU time.
//!
//! I1: every run gets exactly the `Setup` it is given: argv, the whole
//!     environment (nothing inherited beyond it), the working directory and
//!     stdin from a file; so two runs of one `Setup` see the same inputs.
//! I2: a run never outlives its timeout: a watchdog thread SIGKILLs it, and
//!     the run is reported as timed out.
//! I3: CPU time is the child's own (`wait4` rusage), so runs do not see one
//!     another's.
//! I5: with `Setup::exact`, every run is pinned to that one CPU and runs
//!     with `ADDR_NO_RANDOMIZE`: the conditions under which native counts
//!     are reproducible (docs/FACTS.md); a child that cannot get them fails
//!     to start rather than run under other conditions.
//! I4: with `traced`, the child stops itself for ptrace (`PTRACE_TRACEME`)
//!     before `execve`; the caller (systrace.rs) owns it from the exec stop on
//!     and reaps it with `wait_traced`.
//! I6: after [`forward_interrupts`], a SIGINT or SIGTERM to compare goes on
//!     to every run in progress (its process group, which the terminal's
//!     signal does not reach), and [`interrupted`] says which came: the
//!     runs end as they would have been interrupted natively, and compare
//!     starts no other.
#![allow(unsafe_code)]

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::CompareError;

/// The inputs shared by every run of one comparison (I1).
#[derive(Debug, Clone)]
pub struct Setup {
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
    pub stdin: PathBuf,
    pub timeout: Duration,
    /// Where the runs' output files go.
    pub scratch: PathBuf,
    /// I5: run pinned to this CPU and without ASLR (for exact counts).
    pub exact: Option<usize>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Status {
    Exit {
        code: i32,
    },
    Signal {
        signal: i32,
    },
    Timeout,
    /// Never started: compare was interrupted first (I6).
    NotRun,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Status::Exit { code } => write!(f, "exit {code}"),
            Status::Signal { signal } => {
                let name = Signal::try_from(signal)
                    .map(|s| s.as_str().to_string())
                    .unwrap_or_else(|_| format!("signal {signal}"));
                write!(f, "killed by {name}")
            }
            Status::Timeout => write!(f, "timed out"),
            Status::NotRun => write!(f, "not run"),
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub status: Status,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub wall_seconds: f64,
    pub cpu_seconds: f64,
}

/// The signal that interrupted compare (0: none), I6.
static INTERRUPTED: AtomicI32 = AtomicI32::new(0);
/// The runs in progress (0: a free slot), I6.
static RUNNING: [AtomicI32; 4] = [const { AtomicI32::new(0) }; 4];

extern "C" fn on_interrupt(sig: libc::c_int) {
    INTERRUPTED.store(sig, Ordering::SeqCst);
    for slot in &RUNNING {
        let pid = slot.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill is async-signal-safe.
            unsafe {
                libc::kill(-pid, sig);
                libc::kill(pid, sig);
            }
        }
    }
}

/// I6: from now on, SIGINT and SIGTERM go on to the runs in progress.
pub fn forward_interrupts() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a handler that only stores atomics and calls kill;
        // without SA_RESTART, so a wait returns early (and is retried).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The signal that interrupted compare, if one did (I6).
pub fn interrupted() -> Option<i32> {
    match INTERRUPTED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

fn register(pid: Pid) {
    let free = |s: &&AtomicI32| {
        s.compare_exchange(0, pid.as_raw(), Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    };
    let _ = RUNNING.iter().find(free);
    // A signal that came while it was starting.
    if let Some(sig) = interrupted() {
        // SAFETY: kill of our own child and its group.
        unsafe {
            libc::kill(-pid.as_raw(), sig);
            libc::kill(pid.as_raw(), sig);
        }
    }
}

fn unregister(pid: Pid) {
    for s in &RUNNING {
        let _ = s.compare_exchange(pid.as_raw(), 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// A started child and what is needed to finish it.
#[derive(Debug)]
pub struct Started {
    pub pid: Pid,
    started: Instant,
    out: PathBuf,
    err: PathBuf,
    cancel: mpsc::Sender<()>,
    timed_out: mpsc::Receiver<bool>,
}

/// Start `argv` under `setup`; `tag` names its output files (I1, I2, I4).
pub fn start(
    setup: &Setup,
    argv: &[OsString],
    tag: &str,
    traced: bool,
) -> Result<Started, CompareError> {
    let out = setup.scratch.join(format!("{tag}.stdout"));
    let err = setup.scratch.join(format!("{tag}.stderr"));
    let file = |p: &Path| {
        std::fs::File::create(p).map_err(|e| CompareError::Setup(format!("{}: {e}", p.display())))
    };
    let stdin = std::fs::File::open(&setup.stdin)
        .map_err(|e| CompareError::Setup(format!("stdin {}: {e}", setup.stdin.display())))?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .envs(setup.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&setup.cwd)
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(file(&out)?))
        .stderr(Stdio::from(file(&err)?));
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it.
    let cpus = setup.exact.map(|cpu| unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    });
    // SAFETY: the closure runs in the forked child before execve and only
    // makes async-signal-safe system calls (setpgid, setrlimit,
    // sched_setaffinity, personality, ptrace, signal with SIG_DFL) on data
    // copied before the fork; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            // I5.
            if let Some(set) = &cpus {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let current = libc::personality(0xffff_ffff);
                if current == -1
                    || libc::personality((current | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong) == -1
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // Its own process group, so the watchdog can kill what it forks.
            libc::setpgid(0, 0);
            // Deaths by signal compare equal (no core-dump bit, no cores).
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            // Rust ignores SIGPIPE in hotlift; the program gets the default.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            if traced && libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Wall time runs from before the fork: a short program may be mostly
    // done by the time `spawn` returns (its CPU time counts from the fork).
    let started = Instant::now();
    let child = cmd.spawn().map_err(|e| CompareError::Spawn {
        program: argv[0].to_string_lossy().into_owned(),
        error: e,
    })?;
    let pid = Pid::from_raw(child.id() as i32);
    // The child is reaped with wait4 below, never through `Child`.
    std::mem::forget(child);
    register(pid);
    let (cancel, cancelled) = mpsc::channel::<()>();
    let (tx, timed_out) = mpsc::channel::<bool>();
    let timeout = setup.timeout;
    std::thread::spawn(move || {
        let fired = matches!(
            cancelled.recv_timeout(timeout),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        if fired {
            // I2: the whole process group, then the child itself.
            let _ = kill(Pid::from_raw(-pid.as_raw()), Signal::SIGKILL);
            let _ = kill(pid, Signal::SIGKILL);
        }
        let _ = tx.send(fired);
    });
    Ok(Started {
        pid,
        started,
        out,
        err,
        cancel,
        timed_out,
    })
}

/// Wait for the end of an untraced child.
pub fn wait(s: Started) -> Result<RunResult, CompareError> {
    let mut status = 0;
    // SAFETY: rusage is written by the kernel; status is a local.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our child; the pointers are valid locals.
        let r = unsafe { libc::wait4(s.pid.as_raw(), &mut status, 0, &mut ru) };
        if r == s.pid.as_raw() {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(CompareError::Setup(format!("wait4: {e}")));
        }
    }
    finish(s, status, &ru)
}

/// Finish a child whose final wait status and rusage the tracer collected.
pub fn finish(s: Started, status: i32, ru: &libc::rusage) -> Result<RunResult, CompareError> {
    let wall = s.started.elapsed().as_secs_f64();
    unregister(s.pid);
    let _ = s.cancel.send(());
    let timed_out = s.timed_out.recv().unwrap_or(false);
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    let status = if timed_out {
        Status::Timeout
    } else if libc::WIFSIGNALED(status) {
        Status::Signal {
            signal: libc::WTERMSIG(status),
        }
    } else {
        Status::Exit {
            code: libc::WEXITSTATUS(status),
        }
    };
    let read = |p: &Path| {
        std::fs::read(p).map_err(|e| CompareError::Setup(format!("{}: {e}", p.display())))
    };
    Ok(RunResult {
        status,
        stdout: read(&s.out)?,
        stderr: read(&s.err)?,
        wall_seconds: wall,
        cpu_seconds: tv(ru.ru_utime) + tv(ru.ru_stime),
    })
}

/// `wait4` on a traced child: one wait status and the rusage (for the
/// final one). `__WALL` so clone children never confuse it.
pub fn wait_traced(pid: Pid) -> std::io::Result<(i32, libc::rusage)> {
    let mut status = 0;
    // SAFETY: as in `wait`.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our traced child; the pointers are valid locals.
        let r = unsafe { libc::wait4(pid.as_raw(), &mut status, libc::__WALL, &mut ru) };
        if r == pid.as_raw() {
            return Ok((status, ru));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
