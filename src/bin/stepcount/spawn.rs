//! Starting the program under ptrace, stopped at its first instruction.
//!
//! [`spawn_traced`] forks; the child asks to be traced (`PTRACE_TRACEME`),
//! stops itself with SIGSTOP so the parent can set the trace options before
//! anything else happens, and `execvp`s the program. The parent steps the
//! child out of the `PTRACE_EVENT_EXEC` stop to the end of `execve` and
//! returns it stopped there: rip at the new image's entry point, no
//! instruction of it executed (convention C1).
//!
//! Invariants:
//! - **S1** The child changes nothing the program could observe, except
//!   SIGPIPE, which it resets to SIG_DFL: the Rust runtime set it to SIG_IGN
//!   in stepcount, and a plain native run from a shell has it at SIG_DFL
//!   (`std::process::Command` makes the same reset).
//! - **S2** Between `fork` and `execvp` the child runs only async-signal-safe
//!   code on memory prepared before the fork (no allocation, no locks), so
//!   spawning from a multi-threaded process (the test harness) is sound.
//! - **S3** A failed `execvp` is reported through a close-on-exec pipe as the
//!   errno, so the parent can tell "not found" from "not executable".
//! - **S4** The trace options include `PTRACE_O_EXITKILL`: if stepcount dies,
//!   the program dies with it.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::ptrace;
use nix::unistd::{ForkResult, Pid};

use super::trace::{raw_resume, raw_wait};

/// Why the program could not be started under the tracer.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("{program}: command not found")]
    NotFound { program: String },
    #[error("{program}: cannot execute: {errno}")]
    NotExecutable { program: String, errno: Errno },
    #[error("{program}: argument contains a NUL byte")]
    NulInArgument { program: String },
    #[error("cannot start {program}: {what}: {errno}")]
    Os {
        program: String,
        what: &'static str,
        errno: Errno,
    },
    #[error("{program} ended before its first instruction ({how})")]
    EndedBeforeExec { program: String, how: String },
}

/// Where the child failed, written with the errno into the report pipe.
const STAGE_TRACEME: i32 = 1;
const STAGE_EXEC: i32 = 2;

/// The trace options: see the trace module for why each event is wanted.
fn trace_options() -> ptrace::Options {
    use ptrace::Options as O;
    O::PTRACE_O_EXITKILL
        | O::PTRACE_O_TRACEEXEC
        | O::PTRACE_O_TRACECLONE
        | O::PTRACE_O_TRACEFORK
        | O::PTRACE_O_TRACEVFORK
}

