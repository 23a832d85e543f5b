//! The single-step loop: one `PTRACE_SINGLESTEP` per retired instruction.
//!
//! [`count_instructions`] resumes the stopped program one step at a time and
//! sorts every stop into "an instruction retired" or not, following the
//! counting convention C1–C7 in the binary's top-level docs. How each kind
//! of stop is recognised (checked on kernel 6.18; see the tests):
//!
//! | stop (wait status, si_code)            | meaning                          | count | pass on  |
//! |----------------------------------------|----------------------------------|-------|----------|
//! | SIGTRAP, TRAP_TRACE                    | #DB single-step trap             | +1    | –        |
//! | SIGTRAP, TRAP_BRKPT                    | a `syscall` returned (step report)| +1   | –        |
//! | SIGTRAP, TRAP_BRKPT, rip unchanged, F1 | `int1` (icebp), not advanced     | 0     | SIGTRAP  |
//! | SIGTRAP, SI_KERNEL                     | `int3` retired                   | +1    | SIGTRAP  |
//! | SIGTRAP, si_code = SIGTRAP             | handler entry after a delivery   | 0     | –        |
//! | SIGTRAP, SI_TKILL from itself          | its `tkill`/`tgkill` returned; the step trap merged into the pending SIGTRAP | +1 | SIGTRAP |
//! | SIGTRAP, any other code                | SIGTRAP sent to it               | 0     | SIGTRAP  |
//! | other signal                           | signal-delivery stop             | 0     | that signal |
//! | SIGSTOP/TSTP/TTIN/TTOU, no siginfo     | group stop                       | 0     | –        |
//! | `PTRACE_EVENT_{CLONE,FORK,VFORK}`      | new task: detached (C7)          | 0     | –        |
//! | `PTRACE_EVENT_EXEC`                    | new image; `execve` counts at the next stop | 0 | – |
//! | exited                                 | its `exit`/`exit_group` ran      | +1    | –        |
//! | killed by a signal                     | the signal passed on was fatal   | 0     | –        |
//!
//! Invariants:
//! - **T1** Every resume is a `PTRACE_SINGLESTEP`, so between two stops the
//!   program retires at most one instruction (one `rep` iteration).
//! - **T2** A signal is passed on only through the data argument of the
//!   next `PTRACE_SINGLESTEP`, i.e. exactly where the kernel would have
//!   delivered it natively.
//! - **T3** The hot path (a TRAP_TRACE stop) makes three system calls
//!   (`PTRACE_SINGLESTEP`, `waitpid`, `PTRACE_GETSIGINFO`) and allocates
//!   nothing.
//!
//! Raw `libc` calls are used for stepping and waiting because nix's `Signal`
//! and `WaitStatus` cannot represent real-time signals.

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::unistd::Pid;

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
}

/// A rip no instruction can have (page 0 cannot be mapped): "not known".
const UNKNOWN_IP: u64 = 0;

/// The si_code of the SIGTRAP stop the kernel reports after it has set up a
/// signal handler for a single-stepped task (`ptrace_notify(SIGTRAP)`).
const SI_CODE_HANDLER_ENTRY: i32 = libc::SIGTRAP;

/// The opcode of `int1` (icebp).
const OPCODE_INT1: u8 = 0xf1;

/// Single-steps `pid` (stopped in its exec event, from
/// [`spawn_traced`](super::spawn::spawn_traced)) until it exits or is
/// killed, or until it retires more than `limit` instructions.
pub fn count_instructions(pid: Pid, limit: u64) -> Result<Outcome, TraceError> {
    let fail = |what| move |errno| TraceError::Ptrace { what, pid, errno };
    let mut count: u64 = 0;
    let mut new_tasks = 0;
    // The signal to deliver as the next step starts (0: none) (T2).
    let mut pass_on = 0;
    // The rip at the start of the step now running, when known.
    let mut last_ip = UNKNOWN_IP;

    let end = loop {
        match raw_resume(libc::PTRACE_SINGLESTEP, pid, pass_on) {
            // ESRCH: killed meanwhile (SIGKILL); waitpid reports it.
            Ok(()) | Err(Errno::ESRCH) => {}
            Err(e) => return Err(fail("PTRACE_SINGLESTEP")(e)),
        }
        pass_on = 0;
        let status = raw_wait(pid).map_err(fail("waitpid"))?;

        if libc::WIFEXITED(status) {
            count += 1; // C4: the exit syscall this step ran
            break End::Exited(libc::WEXITSTATUS(status) as u8);
        }
        if libc::WIFSIGNALED(status) {
            break End::Killed(libc::WTERMSIG(status));
        }
        let signal = libc::WSTOPSIG(status);
        let event = status >> 16;

        if signal == libc::SIGTRAP && event == 0 {
            let info = match ptrace::getsiginfo(pid) {
                Ok(info) => info,
                Err(Errno::ESRCH) => continue,
                Err(e) => return Err(fail("PTRACE_GETSIGINFO")(e)),
            };
            match info.si_code {
                libc::TRAP_TRACE => {
                    count += 1;
                    last_ip = fault_addr(&info);
                }
                libc::TRAP_BRKPT => {
                    let ip = fault_addr(&info);
                    if ip == last_ip && opcode_at(pid, ip) == Some(OPCODE_INT1) {
                        pass_on = libc::SIGTRAP;
                        last_ip = UNKNOWN_IP;
                    } else {
                        count += 1;
                        last_ip = ip;
                    }
                }
                libc::SI_KERNEL => {
                    count += 1; // int3 retired (C5)
                    pass_on = libc::SIGTRAP;
                    last_ip = UNKNOWN_IP;
                }
                SI_CODE_HANDLER_ENTRY => last_ip = UNKNOWN_IP,
                code => {
                    // A SIGTRAP sent to the program. If it sent it to its own
                    // thread (raise, tgkill), that syscall just returned and
                    // its step trap merged into this pending SIGTRAP.
                    // SAFETY: si_pid is valid for the kill-family codes.
                    if code == libc::SI_TKILL && unsafe { info.si_pid() } == pid.as_raw() {
                        count += 1;
                    }
                    pass_on = libc::SIGTRAP;
                    last_ip = UNKNOWN_IP;
                }
            }
        } else if event != 0 {
            last_ip = UNKNOWN_IP;
            match event {
                libc::PTRACE_EVENT_CLONE | libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK => {
                    new_tasks += 1;
                    let task = ptrace::getevent(pid).map_err(fail("PTRACE_GETEVENTMSG"))?;
                    release_new_task(Pid::from_raw(task as i32));
                }
                // PTRACE_EVENT_EXEC: the `execve` counts at the next stop.
                _ => {}
            }
        } else {
            last_ip = UNKNOWN_IP;
            pass_on = if is_group_stop(pid, signal) {
                0
            } else {
                signal
            };
        }

        if count > limit {
            kill_and_reap(pid);
            break End::StepLimit;
        }
    };
    let end = if count > limit { End::StepLimit } else { end };
    Ok(Outcome {
        instructions: count,
        end,
        new_tasks,
    })
}

/// The address a SIGTRAP from a trap reports: the rip after the step.
fn fault_addr(info: &libc::siginfo_t) -> u64 {
    // SAFETY: for SIGTRAP with a TRAP_* code the kernel fills the sigfault
    // member of the union (send_sigtrap: si_addr = user rip).
    unsafe { info.si_addr() as u64 }
}

/// The byte at `addr` in the program, if readable.
fn opcode_at(pid: Pid, addr: u64) -> Option<u8> {
    ptrace::read(pid, addr as ptrace::AddressType)
        .ok()
        .map(|word| word as u8)
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
