//! Controls a guest applies to its own process that would reach hotlift:
//! resource limits (`getrlimit`, `setrlimit`, `prlimit64`; the kept ones
//! in limits.rs), `prctl`, `seccomp` and `personality`.
//!
//! C1: limits hotlift keeps (limits.rs I1, I2) are answered and changed
//!     from the guest's own record, for the calling process only (`pid`
//!     0, its process id or one of its thread ids); every other limit,
//!     and another process's, is the kernel's (but never a lower hard
//!     `RLIMIT_FSIZE` or `RLIMIT_NOFILE` for another process: limits.rs
//!     I4).
//! C2: a seccomp filter would apply to hotlift too (its profile write,
//!     its futexes, its monitor): `prctl(PR_SET_SECCOMP)` and
//!     `seccomp(SECCOMP_SET_MODE_*)` fail with `EINVAL`, as under QEMU
//!     user mode; the queries of `seccomp` pass through.
//! C3: `PR_SET_TSC` would make hotlift's own `rdtsc` fault: it is
//!     emulated per thread. The first `PR_TSC_SIGSEGV` in a process
//!     flushes its translations and from then on every `rdtsc`/`rdtscp`
//!     ends its block in a trap the dispatcher serves (frontend I5):
//!     SIGSEGV for a thread that asked for it, the counter read for one
//!     that did not. New threads, forked children and an `execve`'s
//!     program keep the mode, as natively.
//! C4: two more controls would bind hotlift's own code, and fail with
//!     `EINVAL` as they do under QEMU user mode (and on kernels before
//!     them): `PR_SET_SYSCALL_USER_DISPATCH` (every syscall hotlift makes
//!     outside the guest's allowed range would raise SIGSYS: hotlift died
//!     of it, without a profile) and `PR_SET_MDWE` (the kernel then
//!     refuses hotlift's own mappings that gain execute: a fork could not
//!     copy its code cache and hotlift panicked, status 125). Their
//!     queries pass through (`PR_GET_MDWE` answers 0).
//!     `PR_SET_MM` fails with `EINVAL` too: the kernel's record of the
//!     process's layout (arguments, environment, brk, auxv) is hotlift's
//!     process's, and a guest that pointed `arg_start` at hotlift's heap
//!     read it back through `/proc/self/cmdline`.
//! C5: `personality(READ_IMPLIES_EXEC)` would make the kernel add execute
//!     to every readable mapping made after it, hotlift's own and the
//!     guest's (an `mmap` of read and write was writable and executable in
//!     hotlift's process, against mem/mod.rs I8): the kernel's persona never
//!     has the flag. hotlift keeps it for the process (the kernel keeps it
//!     per thread; an x86-64 `execve` clears it, as a new image here
//!     starts without it), `personality` reads it back, and the guest's
//!     `mmap` and `mprotect` of readable memory record execute for it
//!     ([`guest_prot`]), so its code runs there as natively (not yet its
//!     `brk` area, which the kernel would make executable too).

use super::{guest_read, guest_write, pass, reach, EFAULT, EINVAL};
use crate::dispatch::Vm;
use crate::limits::{GuestLimits, Limit};
use std::sync::atomic::{AtomicBool, Ordering};

/// The syscalls of this file (`nr` with arguments `a`), answered here or
/// left to the kernel.
pub fn handle(vm: &mut Vm, nr: u64, a: [u64; 6]) -> i64 {
    let own = match nr as i64 {
        libc::SYS_prctl => prctl(vm, a),
        libc::SYS_getrlimit => prlimit(vm, 0, a[0], 0, a[1]),
        libc::SYS_setrlimit => prlimit(vm, 0, a[0], a[1], 0),
        libc::SYS_prlimit64 => prlimit(vm, a[0], a[1], a[2], a[3]),
        libc::SYS_seccomp => seccomp(a[0]),
        libc::SYS_personality => Some(personality(vm, nr, a[0])),
        _ => unreachable!("syscall {nr} is not a process control"),
    };
    own.unwrap_or_else(|| pass(vm, nr, a))
}

/// Is `pid` (of `prlimit64`) the calling process?
fn own_process(vm: &Vm, pid: u64) -> bool {
    let pid = pid as i32;
    pid == 0 || pid == crate::guest_mem::own_pid() || vm.proc.threads.has_tid(pid)
}

/// `prlimit64(pid, resource, new, old)`, and `getrlimit`/`setrlimit` as
/// its two halves for the calling process (C1). `None`: the kernel's.
fn prlimit(vm: &Vm, pid: u64, resource: u64, new: u64, old: u64) -> Option<i64> {
    let resource = u32::try_from(resource).ok()?;
    if !GuestLimits::keeps(resource) {
        return None;
    }
    if !own_process(vm, pid) {
        return other_process(vm, pid, resource, new, old);
    }
    // reach.rs R1: never a struct in hotlift's memory.
    for at in [new, old].into_iter().filter(|&at| at != 0) {
        if let Some(e) = reach::bytes(vm, at, 16) {
            return Some(e);
        }
    }
    let want = if new != 0 {
        let Some([cur, max]) = guest_read::<[u64; 2]>(new) else {
            return Some(EFAULT);
        };
        Some(Limit { cur, max })
    } else {
        None
    };
    // The lock is not held while guest memory is written: a write may
    // take the translation lock, which `mmap` holds while it takes this
    // one (syscall/mem within_limits).
    let before = {
        let mut limits = vm.proc.limits.lock().unwrap_or_else(|e| e.into_inner());
        let before = limits.get(resource)?;
        if let Some(want) = want {
            let privileged = crate::limits::may_raise_hard_limits();
            if let Err(e) = limits.set(resource, want, privileged, crate::limits::nr_open()) {
                return Some(-(e as i64));
            }
        }
        before
    };
    if old != 0 && !guest_write(vm, old, &[before.cur, before.max]) {
        return Some(EFAULT);
    }
    Some(0)
}

