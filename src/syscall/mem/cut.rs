//! Files cut or written under code the guest runs from them: a
//! mapping's pages past a file's new end raise SIGBUS when next touched
//! (guest_mem/probe.rs), a hole punched reads zeros, and new bytes
//! written into the file show through a private mapping's untouched
//! pages, so translations of such code are stale.
//!
//! C1: after the guest's own `ftruncate`, `truncate`, an `open` or `creat`
//!     that truncates, or a `fallocate` that punches, collapses, zeroes or
//!     inserts a range, the translations of every image mapped from that
//!     file (by device and inode, images.rs) and of its shared views are
//!     dropped: the next run of that code is translated
//!     again, and faults where the file no longer reaches. A file cut by
//!     another process is not seen (README, known limits).
//! C2: the same for code mapped privately from a file the guest writes
//!     (`write`, `pwrite64`, `writev`, `pwritev`, `pwritev2`): the pages
//!     of a private mapping the process never wrote are the file's, and
//!     run its new bytes natively. Writes are looked at
//!     ([`file_written`], `guest_mem::exec_views`) once code is mapped from
//!     a file the guest can write: mapped from a descriptor open for
//!     writing, or from a file the process opened for writing before
//!     ([`WRITABLE`]), or a file with code mapped opened for writing
//!     after. Until then a write costs nothing more (an open for writing
//!     costs an `fstat`); after, a write costs an `fstat`.
//!     Not seen: a file written by another process, or through
//!     `copy_file_range`, `sendfile`, `splice` or a shared writable
//!     mapping of it (README, known limits).
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

use super::Vm;

/// `fallocate` modes that change what a range reads.
const CHANGES: u64 = 0x02 | 0x08 | 0x10 | 0x20;

/// C2: the files (device, inode) this process opened for writing.
static WRITABLE: std::sync::Mutex<Option<std::collections::HashSet<(u64, u64)>>> =
    std::sync::Mutex::new(None);

/// C1 for syscall `nr` with arguments `a` that returned `ret`, and C2's
/// look at what an open for writing opened.
pub fn after(vm: &mut Vm, nr: u64, a: &[u64; 6], ret: i64) {
    if ret < 0 {
        return;
    }
    let writes = |flags: u64| flags & libc::O_ACCMODE as u64 != libc::O_RDONLY as u64;
    let flags = match nr as i64 {
        libc::SYS_creat => Some(libc::O_WRONLY as u64),
        libc::SYS_open => Some(a[1]),
        libc::SYS_openat => Some(a[2]),
        libc::SYS_openat2 => Some(super::super::open_how_flags(a[2])),
        _ => None,
    };
    if flags.is_some_and(writes) {
        opened_for_writing(vm, ret as i32);
    }
    let trunc = |flags: u64| flags & libc::O_TRUNC as u64 != 0;
    let id = match nr as i64 {
        libc::SYS_ftruncate => of_fd(a[0] as i32),
        libc::SYS_fallocate if a[1] & CHANGES != 0 => of_fd(a[0] as i32),
        libc::SYS_creat => of_fd(ret as i32),
        libc::SYS_open if trunc(a[1]) => of_fd(ret as i32),
        libc::SYS_openat if trunc(a[2]) => of_fd(ret as i32),
        libc::SYS_openat2 if trunc(super::super::open_how_flags(a[2])) => of_fd(ret as i32),
        libc::SYS_truncate => crate::guest_mem::read_cstr(a[0], 4096)
            .and_then(|p| std::fs::metadata(std::ffi::OsStr::from_bytes(&p)).ok())
            .map(|m| (m.dev(), m.ino())),
        _ => return,
    };
    if let Some(id) = id {
        drop_code_of(vm, id);
    }
}

/// The code ranges of the images mapped from file `id` now.
fn code_of(vm: &Vm, id: (u64, u64)) -> Vec<(u64, u64)> {
    let images = vm.proc.prof.images();
    images
        .records
        .iter()
        .filter(|r| r.end_block.is_none() && r.file == Some(id))
        .map(|r| r.code)
        .collect()
}

/// C1, C2: the translations of the code mapped from file `id` (its
/// images, its shared views) go.
fn drop_code_of(vm: &mut Vm, id: (u64, u64)) {
    let ranges = code_of(vm, id);
    let proc = vm.proc.clone();
    let mut guard = proc.lock();
    let l = &mut *guard;
    let views = l.mem.views_of(id.0, id.1);
    for (s, e) in ranges.into_iter().chain(views) {
        vm.code_changed(l, s, e);
    }
}

/// C2: the guest opened `fd` for writing: remembered, and writes looked
/// at from now on if code is mapped from it.
fn opened_for_writing(vm: &Vm, fd: i32) {
    let Some(id) = of_fd(fd) else {
        return;
    };
    if !code_of(vm, id).is_empty() {
        crate::guest_mem::watch_file_writes();
    }
    WRITABLE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(Default::default)
        .insert(id);
}

/// C2: code was mapped from the file `fd` opens: writes are looked at
/// from now on if the guest can write the file.
pub fn code_mapped(fd: i32) {
    if crate::guest_mem::exec_views() {
        return;
    }
    // SAFETY: F_GETFL reads the descriptor's flags; a bad one is an error.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let writable = flags >= 0 && flags & libc::O_ACCMODE != libc::O_RDONLY;
    // The set is looked at (and the file's identity read) only once the
    // guest opened some file for writing: not while ld.so maps libraries.
    let opened = || {
        let w = WRITABLE.lock().unwrap_or_else(|e| e.into_inner());
        w.as_ref()
            .is_some_and(|w| !w.is_empty() && of_fd(fd).is_some_and(|id| w.contains(&id)))
    };
    if writable || opened() {
        crate::guest_mem::watch_file_writes();
    }
}

/// C2 (and dispatch/smc.rs I7): the guest is about to write into the file
/// `fd` opens: the translations made from its mappings go first.
pub fn file_written(vm: &mut Vm, fd: i32) {
    if let Some(id) = of_fd(fd) {
        drop_code_of(vm, id);
    }
}

fn of_fd(fd: i32) -> Option<(u64, u64)> {
    super::file_identity(fd)
}
