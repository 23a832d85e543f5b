//! What memory a passed-through syscall reaches, checked against the
//! guest's own before the kernel sees the call.
//!
//! R1: a buffer, structure or array a syscall reads or writes must lie in
//!     guest memory (guest_mem regions): one reaching into hotlift's (its
//!     heap, its data, the code cache) fails with -EFAULT, as natively
//!     where nothing is mapped; an address range (`madvise`, `mlock`,
//!     `msync`, `mincore`) with -ENOMEM. Nothing reaches the kernel then.
//! R2: [`reach`] lists, per syscall, the memory its arguments name with
//!     the sizes the kernel uses (x86-64 structures); message headers and
//!     iovec arrays are read from the guest and their buffers checked too.
//!     Arguments it does not list are not checked: path strings (only
//!     read, up to their NUL), `ioctl`'s and `fcntl`'s third argument,
//!     `prctl`'s other than the name, auxv and tid-address ones, and
//!     `bpf`-like opaque pointers (README, threat model).
//! R3: a null pointer, or a zero length, reaches nothing (the kernel
//!     treats it as absent or fails it itself).

use super::guest_read;
use crate::dispatch::{Reach, Vm};

/// Sizes of the kernel's x86-64 structures.
const STAT: u64 = 144;
const STATX: u64 = 256;
const STATFS: u64 = 120;
const TIMESPEC: u64 = 16;
const TIMEVAL: u64 = 16;
const ITIMERVAL: u64 = 32;
const ITIMERSPEC: u64 = 32;
const RUSAGE: u64 = 144;
const SIGINFO: u64 = 128;
const SIGEVENT: u64 = 64;
const MSGHDR: u64 = 56;
const MMSGHDR: u64 = 64;
const IOVEC: u64 = 16;
const EPOLL_EVENT: u64 = 12;
const POLLFD: u64 = 8;
const RLIMIT: u64 = 16;
/// At most this many iovecs or messages are looked into (the kernel's
/// `UIO_MAXIOV`).
const MAX_IOV: u64 = 1024;

