//! The program's view of itself: `/proc/self/exe` names the guest program,
//! not hotlift, as it would natively.
//!
//! I1: `readlink`/`readlinkat` of `/proc/self/exe` (or `/proc/<pid>/exe`,
//!     `/proc/thread-self/exe`) return the guest's canonical path, truncated
//!     to the buffer like the kernel does (no NUL).
//! I2: `open`/`openat` of those paths open the guest program instead.
//! I3: the kernel's own record of where the process's arguments,
//!     environment and auxv are (`/proc/self/cmdline`, `environ`, `auxv`,
//!     and what `ps` shows) is pointed at the guest's, before hotlift starts
//!     a second thread ([`adopt_guest_view`], `prctl(PR_SET_MM_MAP)`, which
//!     needs no privilege), so those files behave exactly as natively — a
//!     program that rewrites its argv sees that in its cmdline.
//! I4: `open`/`openat` of `/proc/self/maps`, `smaps` and `numa_maps` (and
//!     the same under the process's pid or `thread-self`) give a copy of
//!     the kernel's file cut to the guest's own memory ([`guest_view`]),
//!     as QEMU user mode does: hotlift's mappings (its program, heap, code
//!     cache and its writable alias, ring, placeholders) are not there,
//!     the guest's brk is `[heap]`, and the kernel's `[stack]`, `[vdso]`,
//!     `[vvar]` and `[vsyscall]` stay (the vDSO's lines until the guest
//!     unmaps it: hotlift keeps it, syscall/mem/mod.rs I8). The copy is made at `open`, read
//!     from a memory file; asking to write it is `EACCES`, as natively.
//!     `status` is served the same way with its `Threads:` count the
//!     guest's own (hotlift's thread registry).
//! I5: its `mem` files are memfile.rs's: looked at by what the kernel
//!     opened, not by the path given.
//! I6: an entry of its own `/proc/self/map_files` (by any of the names of
//!     I4, or relative to a descriptor or working directory there) that is
//!     not all guest memory does not exist for `open`/`openat` and
//!     `readlink`/`readlinkat` (`ENOENT`, as natively for a range with no
//!     mapping): those entries open the mapped object itself, so the code
//!     cache's memory file opened that way was a way to write translated
//!     code (the kernel lets only a privileged process, e.g. root, open
//!     them). Listing the directory still shows hotlift's ranges' names.
//! I7: what an `open` gave the guest is judged again by what the kernel
//!     opened ([`opened`]), so no other name for those files reaches
//!     them (`/proc//self/maps`, `/proc/self/root/proc/self/maps`,
//!     `task/..`, a symlink, another thread's id, a directory descriptor
//!     or working directory inside `/proc/self`): a procfs file the kernel
//!     calls one of this process's `maps`, `smaps` or `numa_maps` is
//!     served as I4; an unlinked memory object that backs one of hotlift's
//!     own mappings (the code cache's, through a `map_files` entry) is
//!     closed again, `ENOENT` as I6. The cost is memfile.rs M1's one
//!     `fstatfs` an open; only a procfs file then has its path read, only
//!     a tmpfs one is `fstat`ed (and `maps` read when it is unlinked). I4
//!     and I6 by path stay, and save the open where they see it.
//! `open` here is `open`, `openat` and `openat2` alike. Other `/proc/self`
//! files (`pagemap`, `stat`, the rest of `status`) still show hotlift's
//! process (README, threat model).

use super::{guest_write_bytes, syscall6, EFAULT};
use crate::dispatch::Vm;
use crate::guest_mem::read_bytes;

const PATH_MAX: usize = 4096;

fn guest_cstr(addr: u64) -> Option<Vec<u8>> {
    crate::guest_mem::read_cstr(addr, PATH_MAX)
}

