//! The path forked children take, made by their parent (fork.rs F9).
//!
//! A forked child keeps every translation its parent had (F2), but the
//! code only a child runs (python's `os.fork` returning 0, its
//! `PyOS_AfterFork_Child`, `_exit`; a shell's redirections before
//! `execve`) the parent never ran, so every child made it again: ~90
//! blocks of a python child, placed from the cache directory or lifted
//! and emitted, each through a dispatcher round trip, and the child's
//! first write of code copied a 64 KB chunk of its parent's (cache I8).
//! So a child tells its parent the guest addresses of the blocks it made,
//! and the parent makes them before its next fork: its later children
//! inherit them.
//!
//! FP1: a child reports through memory shared with its parent only (a
//!      `MAP_SHARED` page block the parent mapped before its first fork):
//!      a count, then addresses. A child reports at most [`PER_CHILD`]
//!      blocks (the path after the fork, not whatever a long-lived child
//!      goes on to run), all children together at most [`CAPACITY`]; an
//!      address a slot holds only once written (0 until then: skipped).
//! FP2: what a child reports is only a hint: the parent makes a block for
//!      an address only if its own memory there is executable now and it
//!      has no block for it, as its dispatcher would when its own code
//!      jumped there; the child the next fork makes has the same memory.
//!      A block made so is counted only when it runs (in the parent, if
//!      ever, or in a child), as every block is: profiles are unchanged
//!      but for `totals.translated_blocks` and
//!      `totals.fork_prepared_blocks` of the parent.
//! FP3: a child reports to its parent alone: at the fork it stops
//!      reporting to its grandparent, and its own children report to a
//!      block it maps at its own first fork.
//! FP4: nothing here fails a fork: a block that cannot be made is left
//!      for the child's dispatcher, and without the shared block (no
//!      memory) nothing is reported.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

/// Slots of the shared block (FP1): a count, then addresses (64 KB).
const SLOTS: usize = 8192;
/// FP1: at most this many addresses from all children together.
pub const CAPACITY: usize = SLOTS - 1;
/// FP1: at most this many addresses from one child.
pub const PER_CHILD: u32 = 512;
const BYTES: usize = SLOTS * 8;

/// One shared block: `[count][address; CAPACITY]`, every word atomic.
#[derive(Debug)]
struct Shared(*const AtomicU64);

// SAFETY: the block is atomics in memory that lives as long as the
// `Shared` (unmapped only by its drop); every access is atomic.
unsafe impl Send for Shared {}

impl Shared {
    fn new() -> Option<Shared> {
        let p = crate::anon::map_shared(BYTES).ok()?;
        Some(Shared(p as *const AtomicU64))
    }

    fn slot(&self, i: usize) -> &AtomicU64 {
        debug_assert!(i < SLOTS);
        // SAFETY: i < SLOTS, inside the mapping; zeroed memory is a valid
        // AtomicU64.
        unsafe { &*self.0.add(i) }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made, BYTES long, no reference into it
        // outlives `self`.
        unsafe { libc::munmap(self.0 as *mut libc::c_void, BYTES) };
    }
}

/// This process's two ends (FP1, FP3); in `Locked`.
#[derive(Debug, Default)]
pub struct ForkPaths {
    /// Where this process's children report (mapped at its first fork).
    own: Option<Shared>,
    /// How many of `own`'s slots this process has made blocks for.
    taken: usize,
    /// Where this process reports, a forked child (its parent's block).
    report: Option<Shared>,
    /// How many addresses this process has reported.
    reported: u32,
    /// Blocks made for the children's paths (`totals.fork_prepared_blocks`).
    pub prepared: u64,
}

impl ForkPaths {
    /// In a forked child, a block made for `addr` by its dispatcher (FP1).
    pub fn report(&mut self, addr: u64) {
        let Some(r) = &self.report else { return };
        if self.reported >= PER_CHILD || addr == 0 {
            return;
        }
        self.reported += 1;
        let i = r.slot(0).fetch_add(1, Ordering::AcqRel) as usize;
        if i < CAPACITY {
            r.slot(1 + i).store(addr, Ordering::Release);
        }
    }

    /// Before a fork: the addresses reported since the last one (FP2),
    /// mapping the shared block first if there is none yet.
    pub fn take_new(&mut self) -> Vec<u64> {
        let Some(own) = &self.own else {
            self.own = Shared::new();
            return Vec::new();
        };
        let n = (own.slot(0).load(Ordering::Acquire) as usize).min(CAPACITY);
        let new = (self.taken..n)
            .map(|i| own.slot(1 + i).load(Ordering::Acquire))
            .filter(|&a| a != 0)
            .collect();
        self.taken = n;
        new
    }

    /// In the child, at the fork (FP3): report to the parent's block,
    /// leave the grandparent's, map one's own at one's first fork.
    pub fn forked(&mut self) {
        self.report = self.own.take();
        self.taken = 0;
        self.reported = 0;
        self.prepared = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_reports_to_its_parent_alone_and_within_its_share() {
        let mut parent = ForkPaths::default();
        assert!(
            parent.take_new().is_empty(),
            "the first fork maps the block"
        );
        // The child's copy of the state, as a fork leaves it.
        let mut child = ForkPaths {
            own: parent.own.as_ref().map(|s| Shared(s.0)),
            ..Default::default()
        };
        child.forked();
        for a in 1..=PER_CHILD as u64 + 10 {
            child.report(0x1000 + a);
        }
        child.report(0);
        let got = parent.take_new();
        assert_eq!(got.len(), PER_CHILD as usize);
        assert_eq!(got[0], 0x1001);
        assert!(parent.take_new().is_empty(), "each address is taken once");
        // The child's own children report to a block of its own.
        assert!(child.take_new().is_empty());
        assert!(child.own.is_some());
        // The two `Shared` of one mapping: unmapped once.
        std::mem::forget(child.report.take());
    }

    #[test]
    fn the_first_process_reports_nowhere() {
        let mut p = ForkPaths::default();
        p.report(0x4000);
        assert_eq!(p.reported, 0);
    }
}
