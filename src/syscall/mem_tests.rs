//! Tests of guest memory syscalls' bookkeeping against the kernel's.
use super::*;

fn map(at: u64, len: u64, prot: i32, flags: i32) -> u64 {
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
    assert_ne!(p, libc::MAP_FAILED);
    p as u64
}

/// A hole that another thread maps into after `claim` first looked is
/// not the guest's to take: before the fix `claim` found no holes left
/// and said yes, and the guest's `MAP_FIXED` replaced the monitor's
/// memory.
#[test]
fn claim_refuses_a_hole_mapped_meanwhile() {
    let len = 4 * PAGE;
    let at = map(0, len, libc::PROT_NONE, 0);
    // SAFETY: our own mapping: a hole now.
    unsafe { libc::munmap(at as *mut libc::c_void, len as usize) };
    let mut mem = GuestMem::new();
    let brk = Brk {
        start: 0,
        cur: 0,
        mapped: 0,
        limit: 0,
    };
    let host = std::cell::Cell::new(0);
    let taken = claim_in(&mut mem, &brk, at, at + len, || {
        host.set(map(
            at,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_FIXED_NOREPLACE,
        ));
    });
    assert_eq!(host.get(), at, "the test's mapping where the hole was");
    assert!(!taken, "a range hotlift mapped meanwhile was claimed");
    assert!(!mem.held_all(at, at + len));
    // The host's memory is still its own, readable and writable.
    // SAFETY: the mapping made above.
    unsafe {
        (at as *mut u64).write(7);
        assert_eq!((at as *const u64).read(), 7);
        libc::munmap(at as *mut libc::c_void, len as usize);
    }
    // A hole nobody takes is claimed, and held.
    let at = map(0, len, libc::PROT_NONE, 0);
    // SAFETY: as above.
    unsafe { libc::munmap(at as *mut libc::c_void, len as usize) };
    assert!(claim_in(&mut mem, &brk, at, at + len, || ()));
    assert!(mem.held_all(at, at + len));
    // SAFETY: the placeholder `claim` made.
    unsafe { libc::munmap(at as *mut libc::c_void, len as usize) };
}