/// Does `path` name this process's `/proc` file `what` (also one of its
/// threads', `/proc/self/task/TID/what`)?
fn names_self(path: &[u8], what: &[u8]) -> bool {
    let Some(dir) = path
        .strip_suffix(what)
        .and_then(|p| p.strip_suffix(b"/"))
        .and_then(|p| p.strip_prefix(b"/proc/"))
    else {
        return false;
    };
    // A thread of the process: its own view of the same memory.
    let dir = match dir.windows(6).position(|w| w == b"/task/") {
        Some(i) if dir[i + 6..].iter().all(u8::is_ascii_digit) && dir.len() > i + 6 => &dir[..i],
        _ => dir,
    };
    dir == b"self"
        || dir == b"thread-self"
        || dir == crate::guest_mem::own_pid().to_string().as_bytes()
}

/// The range a `/proc/…/map_files/START-END` path of this process names.
fn map_files_range(path: &[u8]) -> Option<(u64, u64)> {
    let at = path.windows(11).rposition(|w| w == b"/map_files/")?;
    let (dir, name) = (&path[..at + 10], &path[at + 11..]);
    if !names_self(dir, b"map_files") {
        return None;
    }
    let (a, b) = std::str::from_utf8(name).ok()?.split_once('-')?;
    Some((
        u64::from_str_radix(a, 16).ok()?,
        u64::from_str_radix(b, 16).ok()?,
    ))
}

/// `path` as the kernel resolves it for a `*at` call with `dirfd` (None:
/// a plain `open`/`readlink`, relative to the working directory).
fn absolute(path: &[u8], dirfd: Option<u64>) -> Vec<u8> {
    if path.starts_with(b"/") {
        return path.to_vec();
    }
    let base = match dirfd {
        Some(fd) if fd as i32 != libc::AT_FDCWD => {
            std::fs::read_link(format!("/proc/self/fd/{}", fd as i32))
        }
        _ => std::env::current_dir(),
    };
    let Ok(base) = base else {
        return path.to_vec();
    };
    let mut v = std::os::unix::ffi::OsStrExt::as_bytes(base.as_os_str()).to_vec();
    v.push(b'/');
    v.extend_from_slice(path);
    v
}

/// I6: does `path` (resolved for `dirfd`) name a `map_files` entry that is
/// not all the guest's memory?
fn hidden_map_file(vm: &Vm, path: &[u8], dirfd: Option<u64>) -> bool {
    // Cheap first: an absolute path through a map_files directory, or a
    // relative name shaped like an entry's (`START-END` in hex); only
    // those are resolved.
    let entry_like = |n: &[u8]| {
        n.iter().filter(|&&c| c == b'-').count() == 1
            && n.iter().all(|c| c.is_ascii_hexdigit() || *c == b'-')
    };
    let candidate = if path.starts_with(b"/") {
        path.windows(11).any(|w| w == b"/map_files/")
    } else {
        entry_like(path.rsplit(|&c| c == b'/').next().unwrap_or(path))
    };
    if !candidate {
        return false;
    }
    let Some((start, end)) = map_files_range(&absolute(path, dirfd)) else {
        return false;
    };
    !(start < end && vm.proc.lock().mem.owns_all(start, end))
}

pub fn names_self_exe(path: &[u8]) -> bool {
    names_self(path, b"exe")
}

