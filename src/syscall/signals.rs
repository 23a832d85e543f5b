//! The signal syscalls, emulated: `rt_sigaction`, `rt_sigprocmask`,
//! `rt_sigpending` and `sigaltstack` act on the guest's view of its
//! signals (dispatch/sigstate.rs) and give the kernel only what leaves
//! hotlift's own handling intact; `fatal_self_signal` spots a signal the
//! guest sends itself that will kill it, so the profile goes first.
//!
//! I1: the signals hotlift keeps for itself (`OWN_MASK`: faults,
//!     traps, its kick) are never blocked in the kernel for the guest:
//!     the guest's bits for them are kept in `blocked_own` and merged back
//!     into what it reads (`rt_sigprocmask`, `rt_sigpending`).

use std::sync::atomic::Ordering;

use super::{guest_read, guest_write, syscall6, EFAULT, EINVAL};
use crate::contract::Reg;
use crate::dispatch::{Vm, OWN_MASK};

pub(super) fn rt_sigaction(vm: &mut Vm, a: [u64; 6]) -> i64 {
    let (sig, act, old, size) = (a[0] as usize, a[1], a[2], a[3]);
    if size != 8 || sig == 0 || sig > 64 || ((sig == 9 || sig == 19) && act != 0) {
        return EINVAL;
    }
    let prev = vm.proc.sig.action(sig);
    if act != 0 {
        let Some(new) = guest_read::<[u64; 4]>(act) else {
            return EFAULT;
        };
        let handler = new[0];
        let own = crate::dispatch::hotlift_owns(sig as i32);
        if sig as i32 == crate::dispatch::process::KICK && handler > 1 {
            crate::host::say!("hotlift: the guest's handler for signal {sig} at {handler:#x} will never run: hotlift keeps the signal for itself (README, known limits)");
        }
        if handler > 1 {
            // deliver.rs: hotlift's handler queues it for the guest's.
            if let Err(e) = crate::signal::catch_for_guest(sig as i32) {
                crate::host::say!("hotlift: {e}");
                return EINVAL;
            }
        } else if crate::signal::ends_guest(sig as i32) {
            // Caught by hotlift whatever the guest's action is, unless it
            // ignores the signal (signal I4).
            if let Err(e) =
                crate::signal::set_host_action(sig as i32, handler == libc::SIG_IGN as u64)
            {
                crate::host::say!("hotlift: {e}");
                return EINVAL;
            }
        } else if handler <= 1 && !own {
            // SIG_DFL / SIG_IGN go to the kernel as they are.
            let k = [handler, new[1] & !(0x0400_0000u64), 0, new[3]];
            // SAFETY: installs SIG_DFL or SIG_IGN for a signal hotlift does
            // not use; the struct is a valid kernel_sigaction.
            let r = unsafe {
                syscall6(
                    libc::SYS_rt_sigaction as u64,
                    [sig as u64, k.as_ptr() as u64, 0, 8, 0, 0],
                )
            };
            if r != 0 {
                return r;
            }
        }
        if handler == libc::SIG_IGN as u64 {
            // Setting SIG_IGN discards a pending signal (as the kernel does).
            vm.mail
                .sig
                .pending_own
                .fetch_and(!(1u64 << (sig - 1)), Ordering::AcqRel);
        }
        vm.proc.sig.set_action(sig, new);
    }
    if old != 0 && !guest_write(vm, old, &prev) {
        return EFAULT;
    }
    0
}

