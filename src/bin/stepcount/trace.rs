//! The single-step loop: one `PTRACE_SINGLESTEP` per retired instruction.
//!
//! [`count_instructions`] resumes the stopped program one step at a time and
//! sorts every stop into "an instruction retired" or not, following the
//! counting convention C1–C7 in the binary's top-level docs. How each kind
//! of stop is recognised (checked on kernel 6.18; the tests pin each row):
//!
//! | stop (wait status, si_code)          | meaning                                | count | pass on     |
//! |--------------------------------------|----------------------------------------|-------|-------------|
//! | SIGTRAP, TRAP_TRACE                  | #DB single-step trap                   | +1    | –           |
//! | SIGTRAP, TRAP_BRKPT                  | a syscall returned (the kernel's step report) | +1 | –      |
//! | SIGTRAP, TRAP_BRKPT at an `int1`     | `int1` (icebp): rip not advanced       | 0     | SIGTRAP     |
//! | SIGTRAP, SI_KERNEL                   | `int3` retired                         | +1    | SIGTRAP     |
//! | SIGTRAP, si_code = SIGTRAP           | a handler was entered (no instruction) | 0     | –           |
//! | SIGTRAP, SI_TKILL from the program   | its `tkill`/`tgkill` returned; the step trap merged into the pending SIGTRAP | +1 | SIGTRAP |
//! | SIGTRAP, other codes                 | a SIGTRAP sent to the program          | 0     | SIGTRAP     |
//! | another signal                       | signal-delivery stop                   | 0     | that signal |
//! | SIGSTOP/TSTP/TTIN/TTOU, no siginfo   | group stop                             | 0     | –           |
//! | `PTRACE_EVENT_{CLONE,FORK,VFORK}`    | a new task: detached (C7)              | 0     | –           |
//! | `PTRACE_EVENT_EXEC`                  | a new image; `execve` counts at its TRAP_BRKPT | 0 | –        |
//! | exited                               | its `exit`/`exit_group` ran            | +1    | –           |
//! | killed by a signal                   | the signal passed on was fatal         | 0     | –           |
//!
//! Invariants:
//! - **T1** Every resume is a `PTRACE_SINGLESTEP`, so between two stops the
//!   program retires at most one instruction (one `rep` iteration).
//! - **T2** A signal is passed on only through the data argument of the
//!   next `PTRACE_SINGLESTEP`, i.e. exactly where the kernel would have
//!   delivered it natively.
//! - **T3** The hot path (a TRAP_TRACE stop) makes three system calls
//!   (`PTRACE_SINGLESTEP`, `waitpid`, `PTRACE_GETSIGINFO`) plus one hash
//!   lookup (H2 in `hide_tf`); it allocates only when the program reaches an
//!   instruction address for the first time (the cache grows).
//! - **T4** `next_ip` is the rip of the instruction the next step runs: the
//!   trap address of a TRAP_TRACE stop, else read with `PTRACE_GETREGS`.
//! - **T5** A step counts at most one instruction, the one at `next_ip` when
//!   it started (T1, T4), so the trace (`--trace`) is exact: one address per
//!   count, the `rep` instruction's address once per iteration, 0 for the
//!   `execve` that replaced the image (its address is not read).
//!
//! Raw `libc` calls are used for stepping and waiting because nix's `Signal`
//! and `WaitStatus` cannot represent real-time signals.

use std::io::Write;

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::unistd::Pid;

use super::code::{CodeCache, Kind, CODE_MAP_SYSCALLS};
use super::hide_tf;
use super::sigtrap::{SigtrapShadow, Verdict};

/// How the program's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// It called `exit`/`exit_group` with this status.
    Exited(u8),
    /// It was killed by this signal (a raw number; real-time signals too).
    Killed(i32),
    /// It retired more instructions than the limit allowed; stepcount
    /// killed it.
    StepLimit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// User-mode instructions retired by the initial thread (C1–C7).
    pub instructions: u64,
    pub end: End,
    /// Threads and processes the program created (run natively, uncounted).
    pub new_tasks: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{what} failed for pid {pid}: {errno}")]
    Ptrace {
        what: &'static str,
        pid: Pid,
        errno: Errno,
    },
    #[error("cannot write the trace: {0}")]
    TraceOutput(#[source] std::io::Error),
}

/// A rip no instruction can have (page 0 cannot be mapped): "not known".
const UNKNOWN_IP: u64 = 0;

/// The si_code of the SIGTRAP stop the kernel reports after it has set up a
/// signal handler for a single-stepped task (`ptrace_notify(SIGTRAP)`).
const SI_CODE_HANDLER_ENTRY: i32 = libc::SIGTRAP;

