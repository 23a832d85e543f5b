//! strace-like rendering of guest syscalls, for `--strace` style tracing.
//! A leaf (it uses nothing else of the crate): the syscall layer logs
//! with it, `compare`'s ptrace tracer renders with it, and the profile
//! names syscalls and signals with its tables.
//!
//! `format_call` renders a call before it runs (`openat(AT_FDCWD,
//! "/etc/passwd", O_RDONLY|O_CLOEXEC)`) and `format_return` renders its result
//! afterwards (` = 3`, ` = -1 ENOENT (No such file or directory)`, or
//! ` = 5 buf="hello"` for read-like calls, whose buffers only hold data once
//! the call has returned).
//!
//! This file holds the calls and results, argument by argument; the
//! values that pointer arguments point to are rendered by values.rs, from
//! guest memory read by memory.rs (never dereferenced, memory.rs I1); the
//! lines are written by sink.rs (whole lines, marked with their process
//! or thread); names.rs has the syscall, errno, signal and flag tables.
//!
//! I1: each syscall's arguments are rendered from its signature in
//!     `names.rs` (one letter per argument, listed below); only `fcntl`,
//!     `futex`, `clone` and `clone3`, whose later arguments depend on
//!     earlier ones, have their own decoders. Unknown numbers print as
//!     `syscall_NNN(0x.., ...)` with all six arguments in hex.
//!
//! Argument kinds (the signature letters):
//! `f` fd, `a` dirfd (`AT_FDCWD`), `i` int, `d` long, `u` unsigned, `x` hex,
//! `p` pointer (`NULL`), `s` string, `b` input buffer (length is the next
//! argument), `r` output buffer (shown on return), `v` output iovec array
//! (shown on return), `o` octal mode (after `O`, only with `O_CREAT` or
//! `O_TMPFILE`), `g` signal, `O` open flags, `F` fd flags, `P` `PROT_*`,
//! `M` `MAP_*`, `A`/`D`/`E`/`S` `AT_*` flags (generic, unlinkat, faccessat2,
//! statx), `m` `STATX_*` mask, `W` whence, `K` access mode, `C` clock, `T`
//! timer flags, `t` timespec, `H` sigprocmask how, `q` sigset, `h` sigaction,
//! `c` fcntl command, `I` ioctl request, `R` getrandom flags, `Q` arch_prctl
//! code, `L` rlimit resource, `Z` madvise advice, `Y` mremap flags, `w` wait
//! options, `n` mremap new address (only with `MREMAP_FIXED`), `V` argv,
//! `e` envp, `l` clone flags, `X` futex op, `B` futex bitset, `_` not shown.
//!
//! Usage:
//! ```text
//! crate::host::say!("{}{}", format_call(nr, &args), format_return(nr, &args, ret));
//! ```

mod memory;
pub mod names;
mod sink;
#[cfg(test)]
mod tests;
mod values;

pub use self::memory::with_memory_of;
use self::names::{
    enum_name, errno_info, flag_names, flags, futex_op, hex, join_or, mmap_flags, mode, open_flags,
    open_needs_mode, ptr, signal, sigset_bits, statx_flags, wait_status,
};
pub use self::names::{sig_name, syscall_info, syscall_name};
pub use self::sink::{hold_prefix, log, set_log_file, set_process_prefix, set_thread_prefix};
pub use self::values::SA_RESTORER;
use memory::{read_exact, read_u64s};
use values::{argv, buffer, cstr, envp, iovec_out, sigaction, timespec};

const AT_FDCWD: i32 = -100;
const MREMAP_FIXED: u64 = 2;

