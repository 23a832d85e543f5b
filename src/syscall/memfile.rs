//! The guest's `/proc/<pid>/mem` files: they reach only its own memory.
//!
//! A `mem` file reads and writes the process's memory by address,
//! ignoring page protections, so through it a guest could read hotlift's
//! heap, code cache and data, or write them. What a descriptor names is
//! looked at where the kernel made it, not by the path the guest gave (a
//! symlink, a relative path under `/proc/self`, `/proc/self/fd/N`, a
//! thread's `task/TID/mem` all lead to the same file).
//!
//! M1: every descriptor an `open`, `openat` or `openat2` gives the guest
//!     is looked at ([`classify`]: `fstatfs`, then for a procfs file the
//!     path the kernel has for it). A `mem` file of this process opened
//!     for writing, or one of another process, is closed again and the
//!     call fails with `EACCES`, said once on stderr, as a restrictive
//!     ptrace policy would refuse it: a write ignores the protection
//!     hotlift gives guest code pages (dispatch/smc.rs), and another
//!     process run by hotlift has hotlift's memory too (as
//!     `process_vm_readv` on another process, syscall/mod.rs).
//! M2: once the guest may hold a `mem` file (M1 let one of its own open,
//!     or descriptors arrived in an `SCM_RIGHTS` message; the state is the
//!     process's, kept by `fork` and handed over by `execve`: dispatch/
//!     exec.rs), every `read`, `pread64`, `readv`, `preadv`, `preadv2`
//!     and write of the same kinds looks at its descriptor. On the
//!     guest's own `mem` file a read reaches only the part of its range
//!     from its start that is guest memory or the vDSO: none gives `EIO`,
//!     as natively where nothing is mapped, part a short read, as the
//!     kernel gives at the first unmapped page. Writes through a writable
//!     one (received, since M1 opens none) and any access through another
//!     process's (inherited across `fork`, received) fail with `EIO`.
//! M3: until M2's state is set nothing is looked at: one relaxed load a
//!     read or write. The decision is made before the call, the call (cut
//!     short) where every syscall is made, after code pages its buffers
//!     cover were given back (dispatch/smc.rs I4).
//! M4: an `SCM_RIGHTS` descriptor or one inherited is seen only where it
//!     is used (M2), not when it arrives: M1's refusal at `open` cannot
//!     apply to it.
//! The check and the call are not atomic: a second guest thread that
//! unmaps the range between them has the kernel read what is then there,
//! as for every range reach.rs checks (README, threat model).
#![allow(unsafe_code)]

use super::guest_read;
use crate::dispatch::Vm;

const EACCES: i64 = -(libc::EACCES as i64);
/// `-EIO`: nothing readable there.
const UNMAPPED: i64 = -(libc::EIO as i64);

/// M2's state (kept in guest_mem, which `execve` hands over).
pub use crate::guest_mem::{mem_files as watching, watch_mem_files as watch};

/// What a descriptor names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    NotMem,
    Own,
    Other,
}

/// A process's file as a `/proc` path the kernel gives names it: the
/// process's id and the file's name for `…/PID/NAME`, the thread's id for
/// `…/PID/task/TID/NAME` (its own process's file under any of its
/// threads).
pub(super) fn proc_file(path: &[u8]) -> Option<(u32, &[u8])> {
    let parts: Vec<&[u8]> = path.split(|&c| c == b'/').collect();
    let num = |p: &[u8]| -> Option<u32> {
        (!p.is_empty() && p.iter().all(u8::is_ascii_digit))
            .then(|| std::str::from_utf8(p).ok()?.parse().ok())
            .flatten()
    };
    match parts.as_slice() {
        [.., tid_dir, b"task", tid, name] => Some((num(tid_dir).and(num(tid))?, *name)),
        [.., pid, name] => Some((num(pid)?, *name)),
        _ => None,
    }
}

/// The `mem` file a `/proc` path the kernel gives names: its owner.
fn mem_owner(path: &[u8]) -> Option<u32> {
    proc_file(path).and_then(|(id, name)| (name == b"mem").then_some(id))
}

/// Is `id` this process (its pid, or one of its threads' ids)?
pub(super) fn own_id(id: u32) -> bool {
    let pid = crate::guest_mem::own_pid() as u32;
    id == pid || std::path::Path::new(&format!("/proc/{pid}/task/{id}")).exists()
}

/// The path the kernel has for `fd` when it is a procfs file (None:
/// another file system, or unreadable).
pub(super) fn proc_path(fd: i32) -> Option<Vec<u8>> {
    (fs_type(fd) == Some(PROC_SUPER_MAGIC))
        .then(|| kernel_path(fd))
        .flatten()
}

/// `statfs`'s file system type of procfs, and of tmpfs (memory objects:
/// `memfd_create`'s, shared anonymous mappings').
pub(super) const PROC_SUPER_MAGIC: i64 = 0x9fa0;
pub(super) const TMPFS_MAGIC: i64 = 0x0102_1994;