/// The memory syscall `nr` with arguments `a` reaches (R2), each piece
/// given to `out`.
#[allow(non_upper_case_globals)]
fn reach(nr: u64, a: &[u64; 6], out: &mut dyn FnMut(Reach)) {
    use libc::*;
    let mut bytes = |addr: u64, len: u64| out(Reach::Bytes { addr, len });
    let fd_set = |n: u64| n.min(1 << 20).div_ceil(64) * 8;
    match nr as i64 {
        SYS_read | SYS_write | SYS_pread64 | SYS_pwrite64 | SYS_getdents | SYS_getdents64 => {
            bytes(a[1], a[2])
        }
        SYS_getrandom => bytes(a[0], a[1]),
        SYS_getcwd => bytes(a[0], a[1]),
        SYS_readlink => bytes(a[1], a[2]),
        SYS_readlinkat => bytes(a[2], a[3]),
        SYS_readv | SYS_writev | SYS_preadv | SYS_pwritev | SYS_preadv2 | SYS_pwritev2
        | SYS_vmsplice => iovecs(a[1], a[2], out),
        // On the guest's own process only (syscall/mod.rs `process_vm`).
        SYS_process_vm_readv | SYS_process_vm_writev => {
            iovecs(a[1], a[2], out);
            iovecs(a[3], a[4], out)
        }
        SYS_stat | SYS_lstat | SYS_fstat => bytes(a[1], STAT),
        SYS_newfstatat => bytes(a[2], STAT),
        SYS_statx => bytes(a[4], STATX),
        SYS_statfs | SYS_fstatfs => bytes(a[1], STATFS),
        SYS_uname => bytes(a[0], std::mem::size_of::<utsname>() as u64),
        SYS_sysinfo => bytes(a[0], std::mem::size_of::<sysinfo>() as u64),
        SYS_times => bytes(a[0], 32),
        SYS_getrusage => bytes(a[1], RUSAGE),
        SYS_getrlimit | SYS_setrlimit => bytes(a[1], RLIMIT),
        SYS_prlimit64 => {
            bytes(a[2], RLIMIT);
            bytes(a[3], RLIMIT)
        }
        SYS_time => bytes(a[0], 8),
        SYS_gettimeofday => {
            bytes(a[0], TIMEVAL);
            bytes(a[1], 8)
        }
        SYS_clock_gettime | SYS_clock_getres => bytes(a[1], TIMESPEC),
        SYS_nanosleep => {
            bytes(a[0], TIMESPEC);
            bytes(a[1], TIMESPEC)
        }
        SYS_clock_nanosleep => {
            bytes(a[2], TIMESPEC);
            bytes(a[3], TIMESPEC)
        }
        SYS_getitimer => bytes(a[1], ITIMERVAL),
        SYS_setitimer => {
            bytes(a[1], ITIMERVAL);
            bytes(a[2], ITIMERVAL)
        }
        SYS_timer_create => {
            bytes(a[1], SIGEVENT);
            bytes(a[2], 4)
        }
        SYS_timer_settime | SYS_timerfd_settime => {
            bytes(a[2], ITIMERSPEC);
            bytes(a[3], ITIMERSPEC)
        }
        SYS_timer_gettime | SYS_timerfd_gettime => bytes(a[1], ITIMERSPEC),
        SYS_pipe | SYS_pipe2 => bytes(a[0], 8),
        SYS_socketpair => bytes(a[3], 8),
        SYS_wait4 => {
            bytes(a[1], 4);
            bytes(a[3], RUSAGE)
        }
        SYS_waitid => {
            bytes(a[2], SIGINFO);
            bytes(a[4], RUSAGE)
        }
        SYS_poll => bytes(a[0], a[1].saturating_mul(POLLFD)),
        SYS_ppoll => {
            bytes(a[0], a[1].saturating_mul(POLLFD));
            bytes(a[2], TIMESPEC);
            bytes(a[3], a[4])
        }
        SYS_select | SYS_pselect6 => {
            let n = fd_set(a[0]);
            bytes(a[1], n);
            bytes(a[2], n);
            bytes(a[3], n);
            bytes(
                a[4],
                if nr as i64 == SYS_select {
                    TIMEVAL
                } else {
                    TIMESPEC
                },
            );
            if nr as i64 == SYS_pselect6 {
                bytes(a[5], 16)
            }
        }
        SYS_epoll_wait => bytes(a[1], a[2].saturating_mul(EPOLL_EVENT)),
        SYS_epoll_pwait => {
            bytes(a[1], a[2].saturating_mul(EPOLL_EVENT));
            bytes(a[4], a[5].min(128))
        }
        SYS_epoll_pwait2 => {
            bytes(a[1], a[2].saturating_mul(EPOLL_EVENT));
            bytes(a[3], TIMESPEC)
        }
        SYS_epoll_ctl => bytes(a[3], EPOLL_EVENT),
        SYS_connect | SYS_bind => bytes(a[1], a[2]),
        SYS_sendto => {
            bytes(a[1], a[2]);
            bytes(a[4], a[5])
        }
        SYS_recvfrom => {
            bytes(a[1], a[2]);
            addr_with_len(a[4], a[5], out)
        }
        SYS_accept | SYS_accept4 | SYS_getsockname | SYS_getpeername => {
            addr_with_len(a[1], a[2], out)
        }
        SYS_getsockopt => addr_with_len(a[3], a[4], out),
        SYS_setsockopt => bytes(a[3], a[4]),
        SYS_sendmsg | SYS_recvmsg => msghdr(a[1], out),
        SYS_sendmmsg | SYS_recvmmsg => {
            let n = a[2].min(MAX_IOV);
            bytes(a[1], n * MMSGHDR);
            if nr as i64 == SYS_recvmmsg {
                bytes(a[4], TIMESPEC)
            }
            for i in 0..n {
                msghdr(a[1].wrapping_add(i * MMSGHDR), out)
            }
        }
        SYS_getgroups | SYS_setgroups => bytes(a[1], a[0].saturating_mul(4)),
        SYS_getresuid | SYS_getresgid => {
            bytes(a[0], 4);
            bytes(a[1], 4);
            bytes(a[2], 4)
        }
        SYS_sched_getparam | SYS_sched_setparam => bytes(a[1], 4),
        SYS_sched_setscheduler => bytes(a[2], 4),
        SYS_sched_rr_get_interval => bytes(a[1], TIMESPEC),
        SYS_rt_sigtimedwait => {
            bytes(a[0], a[3]);
            bytes(a[1], SIGINFO);
            bytes(a[2], TIMESPEC)
        }
        SYS_rt_sigqueueinfo => bytes(a[2], SIGINFO),
        SYS_rt_tgsigqueueinfo => bytes(a[3], SIGINFO),
        SYS_rt_sigsuspend => bytes(a[0], a[1]),
        SYS_getcpu => {
            bytes(a[0], 4);
            bytes(a[1], 4)
        }
        SYS_get_robust_list => {
            bytes(a[1], 8);
            bytes(a[2], 8)
        }
        SYS_set_robust_list => bytes(a[0], a[1]),
        SYS_sendfile => bytes(a[2], 8),
        SYS_copy_file_range | SYS_splice => {
            bytes(a[1], 8);
            bytes(a[3], 8)
        }
        SYS_utime => bytes(a[1], 16),
        SYS_utimes => bytes(a[1], 2 * TIMEVAL),
        SYS_futimesat => bytes(a[2], 2 * TIMEVAL),
        SYS_utimensat => bytes(a[2], 2 * TIMESPEC),
        SYS_capget | SYS_capset => {
            bytes(a[0], 8);
            bytes(a[1], 24)
        }
        SYS_futex => {
            bytes(a[0], 4);
            // The operations with a second futex word (`uaddr2`).
            const REQUEUE: u64 = 3;
            const CMP_REQUEUE: u64 = 4;
            const WAKE_OP: u64 = 5;
            const WAIT_REQUEUE_PI: u64 = 11;
            const CMP_REQUEUE_PI: u64 = 12;
            if matches!(
                a[1] & 127,
                REQUEUE | CMP_REQUEUE | WAKE_OP | WAIT_REQUEUE_PI | CMP_REQUEUE_PI
            ) {
                bytes(a[4], 4)
            }
        }
        // Extended attributes' values and name lists.
        SYS_getxattr | SYS_lgetxattr | SYS_fgetxattr | SYS_setxattr | SYS_lsetxattr
        | SYS_fsetxattr => bytes(a[2], a[3]),
        SYS_listxattr | SYS_llistxattr | SYS_flistxattr => bytes(a[1], a[2]),
        SYS_name_to_handle_at => {
            // struct file_handle: its size, its type, then the handle.
            let size = guest_read::<u32>(a[2]).map_or(8, |n| 8 + u64::from(n.min(128)));
            bytes(a[2], size);
            bytes(a[3], 4)
        }
        SYS_open_by_handle_at => {
            let size = guest_read::<u32>(a[1]).map_or(8, |n| 8 + u64::from(n.min(128)));
            bytes(a[1], size)
        }
        SYS_prctl => {
            const PR_SET_NAME: u64 = 15;
            const PR_GET_NAME: u64 = 16;
            const PR_GET_TID_ADDRESS: u64 = 40;
            const PR_GET_AUXV: u64 = 0x4155_5856;
            // The queries that write an int there.
            const PR_GET_PDEATHSIG: u64 = 2;
            const PR_GET_UNALIGN: u64 = 5;
            const PR_GET_FPEMU: u64 = 9;
            const PR_GET_FPEXC: u64 = 11;
            const PR_GET_ENDIAN: u64 = 19;
            const PR_GET_CHILD_SUBREAPER: u64 = 37;
            match a[0] {
                PR_GET_PDEATHSIG
                | PR_GET_UNALIGN
                | PR_GET_FPEMU
                | PR_GET_FPEXC
                | PR_GET_ENDIAN
                | PR_GET_CHILD_SUBREAPER => bytes(a[1], 4),
                // The kernel reads the name up to its NUL (at most 16).
                PR_SET_NAME => bytes(a[1], 1),
                PR_GET_NAME => bytes(a[1], 16),
                PR_GET_TID_ADDRESS => bytes(a[1], 8),
                PR_GET_AUXV => bytes(a[1], a[2]),
                _ => {}
            }
        }
        // Reading the kernel's log (types 2 to 4) into a buffer.
        SYS_syslog if (2..=4).contains(&a[0]) => bytes(a[1], a[2]),
        // The AMX permission queries write a u64.
        SYS_arch_prctl if matches!(a[0], 0x1021 | 0x1022 | 0x1024 | 0x1025) => bytes(a[1], 8),
        SYS_mincore => {
            out(Reach::Range {
                addr: a[0],
                len: a[1],
            });
            out(Reach::Bytes {
                addr: a[2],
                len: a[1].div_ceil(4096),
            })
        }
        SYS_madvise | SYS_msync | SYS_mlock | SYS_munlock | SYS_mlock2 => out(Reach::Range {
            addr: a[0],
            len: a[1],
        }),
        _ => {}
    }
}

