//! The resource limits a guest sets on itself (`setrlimit`, `prlimit64`),
//! kept from starving hotlift while acting on the guest as natively.
//!
//! The guest runs in hotlift's process, so a limit the kernel applies to
//! the process applies to hotlift too: `RLIMIT_NOFILE` 0 left it no
//! descriptor for the profile, `RLIMIT_FSIZE` 0 no byte of it,
//! `RLIMIT_AS` 0 no memory for a forked child's code cache.
//!
//! I1: for `RLIMIT_FSIZE` and `RLIMIT_NOFILE` the kernel gets the guest's
//!     soft limit, so it acts on the guest's own calls exactly as natively
//!     (`EFBIG` and `SIGXFSZ`, `EMFILE`), but never a hard limit below the
//!     one hotlift started with: hotlift raises the soft limit to it for
//!     its own files ([`lift`]).
//! I2: `RLIMIT_AS` and `RLIMIT_DATA` never reach the kernel, which would
//!     count hotlift's own memory (code cache, ring, tables): the guest's
//!     own mappings are checked against them where the kernel checks a
//!     process's (`mmap`, `mremap`, `brk`; syscall/mem/mod.rs; the initial
//!     stack counted as the kernel grows it: guest_mem `footprint`), and a
//!     new program's image after `execve` too (cli/run.rs: SIGSEGV, as
//!     the kernel's execve fails past its point of no return). `execve`
//!     runs lifted (dispatch/exec.rs) and the next hotlift applies them.
//! I3: the guest reads back the limits it set, and a change is checked as
//!     the kernel checks it: `EINVAL` for a soft limit above the hard one,
//!     `EPERM` for raising a hard limit without `CAP_SYS_RESOURCE` or
//!     `RLIMIT_NOFILE` above `fs.nr_open`. Other limits pass through.
//! I4: a guest's `prlimit64` on another process sets that process's soft
//!     `RLIMIT_FSIZE` or `RLIMIT_NOFILE` as asked but never lowers its
//!     hard limit ([`set_other`]): the other process may be hotlift too
//!     (a parent in the same tree), which raises its soft limits to the
//!     hard ones for its profile (I1). A forked child that lowered its
//!     parent's to 0 lost the parent's profile ("File too large", "Too
//!     many open files"). What the other process's guest reads back is its
//!     own record, not the change.
//! I5: `RLIMIT_SIGPENDING` is kept as I1 keeps `RLIMIT_NOFILE`: the
//!     guest's own queued signals get `EAGAIN` at its soft limit as
//!     natively, but hotlift's own queued signals (the kick that stops
//!     threads before code is dropped, a guest signal queued back while
//!     blocked) are sent with the soft limit raised to the hard one for
//!     that call ([`queue_own`]). With the limit at 0 the kick was
//!     refused: a code change waited 60 s for spinning threads, failed,
//!     and the profile lost what the rings had not yet held.
//! I6: `RLIMIT_NPROC` is kept the same way: the guest's `fork` and
//!     threads meet its soft limit as natively, but hotlift's own threads
//!     (a forked child's monitor) start with it raised to the hard one
//!     ([`raised`], own_thread.rs); a guest that lowered its hard limit too (and then
//!     dropped its privileges) left a forked child no thread for its
//!     monitor, which panicked.
#![allow(unsafe_code)]

use std::sync::Mutex;

/// One limit as `struct rlimit64` holds it; `u64::MAX` is infinity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limit {
    pub cur: u64,
    pub max: u64,
}

/// The limits hotlift keeps for the guest (I1, I2), in this order.
const KEPT: [u32; 6] = [
    libc::RLIMIT_FSIZE,
    libc::RLIMIT_NOFILE,
    libc::RLIMIT_SIGPENDING,
    libc::RLIMIT_NPROC,
    libc::RLIMIT_AS,
    libc::RLIMIT_DATA,
];

/// Does the kernel see the guest's soft limit (I1, I5), or nothing (I2)?
fn applied(resource: u32) -> bool {
    resource == libc::RLIMIT_FSIZE
        || resource == libc::RLIMIT_NOFILE
        || resource == libc::RLIMIT_SIGPENDING
        || resource == libc::RLIMIT_NPROC
}

/// Held while the kernel's soft limits may differ from the guest's for a
/// moment ([`queue_own`]), and by a guest's change of an applied limit, so
/// that neither undoes the other.
static SOFT: Mutex<()> = Mutex::new(());

/// The guest's view of the limits hotlift keeps from the kernel.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GuestLimits {
    kept: [Limit; KEPT.len()],
}

/// Why a change was refused (I3): the errno the kernel gives.
pub type Errno = i32;

impl GuestLimits {
    /// The process's limits as the kernel has them now.
    pub fn from_kernel() -> GuestLimits {
        GuestLimits {
            kept: KEPT.map(|r| {
                kernel_get(r).unwrap_or(Limit {
                    cur: u64::MAX,
                    max: u64::MAX,
                })
            }),
        }
    }

