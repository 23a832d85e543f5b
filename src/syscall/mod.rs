//! Guest syscalls: pass through what is safe, emulate what must be
//! emulated, and refuse the rest with exactly `-ENOSYS`.
//!
//! I1: a syscall reaches the kernel unchanged only if it is on the
//!     pass-through list: it cannot change hotlift's FS/GS bases, signal
//!     handlers or threads, and the memory its arguments name is the
//!     guest's (reach.rs R1).
//! I2: after a syscall the guest sees the kernel's convention: RAX = result,
//!     RCX = address of the next instruction, R11 = RFLAGS.
//! I3: an unknown syscall returns exactly -ENOSYS (glibc falls back from
//!     clone3 only on that value) and is reported on stderr, naming it and
//!     the guest address: the first time each number is seen (as Valgrind
//!     does), every time with `--verbose`. A number that is no syscall at
//!     all fails natively the same way and is reported only with
//!     `--verbose`.
#![allow(unsafe_code)]

mod affinity;
mod control;
mod guest_io;
mod mem;
mod raw;
mod reach;
pub mod selfview;
pub mod strace;

use crate::dispatch::{Vm, VmError};
use crate::types::GuestAddr;

pub use crate::signal::state::{SignalState, ThreadSignals};
pub use affinity::Affinity;
pub use mem::{hold_guest_area, mmap_ceiling};
pub use raw::syscall6;

pub(crate) use guest_io::{
    guest_cstr, guest_read_bytes, guest_words_until_zero, guest_write_bytes,
};
use guest_io::{guest_read, guest_write};

const ENOSYS: i64 = -(libc::ENOSYS as i64);
const EINVAL: i64 = -(libc::EINVAL as i64);
pub(crate) const EFAULT: i64 = -(libc::EFAULT as i64);

/// What to do with a syscall number.
enum Plan {
    Pass,
    Emulate,
    NoSys,
}

/// I3: is this the first unsupported call of number `nr` in this process?
fn first_unhandled(nr: u64) -> bool {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEEN: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];
    let Some(word) = SEEN.get((nr / 64) as usize) else {
        // Beyond 511: rare enough to say every time.
        return true;
    };
    let bit = 1u64 << (nr % 64);
    word.fetch_or(bit, Ordering::Relaxed) & bit == 0
}

