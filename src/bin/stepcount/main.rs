//! `stepcount`: the oracle for hotlift's executed-instruction count.
//!
//! Runs a program natively under `ptrace`, single-stepping its initial thread
//! from the first user instruction after `execve` until it exits or is killed,
//! and reports how many user-mode instructions it retired. hotlift's own count
//! for the same program must equal this number.
//!
//! ```text
//! stepcount [--output FILE] [--max-steps N] [--trace FILE] -- PROGRAM [ARGS...]
//! ```
//!
//! The program inherits stdin, stdout, stderr, the environment, the working
//! directory and the signal mask unchanged, so its output is byte for byte
//! that of a plain native run. stepcount writes nothing to stdout. With
//! `--output FILE` the count goes to FILE as decimal digits and a newline;
//! otherwise `stepcount: N instructions` goes to stderr. stepcount then exits
//! with the program's exit status, or dies of the signal that killed it (core
//! dumps of stepcount itself are suppressed). `--max-steps N` allows the
//! program at most N instructions: if it retires an (N+1)th, stepcount kills
//! it, says so and exits 125 without writing a count. `--trace FILE` writes
//! the address of every instruction counted to FILE, in order, each as a
//! little-endian `u64` (a `rep` instruction once per iteration; 0 for an
//! `execve` that replaced the image): to find where two runs part ways.
//! Exit 125: bad usage or a tracing failure; 127: PROGRAM not found; 126:
//! PROGRAM found but not executable.
//!
//! # The counting convention
//!
//! The count is the number of user-mode instructions the program retired,
//! each iteration of a `rep`-prefixed string instruction counted once. Each
//! rule below is pinned by tests in `stepcount/tests/mod.rs` (the SIGTRAP ones in
//! `stepcount/tests/traps.rs`), named after it.
//!
//! - **C1 Start.** Counting starts with the instruction at the entry point of
//!   the new image (the ELF entry, or `ld.so`'s entry for a dynamically linked
//!   program), and that instruction counts. Nothing before the `execve`
//!   counts. Tests: `straight_line_counts_every_instruction_including_exit`.
//! - **C2 Ordinary instructions** count 1 each, taken branches and
//!   not-taken ones alike. Tests: `loop_counts_every_iteration`.
//! - **C3 `rep` string instructions** count once per iteration executed: `rep
//!   movsb` with rcx = 100 counts 100; `repe cmpsb` that stops at the 4th
//!   byte counts 4; with rcx = 0 the instruction runs no iteration but still
//!   completes, and counts 1. Tests: `rep_movsb_counts_each_iteration`,
//!   `rep_with_rcx_zero_counts_one`, `repe_cmpsb_counts_iterations_run`.
//! - **C4 `syscall`** counts 1, including the final `exit`/`exit_group`,
//!   whose step never returns (counted when the exit is reported),
//!   `rt_sigreturn`, and `execve` (the new image is then counted from its
//!   entry, C1). A syscall the kernel restarts (rip rewound by 2) runs, and
//!   counts, again. Tests: `exec_counts_the_execve_and_the_new_image`.
//! - **C5 Faults do not count; traps do.** An instruction that raises a fault
//!   (`ud2`, `hlt` in user mode, a #GP, a fatal #PF, #DE) does not retire:
//!   `k` instructions followed by `ud2` count `k`, however the signal is
//!   handled. `int3` retires (the signal's rip is past it) and counts 1.
//!   A page fault the kernel resolves is invisible: the instruction counts 1
//!   when it completes. Tests: `ud2_does_not_count`, `int3_counts`.
//! - **C6 Signals.** Delivering a signal counts nothing; every instruction of
//!   a handler counts, and so does the restorer's `rt_sigreturn` (C4).
//!   Signals the program receives are passed on exactly where the kernel
//!   would deliver them natively, so it dies of the signal it would die of
//!   natively. A SIGTRAP a program sends itself with `tkill`/`tgkill`/`raise`
//!   merges with that syscall's step trap; the syscall still counts 1.
//!   Tests: `signal_handler_instructions_count`,
//!   `self_signal_kills_with_that_signal`,
//!   `self_sigtrap_with_handler_counts_the_handler`,
//!   `asynchronous_signal_is_passed_on`.
//! - **C7 One thread.** Only the initial thread is counted. If the program
//!   creates a thread or process (clone, clone3, fork, vfork), the new task
//!   is detached and runs natively, uncounted, and stepcount prints an error:
//!   the count is then not the program's total.
//!   Tests: `fork_is_reported_and_only_the_parent_counted`.
//!
//! The count depends on everything the program can see: argv, the
//! environment, the working directory, what stdout is (glibc sizes its
//! buffer from it), its CPU affinity, and, for code whose work depends on
//! addresses (string functions on the stack), ASLR. Compare runs made under
//! identical conditions; `setarch -R stepcount ...` makes the layout
//! repeatable. Code that reads the time can take a different path when
//! single-stepped (it runs ~1,000 times slower): the vDSO's
//! `clock_gettime` retries its sequence lock in about a quarter of the
//! calls. `tests/exact.rs` lists the conditions it uses.
//!
//! # What single-stepping would change, and how stepcount hides it
//!
//! - RFLAGS.TF is set while stepping; `pushf` and the r11 that `syscall`
//!   writes would show it. stepcount clears it in both (`hide_tf.rs`).
//!   Tests: `trap_flag_is_hidden_from_pushf_syscall_r11_and_signal_frames`,
//!   `popf_that_clears_tf_still_counts_every_instruction`.
//! - Each step trap is a SIGTRAP the kernel forces on the program, which
//!   resets an ignored or blocked SIGTRAP to SIG_DFL and unblocks it.
//!   stepcount never lets the kernel's copy of SIGTRAP be blocked, and keeps
//!   the program's own view of SIGTRAP (disposition, mask bit, pending),
//!   writing it into everything the kernel reports back (`sigtrap.rs`).
//!   Tests: `sigtrap_handler_survives_repeated_traps`,
//!   `blocked_sigtrap_stays_pending_until_unblocked`,
//!   `int3_while_sigtrap_is_blocked_kills`,
//!   `ignored_sigtrap_is_ignored_and_reads_back_as_ignored`,
//!   `blocked_sigtrap_reads_back_as_blocked`, `signal_frame_shows_sigtrap_blocked`.
//! - The child resets SIGPIPE to SIG_DFL before `execvp` (the Rust runtime
//!   ignores it in stepcount). Test: `sigpipe_is_default_in_the_program`.
//!
//! Left as they are (properties of single-stepping; no guest test depends
//! on them): `mov ss`/`pop ss` suppress the trap after the next instruction
//! (two instructions, one count: checked). `int1` (icebp) is reported
//! without advancing rip: it counts 0 and is passed on as SIGTRAP (test
//! `int1_is_passed_on_as_sigtrap`). A default-ignored signal (SIGCHLD,
//! SIGWINCH, SIGURG) that arrives during a blocking syscall interrupts it
//! under ptrace, and the restarted `syscall` counts again (C4). Stop signals
//! do not stop the program (test `stop_signal_does_not_stop_the_program`).
//! A call into the legacy `[vsyscall]` page faults and is emulated by the
//! kernel, as natively: the emulated code counts 0 (checked), the `call` 1.
//! A program that sets TF itself is not supported.
//!
//! # Speed
//!
//! Per instruction: one `PTRACE_SINGLESTEP`, one `waitpid`, one
//! `PTRACE_GETSIGINFO` (its si_code tells a step trap from an `int3` or a
//! sent SIGTRAP, its si_addr gives the next rip for free) and one hash
//! lookup of that rip; `PTRACE_GETREGS` and the fix-ups run only at
//! syscalls, signals and `pushf`. Nothing is allocated per step except when
//! a new instruction address enters the kind cache. On the 2-vCPU CI
//! machine a step costs about 19 us when stepcount and the program run on
//! the same CPU (`taskset -c 0 stepcount ...`; the program then sees that
//! affinity) and about 58 us when the scheduler puts them on different
//! CPUs, which it does unless told (a quiet machine: 50,000 against
//! 17,000 instructions per second; when the machine is busy, load 7–8,
//! both come to 30–35 us). Nearly all of it is kernel time (the trap, two
//! context switches, three system calls); the loop is as fast as a bare
//! step-and-wait loop in C, within the noise.