/// `prlimit64` of another process (C1): the kernel's, except that a new
/// limit hotlift keeps a hard floor for (limits.rs I4) goes through
/// `limits::set_other`. `None`: passed through.
fn other_process(vm: &Vm, pid: u64, resource: u32, new: u64, old: u64) -> Option<i64> {
    if new == 0 || !crate::limits::kept_hard(resource) {
        return None;
    }
    // reach.rs R1.
    for at in [new, old].into_iter().filter(|&at| at != 0) {
        if let Some(e) = reach::bytes(vm, at, 16) {
            return Some(e);
        }
    }
    let Some([cur, max]) = guest_read::<[u64; 2]>(new) else {
        return Some(EFAULT);
    };
    Some(
        match crate::limits::set_other(pid as i32, resource, Limit { cur, max }) {
            Err(e) => -(e as i64),
            Ok(before) if old != 0 && !guest_write(vm, old, &[before.cur, before.max]) => EFAULT,
            Ok(_) => 0,
        },
    )
}

const PR_GET_TSC: u64 = 25;
const PR_SET_TSC: u64 = 26;
const PR_TSC_ENABLE: u64 = 1;
const PR_TSC_SIGSEGV: u64 = 2;
const PR_GET_SECCOMP: u64 = 21;
const PR_SET_SECCOMP: u64 = 22;
const PR_SET_SYSCALL_USER_DISPATCH: u64 = 59;
const PR_SET_MDWE: u64 = 65;
const PR_SET_MM: u64 = 35;

/// `prctl(option, …)`: what hotlift answers itself (C2, C3, C4); `None`:
/// the kernel's.
fn prctl(vm: &mut Vm, a: [u64; 6]) -> Option<i64> {
    match a[0] {
        PR_SET_SECCOMP | PR_SET_SYSCALL_USER_DISPATCH | PR_SET_MDWE | PR_SET_MM => Some(EINVAL),
        // No filter is ever installed (C2): mode 0, "disabled".
        PR_GET_SECCOMP => Some(0),
        PR_GET_TSC => {
            let mode = if vm.tsc_traps {
                PR_TSC_SIGSEGV
            } else {
                PR_TSC_ENABLE
            } as i32;
            if let Some(e) = reach::bytes(vm, a[1], 4) {
                return Some(e);
            }
            Some(if guest_write(vm, a[1], &mode) {
                0
            } else {
                EFAULT
            })
        }
        PR_SET_TSC => Some(match a[1] {
            PR_TSC_ENABLE => {
                vm.tsc_traps = false;
                0
            }
            PR_TSC_SIGSEGV => {
                vm.tsc_traps = true;
                if !crate::frontend::tsc_traps() {
                    // C3: translations made before inline the counter read.
                    crate::frontend::set_tsc_traps();
                    let proc = vm.proc.clone();
                    let mut l = proc.lock();
                    vm.flush(&mut l, crate::dispatch::process::FlushCause::TscTrapping);
                }
                0
            }
            _ => EINVAL,
        }),
        _ => None,
    }
}

const SECCOMP_SET_MODE_STRICT: u64 = 0;
const SECCOMP_SET_MODE_FILTER: u64 = 1;

/// `seccomp(operation, …)` (C2); `None`: the kernel's (the queries).
fn seccomp(operation: u64) -> Option<i64> {
    matches!(operation, SECCOMP_SET_MODE_STRICT | SECCOMP_SET_MODE_FILTER).then_some(EINVAL)
}

/// `READ_IMPLIES_EXEC` of `<sys/personality.h>`.
const READ_IMPLIES_EXEC: u64 = 0x0040_0000;

/// The guest's `READ_IMPLIES_EXEC` (C5).
static GUEST_READ_IMPLIES_EXEC: AtomicBool = AtomicBool::new(false);

/// `personality(persona)` (C5): the kernel's persona without
/// `READ_IMPLIES_EXEC`, the guest's flag kept here; the old persona as the
/// guest set it.
fn personality(vm: &Vm, nr: u64, persona: u64) -> i64 {
    // The kernel takes an unsigned int; all ones is the query.
    let query = persona as u32 == u32::MAX;
    let mut a = [0; 6];
    a[0] = if query {
        persona
    } else {
        persona & !READ_IMPLIES_EXEC
    };
    let old = pass(vm, nr, a);
    if old < 0 {
        return old;
    }
    let had = if query {
        GUEST_READ_IMPLIES_EXEC.load(Ordering::SeqCst)
    } else {
        GUEST_READ_IMPLIES_EXEC.swap(persona & READ_IMPLIES_EXEC != 0, Ordering::SeqCst)
    };
    old | if had { READ_IMPLIES_EXEC as i64 } else { 0 }
}

/// The protection the guest gets for a mapping it asks `prot` of (C5):
/// readable is also executable under `READ_IMPLIES_EXEC`, as the kernel
/// makes it.
pub(super) fn guest_prot(prot: u64) -> u64 {
    let read = prot & libc::PROT_READ as u64 != 0;
    if read && GUEST_READ_IMPLIES_EXEC.load(Ordering::SeqCst) {
        prot | libc::PROT_EXEC as u64
    } else {
        prot
    }
}