#[allow(non_upper_case_globals)]
fn plan(nr: i64) -> Plan {
    use libc::*;
    match nr {
        SYS_brk
        | SYS_mmap
        | SYS_munmap
        | SYS_mprotect
        | SYS_mremap
        | SYS_arch_prctl
        | SYS_exit
        | SYS_exit_group
        | SYS_rt_sigaction
        | SYS_rt_sigprocmask
        | SYS_sigaltstack
        | SYS_rseq
        | SYS_sched_getaffinity
        | SYS_sched_setaffinity
        | SYS_rt_sigpending
        | SYS_clone
        | SYS_clone3
        | SYS_fork
        | SYS_vfork
        | SYS_execve
        | SYS_execveat
        | SYS_set_tid_address
        | SYS_prctl
        | SYS_getrlimit
        | SYS_setrlimit
        | SYS_prlimit64
        | SYS_seccomp
        | SYS_rt_sigreturn => Plan::Emulate,
        SYS_read
        | SYS_write
        | SYS_open
        | SYS_close
        | SYS_stat
        | SYS_fstat
        | SYS_lstat
        | SYS_poll
        | SYS_lseek
        | SYS_ioctl
        | SYS_pread64
        | SYS_pwrite64
        | SYS_readv
        | SYS_writev
        | SYS_access
        | SYS_pipe
        | SYS_select
        | SYS_sched_yield
        | SYS_mincore
        | SYS_madvise
        | SYS_dup
        | SYS_dup2
        | SYS_pause
        | SYS_nanosleep
        | SYS_getitimer
        | SYS_alarm
        | SYS_setitimer
        | SYS_getpid
        | SYS_sendfile
        | SYS_socket
        | SYS_connect
        | SYS_accept
        | SYS_sendto
        | SYS_recvfrom
        | SYS_sendmsg
        | SYS_recvmsg
        | SYS_shutdown
        | SYS_bind
        | SYS_listen
        | SYS_getsockname
        | SYS_getpeername
        | SYS_socketpair
        | SYS_setsockopt
        | SYS_getsockopt
        | SYS_wait4
        | SYS_kill
        | SYS_uname
        | SYS_fcntl
        | SYS_flock
        | SYS_fsync
        | SYS_fdatasync
        | SYS_truncate
        | SYS_ftruncate
        | SYS_getdents
        | SYS_getcwd
        | SYS_chdir
        | SYS_fchdir
        | SYS_rename
        | SYS_mkdir
        | SYS_rmdir
        | SYS_creat
        | SYS_link
        | SYS_unlink
        | SYS_symlink
        | SYS_readlink
        | SYS_chmod
        | SYS_fchmod
        | SYS_chown
        | SYS_fchown
        | SYS_lchown
        | SYS_umask
        | SYS_gettimeofday
        | SYS_getrusage
        | SYS_sysinfo
        | SYS_times
        | SYS_getuid
        | SYS_syslog
        | SYS_getgid
        | SYS_setuid
        | SYS_setgid
        | SYS_geteuid
        | SYS_getegid
        | SYS_setpgid
        | SYS_getppid
        | SYS_getpgrp
        | SYS_setsid
        | SYS_setreuid
        | SYS_setregid
        | SYS_getgroups
        | SYS_setgroups
        | SYS_setresuid
        | SYS_getresuid
        | SYS_setresgid
        | SYS_getresgid
        | SYS_getpgid
        | SYS_setfsuid
        | SYS_setfsgid
        | SYS_getsid
        | SYS_capget
        | SYS_capset
        | SYS_rt_sigtimedwait
        | SYS_rt_sigqueueinfo
        | SYS_rt_sigsuspend
        | SYS_msync
        | SYS_mlock2
        | SYS_utime
        | SYS_mknod
        | SYS_personality
        | SYS_statfs
        | SYS_fstatfs
        | SYS_getpriority
        | SYS_setpriority
        | SYS_sched_setparam
        | SYS_sched_getparam
        | SYS_sched_setscheduler
        | SYS_sched_getscheduler
        | SYS_sched_get_priority_max
        | SYS_sched_get_priority_min
        | SYS_sched_rr_get_interval
        | SYS_mlock
        | SYS_munlock
        | SYS_mlockall
        | SYS_munlockall
        | SYS_vhangup
        | SYS_chroot
        | SYS_sync
        | SYS_acct
        | SYS_settimeofday
        | SYS_sethostname
        | SYS_setdomainname
        | SYS_gettid
        | SYS_readahead
        | SYS_setxattr
        | SYS_lsetxattr
        | SYS_fsetxattr
        | SYS_getxattr
        | SYS_lgetxattr
        | SYS_fgetxattr
        | SYS_listxattr
        | SYS_llistxattr
        | SYS_flistxattr
        | SYS_removexattr
        | SYS_lremovexattr
        | SYS_fremovexattr
        | SYS_tkill
        | SYS_time
        | SYS_futex
        | SYS_epoll_create
        | SYS_getdents64
        | SYS_restart_syscall
        | SYS_fadvise64
        | SYS_timer_create
        | SYS_timer_settime
        | SYS_timer_gettime
        | SYS_timer_getoverrun
        | SYS_timer_delete
        | SYS_clock_settime
        | SYS_clock_gettime
        | SYS_clock_getres
        | SYS_clock_nanosleep
        | SYS_epoll_wait
        | SYS_epoll_ctl
        | SYS_tgkill
        | SYS_utimes
        | SYS_waitid
        | SYS_ioprio_set
        | SYS_ioprio_get
        | SYS_inotify_init
        | SYS_inotify_add_watch
        | SYS_inotify_rm_watch
        | SYS_openat
        | SYS_mkdirat
        | SYS_mknodat
        | SYS_fchownat
        | SYS_futimesat
        | SYS_newfstatat
        | SYS_unlinkat
        | SYS_renameat
        | SYS_linkat
        | SYS_symlinkat
        | SYS_readlinkat
        | SYS_fchmodat
        | SYS_faccessat
        | SYS_pselect6
        | SYS_ppoll
        | SYS_set_robust_list
        | SYS_get_robust_list
        | SYS_splice
        | SYS_tee
        | SYS_sync_file_range
        | SYS_vmsplice
        | SYS_utimensat
        | SYS_epoll_pwait
        | SYS_timerfd_create
        | SYS_eventfd
        | SYS_fallocate
        | SYS_timerfd_settime
        | SYS_timerfd_gettime
        | SYS_accept4
        | SYS_eventfd2
        | SYS_epoll_create1
        | SYS_dup3
        | SYS_pipe2
        | SYS_inotify_init1
        | SYS_preadv
        | SYS_pwritev
        | SYS_rt_tgsigqueueinfo
        | SYS_recvmmsg
        | SYS_syncfs
        | SYS_sendmmsg
        | SYS_setns
        | SYS_getcpu
        | SYS_renameat2
        | SYS_getrandom
        | SYS_memfd_create
        | SYS_copy_file_range
        | SYS_preadv2
        | SYS_pwritev2
        | SYS_statx
        | SYS_pidfd_open
        | SYS_close_range
        | SYS_openat2
        | SYS_faccessat2
        | SYS_epoll_pwait2
        | SYS_membarrier
        | SYS_name_to_handle_at
        | SYS_open_by_handle_at
        | SYS_fchmodat2 => Plan::Pass,
        _ => Plan::NoSys,
    }
}