/// `rt_sigprocmask`: hotlift's own signals must stay deliverable (write
/// protection and fault reports depend on them), so the guest's bits for
/// them are kept here and merged back into what it reads; signals queued
/// for the guest's handlers stay blocked in the kernel until delivered
/// (signal/deliver.rs D1).
pub(super) fn rt_sigprocmask(vm: &mut Vm, a: [u64; 6]) -> i64 {
    let (how, set, old, size) = (a[0] as i32, a[1], a[2], a[3]);
    if size != 8 {
        return EINVAL;
    }
    let new = if set != 0 {
        let Some(v) = guest_read::<u64>(set) else {
            return EFAULT;
        };
        Some(v)
    } else {
        None
    };
    let held = vm.mail.sig.held.load(Ordering::Acquire);
    let kernel_set = new.map(|v| match how {
        libc::SIG_UNBLOCK => v & !OWN_MASK & !held,
        libc::SIG_SETMASK => (v & !OWN_MASK) | held,
        _ => v & !OWN_MASK,
    });
    let mut prev: u64 = 0;
    let kptr = kernel_set.as_ref().map_or(0, |v| v as *const u64 as u64);
    // SAFETY: the kernel reads/writes our own locals; `how` is checked by it.
    let r = unsafe {
        syscall6(
            libc::SYS_rt_sigprocmask as u64,
            [how as u64, kptr, &mut prev as *mut u64 as u64, 8, 0, 0],
        )
    };
    if r != 0 {
        return r;
    }
    let blocked_own = vm.mail.sig.blocked_own.load(Ordering::Acquire);
    let prev_guest = (prev & !OWN_MASK & !held) | blocked_own;
    if let Some(v) = new {
        let own = v & OWN_MASK;
        let now = match how {
            libc::SIG_BLOCK => blocked_own | own,
            libc::SIG_UNBLOCK => blocked_own & !own,
            _ => own,
        };
        vm.mail.sig.blocked_own.store(now, Ordering::Release);
    }
    if old != 0 && !guest_write(vm, old, &prev_guest) {
        return EFAULT;
    }
    crate::signal::release_own_pending(vm);
    0
}

/// `rt_sigpending`: the kernel's pending set plus hotlift's own signals the
/// guest has blocked and been sent.
pub(super) fn rt_sigpending(vm: &mut Vm, a: [u64; 6]) -> i64 {
    if a[1] != 8 {
        return EINVAL;
    }
    let mut set: u64 = 0;
    // SAFETY: the kernel writes 8 bytes into our local.
    let r = unsafe {
        syscall6(
            libc::SYS_rt_sigpending as u64,
            [&mut set as *mut u64 as u64, 8, 0, 0, 0, 0],
        )
    };
    if r != 0 {
        return r;
    }
    set |= vm
        .mail
        .sig
        .pending_own
        .load(std::sync::atomic::Ordering::Acquire);
    if guest_write(vm, a[0], &set) {
        0
    } else {
        EFAULT
    }
}

/// `sigaltstack`: the guest's alternate stack is hotlift's to use when it
/// builds a frame (signal/deliver.rs); the kernel's is hotlift's own.
pub(super) fn sigaltstack(vm: &mut Vm, new: u64, old: u64) -> i64 {
    const SS_ONSTACK: u64 = 1;
    const SS_DISABLE: u64 = 2;
    const SS_AUTODISARM: u64 = 1 << 31;
    let [sp, flags, size] = vm.altstack;
    let rsp = vm.ctx.reg(Reg::Rsp);
    let on_it = flags & SS_AUTODISARM == 0 && size != 0 && rsp > sp && rsp - sp <= size;
    let reported = if size == 0 {
        SS_DISABLE
    } else if on_it {
        SS_ONSTACK
    } else {
        0
    } | (flags & SS_AUTODISARM);
    if new != 0 {
        let Some([nsp, nflags, nsize]) = guest_read::<[u64; 3]>(new) else {
            return EFAULT;
        };
        if on_it {
            return -(libc::EPERM as i64);
        }
        let nflags = nflags & 0xffff_ffff;
        let mode = nflags & !SS_AUTODISARM;
        if mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0 {
            return EINVAL;
        }
        vm.altstack = if mode == SS_DISABLE {
            [0, SS_DISABLE, 0]
        } else if nsize < libc::MINSIGSTKSZ as u64 {
            return -(libc::ENOMEM as i64);
        } else {
            [nsp, nflags & SS_AUTODISARM, nsize]
        };
    }
    if old != 0 && !guest_write(vm, old, &[sp, reported, size]) {
        return EFAULT;
    }
    0
}

