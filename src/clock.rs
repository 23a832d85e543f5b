//! When this hotlift process began (its `main`), for the profile's
//! start-up figures, a cheap tick count for timing many short pieces of
//! work (each translation), and the CPU clocks of a thread and of the
//! process. A leaf: nothing here imports the rest of the crate.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The clock and the time stamp counter at [`mark_born`].
static BORN: OnceLock<(Instant, u64)> = OnceLock::new();

/// CPU time of the thread that ran `main` when `main` began, in ns.
static CPU_BEFORE_MAIN: AtomicU64 = AtomicU64::new(0);

/// Points a process's start-up passes on the way to the guest's first
/// instruction, in order (the profile's `times.startup`).
#[derive(Debug, Clone, Copy)]
pub enum Phase {
    /// The options read, the program and its interpreter loaded.
    Loaded,
    /// Code memory, its stubs and index made.
    CodeCache,
    /// Profiling set up and the monitor thread started.
    Monitor,
    /// The first guest thread's context, ring and lookup table made.
    FirstThread,
}

/// Nanoseconds from `main` to each [`Phase`] (0: not reached).
static PHASES: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

/// Mark the start of `main` (later calls change nothing).
pub fn mark_born() {
    BORN.get_or_init(|| {
        if let Some(ns) = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID) {
            CPU_BEFORE_MAIN.store(ns, Ordering::Relaxed);
        }
        (Instant::now(), ticks())
    });
}

/// Clock `clock` (`CLOCK_THREAD_CPUTIME_ID`, `CLOCK_MONOTONIC`, …) in ns,
/// if the kernel reads it.
fn clock_ns(clock: libc::clockid_t) -> Option<u64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the clock into `t`.
    (unsafe { libc::clock_gettime(clock, &mut t) } == 0)
        .then(|| t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64)
}

/// `CLOCK_MONOTONIC` in ns (the vDSO's: about 40 ns on a VM; see
/// [`ticks`] for a cheaper counter).
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC).unwrap_or(0)
}

/// Seconds of CPU the calling thread has used.
pub fn thread_cpu_seconds() -> f64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0) as f64 * 1e-9
}

/// Seconds of CPU the whole process has used.
pub fn process_cpu_seconds() -> f64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID).unwrap_or(0) as f64 * 1e-9
}

/// Seconds of CPU the process's first thread had used when `main` began:
/// the `execve`, the dynamic loader, the runtime's start (and, for a
/// process made by `fork` and `execve`, its time before the `execve`).
pub fn cpu_before_main() -> f64 {
    CPU_BEFORE_MAIN.load(Ordering::Relaxed) as f64 * 1e-9
}

/// The start-up reached `p` (the first time counts).
pub fn phase(p: Phase) {
    let ns = BORN
        .get()
        .map_or(0, |b| b.0.elapsed().as_nanos().max(1) as u64);
    let _ = PHASES[p as usize].compare_exchange(0, ns, Ordering::Relaxed, Ordering::Relaxed);
}

/// Seconds from `main` to each [`Phase`], in order (0: not reached).
pub fn phases() -> [f64; 4] {
    std::array::from_fn(|i| PHASES[i].load(Ordering::Relaxed) as f64 * 1e-9)
}

/// Seconds since [`mark_born`] (0 if it was never called).
pub fn since_born() -> f64 {
    BORN.get().map_or(0.0, |b| b.0.elapsed().as_secs_f64())
}

/// The time stamp counter: a few nanoseconds to read, where the clock
/// (`Instant::now`, the vDSO's `clock_gettime`) took 40 ns on this VM and
/// two reads were 7 % of each translation.
pub fn ticks() -> u64 {
    // SAFETY: rdtsc has no preconditions (every x86-64 CPU has it).
    unsafe { std::arch::x86_64::_rdtsc() }
}

/// Seconds that `n` [`ticks`] took, at the counter's rate measured
/// against the clock since [`mark_born`] (0 before any time passed).
pub fn ticks_seconds(n: u64) -> f64 {
    let Some((born, t0)) = BORN.get() else {
        return 0.0;
    };
    let (secs, dt) = (born.elapsed().as_secs_f64(), ticks().saturating_sub(*t0));
    if dt == 0 {
        return 0.0;
    }
    n as f64 * secs / dt as f64
}

#[cfg(test)]
mod tests {
    /// Ticks over a known sleep come to about its length.
    #[test]
    fn ticks_convert_to_seconds() {
        super::mark_born();
        let t = super::ticks();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let s = super::ticks_seconds(super::ticks() - t);
        assert!((0.025..0.5).contains(&s), "{s} s for a 30 ms sleep");
    }
}
