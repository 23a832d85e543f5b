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
//! N3: reading this process's own `/proc` listings (`getdents`,
//!     `getdents64` on a directory the kernel names `/proc/PID/fd`,
//!     `fdinfo` or `task`, or a thread's `fd` or `fdinfo`) leaves
//!     hotlift's descriptors and threads out; a piece of entries that were
//!     all hotlift's is followed by the next, as the kernel's next call
//!     would give it. Looked at only once the guest opened such a
//!     listing (selfview.rs `opened` sees every procfs open): from then
//!     on, one `readlink` of the descriptor a call tells the directory.
//!     (`/proc/self/status` counts the guest's threads only: selfview.rs I4.)

use super::guest_io::{guest_read, guest_write_bytes};
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

/// N3: what a `getdents`/`getdents64` of this process's own `/proc`
/// listings (`fd`, `fdinfo`, `task`, and a thread's `fd` and `fdinfo`)
/// gives, hotlift's descriptors and threads left out; None for any other
/// directory (one `readlink` of the descriptor tells).
pub(super) fn listing(vm: &Vm, nr: u64, a: &[u64; 6]) -> Option<i64> {
    if !LISTING_OPENED.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let kind = listing_of(&super::memfile::kernel_path(a[0] as i32)?)?;
    // Entries are read into hotlift's memory and the guest's kept copied
    // out: at most 64 KiB a call (getdents may give fewer than fit).
    let len = (a[2] as usize).min(64 << 10);
    let mut buf = vec![0u8; len];
    // struct linux_dirent64 names at 19, the old linux_dirent at 18.
    let name_at = if nr as i64 == libc::SYS_getdents64 {
        19
    } else {
        18
    };
    loop {
        let args = [a[0], buf.as_mut_ptr() as u64, len as u64, 0, 0, 0];
        // SAFETY: the buffer is ours and `len` bytes long.
        let n = unsafe { crate::host::syscall6(nr, args) };
        if n <= 0 {
            return Some(n);
        }
        let kept = keep_entries(&mut buf[..n as usize], name_at, |name| match kind {
            Listing::Fds => name.parse().is_ok_and(crate::host::is_own_fd),
            Listing::Threads => name.parse().is_ok_and(crate::own_thread::is_own_tid),
        });
        // Every entry of the piece was hotlift's: the next piece, as the
        // kernel's next call would give it.
        if kept == 0 {
            continue;
        }
        return Some(if guest_write_bytes(vm, a[1], &buf[..kept]) {
            kept as i64
        } else {
            -(libc::EFAULT as i64)
        });
    }
}

/// Which of this process's listings N3 filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    Fds,
    Threads,
}

/// N3: whether the guest opened one of the listings (selfview.rs
/// `opened`): until then no `getdents` looks at its descriptor.
static LISTING_OPENED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// N3 for a procfs file the guest just opened, the kernel's `path` for it.
pub(super) fn opened(path: &[u8]) {
    if listing_of(path).is_some() {
        LISTING_OPENED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Which of N3's listings the procfs directory the kernel calls `path`
/// is, if it is one of this process's.
fn listing_of(path: &[u8]) -> Option<Listing> {
    let (id, name) = super::memfile::proc_file(path)?;
    let kind = match name {
        b"task" => Listing::Threads,
        b"fd" | b"fdinfo" => Listing::Fds,
        _ => return None,
    };
    super::memfile::own_id(id).then_some(kind)
}

/// Drop the entries of `buf` (records of `d_reclen` at byte 16, the name
/// NUL-terminated at `name_at`) whose name `hide` says, closing the gaps;
/// the bytes kept. A record that does not hold together ends the walk
/// there (the kernel's never do).
fn keep_entries(buf: &mut [u8], name_at: usize, hide: impl Fn(&str) -> bool) -> usize {
    let (mut from, mut to) = (0usize, 0usize);
    while from + name_at < buf.len() {
        let reclen = usize::from(u16::from_ne_bytes([buf[from + 16], buf[from + 17]]));
        if reclen <= name_at || from + reclen > buf.len() {
            break;
        }
        let name = &buf[from + name_at..from + reclen];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        let hidden = std::str::from_utf8(name).is_ok_and(&hide);
        if !hidden {
            buf.copy_within(from..from + reclen, to);
            to += reclen;
        }
        from += reclen;
    }
    to
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `linux_dirent64` records named `names`, each padded to 8 bytes.
    fn records(names: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let reclen = (19 + n.len() + 1).div_ceil(8) * 8;
            let mut r = vec![0u8; reclen];
            r[..8].copy_from_slice(&(i as u64 + 1).to_ne_bytes());
            r[16..18].copy_from_slice(&(reclen as u16).to_ne_bytes());
            r[19..19 + n.len()].copy_from_slice(n.as_bytes());
            out.extend(r);
        }
        out
    }

    fn names(buf: &[u8]) -> Vec<String> {
        let mut at = 0;
        let mut out = Vec::new();
        while at < buf.len() {
            let reclen = usize::from(u16::from_ne_bytes([buf[at + 16], buf[at + 17]]));
            let name = &buf[at + 19..at + reclen];
            let end = name.iter().position(|&b| b == 0).unwrap();
            out.push(String::from_utf8(name[..end].to_vec()).unwrap());
            at += reclen;
        }
        out
    }

    /// N3: hidden entries go and the rest close up in order; a record
    /// that does not hold together ends the walk; nothing kept is 0.
    #[test]
    fn a_listing_keeps_the_guests_entries_in_order() {
        let mut buf = records(&[".", "..", "0", "1", "251", "2", "1000000"]);
        let kept = keep_entries(&mut buf, 19, |n| n == "251" || n == "1000000");
        assert_eq!(names(&buf[..kept]), [".", "..", "0", "1", "2"]);
        let mut all = records(&["7", "8"]);
        assert_eq!(keep_entries(&mut all, 19, |_| true), 0);
        let mut cut = records(&["0", "1"]);
        let n = cut.len() - 3;
        let kept = keep_entries(&mut cut[..n], 19, |_| false);
        assert_eq!(names(&cut[..kept]), ["0"]);
    }
}