/// Renders one argument of kind `kind` (I1); `next` is the following argument.
fn arg(kind: u8, v: u64, next: u64) -> String {
    match kind {
        b'f' | b'i' => (v as i32).to_string(),
        b'a' if v as i32 == AT_FDCWD => "AT_FDCWD".to_string(),
        b'a' => (v as i32).to_string(),
        b'd' => (v as i64).to_string(),
        b'u' => v.to_string(),
        b's' => cstr(v),
        b'b' => buffer(v, next),
        b'o' => mode(v),
        b'g' => signal(v),
        b'O' => open_flags(v),
        b'F' => flags(v, names::OPEN_FLAGS, "0"),
        b'P' => flags(v, names::PROT, "PROT_NONE"),
        b'M' => mmap_flags(v),
        b'A' => flags(v, names::AT_FLAGS, "0"),
        b'D' => flags(v, names::AT_UNLINK, "0"),
        b'E' => flags(v, names::AT_ACCESS, "0"),
        b'S' => statx_flags(v),
        b'm' => flags(v, names::STATX_MASK, "0"),
        b'W' => enum_name(v, names::WHENCE),
        b'K' => flags(v, names::ACCESS_MODE, "F_OK"),
        b'C' => enum_name(v & 0xffff_ffff, names::CLOCKS),
        b'T' => flags(v, names::TIMER_FLAGS, "0"),
        b't' => timespec(v),
        b'H' => enum_name(v, names::SIGPROCMASK_HOW),
        b'q' => read_u64s(v, 1).map_or_else(|| ptr(v), |m| sigset_bits(m[0])),
        b'h' => sigaction(v),
        b'c' => enum_name(v, names::FCNTL_CMDS),
        b'I' => enum_name(v & 0xffff_ffff, names::IOCTLS),
        b'R' => flags(v, names::GRND, "0"),
        b'Q' => enum_name(v, names::ARCH_PRCTL),
        b'L' => enum_name(v, names::RLIMITS),
        b'Z' => enum_name(v, names::MADV),
        b'Y' => flags(v, names::MREMAP, "0"),
        b'w' => flags(v, names::WAIT_OPTIONS, "0"),
        b'V' => argv(v),
        b'e' => envp(v),
        b'l' => names::clone_flags(v),
        b'X' => futex_op(v),
        b'B' if v as u32 == u32::MAX => "FUTEX_BITSET_MATCH_ANY".to_string(),
        b'x' | b'B' => hex(v),
        _ => ptr(v), // p, n, and r/v (output buffers, shown on return)
    }
}

/// Renders `args` by signature (I1), comma-separated.
fn args_by_sig(sig: &str, args: &[u64; 6]) -> String {
    let sig = sig.as_bytes();
    let mut parts = Vec::with_capacity(sig.len());
    for (i, &kind) in sig.iter().enumerate().take(6) {
        let hidden = match kind {
            b'_' => true,
            b'o' => i > 0 && sig[i - 1] == b'O' && !open_needs_mode(args[i - 1]),
            b'n' => i > 0 && args[i - 1] & MREMAP_FIXED == 0,
            _ => false,
        };
        if hidden {
            continue;
        }
        parts.push(arg(kind, args[i], args.get(i + 1).copied().unwrap_or(0)));
    }
    parts.join(", ")
}

/// Which futex arguments a command uses (uaddr, op, val, timeout/val2,
/// uaddr2, val3), as a signature.
fn futex_sig(op: u64) -> &'static str {
    match op & 0x7f {
        0 => "pXit",
        1 | 2 => "pXi",
        3 => "pXiup",
        4 | 12 => "pXiupi",
        5 => "pXiupx",
        6 | 13 => "pX_t",
        7 | 8 => "pX",
        9 => "pXit_B",
        10 => "pXi__B",
        11 => "pXitp",
        _ => "pXixxx",
    }
}

fn fcntl_args(args: &[u64; 6]) -> String {
    let (fd, cmd, v) = (args[0] as i32, args[1], args[2]);
    let third = match cmd {
        1 | 3 | 9 | 11 | 1025 | 1028 | 1032 | 1034 => None,
        2 => Some(flags(v, names::FD_FLAGS, "0")),
        4 => Some(open_flags(v)),
        0 | 8 | 1024 | 1027 | 1030 | 1031 => Some((v as i32).to_string()),
        10 => Some(signal(v)),
        1033 => Some(flags(v, names::SEALS, "0")),
        5..=7 | 15..=17 | 36..=38 | 1035..=1038 => Some(ptr(v)),
        _ => Some(hex(v)),
    };
    let cmd = enum_name(cmd, names::FCNTL_CMDS);
    match third {
        Some(third) => format!("{fd}, {cmd}, {third}"),
        None => format!("{fd}, {cmd}"),
    }
}

const CLONE_PIDFD: u64 = 0x1000;
const CLONE_SETTLS: u64 = 0x80000;
const CLONE_PARENT_SETTID: u64 = 0x100000;
/// `CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID`: either uses the child tid.
const CLONE_CHILD_TID: u64 = 0x200000 | 0x1000000;

/// `, name=0x...` for each `(flag, name, pointer)` whose flag is in `f`:
/// strace shows clone's tid and tls pointers only when a flag uses them.
fn pointer_fields(f: u64, fields: &[(u64, &str, u64)]) -> String {
    let used = fields.iter().filter(|&&(flag, ..)| f & flag != 0);
    used.map(|&(_, name, p)| format!(", {name}={}", ptr(p)))
        .collect()
}

fn clone_args(args: &[u64; 6]) -> String {
    let f = args[0];
    let mut names = flag_names(f & !0xff, names::CLONE_FLAGS);
    if f & 0xff != 0 {
        names.push(signal(f & 0xff));
    }
    let fields = [
        (CLONE_PARENT_SETTID, "parent_tid", args[2]),
        (CLONE_CHILD_TID, "child_tidptr", args[3]),
        (CLONE_SETTLS, "tls", args[4]),
    ];
    let (stack, flags) = (ptr(args[1]), join_or(names, "0"));
    format!(
        "child_stack={stack}, flags={flags}{}",
        pointer_fields(f, &fields)
    )
}