/// Single-steps `pid` (stopped at its entry point, from
/// [`spawn_traced`](super::spawn::spawn_traced)) until it exits or is
/// killed, or until it retires more than `limit` instructions.
///
/// With `trace`, the address of every instruction counted is written to it
/// as a little-endian `u64`, in order (T5).
pub fn count_instructions(
    pid: Pid,
    limit: u64,
    mut trace: Option<&mut dyn Write>,
) -> Result<Outcome, TraceError> {
    let fail = |what| move |errno| TraceError::Ptrace { what, pid, errno };
    let next_ip = ptrace::getregs(pid).map_err(fail("PTRACE_GETREGS"))?.rip;
    let mut stepper = Stepper {
        pid,
        count: 0,
        new_tasks: 0,
        pass_on: 0,
        next_ip,
        code: CodeCache::default(),
        sigtrap: SigtrapShadow::default(),
    };

    let end = loop {
        let (ip, counted) = (stepper.next_ip, stepper.count);
        let kind = stepper.code.kind_at(pid, ip);
        let delivering = std::mem::take(&mut stepper.pass_on);
        if kind == Kind::Syscall && delivering == 0 {
            let regs = ptrace::getregs(pid).map_err(fail("PTRACE_GETREGS"))?;
            stepper
                .sigtrap
                .before_syscall(pid, &regs)
                .map_err(fail("preparing a syscall"))?;
        }
        match raw_resume(libc::PTRACE_SINGLESTEP, pid, delivering) {
            // ESRCH: killed meanwhile (SIGKILL); waitpid reports it.
            Ok(()) | Err(Errno::ESRCH) => {}
            Err(e) => return Err(fail("PTRACE_SINGLESTEP")(e)),
        }
        let status = raw_wait(pid).map_err(fail("waitpid"))?;
        let stopped = if libc::WIFEXITED(status) {
            stepper.count += 1; // C4: the exit syscall this step ran
            Some(End::Exited(libc::WEXITSTATUS(status) as u8))
        } else if libc::WIFSIGNALED(status) {
            Some(End::Killed(libc::WTERMSIG(status)))
        } else {
            match stepper.on_stop(status, kind, delivering) {
                Ok(None) => None,
                Ok(Some(end)) => {
                    kill_and_reap(pid);
                    Some(end)
                }
                // ESRCH: the program was killed meanwhile; waitpid reports it.
                Err(Errno::ESRCH) => None,
                Err(e) => return Err(fail("reading or fixing the program's state")(e)),
            }
        };
        if let Some(out) = trace.as_deref_mut() {
            if stepper.count > counted {
                out.write_all(&ip.to_le_bytes())
                    .map_err(TraceError::TraceOutput)?;
            }
        }
        if let Some(end) = stopped {
            break end;
        }
        if stepper.count > limit {
            kill_and_reap(pid);
            break End::StepLimit;
        }
    };
    let end = if stepper.count > limit {
        End::StepLimit
    } else {
        end
    };
    Ok(Outcome {
        instructions: stepper.count,
        end,
        new_tasks: stepper.new_tasks,
    })
}

/// The loop's state between stops.
struct Stepper {
    pid: Pid,
    count: u64,
    new_tasks: u32,
    /// The signal to deliver as the next step starts (0: none) (T2).
    pass_on: i32,
    /// T4.
    next_ip: u64,
    code: CodeCache,
    sigtrap: SigtrapShadow,
}

impl Stepper {
    /// Handles a stop (not an exit) of a step that started at an
    /// instruction of `kind` and delivered signal `delivering` (0: none).
    /// Returns how the run ends if stepcount must end it here.
    fn on_stop(&mut self, status: i32, kind: Kind, delivering: i32) -> Result<Option<End>, Errno> {
        let signal = libc::WSTOPSIG(status);
        let event = status >> 16;
        if signal == libc::SIGTRAP && event == 0 {
            self.on_sigtrap(kind, delivering)
        } else if event != 0 {
            self.on_event(event);
            Ok(None)
        } else {
            // A signal-delivery stop, before the instruction at next_ip.
            self.sigtrap.cancel_syscall(self.pid)?;
            self.pass_on = if is_group_stop(self.pid, signal) {
                0
            } else {
                signal
            };
            Ok(None)
        }
    }

