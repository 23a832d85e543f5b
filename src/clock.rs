//! When this hotlift process began (its `main`), for the profile's
//! start-up figures. A leaf: nothing here imports the rest of the crate.

use std::sync::OnceLock;
use std::time::Instant;

static BORN: OnceLock<Instant> = OnceLock::new();

/// Mark the start of `main` (later calls change nothing).
pub fn mark_born() {
    BORN.get_or_init(Instant::now);
}

/// Seconds since [`mark_born`] (0 if it was never called).
pub fn since_born() -> f64 {
    BORN.get().map_or(0.0, |b| b.elapsed().as_secs_f64())
}