mod code;
mod hide_tf;
mod sigtrap;
mod spawn;
mod trace;

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use spawn::SpawnError;
use trace::End;

/// Exit status for bad usage, a tracing failure or `--max-steps` (as `env`
/// and `timeout` use 125 for their own failures).
const EXIT_TOOL_FAILURE: u8 = 125;

const USAGE: &str = "stepcount [--output FILE] [--max-steps N] [--trace FILE] -- PROGRAM [ARGS...]";

/// Count the user-mode instructions a program retires natively (ptrace
/// single-step), the oracle for hotlift's instruction count.
#[derive(Parser, Debug)]
#[command(name = "stepcount", override_usage = USAGE)]
struct Args {
    /// Write the count (decimal, then a newline) to FILE instead of printing
    /// "stepcount: N instructions" to stderr.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Kill the program and exit 125 if it retires more than N instructions.
    #[arg(long, value_name = "N")]
    max_steps: Option<u64>,

    /// Write the address of every instruction counted to FILE (little-endian
    /// u64 each, in order).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,

    /// The program (searched in PATH) and its arguments.
    #[arg(
        value_name = "PROGRAM [ARGS...]",
        required = true,
        num_args = 1..,
        trailing_var_arg = true
    )]
    command: Vec<OsString>,
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) if !e.use_stderr() => e.exit(), // --help: print it, exit 0
        Err(e) => {
            // clap's message without its usage and help footer, on one line.
            let rendered = e.to_string();
            let message: Vec<&str> = rendered
                .lines()
                .take_while(|line| !line.trim().is_empty())
                .map(str::trim)
                .collect();
            let message = message.join(" ");
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            eprintln!("stepcount: {message}; usage: {USAGE}");
            return ExitCode::from(EXIT_TOOL_FAILURE);
        }
    };
    run(&args)
}

