//! Code memory: one shared anonymous object, a read-execute view near the
//! guest and a read-write view for hotlift (module I1, I2).
//!
//! Shared anonymous memory (`MAP_SHARED | MAP_ANONYMOUS`), its second view
//! made by `mremap` with an old size of 0 (a new mapping of the same
//! pages), rather than a memfd: the kernel names it `/dev/zero (deleted)`,
//! which `perf` takes for anonymous memory and so symbolizes from
//! `/tmp/perf-PID.map` (`--perf-map`); a memfd's `/memfd:…` it took for a
//! file and showed as `[unknown]`. A forked child's copy ([`Snapshot`]) is
//! a memfd, which costs a fork less, unless perf must see the child's code
//! too.

use std::sync::atomic::{AtomicU32, Ordering};

use thiserror::Error;

use crate::types::HostAddr;

#[derive(Debug, Error)]
pub enum CacheError {
    #[error("cannot create code memory: {0}")]
    Create(std::io::Error),
    #[error(
        "no room for {size} bytes of code memory within ±2 GiB of the guest image {lo:#x}..{hi:#x}"
    )]
    NoRoomNearGuest { size: usize, lo: u64, hi: u64 },
}

/// Executable memory for translated code.
#[derive(Debug)]
pub struct CodeMem {
    rx: u64,
    rw: *mut u8,
    size: usize,
    /// Both views' whole length: `size` plus a split-off arena.
    mapped: usize,
    used: usize,
    /// Code below this offset (shared stubs) survives [`CodeMem::reset`].
    floor: usize,
    /// Both views are populated below this offset (module I7).
    populated: usize,
    /// Forked children's copies are shared anonymous memory, not memfds
    /// ([`CodeMem::keep_perf_visible`]).
    perf_visible: bool,
}

// SAFETY: the RW view pointer is owned by this value; code memory is only
// written by its owner (the holder of the translation lock) or through
// cache/shared.rs's protocol.
unsafe impl Send for CodeMem {}

const TWO_GIB: u64 = 1 << 31;
/// Bytes of both views populated together ahead of the cursor (module I7).
const POPULATE: usize = 256 << 10;
const MARGIN: u64 = 16 << 20;

fn reaches(lo: u64, hi: u64, rx: u64, size: u64) -> bool {
    let far = (rx + size).max(hi) - rx.min(lo);
    far < TWO_GIB - MARGIN
}