    fn on_sigtrap(&mut self, kind: Kind, delivering: i32) -> Result<Option<End>, Errno> {
        let pid = self.pid;
        let info = ptrace::getsiginfo(pid)?;
        match info.si_code {
            libc::TRAP_TRACE => {
                // The hot path (T3).
                self.count += 1;
                let ip = trap_addr(&info);
                match kind {
                    Kind::Pushf { len } if ip == self.next_ip.wrapping_add(u64::from(len)) => {
                        hide_tf::after_pushf(pid)?;
                    }
                    // Not a syscall's return after all (a stale next_ip).
                    Kind::Syscall => self.sigtrap.cancel_syscall(pid)?,
                    _ => {}
                }
                self.next_ip = ip;
                return Ok(None);
            }
            libc::TRAP_BRKPT if kind == Kind::Int1 => {
                // int1, a forced SIGTRAP. Kernels 6.x report it as natively:
                // retired, rip past it; older ones at the instruction, not
                // advanced (then it does not count).
                let ip = trap_addr(&info);
                if ip != self.next_ip {
                    self.count += 1;
                    self.next_ip = ip;
                }
                return self.forced_sigtrap();
            }
            libc::TRAP_BRKPT => {
                self.count += 1; // a syscall returned (C4)
                let mut regs = ptrace::getregs(pid)?;
                hide_tf::after_syscall(pid, &mut regs)?;
                if self.sigtrap.after_syscall(pid, &regs)? {
                    self.pass_on = libc::SIGTRAP; // held while blocked (G3)
                }
                if CODE_MAP_SYSCALLS.contains(&regs.orig_rax) {
                    self.code.forget();
                }
                self.next_ip = regs.rip;
                return Ok(None);
            }
            _ => {}
        }
        self.sigtrap.cancel_syscall(pid)?;
        let regs = ptrace::getregs(pid)?;
        self.next_ip = regs.rip;
        match info.si_code {
            SI_CODE_HANDLER_ENTRY => {
                self.sigtrap.at_handler_entry(pid, &regs, delivering)?;
                Ok(None)
            }
            libc::SI_KERNEL => {
                self.count += 1; // int3 retired (C5)
                self.forced_sigtrap()
            }
            code => {
                // A SIGTRAP sent to the program. If it sent it to its own
                // thread (raise, tgkill), that syscall just returned and its
                // step trap merged into this pending SIGTRAP.
                // SAFETY: si_pid is valid for the kill-family codes.
                if code == libc::SI_TKILL && unsafe { info.si_pid() } == pid.as_raw() {
                    self.count += 1;
                }
                if self.sigtrap.on_sent_sigtrap(&info) == Verdict::Deliver {
                    self.pass_on = libc::SIGTRAP;
                }
                Ok(None)
            }
        }
    }

    fn forced_sigtrap(&mut self) -> Result<Option<End>, Errno> {
        match self.sigtrap.on_forced_sigtrap() {
            Verdict::KillAsSigtrap => Ok(Some(End::Killed(libc::SIGTRAP))),
            _ => {
                self.pass_on = libc::SIGTRAP;
                Ok(None)
            }
        }
    }

    fn on_event(&mut self, event: i32) {
        match event {
            libc::PTRACE_EVENT_CLONE | libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK => {
                self.new_tasks += 1;
                if let Ok(task) = ptrace::getevent(self.pid) {
                    release_new_task(Pid::from_raw(task as i32));
                }
            }
            libc::PTRACE_EVENT_EXEC => {
                // The `execve` counts at the TRAP_BRKPT of its return, which
                // also reads the new rip.
                self.code.forget();
                self.sigtrap.on_exec();
                self.next_ip = UNKNOWN_IP;
            }
            _ => {}
        }
    }
}

/// The address a SIGTRAP from a trap reports: the rip after the step.
fn trap_addr(info: &libc::siginfo_t) -> u64 {
    // SAFETY: for SIGTRAP with a TRAP_* code the kernel fills the sigfault
    // member of the union (send_sigtrap: si_addr = user rip).
    unsafe { info.si_addr() as u64 }
}

/// A stop signal's stop is either its delivery (pass it on) or the group
/// stop that follows it (has no siginfo; do not pass it on again).
fn is_group_stop(pid: Pid, signal: i32) -> bool {
    matches!(
        signal,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    ) && ptrace::getsiginfo(pid) == Err(Errno::EINVAL)
}

/// Lets a thread or process the program created run natively: waits for the
/// stop it starts in (it was traced automatically) and detaches it (C7).
fn release_new_task(task: Pid) {
    if let Ok(status) = raw_wait(task) {
        if libc::WIFSTOPPED(status) {
            let _ = ptrace::detach(task, None);
        }
    }
}

fn kill_and_reap(pid: Pid) {
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    while let Ok(status) = raw_wait(pid) {
        if !libc::WIFSTOPPED(status) {
            break;
        }
    }
}

/// `ptrace(request, pid, 0, signal)` for the resuming requests
/// (`PTRACE_SINGLESTEP`, `PTRACE_CONT`); `signal` 0 delivers none.
pub fn raw_resume(request: libc::c_uint, pid: Pid, signal: i32) -> Result<(), Errno> {
    // SAFETY: the resuming requests ignore addr and read data as a signal
    // number; no memory of ours is involved.
    let r = unsafe {
        libc::ptrace(
            request,
            pid.as_raw(),
            std::ptr::null_mut::<libc::c_void>(),
            signal as libc::c_long as *mut libc::c_void,
        )
    };
    Errno::result(r).map(drop)
}

/// `waitpid(pid, __WALL)`, retried on EINTR; returns the raw status.
pub fn raw_wait(pid: Pid) -> Result<i32, Errno> {
    loop {
        let mut status = 0;
        // SAFETY: `status` is a live local the call writes once.
        let r = unsafe { libc::waitpid(pid.as_raw(), &mut status, libc::__WALL) };
        match Errno::result(r) {
            Ok(_) => return Ok(status),
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
}