fn run(args: &Args) -> ExitCode {
    let program = args.command[0].to_string_lossy().into_owned();
    let limit = args.max_steps.unwrap_or(u64::MAX);
    let mut trace = match &args.trace {
        None => None,
        Some(path) => match std::fs::File::create(path) {
            Ok(file) => Some(std::io::BufWriter::with_capacity(1 << 20, file)),
            Err(e) => {
                eprintln!("stepcount: cannot create the trace {}: {e}", path.display());
                return ExitCode::from(EXIT_TOOL_FAILURE);
            }
        },
    };

    let child = match spawn::spawn_traced(&args.command) {
        Ok(child) => child,
        Err(e) => {
            eprintln!("stepcount: {e}");
            return ExitCode::from(match e {
                SpawnError::NotFound { .. } => 127,
                SpawnError::NotExecutable { .. } => 126,
                _ => EXIT_TOOL_FAILURE,
            });
        }
    };
    // Like a shell waiting for a foreground job: a terminal's ^C or ^\ reaches
    // the program (which is in the same process group), and stepcount then
    // mirrors however the program reacts. Set after the fork so the program
    // does not inherit SIG_IGN.
    ignore_terminal_signals();

    let sink = trace.as_mut().map(|w| w as &mut dyn std::io::Write);
    let outcome = match trace::count_instructions(child, limit, sink) {
        Ok(outcome) => outcome,
        Err(e) => {
            eprintln!("stepcount: {e}");
            return ExitCode::from(EXIT_TOOL_FAILURE);
        }
    };
    if let Some(Err(e)) = trace.map(|mut w| std::io::Write::flush(&mut w)) {
        eprintln!("stepcount: cannot write the trace: {e}");
        return ExitCode::from(EXIT_TOOL_FAILURE);
    }
    if outcome.new_tasks > 0 {
        eprintln!(
            "stepcount: error: {program} created {} thread(s) or process(es); \
             they ran uncounted, so {} counts only its initial thread",
            outcome.new_tasks, outcome.instructions
        );
    }
    if let End::StepLimit = outcome.end {
        eprintln!("stepcount: {program} exceeded --max-steps {limit}; killed it");
        return ExitCode::from(EXIT_TOOL_FAILURE);
    }
    if let Err(e) = report_count(args.output.as_deref(), outcome.instructions) {
        eprintln!("stepcount: {e}");
        return ExitCode::from(EXIT_TOOL_FAILURE);
    }
    match outcome.end {
        End::Exited(status) => ExitCode::from(status),
        End::Killed(signal) => die_of(signal),
        End::StepLimit => unreachable!("handled above"),
    }
}

fn report_count(output: Option<&std::path::Path>, count: u64) -> Result<(), String> {
    match output {
        Some(path) => std::fs::write(path, format!("{count}\n"))
            .map_err(|e| format!("cannot write the count to {}: {e}", path.display())),
        None => {
            eprintln!("stepcount: {count} instructions");
            Ok(())
        }
    }
}

fn ignore_terminal_signals() {
    for signal in [libc::SIGINT, libc::SIGQUIT] {
        // SAFETY: SIG_IGN installs no handler code; only this process (the
        // tracer, already forked) is affected.
        unsafe { libc::signal(signal, libc::SIG_IGN) };
    }
}

/// Dies of `signal`, as the program did, so our parent sees the same wait
/// status (bar the core-dump bit). Raw numbers: real-time signals included.
fn die_of(signal: i32) -> ExitCode {
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: setrlimit reads the struct; signal() installs SIG_DFL (no
    // handler code); the sigset is a local initialised by sigemptyset before
    // use; raise() then ends the process or returns.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
    // Only reached for a signal whose default action does not kill.
    ExitCode::from((128 + signal).clamp(0, 255) as u8)
}