impl CodeMem {
    /// Map `size` bytes of code memory whose execute view lies within reach
    /// of guest addresses [lo, hi), preferring addresses at or above
    /// `prefer_above` (kept free for the guest's brk), and ending at or
    /// below `ceiling` (where hotlift's own stack may grow).
    pub fn new_near(
        lo: u64,
        hi: u64,
        prefer_above: u64,
        ceiling: u64,
        size: usize,
    ) -> Result<CodeMem, CacheError> {
        let size = size.next_multiple_of(4096);
        let step: u64 = 64 << 20;
        let above = prefer_above.max(hi).next_multiple_of(2 << 20);
        let below = lo.saturating_sub(size as u64) & !((2 << 20) - 1);
        let candidates = (0..24)
            .map(|k| above + k * step)
            .chain((1..24).filter_map(|k| below.checked_sub(k * step)))
            .filter(|&c| c >= 1 << 20 && c + size as u64 <= ceiling)
            .filter(|&c| reaches(lo, hi, c, size as u64));
        let mut rx = None;
        for hint in candidates {
            // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping.
            let p = unsafe {
                libc::mmap(
                    hint as *mut libc::c_void,
                    size,
                    libc::PROT_READ | libc::PROT_EXEC,
                    libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED && p as u64 == hint {
                rx = Some(hint);
                break;
            }
            if p != libc::MAP_FAILED {
                // An old kernel that took the flag for a hint.
                // SAFETY: the mapping just made, elsewhere.
                unsafe { libc::munmap(p, size) };
            }
        }
        let Some(rx) = rx else {
            return Err(CacheError::NoRoomNearGuest { size, lo, hi });
        };
        let rw = match second_view(rx as *mut libc::c_void, size, None) {
            Ok(rw) => rw,
            Err(e) => {
                // SAFETY: the view made above, unused.
                unsafe { libc::munmap(rx as *mut libc::c_void, size) };
                return Err(CacheError::Create(e));
            }
        };
        Ok(CodeMem {
            rx,
            rw,
            size,
            mapped: size,
            used: 0,
            floor: 0,
            populated: 0,
            perf_visible: false,
        })
    }

    /// After `fork`: give this process code memory of its own, holding
    /// only the shared stubs (below the floor), for a child that flushes
    /// every translation next. Both views map one `MAP_SHARED` object,
    /// which a forked child shares with its parent, so each would run the
    /// code the other writes: a new object replaces both views at the same
    /// addresses. Only the calling thread may exist (a fresh child). The
    /// code above the floor is not copied (the flush forgets it), and
    /// nothing is left there to turn into `int3`: the new memory is zero.
    pub fn unshare(&mut self) -> std::io::Result<()> {
        let copy = self.copy(self.floor)?;
        self.adopt(copy)?;
        self.used = self.floor;
        Ok(())
    }

    /// A new object holding this code memory's committed code as it is
    /// now (the arena's is not copied), for a child to [`CodeMem::adopt`]
    /// after a fork: taken by the parent before the fork while no thread
    /// can write code (dispatch/fork.rs F2), so the copy is consistent.
    pub fn snapshot(&self) -> std::io::Result<Snapshot> {
        self.copy(self.used)
    }

    /// A copy of this code memory's first `len` bytes, the size of it:
    /// a memfd (the kernel writes its pages directly, no faults, no
    /// zeroing), or shared anonymous memory where a forked child's code
    /// must stay visible to perf ([`CodeMem::keep_perf_visible`]).
    fn copy(&self, len: usize) -> std::io::Result<Snapshot> {
        if self.perf_visible {
            self.copy_anon(len)
        } else {
            self.copy_file(len)
        }
    }

    /// The copy as shared anonymous memory.
    fn copy_anon(&self, len: usize) -> std::io::Result<Snapshot> {
        // SAFETY: a fresh mapping anywhere; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                self.mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: [0, len) is inside the RW view (len <= used) and the new
        // mapping (len <= mapped); they do not overlap. Its pages made in
        // one call first, not faulted in one by one by the copy (an old
        // kernel without MADV_POPULATE_WRITE refuses, and they fault in).
        unsafe {
            libc::madvise(p, len.next_multiple_of(4096), libc::MADV_POPULATE_WRITE);
            std::ptr::copy_nonoverlapping(self.rw, p as *mut u8, len);
        }
        Ok(Snapshot(Copy::Anon(p as *mut u8, self.mapped)))
    }

    /// The copy as a memfd.
    fn copy_file(&self, len: usize) -> std::io::Result<Snapshot> {
        use std::os::fd::FromRawFd;
        // SAFETY: memfd_create with a static name; checked below.
        let raw = unsafe { libc::memfd_create(c"hotlift-code".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor of ours.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
        // A file size limit the guest set applies to the memfd too, and
        // going past it would raise SIGXFSZ: lift it for the copy.
        let _limit = FileSizeLimit::lift(self.mapped as u64)?;
        // SAFETY: fd is a fresh memfd of ours.
        if unsafe { libc::ftruncate(raw, self.mapped as libc::off_t) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut done = 0usize;
        while done < len {
            // SAFETY: [done, len) is inside the RW view (len <= used).
            let n = unsafe {
                libc::pwrite(
                    raw,
                    self.rw.add(done) as *const libc::c_void,
                    len - done,
                    done as libc::off_t,
                )
            };
            if n <= 0 {
                return Err(if n == 0 {
                    std::io::Error::from(std::io::ErrorKind::WriteZero)
                } else {
                    std::io::Error::last_os_error()
                });
            }
            done += n as usize;
        }
        Ok(Snapshot(Copy::File(fd)))
    }

    /// Put `copy` (a [`CodeMem::snapshot`] of this code memory) in place of
    /// both views, at the same addresses. Only the calling thread may
    /// exist (a fresh child).
    pub fn adopt(&mut self, mut copy: Snapshot) -> std::io::Result<()> {
        // New mappings: nothing is populated (module I7); what the parent
        // wrote faults in where it runs.
        self.populated = 0;
        let views = [
            (
                self.rx as *mut libc::c_void,
                libc::PROT_READ | libc::PROT_EXEC,
            ),
            (
                self.rw as *mut libc::c_void,
                libc::PROT_READ | libc::PROT_WRITE,
            ),
        ];
        match std::mem::replace(&mut copy.0, Copy::Taken) {
            Copy::File(fd) => {
                use std::os::fd::AsRawFd;
                for (at, prot) in views {
                    // SAFETY: replaces exactly this code memory's own views
                    // (no other thread runs: a fresh child); the mappings
                    // keep the memfd alive after `fd` is closed.
                    let p = unsafe {
                        libc::mmap(
                            at,
                            self.mapped,
                            prot,
                            libc::MAP_SHARED | libc::MAP_FIXED,
                            fd.as_raw_fd(),
                            0,
                        )
                    };
                    if p == libc::MAP_FAILED {
                        return Err(std::io::Error::last_os_error());
                    }
                }
            }
            Copy::Anon(at, len) => {
                assert_eq!(len, self.mapped, "a snapshot of this code memory");
                let src = at as *mut libc::c_void;
                // The execute view: a second mapping of the copy's pages
                // over the old one (no other thread runs: a fresh child).
                second_view(src, len, Some(views[0].0))?;
                // SAFETY: the view just made, exactly.
                if unsafe { libc::mprotect(views[0].0, len, views[0].1) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The write view: the copy itself, moved over the old one.
                // SAFETY: moves the copy's own mapping onto this code
                // memory's write view, which it replaces.
                let p = unsafe {
                    libc::mremap(
                        src,
                        len,
                        len,
                        libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                        views[1].0,
                    )
                };
                if p == libc::MAP_FAILED {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Copy::Taken => unreachable!("a snapshot is adopted once"),
        }
        Ok(())
    }

    /// Make forked children's copies shared anonymous memory too, which
    /// perf symbolizes from their perf maps (`--perf-map`); a memfd copy,
    /// the default, costs a fork less (no zeroing, no faults).
    pub fn keep_perf_visible(&mut self) {
        self.perf_visible = true;
    }

    pub fn cursor(&self) -> HostAddr {
        HostAddr(self.rx + self.used as u64)
    }

    pub fn remaining(&self) -> usize {
        self.size - self.used
    }

    /// The execute range of this code memory (without a split-off arena).
    pub fn range(&self) -> (u64, u64) {
        (self.rx, self.rx + self.size as u64)
    }

    /// Copy `bytes` to the cursor (which they were encoded for) and advance
    /// it to the next 16-byte boundary, padding with `int3`.
    pub fn commit(&mut self, bytes: &[u8]) -> HostAddr {
        let at = self.cursor();
        let padded = bytes.len().next_multiple_of(16);
        assert!(
            padded <= self.remaining(),
            "commit of {} bytes past the end of code memory",
            bytes.len()
        );
        if self.used + padded > self.populated {
            self.populate(self.used + padded);
        }
        // SAFETY: [used, used+padded) lies inside the RW view.
        unsafe {
            let dst = self.rw.add(self.used);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
            std::ptr::write_bytes(dst.add(bytes.len()), 0xcc, padded - bytes.len());
        }
        self.used += padded;
        at
    }

    /// Populate both views from the cursor's page to past `end` (module
    /// I7), [`POPULATE`] bytes at a time.
    #[cold]
    fn populate(&mut self, end: usize) {
        let from = (self.used & !4095).max(self.populated);
        let to = end.next_multiple_of(POPULATE).min(self.size);
        if to <= from {
            return;
        }
        let len = to - from;
        // SAFETY: [from, to) lies inside both views; populating changes no
        // contents. A kernel without MADV_POPULATE_* (before 5.14) refuses
        // and the pages fault in on first touch as before.
        unsafe {
            libc::madvise(
                self.rw.add(from) as *mut libc::c_void,
                len,
                libc::MADV_POPULATE_WRITE,
            );
            libc::madvise(
                (self.rx + from as u64) as *mut libc::c_void,
                len,
                libc::MADV_POPULATE_READ,
            );
        }
        self.populated = to;
    }

    /// Point the rel32 field at `field` to `target` (I2).
    pub fn patch_rel32(&self, field: HostAddr, target: HostAddr) {
        assert!(field.0.is_multiple_of(4), "unaligned patch site {field:?}");
        assert!(
            field.0 >= self.rx && field.0 + 4 <= self.rx + self.used as u64,
            "patch site {field:?} outside code"
        );
        let rel = target.0.wrapping_sub(field.0 + 4) as i64;
        assert!(
            i32::try_from(rel).is_ok(),
            "patch from {field:?} to {target:?} out of rel32 range"
        );
        let off = (field.0 - self.rx) as usize;
        // SAFETY: aligned, inside the RW view; an atomic store is one write.
        let slot = unsafe { &*(self.rw.add(off) as *const AtomicU32) };
        slot.store(rel as i32 as u32, Ordering::Release);
    }

    /// Give the last `bytes` (rounded to pages) to the superblock arena
    /// (cache/shared.rs I2); this code memory ends before them.
    pub fn split_tail(&mut self, bytes: usize) -> super::shared::Arena {
        let bytes = bytes.next_multiple_of(4096).min(self.size - self.used);
        self.size -= bytes;
        super::shared::Arena {
            rx: self.rx + self.size as u64,
            // SAFETY: size <= the RW view's length.
            rw: unsafe { self.rw.add(self.size) },
            size: bytes,
            rw_delta: self.rx as i64 - self.rw as i64,
        }
    }

    /// First address above the shared stubs.
    pub fn floor_addr(&self) -> u64 {
        self.rx + self.floor as u64
    }

    /// Keep everything committed so far across resets (shared stubs).
    pub fn set_floor(&mut self) {
        self.floor = self.used;
    }

    /// Forget every block above the floor; stale bytes become `int3`.
    pub fn reset(&mut self) {
        // SAFETY: [floor, used) is inside the RW view.
        unsafe { std::ptr::write_bytes(self.rw.add(self.floor), 0xcc, self.used - self.floor) };
        self.used = self.floor;
    }
}

/// A copy of code memory for a forked child ([`CodeMem::snapshot`]): the
/// parent drops its own after the fork (an anonymous copy's mapping goes
/// with it), the child's becomes its code memory ([`CodeMem::adopt`]).
#[derive(Debug)]
pub struct Snapshot(Copy);

#[derive(Debug)]
enum Copy {
    File(std::os::fd::OwnedFd),
    /// A shared anonymous mapping: where, how long.
    Anon(*mut u8, usize),
    /// Adopted.
    Taken,
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        if let Copy::Anon(at, len) = self.0 {
            // SAFETY: the mapping `copy_anon` made, not adopted (adopt
            // takes it).
            unsafe { libc::munmap(at as *mut libc::c_void, len) };
        }
    }
}

/// A second mapping of the shared pages at `view` (`len` bytes), read and
/// write, anywhere or at `fixed` (replacing what is there): the pointer.
fn second_view(
    view: *mut libc::c_void,
    len: usize,
    fixed: Option<*mut libc::c_void>,
) -> std::io::Result<*mut u8> {
    let (flags, to) = match fixed {
        Some(at) => (libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED, at),
        None => (libc::MREMAP_MAYMOVE, std::ptr::null_mut()),
    };
    // SAFETY: an old size of 0 on a shared mapping makes a new mapping of
    // the same pages and leaves `view` as it is.
    let p = unsafe { libc::mremap(view, 0, len, flags, to) };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the mapping just made: readable and writable, not executable.
    if unsafe { libc::mprotect(p, len, libc::PROT_READ | libc::PROT_WRITE) } != 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: the mapping just made.
        unsafe { libc::munmap(p, len) };
        return Err(e);
    }
    Ok(p as *mut u8)
}

/// `RLIMIT_FSIZE` raised to its hard limit while hotlift writes a file of
/// its own (a memfd), put back when dropped.
struct FileSizeLimit(Option<libc::rlimit>);

impl FileSizeLimit {
    /// Make room for a file of `size` bytes, or fail with `EFBIG` (without
    /// the signal) when the hard limit is below it.
    fn lift(size: u64) -> std::io::Result<FileSizeLimit> {
        let mut old = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into `old`.
        if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut old) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if old.rlim_cur == libc::RLIM_INFINITY || old.rlim_cur >= size {
            return Ok(FileSizeLimit(None));
        }
        if old.rlim_max != libc::RLIM_INFINITY && old.rlim_max < size {
            return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
        }
        let new = libc::rlimit {
            rlim_cur: old.rlim_max,
            rlim_max: old.rlim_max,
        };
        // SAFETY: setrlimit reads `new`.
        if unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &new) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(FileSizeLimit(Some(old)))
    }
}

impl Drop for FileSizeLimit {
    fn drop(&mut self) {
        if let Some(old) = self.0 {
            // SAFETY: setrlimit reads `old`, the limit as it was.
            unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &old) };
        }
    }
}