/// An iovec array of `n` entries at `at`, and the buffers it names.
fn iovecs(at: u64, n: u64, out: &mut dyn FnMut(Reach)) {
    out(Reach::Bytes {
        addr: at,
        len: n.min(MAX_IOV) * IOVEC,
    });
    // An unreadable array fails on its own entry above.
    for [base, len] in guest_iovecs(at, n) {
        out(Reach::Bytes { addr: base, len });
    }
}

/// The guest's iovec array of `n` entries at `at` as (base, length), as
/// many as the kernel looks at and can be read.
pub(super) fn guest_iovecs(at: u64, n: u64) -> impl Iterator<Item = [u64; 2]> {
    (0..n.min(MAX_IOV)).filter_map(move |i| guest_read::<[u64; 2]>(at.wrapping_add(i * IOVEC)))
}

/// A socket address at `addr` whose length is the `socklen_t` at
/// `len_at` (both written by the kernel).
fn addr_with_len(addr: u64, len_at: u64, out: &mut dyn FnMut(Reach)) {
    out(Reach::Bytes {
        addr: len_at,
        len: 4,
    });
    if let Some(len) = guest_read::<u32>(len_at) {
        out(Reach::Bytes {
            addr,
            len: u64::from(len),
        });
    }
}

/// A `struct msghdr` at `at`: its name, iovecs and control buffer.
fn msghdr(at: u64, out: &mut dyn FnMut(Reach)) {
    out(Reach::Bytes {
        addr: at,
        len: MSGHDR,
    });
    let Some(h) = guest_read::<[u64; 7]>(at) else {
        return;
    };
    // msg_name, msg_namelen (u32), msg_iov, msg_iovlen, msg_control,
    // msg_controllen, msg_flags.
    out(Reach::Bytes {
        addr: h[0],
        len: h[1] & 0xffff_ffff,
    });
    iovecs(h[2], h[3], out);
    out(Reach::Bytes {
        addr: h[4],
        len: h[5],
    });
}