/// Forks and execs `command` (`command[0]` searched in PATH) under ptrace.
/// Returns the pid of the child, stopped in its exec event stop.
pub fn spawn_traced(command: &[OsString]) -> Result<Pid, SpawnError> {
    let program = command[0].to_string_lossy().into_owned();
    let os = |what: &'static str| {
        let program = program.clone();
        move |errno| SpawnError::Os {
            program,
            what,
            errno,
        }
    };

    // Everything the child touches is built here, before the fork (S2).
    let args: Vec<CString> = command
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(|_| SpawnError::NulInArgument {
            program: program.clone(),
        })?;
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let (report_read, report_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(os("pipe2"))?;

    // SAFETY: the child only calls `exec_child`, which is async-signal-safe
    // and never returns (S2).
    let pid = match unsafe { nix::unistd::fork() }.map_err(os("fork"))? {
        ForkResult::Child => exec_child(&argv, report_write.as_raw_fd()),
        ForkResult::Parent { child } => child,
    };
    drop(report_write);

    // Wait for the exec event. Until then the child only runs our own
    // pre-exec code; signals that arrive meanwhile are passed on.
    let mut options_set = false;
    let mut own_stop_seen = false;
    let ended = loop {
        let status = raw_wait(pid).map_err(os("waitpid"))?;
        if libc::WIFSTOPPED(status) {
            if !options_set {
                ptrace::setoptions(pid, trace_options()).map_err(os("PTRACE_SETOPTIONS"))?;
                options_set = true;
            }
            let signal = libc::WSTOPSIG(status);
            if signal == libc::SIGTRAP && status >> 16 == libc::PTRACE_EVENT_EXEC {
                return finish_execve(pid).map_err(os("PTRACE_SINGLESTEP"));
            }
            let pass_on = if signal == libc::SIGSTOP && !own_stop_seen {
                own_stop_seen = true;
                0
            } else {
                signal
            };
            match raw_resume(libc::PTRACE_CONT, pid, pass_on) {
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => return Err(os("PTRACE_CONT")(e)),
            }
        } else {
            break status;
        }
    };

    // The child ended before the exec event: read why (S3).
    let mut buf = [0u8; 8];
    let n = read_fully(&report_read, &mut buf).map_err(os("read"))?;
    if n == buf.len() {
        let stage = i32::from_ne_bytes(buf[..4].try_into().expect("4 bytes"));
        let errno = Errno::from_raw(i32::from_ne_bytes(buf[4..].try_into().expect("4 bytes")));
        return Err(match (stage, errno) {
            (STAGE_EXEC, Errno::ENOENT) => SpawnError::NotFound { program },
            (STAGE_EXEC, errno) => SpawnError::NotExecutable { program, errno },
            (_, errno) => SpawnError::Os {
                program,
                what: "PTRACE_TRACEME",
                errno,
            },
        });
    }
    let how = if libc::WIFEXITED(ended) {
        format!("exit status {}", libc::WEXITSTATUS(ended))
    } else {
        format!("signal {}", libc::WTERMSIG(ended))
    };
    Err(SpawnError::EndedBeforeExec { program, how })
}

/// Steps the child out of its exec event stop. The step runs no user
/// instruction: the kernel reports it when `execve` returns (a TRAP_BRKPT
/// stop at the entry point), which is the stop we want to hand over. Without
/// this step the trace loop would take that report for a retired `execve`
/// (convention C4), which is right for an `execve` the program makes itself
/// but not for ours.
fn finish_execve(pid: Pid) -> Result<Pid, Errno> {
    raw_resume(libc::PTRACE_SINGLESTEP, pid, 0)?;
    let status = raw_wait(pid)?;
    // SIGTRAP is synchronous, so the kernel reports it before any other
    // pending signal; anything else means the child died meanwhile.
    if libc::WIFSTOPPED(status) && libc::WSTOPSIG(status) == libc::SIGTRAP {
        Ok(pid)
    } else {
        Err(Errno::ESRCH)
    }
}

/// Reads until `buf` is full or end of file; returns the bytes read.
fn read_fully(fd: &std::os::fd::OwnedFd, buf: &mut [u8]) -> Result<usize, Errno> {
    let mut n = 0;
    while n < buf.len() {
        match nix::unistd::read(fd, &mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The child side of the fork. Never returns.
fn exec_child(argv: &[*const libc::c_char], report: RawFd) -> ! {
    // SAFETY: async-signal-safe calls only (S2). `argv` is a null-terminated
    // array of pointers to C strings that the parent built before the fork
    // and that the child's copy of the address space still holds; `msg` is a
    // local. `_exit` skips atexit handlers and Rust destructors, which belong
    // to the parent.
    unsafe {
        let fail = |stage: i32| -> ! {
            let errno = *libc::__errno_location();
            let mut msg = [0u8; 8];
            msg[..4].copy_from_slice(&stage.to_ne_bytes());
            msg[4..].copy_from_slice(&errno.to_ne_bytes());
            libc::write(report, msg.as_ptr().cast(), msg.len());
            libc::_exit(127)
        };
        let null = std::ptr::null_mut::<libc::c_void>();
        if libc::ptrace(libc::PTRACE_TRACEME, 0, null, null) == -1 {
            fail(STAGE_TRACEME);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_DFL); // S1
        libc::raise(libc::SIGSTOP); // the parent sets the options here
        libc::execvp(argv[0], argv.as_ptr());
        fail(STAGE_EXEC)
    }
}