/// The type of the file system `fd` is on (None: a bad descriptor).
pub(super) fn fs_type(fd: i32) -> Option<i64> {
    // SAFETY: a plain struct the kernel fills.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a live struct; a bad descriptor only fails.
    (unsafe { libc::fstatfs(fd, &mut fs) } == 0).then_some(fs.f_type as i64)
}

/// The path the kernel has for `fd`.
pub(super) fn kernel_path(fd: i32) -> Option<Vec<u8>> {
    let path = std::fs::read_link(format!("/proc/thread-self/fd/{fd}")).ok()?;
    Some(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec())
}

/// M1, M2: what the procfs file at the kernel's `path` is.
fn classify(path: &[u8]) -> Kind {
    match mem_owner(path) {
        None => Kind::NotMem,
        Some(id) if own_id(id) => Kind::Own,
        Some(_) => Kind::Other,
    }
}

/// Is `id` this process (its pid, or one of its threads' ids)?
pub(super) fn is_own_id(id: u32) -> bool {
    own_id(id)
}

/// M1 after an `open`-type call that gave the guest `fd` with `flags`, a
/// procfs file the kernel calls `path`: the result the guest sees.
pub fn opened(vm: &Vm, fd: i64, flags: u64, path: &[u8]) -> i64 {
    if flags & libc::O_PATH as u64 != 0 {
        return fd;
    }
    let writes = flags & (libc::O_WRONLY | libc::O_RDWR) as u64 != 0;
    match classify(path) {
        Kind::NotMem => fd,
        Kind::Own if !writes => {
            watch();
            fd
        }
        kind => {
            // SAFETY: the descriptor the call just made for the guest.
            unsafe { libc::close(fd as i32) };
            static SAID: [std::sync::Once; 2] = [const { std::sync::Once::new() }; 2];
            SAID[usize::from(kind == Kind::Other)].call_once(|| {
                let what = if kind == Kind::Own {
                    "its own /proc/self/mem for writing (writes there would reach hotlift's memory and pass its view of guest code by)"
                } else {
                    "another process's /proc/PID/mem (a process run by hotlift has hotlift's memory too)"
                };
                crate::host::say!(
                    "hotlift: the guest at {} opened {what}: refused with EACCES (said once)",
                    crate::types::GuestAddr(vm.ctx.rip() - 2)
                )
            });
            EACCES
        }
    }
}

/// M2 after a `recvmsg` (`mmsg`: `recvmmsg`) that returned `ret`: did a
/// message carry control data (descriptors among it)?
pub fn received(nr: u64, a: &[u64; 6], ret: i64) {
    if ret < 0 || watching() {
        return;
    }
    // msghdr: msg_controllen at byte 40; an mmsghdr is 64 bytes.
    let (at, n, stride) = if nr as i64 == libc::SYS_recvmmsg {
        (a[1], ret as u64, 64)
    } else {
        (a[1], 1, 0)
    };
    let control = (0..n.min(1024))
        .any(|i| guest_read::<u64>(at.wrapping_add(i * stride + 40)).is_none_or(|len| len != 0));
    if control {
        watch();
    }
}

/// The byte count from `start` (at most `len`) the guest may read of its
/// own memory: guest regions and the vDSO's pages, without a gap.
fn readable_prefix(vm: &Vm, start: u64, len: u64) -> u64 {
    let end = start.saturating_add(len);
    let mut at = start;
    let l = vm.proc.lock();
    while at < end {
        at = match l.mem.find(at) {
            Some((_, r)) => r.end,
            None => match crate::guest_mem::shared_range(at) {
                Some((_, e)) => e,
                None => break,
            },
        };
    }
    at.min(end) - start
}

/// The guest's iovecs at `at` (`n` of them; reach.rs checked their memory).
fn iovecs(at: u64, n: u64) -> Vec<libc::iovec> {
    super::reach::guest_iovecs(at, n)
        .map(|[base, len]| libc::iovec {
            iov_base: base as *mut libc::c_void,
            iov_len: len as usize,
        })
        .collect()
}

/// What M2 makes of a read or write on a `mem` file.
#[derive(Debug)]
pub enum Access {
    /// The call fails with this result, reaching nothing.
    Fail(i64),
    /// The call is made with these arguments instead (a short read;
    /// when vectored, with the iovecs `iov` in place of the guest's), in
    /// its usual place (after code pages its buffers cover are given
    /// back: smc.rs I4).
    Cut {
        args: [u64; 6],
        iov: Option<Vec<libc::iovec>>,
    },
}

impl Access {
    /// Make the cut call.
    pub fn call(&self, nr: u64) -> i64 {
        match self {
            Access::Fail(e) => *e,
            Access::Cut { args, iov } => {
                let mut args = *args;
                if let Some(v) = iov {
                    args[1] = v.as_ptr() as u64;
                    args[2] = v.len() as u64;
                }
                // SAFETY: the guest's own buffers (reach.rs R1 on the
                // arguments it gave), cut shorter; `iov` outlives the call.
                unsafe { crate::runtime::guest_syscall(nr, args) }
            }
        }
    }
}

