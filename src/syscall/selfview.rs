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
//! Other `/proc/self` views (e.g. `maps`) still show hotlift's process
//! (README, known limits).

use super::{guest_read_bytes, guest_write_bytes, syscall6, EFAULT};
use crate::dispatch::Vm;

const PATH_MAX: usize = 4096;

fn guest_cstr(addr: u64) -> Option<Vec<u8>> {
    super::guest_cstr(addr, PATH_MAX)
}

/// Does `path` name this process's `/proc` file `what`?
fn names_self(path: &[u8], what: &[u8]) -> bool {
    let Some(dir) = path
        .strip_suffix(what)
        .and_then(|p| p.strip_suffix(b"/"))
        .and_then(|p| p.strip_prefix(b"/proc/"))
    else {
        return false;
    };
    dir == b"self" || dir == b"thread-self" || dir == std::process::id().to_string().as_bytes()
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
        guest_read_bytes(a, 8)
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
