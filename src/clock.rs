//! When this hotlift process began (its `main`), for the profile's
//! start-up figures, and a cheap tick count for timing many short pieces
//! of work (each translation). A leaf: nothing here imports the rest of
//! the crate.
#![allow(unsafe_code)]

use std::sync::OnceLock;
use std::time::Instant;

/// The clock and the time stamp counter at [`mark_born`].
static BORN: OnceLock<(Instant, u64)> = OnceLock::new();

/// Mark the start of `main` (later calls change nothing).
pub fn mark_born() {
    BORN.get_or_init(|| (Instant::now(), ticks()));
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
