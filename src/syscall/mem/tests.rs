//! Tests of guest memory syscalls' bookkeeping against the kernel's.
use super::*;

/// An anonymous mapping at `at` (0: where the kernel likes), or None.
fn map(at: u64, len: u64, prot: i32, flags: i32) -> Option<u64> {
    // SAFETY: an anonymous mapping of the test's own.
    let p = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            len as usize,
            prot,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as u64)
}

fn unmap(at: u64, len: u64) {
    // SAFETY: a mapping of the test's own (or one `claim` made for it).
    unsafe { libc::munmap(at as *mut libc::c_void, len as usize) };
}

/// A fresh hole of `len` bytes (other test threads may map into it too:
/// the callers try again then).
fn hole(len: u64) -> u64 {
    let at = map(0, len, libc::PROT_NONE, 0).expect("mmap");
    unmap(at, len);
    at
}

const NO_BRK: Brk = Brk {
    start: 0,
    cur: 0,
    mapped: 0,
    limit: 0,
};

/// A hole that another thread maps into after `claim` first looked is
/// not the guest's to take: before the fix `claim` found no holes left
/// and said yes, and the guest's `MAP_FIXED` replaced the monitor's
/// memory.
#[test]
fn claim_refuses_a_hole_mapped_meanwhile() {
    let len = 4 * PAGE;
    let mut tried = 0;
    for _ in 0..50 {
        let at = hole(len);
        let mut mem = GuestMem::new();
        let host = std::cell::Cell::new(None);
        let taken = claim_in(&mut mem, &NO_BRK, at, at + len, || {
            host.set(map(
                at,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_FIXED_NOREPLACE,
            ));
        });
        if host.get() != Some(at) {
            // Another test thread took the hole first: `claim` refused it
            // for that, or the hook could not map there. Again.
            for (s, e) in mem.held(0, u64::MAX).collect::<Vec<_>>() {
                unmap(s, e - s);
            }
            if let Some(h) = host.get() {
                unmap(h, len);
            }
            continue;
        }
        tried += 1;
        assert!(!taken, "a range hotlift mapped meanwhile was claimed");
        assert!(!mem.held_all(at, at + len));
        // The host's memory is still its own, readable and writable.
        // SAFETY: the mapping the hook made.
        unsafe {
            (at as *mut u64).write(7);
            assert_eq!((at as *const u64).read(), 7);
        }
        unmap(at, len);
        break;
    }
    assert_eq!(tried, 1, "no hole stayed free for the test in 50 tries");
    // A hole nobody takes is claimed, and held.
    let claimed = (0..50).any(|_| {
        let at = hole(len);
        let mut mem = GuestMem::new();
        let ok = claim_in(&mut mem, &NO_BRK, at, at + len, || ()) && mem.held_all(at, at + len);
        for (s, e) in mem.held(0, u64::MAX).collect::<Vec<_>>() {
            unmap(s, e - s);
        }
        ok
    });
    assert!(claimed, "a free hole was never claimed in 50 tries");
}
