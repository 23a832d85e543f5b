//! The native side's syscall trace: the program runs natively under ptrace
//! with syscall stops (`PTRACE_O_TRACESYSGOOD`), and every syscall of its
//! initial thread is rendered by hotlift's own strace formatter
//! (`strace`, reading the stopped child's memory,
//! strace/memory.rs I2), so the native and translated traces differ only
//! where the runs do.
//!
//! I1: one line per syscall, in order: `name(args) = result` as
//!     `hotlift run --strace-file` writes it; `exit`/`exit_group` end in
//!     ` = ?`.
//! I2: signals the program receives are passed on at their delivery stop,
//!     so it runs and ends as it would untraced (bar timing).
//! I3: only the initial thread is traced; a task it creates runs
//!     untraced (no `PTRACE_O_TRACECLONE`). hotlift marks the lines of its
//!     other threads and processes (strace/sink.rs I2), and the comparison
//!     leaves them out, so both sides cover the same task. (Other threads'
//!     calls interleave by timing, and their futex calls depend on it.)

use nix::sys::ptrace;
use nix::unistd::Pid;

use super::spawn::{self, RunResult, Setup};
use super::CompareError;
use crate::strace;

/// The run's result and its syscall lines (I1).
#[derive(Debug)]
pub struct Traced {
    pub run: RunResult,
    pub lines: Vec<String>,
    /// The traced process's id (normalise.rs N2).
    pub pid: u32,
}

fn trace_error(what: &str, e: impl std::fmt::Display) -> CompareError {
    CompareError::Setup(format!("tracing the native run: {what}: {e}"))
}

/// Run `argv` natively under `setup`, tracing its syscalls.
pub fn run(setup: &Setup, argv: &[std::ffi::OsString]) -> Result<Traced, CompareError> {
    let started = spawn::start(setup, argv, "native-traced", true)?;
    let pid = started.pid;
    let mut lines = Vec::new();
    // The exec stop (SIGTRAP) comes first (spawn I4).
    let (status, _) = spawn::wait_traced(pid).map_err(|e| trace_error("wait", e))?;
    if !libc::WIFSTOPPED(status) {
        let (status, ru) = (status, zeroed_rusage());
        return Ok(Traced {
            run: spawn::finish(started, status, &ru)?,
            lines,
            pid: pid.as_raw() as u32,
        });
    }
    ptrace::setoptions(
        pid,
        ptrace::Options::PTRACE_O_TRACESYSGOOD | ptrace::Options::PTRACE_O_EXITKILL,
    )
    .map_err(|e| trace_error("PTRACE_SETOPTIONS", e))?;
    let mut deliver = 0;
    let mut pending: Option<(u64, [u64; 6], String)> = None;
    loop {
        resume(pid, std::mem::take(&mut deliver));
        let (status, ru) = spawn::wait_traced(pid).map_err(|e| trace_error("wait", e))?;
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            if let Some((_, _, call)) = pending.take() {
                // Killed inside a syscall (or the exit itself).
                lines.push(format!("{call} = ?"));
            }
            return Ok(Traced {
                run: spawn::finish(started, status, &ru)?,
                lines,
                pid: pid.as_raw() as u32,
            });
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        let sig = libc::WSTOPSIG(status);
        if sig == libc::SIGTRAP | 0x80 {
            let regs = ptrace::getregs(pid).map_err(|e| trace_error("PTRACE_GETREGS", e))?;
            match pending.take() {
                None => {
                    let nr = regs.orig_rax as u32 as u64;
                    let args = [regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9];
                    let call = strace::with_memory_of(pid, || strace::format_call(nr, &args));
                    pending = Some((nr, args, call));
                }
                Some((nr, args, call)) => {
                    let ret = regs.rax as i64;
                    let r = strace::with_memory_of(pid, || strace::format_return(nr, &args, ret));
                    lines.push(format!("{call}{r}"));
                }
            }
        } else if (status >> 16) != 0 {
            // A ptrace event stop (none are asked for): carry on.
        } else {
            // I2: a signal-delivery stop; pass the signal on.
            deliver = sig;
        }
    }
}

fn zeroed_rusage() -> libc::rusage {
    #[allow(unsafe_code)]
    // SAFETY: rusage is plain old data; all-zero is a valid value.
    unsafe {
        std::mem::zeroed()
    }
}

/// PTRACE_SYSCALL with a raw signal number (0 for none): nix's `Signal`
/// has no real-time signals.
#[allow(unsafe_code)]
fn resume(pid: Pid, sig: i32) {
    // SAFETY: PTRACE_SYSCALL on our stopped tracee, data = signal number.
    // A tracee the watchdog killed makes it fail with ESRCH; the next wait
    // reports its death.
    unsafe {
        libc::ptrace(
            libc::PTRACE_SYSCALL,
            pid.as_raw(),
            std::ptr::null_mut::<libc::c_void>(),
            sig as libc::c_long,
        );
    }
}
