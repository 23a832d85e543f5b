//! The program's view of itself: `/proc/self/exe` names the guest program,
//! not hotlift, as it would natively.
//!
//! I1: `readlink`/`readlinkat` of `/proc/self/exe` (or `/proc/<pid>/exe`,
//!     `/proc/thread-self/exe`) return the guest's canonical path, truncated
//!     to the buffer like the kernel does (no NUL).
//! I2: `open`/`openat` of those paths open the guest program instead.
//! Other `/proc/self` views (e.g. `maps`) still show hotlift's process
//! (README, known limits).

use super::{guest_read_bytes, guest_write_bytes, syscall6, EFAULT};
use crate::dispatch::Vm;

const PATH_MAX: usize = 4096;

/// The guest C string at `addr` (up to PATH_MAX bytes), if readable.
fn guest_cstr(addr: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < PATH_MAX {
        let chunk = (4096 - (at % 4096)) as usize;
        let bytes = guest_read_bytes(at, chunk)?;
        if let Some(n) = bytes.iter().position(|&b| b == 0) {
            out.extend_from_slice(&bytes[..n]);
            return Some(out);
        }
        out.extend_from_slice(&bytes);
        at += chunk as u64;
    }
    None
}

fn names_self_exe(path: &[u8]) -> bool {
    if path == b"/proc/self/exe" || path == b"/proc/thread-self/exe" {
        return true;
    }
    let pid = std::process::id().to_string();
    path.strip_prefix(b"/proc/")
        .and_then(|r| r.strip_suffix(b"/exe"))
        .is_some_and(|p| p == pid.as_bytes())
}

/// `readlink(path, buf, size)` with `path` at `a[path_arg]`; None when the
/// path is not the guest's own executable (pass it through).
pub fn readlink(vm: &Vm, path: u64, buf: u64, size: u64) -> Option<i64> {
    if !names_self_exe(&guest_cstr(path)?) {
        return None;
    }
    let exe = vm.proc.exe_path.as_bytes();
    let n = exe.len().min(size as usize);
    Some(if guest_write_bytes(buf, &exe[..n]) {
        n as i64
    } else {
        EFAULT
    })
}

/// `open`/`openat` of the guest's own executable: the same call on its real
/// path. `a` are the syscall's arguments, `path_arg` the index of the path.
pub fn open(vm: &Vm, nr: u64, a: [u64; 6], path_arg: usize) -> Option<i64> {
    if !names_self_exe(&guest_cstr(a[path_arg])?) {
        return None;
    }
    let mut a = a;
    a[path_arg] = vm.proc.exe_path.as_ptr() as u64;
    // SAFETY: the same open call with a valid NUL-terminated path of ours.
    Some(unsafe { syscall6(nr, a) })
}