    fn slot(resource: u32) -> Option<usize> {
        KEPT.iter().position(|&r| r == resource)
    }

    /// The guest's limit `resource`, if hotlift keeps it.
    pub fn get(&self, resource: u32) -> Option<Limit> {
        Self::slot(resource).map(|i| self.kept[i])
    }

    /// Whether hotlift keeps `resource` (else it passes through).
    pub fn keeps(resource: u32) -> bool {
        Self::slot(resource).is_some()
    }

    /// The soft `RLIMIT_AS` in bytes, if finite.
    pub fn address_space(&self) -> Option<u64> {
        self.get(libc::RLIMIT_AS)
            .map(|l| l.cur)
            .filter(|&c| c != u64::MAX)
    }

    /// The soft `RLIMIT_DATA` in bytes, if finite.
    pub fn data(&self) -> Option<u64> {
        self.get(libc::RLIMIT_DATA)
            .map(|l| l.cur)
            .filter(|&c| c != u64::MAX)
    }

    /// Check a change of a kept limit (I3) and make it: for a limit the
    /// kernel enforces (I1) it is applied first, and only a change the
    /// kernel took is recorded. `privileged`: the guest may raise hard
    /// limits; `nr_open`: `fs.nr_open`.
    pub fn set(
        &mut self,
        resource: u32,
        new: Limit,
        privileged: bool,
        nr_open: u64,
    ) -> Result<(), Errno> {
        let i = Self::slot(resource).ok_or(libc::EINVAL)?;
        let old = self.kept[i];
        if new.cur > new.max {
            return Err(libc::EINVAL);
        }
        if resource == libc::RLIMIT_NOFILE && new.max > nr_open {
            return Err(libc::EPERM);
        }
        if new.max > old.max && !privileged {
            return Err(libc::EPERM);
        }
        if applied(resource) {
            let _held = SOFT.lock().unwrap_or_else(|e| e.into_inner());
            // I1: the kernel's hard limit stays where it is unless the
            // guest raised its own above it.
            let hard = kernel_get(resource).map_or(new.max, |k| k.max.max(new.max));
            kernel_set(
                resource,
                Limit {
                    cur: new.cur,
                    max: hard,
                },
            )?;
        }
        self.kept[i] = new;
        Ok(())
    }

    /// Give the kernel every kept limit as the guest set it, hard limits
    /// included: for a program that replaces hotlift (a native `execve`).
    pub fn apply_all(&self) {
        for (&r, &l) in KEPT.iter().zip(&self.kept) {
            let _ = kernel_set(r, l);
        }
    }

    /// Give the kernel the guest's soft limits again (I1) after hotlift
    /// raised them for its own files.
    pub fn restore(&self) {
        for (&r, l) in KEPT.iter().zip(&self.kept) {
            if applied(r) {
                if let Some(k) = kernel_get(r) {
                    let _ = kernel_set(
                        r,
                        Limit {
                            cur: l.cur.min(k.max),
                            max: k.max,
                        },
                    );
                }
            }
        }
    }
}

/// The kernel's limit `resource` of this process.
pub fn kernel_get(resource: u32) -> Option<Limit> {
    kernel_get_of(0, resource).ok()
}

/// The kernel's limit `resource` of process `pid` (0: this one).
fn kernel_get_of(pid: i32, resource: u32) -> Result<Limit, Errno> {
    let mut r = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid out pointer and no new limit is passed.
    let rc = unsafe { libc::prlimit64(pid, resource as _, std::ptr::null(), &mut r) };
    if rc == 0 {
        Ok(Limit {
            cur: r.rlim_cur,
            max: r.rlim_max,
        })
    } else {
        Err(last_errno())
    }
}

fn last_errno() -> Errno {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EPERM)
}

fn kernel_set(resource: u32, l: Limit) -> Result<(), Errno> {
    kernel_set_of(0, resource, l)
}

