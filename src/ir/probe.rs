//! What the probes of a path-profiled function do (design S3): the step
//! on each edge of its graph and at each exit, as src/paths plans them
//! (paths/plan/mod.rs, where the arithmetic and its invariants are) and the
//! backend emits them (paths/emit). The records they push are
//! `contract::TAG_PATH` records; each thread's activation stack holds
//! `contract::PATH_FRAMES` frames.

/// A check of the running pair before going on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// No check.
    None,
    /// T1: `(tot, seg)` must be one of these.
    Pairs(Vec<(u64, u64)>),
    /// T2: the completed segment id must be one of these.
    Segment(Vec<u64>),
}

/// What the probe on a graph edge u → v does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `seg += add`, then the check.
    Go { add: u64, check: Check },
    /// A cut edge: `check` the segment `seg + add`, fold it into `tot`,
    /// `seg = reset`, then `after` (T1 on the new pair).
    Fold {
        add: u64,
        reset: u64,
        check: Check,
        after: Check,
    },
    /// Not of interest: stop profiling this activation.
    Terminate,
}

/// What the probe on an exit of node u does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExitStep {
    /// Record `(tot, seg + add)` if `check` passes (else terminated).
    End {
        add: u64,
        check: Check,
    },
    Terminate,
}
