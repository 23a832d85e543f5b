//! `mlockall` and `munlockall` for the guest's memory alone.
//!
//! Passed through, `mlockall` locked every mapping of the process:
//! hotlift's code cache, rings, tables and reservations too (3.3 GB
//! resident for a small guest), and with `MCL_FUTURE` everything hotlift
//! mapped after.
//!
//! L1: `mlockall` locks the guest's own mappings (guest_mem) as the
//!     kernel would lock a process's: `MCL_CURRENT` those there now
//!     (`MCL_ONFAULT`: as they are touched), `MCL_FUTURE` the guest's
//!     later `mmap`s and `brk` growth ([`new_guest_memory`]); its flags
//!     are checked as the kernel checks them (EINVAL). A lock the kernel
//!     refuses (`RLIMIT_MEMLOCK`, no `CAP_IPC_LOCK`) is the call's error.
//! L2: `munlockall` unlocks the guest's mappings and ends `MCL_FUTURE`.
//!     A forked child starts without `MCL_FUTURE` (guest_mem `forked`),
//!     as the kernel does not pass memory locks on.

use super::Vm;
use crate::host::syscall6;

const MCL_CURRENT: u64 = 1;
const MCL_FUTURE: u64 = 2;
const MCL_ONFAULT: u64 = 4;
/// mlock2's flag.
const MLOCK_ONFAULT: u64 = 1;

/// L1.
pub fn mlockall(vm: &mut Vm, flags: u64) -> i64 {
    if flags == 0 || flags & !(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) != 0 || flags == MCL_ONFAULT
    {
        return -(libc::EINVAL as i64);
    }
    let how = if flags & MCL_ONFAULT != 0 {
        MLOCK_ONFAULT
    } else {
        0
    };
    if flags & MCL_CURRENT != 0 {
        let spans: Vec<(u64, u64)> = {
            let l = vm.proc.lock();
            l.mem.regions().map(|(s, r)| (s, r.end)).collect()
        };
        for (s, e) in spans {
            // SAFETY: locks pages of the guest's own mappings.
            let r = unsafe { syscall6(libc::SYS_mlock2 as u64, [s, e - s, how, 0, 0, 0]) };
            if matches!(-r as i32, libc::ENOMEM | libc::EPERM | libc::EAGAIN) {
                return r;
            }
        }
    }
    let future = if flags & MCL_FUTURE != 0 {
        1 | how << 1
    } else {
        0
    };
    crate::guest_mem::set_lock_future(future as u8);
    0
}

/// L2.
pub fn munlockall(vm: &mut Vm) -> i64 {
    crate::guest_mem::set_lock_future(0);
    let spans: Vec<(u64, u64)> = {
        let l = vm.proc.lock();
        l.mem.regions().map(|(s, r)| (s, r.end)).collect()
    };
    for (s, e) in spans {
        // SAFETY: unlocks pages of the guest's own mappings.
        unsafe { syscall6(libc::SYS_munlock as u64, [s, e - s, 0, 0, 0, 0]) };
    }
    0
}

/// L1: the guest's new memory [start, start + len), locked if it asked
/// for `MCL_FUTURE` (errors dropped: natively the mapping is made).
pub fn new_guest_memory(start: u64, len: u64) {
    let future = u64::from(crate::guest_mem::lock_future());
    if future & 1 != 0 && len > 0 {
        // SAFETY: locks pages of a mapping the guest just made.
        unsafe { syscall6(libc::SYS_mlock2 as u64, [start, len, future >> 1, 0, 0, 0]) };
    }
}
