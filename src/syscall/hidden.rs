//! What of hotlift's the guest cannot name through a syscall: its own
//! descriptors (host.rs H1) and its own threads (own_thread.rs T1). In a
//! process of its own the guest has neither; a call naming one fails as
//! it would there.
//!
//! N1: a descriptor argument (the `f` and `a` letters of the syscall's
//!     signature, strace/names) that is one of hotlift's gives EBADF, as a
//!     closed one does; `close_range` closes the guest's descriptors of
//!     its range and passes over hotlift's; a `dup2`/`dup3` onto one of
//!     hotlift's moves hotlift's away first (host.rs `move_own_fd`), then
//!     runs.
//! N2: a thread id that is one of hotlift's (a signal's target, a
//!     scheduling or priority call's, a `SIGEV_THREAD_ID` timer's, an
//!     `F_SETOWN`/`F_SETOWN_EX` owner) gives what the kernel gives for an
//!     id no task has: ESRCH (EINVAL for the timer).
//!
//! Not hidden: `/proc/self/fd` and `/proc/self/task` list them.

use super::guest_io::guest_read;
use crate::dispatch::Vm;

const EBADF: i64 = -(libc::EBADF as i64);
const ESRCH: i64 = -(libc::ESRCH as i64);

/// The result hotlift gives instead of the kernel's (N1, N2), after any
/// move it makes first; None to go on as usual.
pub(super) fn check(vm: &Vm, nr: u64, a: &[u64; 6]) -> Option<i64> {
    if let Some(e) = own_thread_named(nr, a) {
        return Some(e);
    }
    if !crate::host::any_own_fd() {
        return None;
    }
    let own = |k: usize| crate::host::is_own_fd(a[k] as i32);
    match nr as i64 {
        libc::SYS_close_range => return Some(close_range(vm, nr, a)),
        libc::SYS_dup2 | libc::SYS_dup3 if !own(0) => {
            if own(1) {
                crate::host::move_own_fd(a[1] as i32);
            }
            return None;
        }
        libc::SYS_mmap if a[3] & libc::MAP_ANONYMOUS as u64 != 0 => return None,
        _ => {}
    }
    let sig = crate::strace::syscall_info(nr)?;
    sig.args
        .bytes()
        .take(6)
        .enumerate()
        .any(|(k, c)| matches!(c, b'f' | b'a') && own(k))
        .then_some(EBADF)
}

/// N1: `close_range(lo, hi, flags)` in pieces between hotlift's own
/// descriptors.
fn close_range(vm: &Vm, nr: u64, a: &[u64; 6]) -> i64 {
    let (lo, hi) = (a[0] as u32, a[1] as u32);
    let mut own: Vec<u32> = [
        crate::host::OwnFd::Stderr,
        crate::host::OwnFd::Log,
        crate::host::OwnFd::Profile,
    ]
    .iter()
    .map(|&s| crate::host::own_fd(s))
    .filter(|&fd| fd >= 0 && (lo..=hi).contains(&(fd as u32)))
    .map(|fd| fd as u32)
    .collect();
    if own.is_empty() || lo > hi {
        return super::pass(vm, nr, *a);
    }
    own.sort_unstable();
    let mut from = u64::from(lo);
    for fd in own.into_iter().map(u64::from) {
        if fd > from {
            let r = super::pass(vm, nr, [from, fd - 1, a[2], 0, 0, 0]);
            if r < 0 {
                return r;
            }
        }
        from = fd + 1;
    }
    if from <= u64::from(hi) {
        return super::pass(vm, nr, [from, u64::from(hi), a[2], 0, 0, 0]);
    }
    0
}

/// N2: a call naming one of hotlift's threads: its error.
fn own_thread_named(nr: u64, a: &[u64; 6]) -> Option<i64> {
    use crate::own_thread::is_own_tid;
    let id = |k: usize| is_own_tid(a[k] as i32);
    let named = match nr as i64 {
        libc::SYS_kill
        | libc::SYS_tkill
        | libc::SYS_rt_sigqueueinfo
        | libc::SYS_sched_setaffinity
        | libc::SYS_sched_getaffinity
        | libc::SYS_sched_setscheduler
        | libc::SYS_sched_getscheduler
        | libc::SYS_sched_setparam
        | libc::SYS_sched_getparam
        | libc::SYS_sched_setattr
        | libc::SYS_sched_getattr
        | libc::SYS_sched_rr_get_interval
        | libc::SYS_prlimit64
        | libc::SYS_get_robust_list
        | libc::SYS_process_vm_readv
        | libc::SYS_process_vm_writev
        | libc::SYS_pidfd_open
        | libc::SYS_move_pages
        | libc::SYS_migrate_pages => id(0),
        libc::SYS_tgkill | libc::SYS_rt_tgsigqueueinfo | libc::SYS_perf_event_open => id(1),
        libc::SYS_kcmp => id(0) || id(1),
        // PRIO_PROCESS, IOPRIO_WHO_PROCESS.
        libc::SYS_getpriority | libc::SYS_setpriority => a[0] == 0 && id(1),
        libc::SYS_ioprio_get | libc::SYS_ioprio_set => a[0] == 1 && id(1),
        libc::SYS_fcntl if a[1] == libc::F_SETOWN as u64 => id(2),
        // F_SETOWN_EX.
        libc::SYS_fcntl if a[1] == 15 => {
            // struct f_owner_ex { int type; pid_t pid; }, F_OWNER_TID 0.
            guest_read::<[i32; 2]>(a[2]).is_some_and(|[kind, tid]| kind == 0 && is_own_tid(tid))
        }
        libc::SYS_timer_create => {
            // struct sigevent: sigev_notify at 12, the thread id at 16;
            // SIGEV_THREAD_ID 4.
            let thread = guest_read::<[i32; 5]>(a[1])
                .is_some_and(|e| e[3] == libc::SIGEV_THREAD_ID && is_own_tid(e[4]));
            if thread {
                return Some(-(libc::EINVAL as i64));
            }
            false
        }
        _ => false,
    };
    named.then_some(ESRCH)
}