/// A syscall the kernel makes as it is (I1: a pass-through one, or one an
/// emulation leaves to it), unless it reaches beyond guest memory.
fn pass(vm: &Vm, nr: u64, a: [u64; 6]) -> i64 {
    match reach::check(vm, nr, &a) {
        Some(err) => err,
        // SAFETY: I1, and it names only guest memory (reach.rs R1); a
        // signal that ends the guest interrupts it (signal I4).
        None => unsafe { crate::runtime::guest_syscall(nr, a) },
    }
}

fn exit_now(vm: &mut Vm, status: u64) -> ! {
    vm.finish(crate::profile::Ending::Exit {
        code: (status & 0xff) as i32,
    });
    // SAFETY: exit_group ends every thread; the profile is written.
    unsafe { libc::syscall(libc::SYS_exit_group, status as i32) };
    unreachable!("exit_group returned")
}

fn arch_prctl(vm: &mut Vm, code: u64, addr: u64) -> i64 {
    const SET_GS: u64 = 0x1001;
    const SET_FS: u64 = 0x1002;
    const GET_FS: u64 = 0x1003;
    const GET_GS: u64 = 0x1004;
    // The kernel refuses bases at or above TASK_SIZE_MAX (4-level paging).
    const TASK_SIZE_MAX: u64 = (1 << 47) - 4096;
    match code {
        SET_FS | SET_GS if addr >= TASK_SIZE_MAX => -(libc::EPERM as i64),
        SET_FS => {
            vm.ctx.fs_base = addr;
            0
        }
        SET_GS => {
            vm.ctx.guest_gs = addr;
            0
        }
        // CET shadow-stack controls would act on hotlift's own thread.
        0x5001..=0x5005 => -(libc::EINVAL as i64),
        GET_FS => {
            if guest_write(vm, addr, &vm.ctx.fs_base) {
                0
            } else {
                EFAULT
            }
        }
        GET_GS => {
            if guest_write(vm, addr, &vm.ctx.guest_gs) {
                0
            } else {
                EFAULT
            }
        }
        // CPUID faulting, CET, AMX permission: process-wide, harmless.
        // SAFETY: none of these touch FS/GS or memory hotlift owns.
        _ => unsafe { syscall6(libc::SYS_arch_prctl as u64, [code, addr, 0, 0, 0, 0]) },
    }
}