/// I3: make the kernel's argument, environment and auxv ranges of this
/// process the guest's, from its initial stack at `sp` (argc, argv, NULL,
/// envp, NULL, auxv; the strings lie one after the other). Only while
/// hotlift has a single thread: the same call sets the brk, read just
/// before.
pub fn adopt_guest_view(sp: u64) -> Result<(), String> {
    let word = |a: u64| -> Result<u64, String> {
        read_bytes(a, 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| format!("guest stack unreadable at {a:#x}"))
    };
    let argc = word(sp)?;
    let argv = sp + 8;
    let envp = argv + 8 * (argc + 1);
    let mut envc = 0;
    while word(envp + 8 * envc)? != 0 {
        envc += 1;
    }
    let auxv = envp + 8 * (envc + 1);
    let mut auxc = 0;
    while word(auxv + 16 * auxc)? != 0 {
        auxc += 1;
    }
    let end_of = |ptr: u64| -> Result<u64, String> {
        let s = word(ptr)?;
        Ok(s + guest_cstr(s).map_or(0, |v| v.len() as u64) + 1)
    };
    let (arg_start, arg_end) = if argc == 0 {
        (0, 0)
    } else {
        (word(argv)?, end_of(argv + 8 * (argc - 1))?)
    };
    let (env_start, env_end) = if envc == 0 {
        (arg_end, arg_end)
    } else {
        (word(envp)?, end_of(envp + 8 * (envc - 1))?)
    };
    // The fields the call also sets, as they are (proc(5), stat fields
    // 26-28 and 45-47), and the current brk.
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| e.to_string())?;
    let after = stat.rsplit_once(')').ok_or("unreadable /proc/self/stat")?.1;
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|t| t.parse().unwrap_or(0))
        .collect();
    // f[0] is field 3.
    let field = |n: usize| f.get(n - 3).copied().unwrap_or(0);
    // SAFETY: brk(0) only reports the current break.
    let brk = unsafe { libc::syscall(libc::SYS_brk, 0) } as u64;
    // struct prctl_mm_map (linux/prctl.h).
    #[repr(C)]
    struct MmMap {
        start_code: u64,
        end_code: u64,
        start_data: u64,
        end_data: u64,
        start_brk: u64,
        brk: u64,
        start_stack: u64,
        arg_start: u64,
        arg_end: u64,
        env_start: u64,
        env_end: u64,
        auxv: u64,
        auxv_size: u32,
        exe_fd: u32,
    }
    let map = MmMap {
        start_code: field(26),
        end_code: field(27),
        start_data: field(45),
        end_data: field(46),
        start_brk: field(47),
        brk,
        start_stack: sp,
        arg_start,
        arg_end,
        env_start,
        env_end,
        auxv,
        auxv_size: (16 * (auxc + 1)) as u32,
        exe_fd: u32::MAX,
    };
    const PR_SET_MM_MAP: u64 = 14;
    // SAFETY: the kernel validates every range against this process's
    // mappings; exe_fd -1 leaves /proc/self/exe alone.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_MM,
            PR_SET_MM_MAP,
            &map as *const MmMap as u64,
            std::mem::size_of::<MmMap>() as u64,
            0u64,
        )
    };
    if r != 0 {
        return Err(format!(
            "prctl(PR_SET_MM_MAP): {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// `readlink(path, buf, size)` with `path` at `a[path_arg]`; None when the
/// path is not the guest's own executable (pass it through).
pub fn readlink(vm: &Vm, dirfd: Option<u64>, path: u64, buf: u64, size: u64) -> Option<i64> {
    let name = guest_cstr(path)?;
    if hidden_map_file(vm, &name, dirfd) {
        return Some(-(libc::ENOENT as i64));
    }
    if !names_self_exe(&name) {
        return None;
    }
    let exe = vm.proc.exe_path.as_bytes();
    let n = exe.len().min(size as usize);
    Some(if guest_write_bytes(vm, buf, &exe[..n]) {
        n as i64
    } else {
        EFAULT
    })
}

/// The `/proc` files of the process's memory that the guest sees cut to
/// its own (I4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    Maps,
    Smaps,
    NumaMaps,
    Status,
}

fn names_view(path: &[u8]) -> Option<View> {
    [
        (View::Maps, &b"maps"[..]),
        (View::Smaps, b"smaps"),
        (View::NumaMaps, b"numa_maps"),
        (View::Status, b"status"),
    ]
    .into_iter()
    .find(|(_, name)| names_self(path, name))
    .map(|(v, _)| v)
}

/// I4: the kernel's `status` text `real` with its `Threads:` count that
/// of the guest's threads, `guest` (hotlift's registry: its own threads,
/// the monitor's and helpers', are not there, nor one of the guest's
/// past its exit).
fn status_view(real: &str, guest: usize) -> String {
    let mut out = String::with_capacity(real.len());
    for line in real.split_inclusive('\n') {
        let count = line
            .strip_prefix("Threads:")
            .and_then(|n| n.trim().parse::<usize>().ok());
        match count {
            Some(_) => out.push_str(&format!("Threads:\t{}\n", guest.max(1))),
            None => out.push_str(line),
        }
    }
    out
}

/// Labels the kernel gives memory the guest uses but did not map itself.
const KERNEL_LABELS: [&str; 5] = ["[stack]", "[vdso]", "[vvar]", "[vvar_vclock]", "[vsyscall]"];

/// The ranges of a maps text's lines.
fn maps_extents(maps: &str) -> Vec<(u64, u64)> {
    maps.lines().filter_map(crate::host::maps_range).collect()
}

/// I4: the kernel's `maps`/`smaps`/`numa_maps` text `real` cut to the
/// ranges `guest` (sorted, disjoint), the parts in `heap` labelled
/// `[heap]`. A mapping line keeps what of its range lies in guest memory
/// (a file offset moves with its start; smaps' sizes are the whole
/// mapping's); lines labelled as in [`KERNEL_LABELS`] stay whole.
/// `numa_maps` names a mapping by its start only: `extents` (the kernel's
/// maps ranges) give its end, since the kernel may have merged a guest
/// mapping with hotlift's just below it; such a line is shown once per
/// guest part, at the part's start.
fn guest_view(
    real: &str,
    view: View,
    guest: &[(u64, u64, crate::loader::Prot)],
    heap: (u64, u64),
    extents: &[(u64, u64)],
) -> String {
    let mut out = String::with_capacity(real.len() / 2);
    // smaps: the detail lines of the mapping before are kept with it.
    let mut keep_details = false;
    for line in real.lines() {
        let Some((range, rest)) = line.split_once(' ') else {
            if keep_details {
                out.push_str(line);
                out.push('\n');
            }
            continue;
        };
        let bounds = if view == View::NumaMaps {
            u64::from_str_radix(range, 16).ok().map(|a| {
                let end = extents.iter().find(|x| x.0 == a).map_or(a + 1, |x| x.1);
                (a, end)
            })
        } else {
            range.split_once('-').and_then(|(a, b)| {
                Some((
                    u64::from_str_radix(a, 16).ok()?,
                    u64::from_str_radix(b, 16).ok()?,
                ))
            })
        };
        let Some((start, end)) = bounds else {
            // An smaps detail line ("Rss:   4 kB").
            if keep_details {
                out.push_str(line);
                out.push('\n');
            }
            continue;
        };
        keep_details = false;
        let labelled = KERNEL_LABELS.iter().any(|l| rest.trim_end().ends_with(l));
        // The guest's own protection where it has one (the kernel's is
        // never executable for guest memory: syscall/mem/mod.rs I8).
        let own = |at: u64| guest.iter().find(|g| g.0 <= at && at < g.1).map(|g| g.2);
        // The vDSO and its data once the guest unmapped them (hotlift
        // keeps them: syscall/mem/mod.rs I8) are gone from its view.
        let unmapped_shared =
            labelled && (rest.contains("[vdso]") || rest.contains("[vvar")) && own(start).is_none();
        let parts: Vec<(u64, u64, Option<crate::loader::Prot>)> = if unmapped_shared {
            Vec::new()
        } else if labelled {
            vec![(start, end, own(start))]
        } else {
            guest
                .iter()
                .map(|&(s, e, p)| (s.max(start), e.min(end), Some(p)))
                .filter(|(s, e, _)| s < e)
                .fold(Vec::new(), |mut v: Vec<(u64, u64, _)>, (s, e, p)| {
                    // One mapping of the kernel's is one line where the
                    // guest's protection is the same throughout (a mapping
                    // that grew down, growsdown.rs, or a heap grown in
                    // steps is one region of the guest's per step), but
                    // the heap's bounds stay lines' bounds.
                    match v.last_mut() {
                        Some(last) if last.1 == s && last.2 == p && s != heap.0 && s != heap.1 => {
                            last.1 = e
                        }
                        _ => v.push((s, e, p)),
                    }
                    v
                })
        };
        if view == View::NumaMaps {
            for (s, _, _) in parts {
                out.push_str(&format!("{s:x} {rest}\n"));
            }
            continue;
        }
        for (s, e, prot) in parts {
            // Fields after the range: perms offset dev inode [path].
            let mut f = rest.splitn(4, ' ');
            let (kernel_perms, offset, dev, tail) = (
                f.next().unwrap_or(""),
                f.next().unwrap_or("0"),
                f.next().unwrap_or(""),
                f.next().unwrap_or(""),
            );
            let perms = match prot {
                Some(p) => format!(
                    "{}{}{}{}",
                    if p.r { 'r' } else { '-' },
                    if p.w { 'w' } else { '-' },
                    if p.x { 'x' } else { '-' },
                    kernel_perms.chars().nth(3).unwrap_or('p')
                ),
                None => kernel_perms.to_string(),
            };
            // A file's offset moves with the start; anonymous memory has none.
            let file = tail.split(' ').next().is_some_and(|inode| inode != "0");
            let offset =
                u64::from_str_radix(offset, 16).unwrap_or(0) + if file { s - start } else { 0 };
            let in_heap = s >= heap.0 && e <= heap.1 && heap.0 < heap.1;
            // The kernel's `%08lx-%08lx`.
            let head = format!("{s:08x}-{e:08x} {perms} {offset:08x} {dev} ");
            if in_heap {
                // Inode 0, then the label where the kernel pads it to (column 74).
                let pad = 73usize.saturating_sub(head.len() + 1).max(1);
                out.push_str(&format!("{head}0{:pad$}[heap]", ""));
            } else {
                out.push_str(&head);
                out.push_str(tail);
            }
            out.push('\n');
            keep_details = view == View::Smaps;
        }
    }
    out
}

/// I4: a memory file holding `text`, opened for reading with the
/// guest's `O_CLOEXEC`, or the errno.
fn serve(text: &[u8], flags: u64) -> i64 {
    if flags & (libc::O_WRONLY | libc::O_RDWR) as u64 != 0 {
        return -(libc::EACCES as i64);
    }
    let cloexec = if flags & libc::O_CLOEXEC as u64 != 0 {
        libc::MFD_CLOEXEC
    } else {
        0
    };
    // SAFETY: a NUL-terminated name; the kernel makes a new descriptor.
    let fd = unsafe { libc::memfd_create(c"maps".as_ptr(), cloexec) };
    if fd < 0 {
        return -(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EMFILE) as i64);
    }
    let mut done = 0;
    while done < text.len() {
        // SAFETY: our own descriptor and a live buffer.
        let n = unsafe { libc::write(fd, text[done..].as_ptr().cast(), text.len() - done) };
        if n <= 0 {
            // SAFETY: our own descriptor.
            unsafe { libc::close(fd) };
            return -(libc::EIO as i64);
        }
        done += n as usize;
    }
    // SAFETY: our own descriptor.
    unsafe { libc::lseek(fd, 0, libc::SEEK_SET) };
    fd as i64
}

/// `open`/`openat` of the guest's own executable: the same call on its real
/// path (I2); of its memory map: a copy cut to the guest's memory (I4).
/// `a` are the syscall's arguments, `path_arg` the index of the path.
pub fn open(vm: &Vm, nr: u64, a: [u64; 6], path_arg: usize, flags: u64) -> Option<i64> {
    let path = guest_cstr(a[path_arg])?;
    if let Some(view) = names_view(&path) {
        return Some(serve_view(vm, view, &path, flags));
    }
    if hidden_map_file(vm, &path, (path_arg == 1).then_some(a[0])) {
        return Some(-(libc::ENOENT as i64));
    }
    if !names_self_exe(&path) {
        return None;
    }
    let mut a = a;
    a[path_arg] = vm.proc.exe_path.as_ptr() as u64;
    // SAFETY: the same open call with a valid NUL-terminated path of ours.
    Some(unsafe { syscall6(nr, a) })
}

/// I7 after an `open`-type call gave the guest `fd` (opened with `flags`):
/// what the guest gets.
pub fn opened(vm: &Vm, fd: i64, flags: u64) -> i64 {
    if fd < 0 {
        return fd;
    }
    let close = || {
        // SAFETY: the descriptor the call just made for the guest.
        unsafe { libc::close(fd as i32) };
    };
    use super::memfile::{fs_type, kernel_path, PROC_SUPER_MAGIC, TMPFS_MAGIC};
    // One `fstatfs` for every open; more only for procfs and memory files.
    match fs_type(fd as i32) {
        Some(PROC_SUPER_MAGIC) => {
            let Some(path) = kernel_path(fd as i32) else {
                return fd;
            };
            if let Some(view) = kernel_view(&path) {
                close();
                return serve_view(vm, view, &path, flags);
            }
            super::hidden::opened(&path);
            super::memfile::opened(vm, fd, flags, &path)
        }
        Some(TMPFS_MAGIC) if hotlift_object(vm, fd as i32) => {
            close();
            -(libc::ENOENT as i64)
        }
        _ => fd,
    }
}

/// I7: the view a procfs file the kernel calls `path` is, if it is one of
/// this process's (`/proc/ID/maps`, `/proc/ID/task/TID/maps`, … for any
/// of its threads' ids).
fn kernel_view(path: &[u8]) -> Option<View> {
    let (id, name) = super::memfile::proc_file(path)?;
    let view = match name {
        b"maps" => View::Maps,
        b"smaps" => View::Smaps,
        b"numa_maps" => View::NumaMaps,
        b"status" => View::Status,
        _ => return None,
    };
    super::memfile::is_own_id(id).then_some(view)
}

/// I7: is `fd` (a tmpfs file) a memory object (an unlinked file) that
/// backs one of hotlift's own mappings (the code cache's, reached through
/// a `map_files` entry by any name)?
fn hotlift_object(vm: &Vm, fd: i32) -> bool {
    // SAFETY: a plain struct the kernel fills.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a live struct; a bad descriptor only fails.
    if unsafe { libc::fstat(fd, &mut st) } != 0
        || st.st_nlink != 0
        || st.st_mode & libc::S_IFMT != libc::S_IFREG
    {
        return false;
    }
    let Ok(maps) = crate::host::read_proc("/proc/self/maps") else {
        return true;
    };
    let dev = format!(
        "{:02x}:{:02x}",
        libc::major(st.st_dev),
        libc::minor(st.st_dev)
    );
    let ino = st.st_ino.to_string();
    let l = vm.proc.lock();
    maps.lines().any(|line| {
        let mut f = line.split_whitespace().skip(3);
        let same = f.next() == Some(dev.as_str()) && f.next() == Some(ino.as_str());
        same && crate::host::maps_range(line).is_some_and(|(a, b)| !l.mem.owns_all(a, b))
    })
}

/// I4: a copy of the kernel's `view` file cut to the guest's memory (for
/// `status`, the file at `path` with the guest's thread count), served as
/// a memory file, or the errno.
fn serve_view(vm: &Vm, view: View, path: &[u8], flags: u64) -> i64 {
    {
        let file = match view {
            View::Maps => "/proc/self/maps",
            View::Smaps => "/proc/self/smaps",
            View::NumaMaps => "/proc/self/numa_maps",
            View::Status => {
                // A thread's own (`task/TID`, `thread-self`): read by the
                // name the guest's open had, this process's.
                use std::os::unix::ffi::OsStrExt;
                let name = std::ffi::OsStr::from_bytes(path);
                let Ok(real) = std::fs::read_to_string(name) else {
                    return -(libc::EMFILE as i64);
                };
                let text = status_view(&real, vm.proc.threads.count());
                return serve(text.as_bytes(), flags);
            }
        };
        let (guest, heap) = {
            let l = vm.proc.lock();
            let guest: Vec<_> = l.mem.regions().map(|(s, r)| (s, r.end, r.prot)).collect();
            (guest, (l.brk.start, l.brk.mapped))
        };
        let Ok(real) = std::fs::read_to_string(file) else {
            return -(libc::EMFILE as i64);
        };
        let extents = if view == View::NumaMaps {
            let Ok(maps) = crate::host::read_proc("/proc/self/maps") else {
                return -(libc::EMFILE as i64);
            };
            maps_extents(&maps)
        } else {
            Vec::new()
        };
        let text = guest_view(&real, view, &guest, heap, &extents);
        serve(text.as_bytes(), flags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// I4: `status` counts the guest's threads only; nothing else moves.
    #[test]
    fn status_counts_the_guests_threads() {
        let real = "Name:\tsh\nThreads:\t3\nSigQ:\t0/1\n";
        assert_eq!(status_view(real, 2), "Name:\tsh\nThreads:\t2\nSigQ:\t0/1\n");
        assert_eq!(status_view(real, 0), "Name:\tsh\nThreads:\t1\nSigQ:\t0/1\n");
        assert_eq!(status_view("Name:\tx\n", 1), "Name:\tx\n");
        assert_eq!(names_view(b"/proc/self/status"), Some(View::Status));
    }

    /// I6: the range of a `map_files` entry of this process, by any of
    /// its names; none for another process's or other files.
    #[test]
    fn map_files_entries_name_their_range() {
        let pid = std::process::id();
        for dir in [
            "/proc/self".to_string(),
            "/proc/thread-self".to_string(),
            format!("/proc/{pid}"),
            format!("/proc/{pid}/task/{pid}"),
        ] {
            let p = format!("{dir}/map_files/7f0000004000-7f0000008000");
            assert_eq!(
                map_files_range(p.as_bytes()),
                Some((0x7f00_0000_4000, 0x7f00_0000_8000)),
                "{p}"
            );
        }
        for p in [
            "/proc/1/map_files/7f0000004000-7f0000008000",
            "/proc/self/map_files/",
            "/proc/self/map_files/zz-7f0000008000",
            "/proc/self/maps",
            "/tmp/map_files/1000-2000",
        ] {
            assert_eq!(map_files_range(p.as_bytes()), None, "{p}");
        }
        // Relative to a working directory inside it.
        let cwd = std::env::current_dir().unwrap();
        let rel = absolute(b"x-y", None);
        assert_eq!(rel, format!("{}/x-y", cwd.display()).into_bytes());
        assert_eq!(absolute(b"/abs", Some(3)), b"/abs".to_vec());
    }

    const REAL: &str = "\
555500000000-555500001000 r--p 00000000 fe:00 11 /usr/bin/hotlift
555500001000-555500003000 rw-p 00000000 00:00 0 [heap]
7f0000000000-7f0000004000 rw-p 00000000 00:00 0 
7f0000004000-7f0000008000 r--p 00002000 fe:00 22 /usr/lib/libc.so.6
7f0000008000-7f000000c000 rw-s 00000000 00:01 33 /memfd:hotlift-code (deleted)
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]
7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0 [vdso]
";

    #[test]
    fn maps_keep_only_guest_memory() {
        // The guest: half of the anonymous mapping (its brk), libc from
        // its second page.
        use crate::loader::Prot;
        let rw = Prot {
            r: true,
            w: true,
            x: false,
        };
        // The guest asked for r-x (the kernel has r--: mem/mod.rs I8).
        let rx = Prot {
            r: true,
            w: false,
            x: true,
        };
        let guest = [
            (0x7f00_0000_2000, 0x7f00_0000_4000, rw),
            (0x7f00_0000_5000, 0x7f00_0000_8000, rx),
            (0x7ffd_0010_0000, 0x7ffd_0010_2000, rx),
        ];
        let heap = (0x7f00_0000_2000, 0x7f00_0000_4000);
        // The vDSO the guest unmapped (hotlift keeps it) is not shown.
        let unmapped = guest_view(REAL, View::Maps, &guest[..2], heap, &[]);
        assert!(!unmapped.contains("[vdso]") && unmapped.contains("[stack]"));
        let v = guest_view(REAL, View::Maps, &guest, heap, &[]);
        assert_eq!(
            v,
            "7f0000002000-7f0000004000 rw-p 00000000 00:00 0                          [heap]\n\
             7f0000005000-7f0000008000 r-xp 00003000 fe:00 22 /usr/lib/libc.so.6\n\
             7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n\
             7ffd00100000-7ffd00102000 r-xp 00000000 00:00 0 [vdso]\n"
        );
        assert!(!v.contains("hotlift"));
        let numa = "7f0000002000 default anon=2\n555500000000 default\n";
        assert_eq!(
            guest_view(numa, View::NumaMaps, &guest, heap, &[]),
            "7f0000002000 default anon=2\n"
        );
        // A guest mapping the kernel merged with hotlift's just below it:
        // shown at the guest part's start (the line was dropped before).
        let merged = "7f0000001000 default anon=3\n";
        let extents = maps_extents("7f0000001000-7f0000004000 rw-p 00000000 00:00 0\n");
        assert_eq!(
            guest_view(merged, View::NumaMaps, &guest, heap, &extents),
            "7f0000002000 default anon=3\n"
        );
        let smaps = "7f0000004000-7f0000008000 r--p 00002000 fe:00 22 /usr/lib/libc.so.6\nRss: 4 kB\n\
                     7f0000008000-7f000000c000 rw-s 00000000 00:01 33 /memfd:hotlift-code (deleted)\nRss: 8 kB\n";
        assert_eq!(
            guest_view(smaps, View::Smaps, &guest, heap, &[]),
            "7f0000005000-7f0000008000 r-xp 00003000 fe:00 22 /usr/lib/libc.so.6\nRss: 4 kB\n"
        );
    }

    /// I7: the kernel's names of this process's views, under its pid or a
    /// thread's; not another process's, not other files.
    #[test]
    fn kernel_paths_of_own_views_are_views() {
        let pid = std::process::id();
        assert!(kernel_view(format!("/proc/{pid}/maps").as_bytes()) == Some(View::Maps));
        let task = format!("/proc/{pid}/task/{pid}/smaps");
        assert!(kernel_view(task.as_bytes()) == Some(View::Smaps));
        let numa = format!("/proc/{pid}/numa_maps");
        assert!(kernel_view(numa.as_bytes()) == Some(View::NumaMaps));
        for p in ["/proc/1/maps", "/proc/self/maps", "/tmp/maps"] {
            assert!(kernel_view(p.as_bytes()).is_none(), "{p}");
        }
        assert!(kernel_view(format!("/proc/{pid}/status").as_bytes()) == Some(View::Status));
        assert!(kernel_view(format!("/proc/{pid}/stat").as_bytes()).is_none());
    }

    #[test]
    fn views_are_named_as_the_kernel_names_them() {
        let pid = std::process::id();
        assert_eq!(names_view(b"/proc/self/maps"), Some(View::Maps));
        assert_eq!(
            names_view(format!("/proc/{pid}/smaps").as_bytes()),
            Some(View::Smaps)
        );
        assert_eq!(
            names_view(b"/proc/thread-self/numa_maps"),
            Some(View::NumaMaps)
        );
        assert_eq!(names_view(b"/proc/1/maps"), None);
        assert_eq!(names_view(b"/proc/self/task/123/maps"), Some(View::Maps));
        assert_eq!(
            names_view(format!("/proc/{pid}/task/9/smaps").as_bytes()),
            Some(View::Smaps)
        );
        assert_eq!(names_view(b"/proc/self/task//maps"), None);
        assert_eq!(names_view(b"/proc/self/smaps_rollup"), None);
    }
}