/// Is this `kill`/`tkill`/`tgkill` a signal to the guest itself that will
/// kill it (default action, not blocked)? Then the profile must be written
/// before the kernel acts.
pub(super) fn fatal_self_signal(vm: &Vm, nr: u64, a: &[u64; 6]) -> Option<i32> {
    if !matches!(
        nr as i64,
        libc::SYS_kill | libc::SYS_tkill | libc::SYS_tgkill
    ) {
        // Every other call: no getpid and gettid of hotlift's own (two
        // syscalls per guest syscall, half of the syscall path's cost).
        return None;
    }
    let pid = crate::guest_mem::own_pid();
    let tid = vm.entry.tid.load(Ordering::Relaxed);
    let sig = match nr as i64 {
        libc::SYS_kill if a[0] as i32 == pid || a[0] as i32 == 0 => a[1] as i32,
        libc::SYS_tkill if a[0] as i32 == tid => a[1] as i32,
        libc::SYS_tgkill if a[0] as i32 == pid && a[1] as i32 == tid => a[2] as i32,
        _ => return None,
    };
    if sig == libc::SIGKILL {
        return Some(sig);
    }
    if !crate::signal::default_fatal(sig)
        || vm.proc.sig.handler(sig as usize) != libc::SIG_DFL as u64
    {
        return None;
    }
    let mut blocked: u64 = 0;
    // SAFETY: query only; the kernel writes 8 bytes into `blocked`.
    unsafe {
        syscall6(
            libc::SYS_rt_sigprocmask as u64,
            [0, 0, &mut blocked as *mut u64 as u64, 8, 0, 0],
        )
    };
    let blocked = (blocked & !OWN_MASK)
        | vm.mail
            .sig
            .blocked_own
            .load(std::sync::atomic::Ordering::Acquire);
    (blocked & (1 << (sig - 1)) == 0).then_some(sig)
}

/// `rt_sigqueueinfo`/`rt_tgsigqueueinfo` to this process of a signal
/// hotlift keeps for itself (a fault signal, signal 64) with a positive
/// `si_code`: the kernel allows that to one's own process, and hotlift's
/// handler would take it for a fault of its own (an "internal error" and
/// no profile). Emulated instead, as the kernel would deliver it to this
/// thread: to the guest's handler (queued, or pending while the guest
/// blocks it), dropped when ignored, else the end of the guest. None for
/// every other call; a signal queued so at another thread of the process
/// stops the run with a message.
pub(super) fn queue_owned_to_self(
    vm: &mut Vm,
    nr: u64,
    a: &[u64; 6],
) -> Option<Result<i64, crate::dispatch::VmError>> {
    if !matches!(
        nr as i64,
        libc::SYS_rt_sigqueueinfo | libc::SYS_rt_tgsigqueueinfo
    ) {
        // Every other call (the syscall path's common case).
        return None;
    }
    let pid = crate::guest_mem::own_pid();
    let (sig, info_at, to_other) = match nr as i64 {
        libc::SYS_rt_sigqueueinfo if a[0] as i32 == pid => (a[1] as i32, a[2], false),
        libc::SYS_rt_tgsigqueueinfo if a[0] as i32 == pid => {
            let (me, tid) = (vm.entry.tid.load(Ordering::Relaxed), a[1] as i32);
            if tid != me && !vm.proc.threads.has_tid(tid) {
                // No guest thread: the kernel's answer (EINVAL, ESRCH).
                return None;
            }
            (a[2] as i32, a[3], tid != me)
        }
        _ => return None,
    };
    if !crate::dispatch::hotlift_owns(sig) {
        return None;
    }
    let words = guest_read::<[u64; 16]>(info_at)?;
    let mut info = [0u8; 128];
    for (chunk, w) in info.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    let code = i32::from_le_bytes(info[8..12].try_into().expect("4 bytes"));
    if code <= 0 {
        // The kernel's own checks and a sent signal's usual path.
        return None;
    }
    if to_other {
        return Some(Err(crate::dispatch::VmError::UnsupportedSyscall {
            name: "rt_tgsigqueueinfo of a fault signal to another thread",
            nr,
            at: crate::types::GuestAddr(vm.ctx.rip() - 2),
        }));
    }
    // As the kernel stores it: the signal number it was queued as.
    info[0..4].copy_from_slice(&sig.to_le_bytes());
    let bit = 1u64 << (sig - 1);
    match vm.proc.sig.handler(sig as usize) {
        1 => {}
        0 => {
            // As for a kill of itself (mod.rs): the syscall retired.
            vm.record_syscall(nr, 0, 0);
            vm.finish(crate::profile::Ending::Signal { signal: sig });
            crate::status::die_with(sig);
        }
        _ => {
            // SAFETY: a 128-byte siginfo.
            unsafe { vm.mail.sig.set_info(sig as usize, info.as_ptr()) };
            if vm.mail.sig.blocked_own.load(Ordering::Acquire) & bit != 0 {
                vm.mail.sig.pending_own.fetch_or(bit, Ordering::AcqRel);
            } else {
                vm.ctx.sig_queued().fetch_or(bit, Ordering::AcqRel);
            }
        }
    }
    Some(Ok(0))
}