fn rt_sigaction(vm: &mut Vm, a: [u64; 6]) -> i64 {
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
        let own = crate::signal::hotlift_owns(sig as i32);
        if sig as i32 == crate::dispatch::process::KICK && handler > 1 {
            eprintln!("hotlift: the guest's handler for signal {sig} at {handler:#x} will never run: hotlift keeps the signal for itself (README, known limits)");
        }
        if handler > 1 {
            // deliver.rs: hotlift's handler queues it for the guest's.
            if let Err(e) = crate::signal::catch_for_guest(sig as i32) {
                eprintln!("hotlift: {e}");
                return EINVAL;
            }
        } else if crate::signal::ends_guest(sig as i32) {
            // Caught by hotlift whatever the guest's action is, unless it
            // ignores the signal (signal I4).
            if let Err(e) =
                crate::signal::set_host_action(sig as i32, handler == libc::SIG_IGN as u64)
            {
                eprintln!("hotlift: {e}");
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
            vm.sig
                .pending_own
                .fetch_and(!(1u64 << (sig - 1)), std::sync::atomic::Ordering::AcqRel);
        }
        vm.proc.sig.set_action(sig, new);
    }
    if old != 0 && !guest_write(vm, old, &prev) {
        return EFAULT;
    }
    0
}

/// Bits of the signals hotlift keeps for itself (faults, traps).
const OWN_SIGNALS: u64 = (1 << (libc::SIGSEGV - 1))
    | (1 << (libc::SIGBUS - 1))
    | (1 << (libc::SIGFPE - 1))
    | (1 << (libc::SIGILL - 1))
    | (1 << (libc::SIGTRAP - 1))
    | (1 << (crate::dispatch::process::KICK - 1));

