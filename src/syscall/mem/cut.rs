//! Files cut under code the guest runs from them: a mapping's pages past
//! a file's new end raise SIGBUS when next touched (guest_mem/probe.rs),
//! and a hole punched reads zeros, so translations of such code are
//! stale.
//!
//! C1: after the guest's own `ftruncate`, `truncate`, an `open` or `creat`
//!     that truncates, or a `fallocate` that punches, collapses, zeroes or
//!     inserts a range, the translations of every image mapped from that
//!     file (by device and inode, images.rs) and of its shared views are
//!     dropped: the next run of that code is translated
//!     again, and faults where the file no longer reaches. A file cut by
//!     another process is not seen (README, known limits).
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

use super::Vm;

/// `fallocate` modes that change what a range reads.
const CHANGES: u64 = 0x02 | 0x08 | 0x10 | 0x20;

/// C1 for syscall `nr` with arguments `a` that returned `ret`.
pub fn after(vm: &mut Vm, nr: u64, a: &[u64; 6], ret: i64) {
    if ret < 0 {
        return;
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
    let Some(id) = id else {
        return;
    };
    let ranges: Vec<(u64, u64)> = {
        let images = vm.proc.prof.images();
        images
            .records
            .iter()
            .filter(|r| r.end_block.is_none() && r.file == Some(id))
            .map(|r| r.code)
            .collect()
    };
    let proc = vm.proc.clone();
    let mut guard = proc.lock();
    let l = &mut *guard;
    let views = l.mem.views_of(id.0, id.1);
    for (s, e) in ranges.into_iter().chain(views) {
        vm.code_changed(l, s, e);
    }
}

fn of_fd(fd: i32) -> Option<(u64, u64)> {
    super::file_identity(fd)
}