/// `clone3({flags=..., exit_signal=..., stack=..., ...}, size)`: the first
/// eight fields of `struct clone_args`.
fn clone3_args(args: &[u64; 6]) -> String {
    let (addr, size) = (args[0], args[1]);
    let Some(c) = read_u64s(addr, 8).filter(|_| size >= 64) else {
        return format!("{}, {size}", ptr(addr));
    };
    let ids = [
        (CLONE_PIDFD, "pidfd", c[1]),
        (CLONE_CHILD_TID, "child_tid", c[2]),
        (CLONE_PARENT_SETTID, "parent_tid", c[3]),
    ];
    let (flags, ids) = (names::clone_flags(c[0]), pointer_fields(c[0], &ids));
    let (signal, stack, stack_size) = (signal(c[4]), ptr(c[5]), hex(c[6]));
    let tls = pointer_fields(c[0], &[(CLONE_SETTLS, "tls", c[7])]);
    format!("{{flags={flags}{ids}, exit_signal={signal}, stack={stack}, stack_size={stack_size}{tls}}}, {size}")
}

/// strace-like rendering of a call: `openat(AT_FDCWD, "/etc/passwd",
/// O_RDONLY|O_CLOEXEC)`. Reads guest memory only through memory.rs I1.
pub fn format_call(nr: u64, args: &[u64; 6]) -> String {
    let Some(info) = syscall_info(nr) else {
        let hexes: Vec<String> = args.iter().map(|a| format!("{a:#x}")).collect();
        return format!("syscall_{nr}({})", hexes.join(", "));
    };
    let inner = match info.name {
        "fcntl" => fcntl_args(args),
        "futex" => args_by_sig(futex_sig(args[1]), args),
        "clone" => clone_args(args),
        "clone3" => clone3_args(args),
        _ => args_by_sig(info.args, args),
    };
    format!("{}({inner})", info.name)
}

/// What a successful call wrote to guest memory, as ` name=value`.
fn outputs(name: &str, sig: &str, args: &[u64; 6], ret: u64) -> Option<String> {
    match name {
        "pipe" | "pipe2" if ret == 0 => {
            let b = read_exact(args[0], 8)?;
            let fd = |i: usize| i32::from_le_bytes(b[i..i + 4].try_into().unwrap());
            Some(format!(" fds=[{}, {}]", fd(0), fd(4)))
        }
        "wait4" if ret > 0 && args[1] != 0 => {
            let status = u32::from_le_bytes(read_exact(args[1], 4)?.try_into().unwrap());
            Some(format!(" status={}", wait_status(status)))
        }
        "clock_gettime" | "clock_getres" if args[1] != 0 => {
            Some(format!(" tp={}", timespec(args[1])))
        }
        "getcwd" => Some(format!(" buf={}", buffer(args[0], ret.saturating_sub(1)))),
        _ => {
            let i = sig.bytes().position(|k| k == b'r' || k == b'v')?;
            match sig.as_bytes()[i] {
                b'r' => Some(format!(" buf={}", buffer(args[i], ret))),
                _ => Some(format!(" iov={}", iovec_out(args[i], args[i + 1], ret))),
            }
        }
    }
}

/// Rendering of a result: ` = 3`, ` = -1 ENOENT (No such file or
/// directory)`, ` = 0x7f...` for address results, ` = ?` for exits, and for
/// read-like calls the data they returned (` = 5 buf="hello"`).
pub fn format_return(nr: u64, args: &[u64; 6], ret: i64) -> String {
    if (-4095..0).contains(&ret) {
        let e = ret.unsigned_abs();
        return match errno_info(e) {
            Some((name, text)) => format!(" = -1 {name} ({text})"),
            None => format!(" = -1 ERRNO_{e} (Unknown error {e})"),
        };
    }
    let (name, sig) = syscall_info(nr).map_or(("", ""), |i| (i.name, i.args));
    let mut out = match name {
        "exit" | "exit_group" => return " = ?".to_string(),
        "mmap" | "brk" | "mremap" | "shmat" => format!(" = {:#x}", ret as u64),
        // F_GETFL and F_GETFD return flags.
        "fcntl" if args[1] == 3 => format!(" = {ret:#x} (flags {})", open_flags(ret as u64)),
        "fcntl" if args[1] == 1 && ret == 1 => format!(" = {ret:#x} (flags FD_CLOEXEC)"),
        _ => format!(" = {ret}"),
    };
    if let Some(extra) = outputs(name, sig, args, ret as u64) {
        out.push_str(&extra);
    }
    out
}