/// `rt_sigprocmask`: hotlift's own signals must stay deliverable (write
/// protection and fault reports depend on them), so the guest's bits for
/// them are kept here and merged back into what it reads; signals queued
/// for the guest's handlers stay blocked in the kernel until delivered
/// (signal/deliver.rs D1).
fn rt_sigprocmask(vm: &mut Vm, a: [u64; 6]) -> i64 {
    use std::sync::atomic::Ordering;
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
    let held = vm.sig.held.load(Ordering::Acquire);
    let kernel_set = new.map(|v| match how {
        libc::SIG_UNBLOCK => v & !OWN_SIGNALS & !held,
        libc::SIG_SETMASK => (v & !OWN_SIGNALS) | held,
        _ => v & !OWN_SIGNALS,
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
    let blocked_own = vm.sig.blocked_own.load(Ordering::Acquire);
    let prev_guest = (prev & !OWN_SIGNALS & !held) | blocked_own;
    if let Some(v) = new {
        let own = v & OWN_SIGNALS;
        let now = match how {
            libc::SIG_BLOCK => blocked_own | own,
            libc::SIG_UNBLOCK => blocked_own & !own,
            _ => own,
        };
        vm.sig.blocked_own.store(now, Ordering::Release);
    }
    if old != 0 && !guest_write(vm, old, &prev_guest) {
        return EFAULT;
    }
    release_own_pending(vm);
    0
}

/// Deliver what the guest just unblocked of hotlift's own signals (kept
/// pending by signal/mod.rs): to its handler, or the default action.
pub(crate) fn release_own_pending(vm: &mut Vm) {
    use std::sync::atomic::Ordering;
    let pending =
        vm.sig.pending_own.load(Ordering::Acquire) & !vm.sig.blocked_own.load(Ordering::Acquire);
    if pending == 0 {
        return;
    }
    vm.sig.pending_own.fetch_and(!pending, Ordering::AcqRel);
    for sig in (1..=64).filter(|s| pending & (1 << (s - 1)) != 0) {
        match vm.proc.sig.handler(sig as usize) {
            0 => {
                vm.finish(crate::profile::Ending::Signal { signal: sig });
                crate::signal::die_with(sig);
            }
            1 => {}
            _ => {
                // Its siginfo is in the slot (queued by the handler).
                vm.ctx
                    .sig_queued()
                    .fetch_or(1 << (sig - 1), Ordering::AcqRel);
            }
        }
    }
}

/// `rt_sigpending`: the kernel's pending set plus hotlift's own signals the
/// guest has blocked and been sent.
fn rt_sigpending(vm: &mut Vm, a: [u64; 6]) -> i64 {
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
fn sigaltstack(vm: &mut Vm, new: u64, old: u64) -> i64 {
    const SS_ONSTACK: u64 = 1;
    const SS_DISABLE: u64 = 2;
    const SS_AUTODISARM: u64 = 1 << 31;
    let [sp, flags, size] = vm.sig.altstack;
    let rsp = vm.ctx.gpr[4];
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
        vm.sig.altstack = if mode == SS_DISABLE {
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
fn fatal_self_signal(vm: &Vm, nr: u64, a: &[u64; 6]) -> Option<i32> {
    if !matches!(
        nr as i64,
        libc::SYS_kill | libc::SYS_tkill | libc::SYS_tgkill
    ) {
        // Every other call: no getpid and gettid of hotlift's own (two
        // syscalls per guest syscall, half of the syscall path's cost).
        return None;
    }
    let pid = std::process::id() as i32;
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
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
    let blocked = (blocked & !OWN_SIGNALS)
        | vm.sig
            .blocked_own
            .load(std::sync::atomic::Ordering::Acquire);
    (blocked & (1 << (sig - 1)) == 0).then_some(sig)
}

/// Could syscall `nr` write into a page hotlift write-protected? Any
/// argument pointing into one counts, and for calls with a buffer and a
/// length, the whole buffer.
fn may_write_protected(vm: &Vm, nr: u64, a: &[u64; 6]) -> bool {
    let page = |x: u64| x & !(crate::guest_mem::PAGE - 1);
    let hit = |start: u64, len: u64| {
        let end = start.saturating_add(len.max(1));
        vm.proc.protected.any_in(page(start), end)
    };
    let buffer = match nr as i64 {
        libc::SYS_read
        | libc::SYS_pread64
        | libc::SYS_recvfrom
        | libc::SYS_getrandom
        | libc::SYS_readlink => Some((a[1], a[2])),
        libc::SYS_readlinkat => Some((a[2], a[3])),
        libc::SYS_getdents64 | libc::SYS_getdents => Some((a[1], a[2])),
        _ => None,
    };
    let iovecs = match nr as i64 {
        libc::SYS_readv | libc::SYS_preadv | libc::SYS_preadv2 => Some((a[1], a[2].min(1024))),
        _ => None,
    };
    let iov_hit = iovecs.is_some_and(|(iov, n)| {
        (0..n).any(|i| {
            guest_read::<[u64; 2]>(iov + 16 * i)
                .is_some_and(|[base, len]| hit(base, len.min(1 << 30)))
        })
    });
    iov_hit || buffer.is_some_and(|(s, l)| hit(s, l.min(1 << 30))) || a.iter().any(|&x| hit(x, 1))
}

/// `clone3(args, size)` as the arguments of the `clone` it amounts to
/// (`flags | exit_signal, stack top, parent_tid, child_tid, tls`), or the
/// result to give the guest: `-ENOSYS` for what only clone3 can ask for
/// (a pidfd, chosen tids, a cgroup), so glibc falls back to `clone` (I3).
fn clone3_as_clone(args: u64, size: u64) -> Result<[u64; 6], i64> {
    const VER0: u64 = 64;
    if !(VER0..=4096).contains(&size) {
        return Err(EINVAL);
    }
    let bytes = guest_read_bytes(args, size as usize).ok_or(EFAULT)?;
    let word = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let flags = word(0);
    let (child_tid, parent_tid, exit_signal) = (word(2), word(3), word(4));
    let (stack, stack_size, tls) = (word(5), word(6), word(7));
    if bytes[VER0 as usize..].iter().any(|&b| b != 0)
        || flags & (libc::CLONE_PIDFD as u64 | 0x2_0000_0000/* CLONE_INTO_CGROUP */) != 0
    {
        return Err(ENOSYS);
    }
    if exit_signal > 0xff || flags & 0xff != 0 || (stack == 0) != (stack_size == 0) {
        return Err(EINVAL);
    }
    let top = if stack == 0 { 0 } else { stack + stack_size };
    Ok([flags | exit_signal, top, parent_tid, child_tid, tls, 0])
}

/// What the dispatcher does after a syscall.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// The guest thread exited (`exit`) and others live on.
    ThreadExit,
}

/// Handle the syscall the guest stopped at (`ctx.rip` is the next
/// instruction).
pub fn handle(vm: &mut Vm) -> Result<Flow, VmError> {
    let g = &vm.ctx.gpr;
    // The kernel reads the number from EAX only (do_syscall_64 takes an int).
    let nr = g[0] as u32 as u64;
    let a = [g[7], g[6], g[2], g[10], g[8], g[9]];
    if vm.opts().strace {
        strace::log(&strace::format_call(nr, &a));
    }
    let at = GuestAddr(vm.ctx.rip - 2);
    let own_exe = match nr as i64 {
        libc::SYS_readlink => selfview::readlink(vm, a[0], a[1], a[2]),
        libc::SYS_readlinkat => selfview::readlink(vm, a[1], a[2], a[3]),
        libc::SYS_open => selfview::open(vm, nr, a, 0),
        libc::SYS_openat => selfview::open(vm, nr, a, 1),
        _ => None,
    };
    if !vm.proc.protected.is_empty() && may_write_protected(vm, nr, &a) {
        // dispatch/smc.rs I4: the kernel (or an emulation) would hit a page
        // hotlift write-protected; give the pages back first.
        let proc = vm.proc.clone();
        let mut l = proc.lock();
        vm.flush(
            &mut l,
            crate::dispatch::process::FlushCause::SyscallIntoCode,
        );
    }
    if let Some(sig) = fatal_self_signal(vm, nr, &a) {
        // The kernel is about to kill us: the profile goes first.
        vm.record_syscall(nr, 0, 0);
        vm.finish(crate::profile::Ending::Signal { signal: sig });
    }
    // The duration goes to the monitor only: no clock reads without one.
    let t0 = vm.prof.ring.is_some().then(std::time::Instant::now);
    let ret = match plan(nr as i64) {
        _ if own_exe.is_some() => own_exe.unwrap_or_default(),
        Plan::Pass => pass(vm, nr, a),
        Plan::NoSys => {
            // A number the kernel has no syscall for fails with ENOSYS
            // natively too: said only with --verbose.
            let known = strace::syscall_name(nr).is_some();
            if (known && first_unhandled(nr)) || vm.opts().verbose {
                let name = strace::syscall_name(nr).unwrap_or("unknown");
                eprintln!(
                    "hotlift: guest syscall {name} ({nr}) at {at} is not supported: it returns -ENOSYS{}",
                    if vm.opts().verbose { "" } else { " (said once; --verbose says it each time)" }
                );
            }
            ENOSYS
        }
        Plan::Emulate => match nr as i64 {
            libc::SYS_brk => mem::brk(vm, a[0]),
            libc::SYS_mmap => mem::mmap(vm, a),
            libc::SYS_munmap => mem::munmap(vm, a),
            libc::SYS_mprotect => mem::mprotect(vm, a),
            libc::SYS_mremap => mem::mremap(vm, a),
            libc::SYS_arch_prctl => arch_prctl(vm, a[0], a[1]),
            libc::SYS_rt_sigaction => rt_sigaction(vm, a),
            libc::SYS_sigaltstack => sigaltstack(vm, a[0], a[1]),
            libc::SYS_rt_sigprocmask => rt_sigprocmask(vm, a),
            libc::SYS_rt_sigpending => rt_sigpending(vm, a),
            libc::SYS_sched_getaffinity => affinity::get(vm, a),
            libc::SYS_sched_setaffinity => affinity::set(vm, a),
            libc::SYS_rseq => ENOSYS,
            libc::SYS_prctl
            | libc::SYS_getrlimit
            | libc::SYS_setrlimit
            | libc::SYS_prlimit64
            | libc::SYS_seccomp => control::handle(vm, nr, a),
            libc::SYS_exit | libc::SYS_exit_group => {
                vm.record_syscall(nr, 0, 0);
                if vm.opts().strace {
                    strace::log(" = ?\n");
                }
                if nr as i64 == libc::SYS_exit {
                    // Ends the process only as its last thread.
                    let crate::dispatch::ThreadEnd::Exited = vm.exit_thread(a[0]);
                    return Ok(Flow::ThreadExit);
                }
                exit_now(vm, a[0])
            }
            libc::SYS_clone if a[0] & libc::CLONE_THREAD as u64 != 0 => vm.clone_thread(a)?,
            libc::SYS_clone => vm.fork_process(a, nr)?,
            libc::SYS_clone3 => match clone3_as_clone(a[0], a[1]) {
                Ok(c) if c[0] & libc::CLONE_THREAD as u64 != 0 => vm.clone_thread(c)?,
                Ok(c) => vm.fork_process(c, nr)?,
                Err(e) => e,
            },
            libc::SYS_execve => vm.execve([libc::AT_FDCWD as u64, a[0], a[1], a[2], 0], nr)?,
            libc::SYS_execveat => vm.execve([a[0], a[1], a[2], a[3], a[4]], nr)?,
            libc::SYS_fork => vm.fork_process([libc::SIGCHLD as u64, 0, 0, 0, 0, 0], nr)?,
            libc::SYS_vfork => vm.fork_process(
                [
                    (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as u64,
                    0,
                    0,
                    0,
                    0,
                    0,
                ],
                nr,
            )?,
            libc::SYS_rt_sigreturn => {
                // The frame replaces the whole context: no result.
                vm.record_syscall(nr, 0, 0);
                if vm.opts().strace {
                    strace::log(" = ?\n");
                }
                vm.sigreturn()?;
                return Ok(Flow::Continue);
            }
            libc::SYS_set_tid_address => {
                // threads.rs I2: the kernel's word is hotlift's C library's.
                vm.clear_tid = a[0];
                // SAFETY: gettid has no preconditions.
                unsafe { libc::gettid() as i64 }
            }
            _ => unreachable!("syscall {nr} planned as emulated without an emulation"),
        },
    };
    if std::mem::take(&mut vm.ctx.sys_restart) != 0 {
        // signal/deliver.rs D3: the syscall instruction runs again after
        // the guest's handler; it did not retire now.
        if vm.opts().strace {
            strace::log(" = ? (restarted after a signal handler)\n");
        }
        vm.ctx.gpr[1] = vm.ctx.rip;
        vm.ctx.gpr[11] = vm.ctx.rflags;
        vm.ctx.rip -= 2;
        vm.record_unretired(1);
        return Ok(Flow::Continue);
    }
    vm.record_syscall(nr, ret, t0.map_or(0, |t| t.elapsed().as_nanos() as u64));
    if vm.opts().strace {
        strace::log(&format!("{}\n", strace::format_return(nr, &a, ret)));
    }
    // I2.
    vm.ctx.gpr[0] = ret as u64;
    vm.ctx.gpr[1] = vm.ctx.rip;
    vm.ctx.gpr[11] = vm.ctx.rflags;
    Ok(Flow::Continue)
}