/// M2: what becomes of read or write syscall `nr` (arguments `a`) when
/// its descriptor is a `mem` file; None: the call goes to the kernel as it
/// is (reach.rs checks it then).
#[allow(non_upper_case_globals)]
pub fn access(vm: &Vm, nr: u64, a: &[u64; 6]) -> Option<Access> {
    use libc::*;
    let fd = a[0] as i32;
    let kind = proc_path(fd).map_or(Kind::NotMem, |p| classify(&p));
    if kind == Kind::NotMem {
        return None;
    }
    if let Some(err) = super::reach::check(vm, nr, a) {
        return Some(Access::Fail(err));
    }
    let reads = matches!(
        nr as i64,
        SYS_read | SYS_pread64 | SYS_readv | SYS_preadv | SYS_preadv2
    );
    if !reads {
        // SAFETY: F_GETFL only reads the descriptor's flags.
        let flags = unsafe { fcntl(fd, F_GETFL) };
        // Not open for writing: the kernel fails it (EBADF), reaching nothing.
        return (flags & O_ACCMODE != O_RDONLY).then_some(Access::Fail(UNMAPPED));
    }
    if kind == Kind::Other {
        return Some(Access::Fail(UNMAPPED));
    }
    let vectored = matches!(nr as i64, SYS_readv | SYS_preadv | SYS_preadv2);
    let mut iov = if vectored {
        iovecs(a[1], a[2])
    } else {
        vec![iovec {
            iov_base: a[1] as *mut c_void,
            iov_len: a[2] as usize,
        }]
    };
    let total: u64 = iov.iter().map(|v| v.iov_len as u64).sum();
    let positioned = match nr as i64 {
        SYS_pread64 => Some(a[3]),
        SYS_preadv => Some(a[3]),
        SYS_preadv2 if a[3] as i64 != -1 => Some(a[3]),
        _ => None,
    };
    let start = match positioned {
        Some(p) => p,
        // SAFETY: SEEK_CUR moves nothing; a mem file's offset is the
        // address (unsigned).
        None => (unsafe { syscall(SYS_lseek, fd, 0i64, SEEK_CUR) }) as u64,
    };
    if total == 0 {
        return None;
    }
    let allowed = readable_prefix(vm, start, total);
    if allowed == total {
        return None;
    }
    if allowed == 0 {
        return Some(Access::Fail(UNMAPPED));
    }
    // A short read: the iovecs cut at `allowed` bytes.
    let mut left = allowed as usize;
    iov.retain_mut(|v| {
        let keep = left > 0;
        v.iov_len = v.iov_len.min(left);
        left -= v.iov_len;
        keep
    });
    let mut args = *a;
    if !vectored {
        args[2] = allowed;
    }
    Some(Access::Cut {
        args,
        iov: vectored.then_some(iov),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_paths_name_their_process() {
        assert_eq!(mem_owner(b"/proc/123/mem"), Some(123));
        assert_eq!(mem_owner(b"/proc/123/task/456/mem"), Some(456));
        assert_eq!(mem_owner(b"/mnt/proc2/77/mem"), Some(77));
        for p in [
            &b"/proc/self/maps"[..],
            b"/proc/123/task/x/mem",
            b"/tmp/mem",
            b"/proc/123/memx",
            b"mem",
        ] {
            assert_eq!(mem_owner(p), None, "{}", String::from_utf8_lossy(p));
        }
    }

    /// M1's classification of real descriptors: our own file by several
    /// names, a symlink to it, and files that are not `mem` files.
    #[test]
    fn descriptors_are_classified_by_what_they_name() {
        use std::os::fd::AsRawFd;
        let pid = std::process::id();
        let dir = std::env::temp_dir().join(format!("hotlift-memfile-{pid}"));
        let _ = std::fs::create_dir_all(&dir);
        let link = dir.join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/proc/self/mem", &link).unwrap();
        for p in [
            "/proc/self/mem".to_string(),
            format!("/proc/{pid}/mem"),
            format!("/proc/{pid}/task/{pid}/mem"),
            "/proc/thread-self/mem".to_string(),
            link.display().to_string(),
        ] {
            let f = std::fs::File::open(&p).unwrap();
            let kind = proc_path(f.as_raw_fd()).map_or(Kind::NotMem, |k| classify(&k));
            assert_eq!(kind, Kind::Own, "{p}");
        }
        for p in ["/proc/self/status", "/proc/self/maps", "/dev/null"] {
            let f = std::fs::File::open(p).unwrap();
            let kind = proc_path(f.as_raw_fd()).map_or(Kind::NotMem, |k| classify(&k));
            assert_eq!(kind, Kind::NotMem, "{p}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
