//! Counting the native run's instructions with the CPU's hardware counter
//! (`perf_event_open`, `instructions:u`) where the kernel offers one; the
//! fallback is single-stepping (`stepcount`), which this project's VMs need
//! (docs/FACTS.md: no hardware counters).
//!
//! I1: the counter counts user-mode instructions of the program's initial
//!     task only (`inherit` off), from its first instruction after `execve`
//!     (the child stops at the exec, the counter is attached and enabled,
//!     then the child is detached and runs untraced) to its end.
//! I2: a `rep` string instruction retires once on the counter however many
//!     iterations it runs, so the count to compare with is hotlift's
//!     `guest_instructions - rep_extra_iterations` (compare/mod.rs).
//!     Counters may also be off by a few (interrupt skid, errata): the
//!     check's tolerance applies.

use nix::sys::ptrace;
use perf_event::events::Hardware;
use perf_event::Builder;

use super::spawn::{self, RunResult, Setup};
use super::CompareError;

fn builder() -> Builder<'static> {
    let mut b = Builder::new(Hardware::INSTRUCTIONS);
    b.exclude_kernel(true).exclude_hv(true).inherit(false);
    b
}

/// Why hardware counting is not possible here, or `None` when it is.
pub fn unavailable() -> Option<String> {
    match builder().observe_self().build() {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

/// Run `argv` under `setup` and count its user-mode instructions (I1).
pub fn run(setup: &Setup, argv: &[std::ffi::OsString]) -> Result<(u64, RunResult), CompareError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        CompareError::Setup(format!("hardware instruction counter: {what}: {e}"))
    };
    let started = spawn::start(setup, argv, "hwcount", true)?;
    let pid = started.pid;
    let (status, ru) = spawn::wait_traced(pid).map_err(|e| fail("wait", &e))?;
    if !libc::WIFSTOPPED(status) {
        return Err(fail(
            "the program did not reach its first instruction",
            &spawn::finish(started, status, &ru)?.status,
        ));
    }
    let mut counter = builder()
        .observe_pid(pid.as_raw())
        .any_cpu()
        .build()
        .map_err(|e| fail("perf_event_open", &e))?;
    counter.enable().map_err(|e| fail("enable", &e))?;
    ptrace::detach(pid, None).map_err(|e| fail("PTRACE_DETACH", &e))?;
    let run = spawn::wait(started)?;
    let n = counter.read().map_err(|e| fail("read", &e))?;
    Ok((n, run))
}