fn kernel_set_of(pid: i32, resource: u32, l: Limit) -> Result<(), Errno> {
    let r = libc::rlimit64 {
        rlim_cur: l.cur,
        rlim_max: l.max,
    };
    // SAFETY: `r` is a valid limit; no old limit is asked for.
    let rc = unsafe { libc::prlimit64(pid, resource as _, &r, std::ptr::null_mut()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(last_errno())
    }
}

/// Set the kernel's `RLIMIT_STACK` (passed through to the kernel: the
/// guest's own) to `l`: raised for hotlift's own `execve` and given back
/// by the next hotlift (dispatch/exec.rs `OWN_STACK`).
pub fn set_stack(l: Limit) {
    let _ = kernel_set(libc::RLIMIT_STACK, l);
}

/// Does a guest's change of another process's limit `resource` go through
/// [`set_other`] (I4)?
pub fn kept_hard(resource: u32) -> bool {
    applied(resource)
}

/// I4: set process `pid`'s limit `resource` to `want`, but its hard limit
/// not below what it is; the limit before, or the kernel's errno.
pub fn set_other(pid: i32, resource: u32, want: Limit) -> Result<Limit, Errno> {
    let before = kernel_get_of(pid, resource)?;
    if want.cur > want.max {
        return Err(libc::EINVAL);
    }
    let max = want.max.max(before.max);
    kernel_set_of(pid, resource, Limit { cur: want.cur, max })?;
    Ok(before)
}

/// I1: raise the kernel's soft limits the guest may have lowered to the
/// hard ones, for hotlift's own descriptors and files: at the end (no
/// guest code runs after) and around a fork ([`GuestLimits::restore`]
/// after; the parent's other threads may see the raised limits while the
/// code cache is copied). Not `RLIMIT_NPROC`: the guest's `fork` is
/// the guest's to be refused (I6).
pub fn lift() {
    for r in KEPT
        .into_iter()
        .filter(|&r| applied(r) && r != libc::RLIMIT_NPROC)
    {
        if let Some(k) = kernel_get(r) {
            if k.cur < k.max {
                let _ = kernel_set(r, Limit { cur: k.max, ..k });
            }
        }
    }
}

/// I5: make `send` (a raw syscall queueing one of hotlift's own signals)
/// and, if the guest's soft `RLIMIT_SIGPENDING` refused it (`EAGAIN`), make
/// it again with the soft limit raised to the hard one for that call. The
/// syscall's result.
pub fn queue_own(send: impl Fn() -> libc::c_long) -> libc::c_long {
    let rc = send();
    if rc == 0 || last_errno() != libc::EAGAIN {
        return rc;
    }
    let (rc, e) = raised(libc::RLIMIT_SIGPENDING, || (send(), last_errno()));
    // The caller reads the errno of `send`, not of the restore.
    // SAFETY: the thread's errno location is always valid.
    unsafe { *libc::__errno_location() = e };
    rc
}

/// `f` with the kernel's soft limit `resource` raised to the hard one
/// and put back after (I5, I6): for what hotlift does itself that a
/// guest's soft limit must not refuse (its queued signals, its threads).
pub fn raised<T>(resource: u32, f: impl FnOnce() -> T) -> T {
    let Some(k) = kernel_get(resource).filter(|k| k.cur < k.max) else {
        return f();
    };
    // Not waited for: a forked child (its monitor's spawn) may find it
    // held by a thread of its parent that did not come along.
    let _held = SOFT.try_lock().ok();
    let lifted = Some(k).filter(|&k| kernel_set(resource, Limit { cur: k.max, ..k }).is_ok());
    let out = f();
    if let Some(k) = lifted {
        let _ = kernel_set(resource, k);
    }
    out
}

/// Whether this process has `CAP_SYS_RESOURCE` in its effective set (it
/// may raise hard limits).
pub fn may_raise_hard_limits() -> bool {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const CAP_SYS_RESOURCE: u32 = 24;
    let mut h = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let mut d = [Data::default(); 2];
    // SAFETY: header and a two-element data array, as version 3 wants.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut h, d.as_mut_ptr()) };
    rc == 0 && d[0].effective & (1 << CAP_SYS_RESOURCE) != 0
}

/// `fs.nr_open`: the ceiling of `RLIMIT_NOFILE`.
pub fn nr_open() -> u64 {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(l: Limit) -> GuestLimits {
        GuestLimits {
            kept: [l; KEPT.len()],
        }
    }

    const AS: u32 = libc::RLIMIT_AS;

    #[test]
    fn checks_as_the_kernel_does() {
        let inf = Limit {
            cur: u64::MAX,
            max: u64::MAX,
        };
        let mut g = limits(Limit { cur: 10, max: 100 });
        let set = |g: &mut GuestLimits, cur, max, privileged| {
            g.set(AS, Limit { cur, max }, privileged, 1 << 20)
        };
        assert_eq!(set(&mut g, 200, 100, true), Err(libc::EINVAL));
        assert_eq!(set(&mut g, 50, 200, false), Err(libc::EPERM));
        assert_eq!(g.get(AS), Some(Limit { cur: 10, max: 100 }));
        assert_eq!(set(&mut g, 50, 80, false), Ok(()));
        assert_eq!(g.address_space(), Some(50));
        // Lowered for good without the privilege.
        assert_eq!(set(&mut g, 50, 100, false), Err(libc::EPERM));
        assert_eq!(set(&mut g, u64::MAX, u64::MAX, true), Ok(()));
        assert_eq!(g.get(AS), Some(inf));
        assert_eq!(g.address_space(), None);
        let nofile = libc::RLIMIT_NOFILE;
        let big = Limit {
            cur: 10,
            max: 1 << 21,
        };
        assert_eq!(g.set(nofile, big, true, 1 << 20), Err(libc::EPERM));
        assert!(!GuestLimits::keeps(libc::RLIMIT_STACK));
        assert!(GuestLimits::keeps(libc::RLIMIT_FSIZE));
    }
}