/// R1: the error the call must fail with before the kernel sees it, if
/// it reaches beyond the guest's memory.
pub fn check(vm: &Vm, nr: u64, a: &[u64; 6]) -> Option<i64> {
    vm.check_reaches(|out| reach(nr, a, out))
}

/// R1 for an emulation that writes or reads `len` bytes at guest `addr`
/// itself: `Some(-EFAULT)` when they are not all guest memory.
pub fn bytes(vm: &Vm, addr: u64, len: u64) -> Option<i64> {
    vm.check_reaches(|out| out(Reach::Bytes { addr, len }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(nr: i64, a: [u64; 6]) -> Vec<Reach> {
        let mut v = Vec::new();
        reach(nr as u64, &a, &mut |r| v.push(r));
        v
    }

    #[test]
    fn arguments_name_what_the_kernel_touches() {
        assert_eq!(
            named(libc::SYS_read, [0, 0x1000, 10, 0, 0, 0]),
            [Reach::Bytes {
                addr: 0x1000,
                len: 10
            }]
        );
        assert_eq!(
            named(libc::SYS_madvise, [0x2000, 4096, 4, 0, 0, 0]),
            [Reach::Range {
                addr: 0x2000,
                len: 4096
            }]
        );
        assert_eq!(
            named(libc::SYS_newfstatat, [0, 0x10, 0x3000, 0, 0, 0]),
            [Reach::Bytes {
                addr: 0x3000,
                len: STAT
            }]
        );
        assert_eq!(
            named(libc::SYS_select, [65, 0x100, 0, 0, 0, 0])[0],
            Reach::Bytes {
                addr: 0x100,
                len: 16
            }
        );
        assert_eq!(
            std::mem::size_of::<libc::stat>() as u64,
            STAT,
            "struct stat"
        );
        assert_eq!(std::mem::size_of::<libc::statfs>() as u64, STATFS);
        assert_eq!(std::mem::size_of::<libc::statx>() as u64, STATX);
        assert_eq!(std::mem::size_of::<libc::rusage>() as u64, RUSAGE);
        assert_eq!(std::mem::size_of::<libc::siginfo_t>() as u64, SIGINFO);
        assert_eq!(std::mem::size_of::<libc::sigevent>() as u64, SIGEVENT);
        assert_eq!(std::mem::size_of::<libc::msghdr>() as u64, MSGHDR);
        assert_eq!(std::mem::size_of::<libc::mmsghdr>() as u64, MMSGHDR);
        assert_eq!(std::mem::size_of::<libc::epoll_event>() as u64, EPOLL_EVENT);
        assert_eq!(std::mem::size_of::<libc::itimerspec>() as u64, ITIMERSPEC);
        assert_eq!(std::mem::size_of::<libc::itimerval>() as u64, ITIMERVAL);
        assert_eq!(std::mem::size_of::<libc::tms>() as u64, 32);
        assert_eq!(named(libc::SYS_getpid, [0; 6]), []);
    }
}
