//! strace-like rendering of guest syscalls, for `--strace` style tracing.
//!
//! `format_call` renders a call before it runs (`openat(AT_FDCWD,
//! "/etc/passwd", O_RDONLY|O_CLOEXEC)`) and `format_return` renders its result
//! afterwards (` = 3`, ` = -1 ENOENT (No such file or directory)`, or
//! ` = 5 buf="hello"` for read-like calls, whose buffers only hold data once
//! the call has returned).
//!
//! Invariants:
//! - I1: guest memory is read only through `read_prefix`, which uses
//!   `process_vm_readv` on our own pid (the guest lives in our address space;
//!   I4 for the exception).
//!   A bad guest pointer makes the kernel return `EFAULT`, never a host fault,
//!   and the argument prints as its hex address instead.
//! - I2: strings and buffers show at most `MAX_STR` (32) bytes, quoted and
//!   escaped like strace, followed by `...` when there was more.
//! - I3: each syscall's arguments are rendered from its signature in
//!   `names.rs` (one letter per argument, listed below); only `fcntl`,
//!   `futex`, `clone` and `clone3`, whose later arguments depend on earlier
//!   ones, have their own decoders. Unknown numbers print as
//!   `syscall_NNN(0x.., ...)` with all six arguments in hex.
//!
//! - I4: whose memory is read is this thread's choice (`with_memory_of`):
//!   hotlift's own process by default (the guest lives in it), a traced
//!   child for `hotlift compare`'s native syscall trace, so both sides are
//!   rendered by the same code.
//! - I5: `log` writes whole lines only, where `--strace-file` pointed
//!   (`set_log_file`, opened for appending), else to stderr, each batch in
//!   one `write`: the processes of a tree share the log, and a line is
//!   never split by another process's.
//! - I6: a process of a tree other than its first marks its lines with
//!   `[pid N] ` (`set_process_prefix`), and a guest thread other than its
//!   process's first with `[pid TID] ` (`set_thread_prefix`), as `strace
//!   -f` marks the tasks it follows; `hotlift compare` keeps the unmarked
//!   lines only (the first process's initial thread), as its native trace
//!   follows only that thread.
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
//! eprintln!("{}{}", format_call(nr, &args), format_return(nr, &args, ret));
//! ```

use std::fmt::Write;
use std::io::IoSliceMut;

use nix::sys::uio::{process_vm_readv, RemoteIoVec};
use nix::unistd::Pid;

// `names.rs` sits beside this file but is this module's child, so
// `pub mod strace;` in `syscall/mod.rs` is all the wiring the tracer needs.
#[path = "names.rs"]
pub mod names;

pub use self::names::syscall_name;
use self::names::{
    enum_name, errno_info, flag_names, flags, futex_op, hex, join_or, mmap_flags, mode, open_flags,
    open_needs_mode, ptr, signal, sigset_bits, statx_flags, syscall_info, wait_status,
};

/// Bytes of a string or buffer shown before `...` (I2).
const MAX_STR: usize = 32;
/// Elements of an argv or iovec array shown before `...`.
const MAX_ELEMS: usize = 8;
/// Environment entries counted before giving up.
const MAX_ENV: usize = 4096;
/// Split remote reads at this granularity so a fault keeps the prefix (I1).
const PAGE: u64 = 4096;
const AT_FDCWD: i32 = -100;
const MREMAP_FIXED: u64 = 2;

// ---------------------------------------------------------------------------
// Guest memory (I1)

thread_local! {
    /// The process whose memory `read_prefix` reads; 0 = this one (I4).
    static MEMORY_OF: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// Run `f` with guest memory read from process `pid` (I4): for rendering
/// the syscalls of a ptrace-stopped child.
pub fn with_memory_of<R>(pid: Pid, f: impl FnOnce() -> R) -> R {
    let old = MEMORY_OF.with(|m| m.replace(pid.as_raw()));
    let r = f();
    MEMORY_OF.with(|m| m.set(old));
    r
}

static LOG_FILE: std::sync::OnceLock<std::fs::File> = std::sync::OnceLock::new();

/// Send the log to `file` instead of stderr (I5); only the first call
/// counts. The file is moved to the highest free descriptor below the
/// `RLIMIT_NOFILE` soft limit, so the guest's own `open`s get the numbers
/// they get natively (a guest that closes every descriptor it did not open
/// ends the log).
#[allow(unsafe_code)]
pub fn set_log_file(file: std::fs::File) {
    use std::os::fd::{AsRawFd, FromRawFd};
    let limit = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map(|(soft, _)| soft.min(1 << 20) as i32)
        .unwrap_or(1024);
    let mut file = file;
    for high in (limit / 2..limit).rev().take(64) {
        // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor (>= high) that
        // nothing else owns, and from_raw_fd takes ownership of it; the old
        // File is dropped (closed) by the assignment.
        unsafe {
            let fd = libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, high);
            if fd >= 0 {
                file = std::fs::File::from_raw_fd(fd);
                break;
            }
        }
    }
    let _ = LOG_FILE.set(file);
}

/// Write `text` to the log (I5).
pub fn log(text: &str) {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        p.push_str(text);
        if let Some(end) = p.rfind('\n') {
            let lines: String = p.drain(..=end).collect();
            write_lines(&lines);
        }
    });
}

thread_local! {
    /// This thread's unfinished line (I5). Only dispatcher code logs, with
    /// hotlift's FS base in place.
    static PENDING: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// `[pid N] ` for a process of a tree other than its first (I6).
static PREFIX: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// I6: this process's lines carry `[pid N] ` (`pid` Some), as `strace -f`
/// marks the processes it follows, or none (the tree's first process).
pub fn set_process_prefix(pid: Option<u32>) {
    // A forked child runs on the thread that forked: its first thread.
    THREAD_PREFIX.with(|p| *p.borrow_mut() = None);
    *PREFIX.lock().unwrap_or_else(|e| e.into_inner()) =
        pid.map_or_else(String::new, |p| format!("[pid {p}] "));
}

thread_local! {
    /// `[pid TID] ` on a guest thread other than its process's first (I6).
    static THREAD_PREFIX: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// I6: the calling host thread runs guest thread `tid`, not its process's
/// first: its lines carry `[pid TID] `, as `strace -f` marks threads.
pub fn set_thread_prefix(tid: u32) {
    THREAD_PREFIX.with(|p| *p.borrow_mut() = Some(format!("[pid {tid}] ")));
}

/// Whole lines, prefixed (I6), in one write (I5).
fn write_lines(lines: &str) {
    use std::io::Write as _;
    let prefix = THREAD_PREFIX
        .with(|p| p.borrow().clone())
        .unwrap_or_else(|| PREFIX.lock().unwrap_or_else(|e| e.into_inner()).clone());
    let text = if prefix.is_empty() {
        lines.to_string()
    } else {
        lines
            .split_inclusive('\n')
            .map(|l| format!("{prefix}{l}"))
            .collect()
    };
    match LOG_FILE.get() {
        Some(mut f) => {
            let _ = f.write_all(text.as_bytes());
        }
        None => {
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
    }
}

/// Reads up to `len` bytes at guest address `addr`, returning the readable
/// prefix (empty if `addr` itself is unmapped).
fn read_prefix(addr: u64, len: usize) -> Vec<u8> {
    let Some(end) = addr.checked_add(len as u64) else {
        return Vec::new();
    };
    // process_vm_readv transfers whole remote iovecs only, so one per page
    // lets a read that runs into an unmapped page keep what came before.
    let mut remote = Vec::new();
    let mut at = addr;
    while at < end {
        let next = (at | (PAGE - 1)).saturating_add(1).min(end);
        remote.push(RemoteIoVec {
            base: at as usize,
            len: (next - at) as usize,
        });
        at = next;
    }
    let mut buf = vec![0u8; len];
    let pid = match MEMORY_OF.with(|m| m.get()) {
        0 => Pid::this(),
        p => Pid::from_raw(p),
    };
    let n = process_vm_readv(pid, &mut [IoSliceMut::new(&mut buf)], &remote).unwrap_or(0);
    buf.truncate(n);
    buf
}

fn read_exact(addr: u64, len: usize) -> Option<Vec<u8>> {
    let bytes = read_prefix(addr, len);
    (bytes.len() == len).then_some(bytes)
}

/// `n` little-endian words at `addr`; `None` for NULL (which the kernel
/// treats as "no struct") or unreadable memory.
fn read_u64s(addr: u64, n: usize) -> Option<Vec<u64>> {
    let bytes = (addr != 0).then(|| read_exact(addr, n * 8)).flatten()?;
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    )
}

/// A NUL-terminated guest string: its first `MAX_STR` bytes and whether it
/// was longer. `None` if it is not readable up to its NUL or `MAX_STR + 1`.
fn read_cstr(addr: u64) -> Option<(Vec<u8>, bool)> {
    let mut bytes = read_prefix(addr, MAX_STR + 1);
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(nul);
        return Some((bytes, false));
    }
    if bytes.len() > MAX_STR {
        bytes.truncate(MAX_STR);
        return Some((bytes, true));
    }
    None
}

// ---------------------------------------------------------------------------
// Value renderers

/// Quotes bytes the way strace does: C escapes, `\ooo` octal for the rest
/// (three digits only when the next byte is an octal digit).
fn quote(bytes: &[u8], truncated: bool) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    out.push('"');
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(c as char),
            _ => {
                let next_is_octal = bytes.get(i + 1).is_some_and(|n| (b'0'..=b'7').contains(n));
                if next_is_octal {
                    let _ = write!(out, "\\{c:03o}");
                } else {
                    let _ = write!(out, "\\{c:o}");
                }
            }
        }
    }
    out.push('"');
    if truncated {
        out.push_str("...");
    }
    out
}

fn cstr(addr: u64) -> String {
    if addr == 0 {
        return ptr(addr);
    }
    match read_cstr(addr) {
        Some((bytes, truncated)) => quote(&bytes, truncated),
        None => ptr(addr),
    }
}

/// A buffer of `len` bytes (not NUL-terminated), first `MAX_STR` shown.
fn buffer(addr: u64, len: u64) -> String {
    if addr == 0 {
        return ptr(addr);
    }
    let shown = len.min(MAX_STR as u64) as usize;
    match read_exact(addr, shown) {
        Some(bytes) => quote(&bytes, len > MAX_STR as u64),
        None => ptr(addr),
    }
}

fn sigaction(addr: u64) -> String {
    const SA_RESTORER: u64 = 0x0400_0000;
    let Some(f) = read_u64s(addr, 4) else {
        return ptr(addr);
    };
    let (handler, sa_flags, restorer, mask) = (f[0], f[1], f[2], f[3]);
    let handler = match handler {
        0 => "SIG_DFL".to_string(),
        1 => "SIG_IGN".to_string(),
        h => format!("{h:#x}"),
    };
    let mut out = format!(
        "{{sa_handler={handler}, sa_mask={}, sa_flags={}",
        sigset_bits(mask),
        flags(sa_flags, names::SA_FLAGS, "0")
    );
    if sa_flags & SA_RESTORER != 0 {
        let _ = write!(out, ", sa_restorer={restorer:#x}");
    }
    out.push('}');
    out
}

fn timespec(addr: u64) -> String {
    match read_u64s(addr, 2) {
        Some(t) => format!("{{tv_sec={}, tv_nsec={}}}", t[0] as i64, t[1] as i64),
        None => ptr(addr),
    }
}

/// `["ls", "-l"]`: the first `MAX_ELEMS` strings of a NULL-terminated array.
fn argv(addr: u64) -> String {
    if addr == 0 {
        return ptr(addr);
    }
    let mut items = Vec::new();
    for i in 0..=MAX_ELEMS as u64 {
        let Some(p) = read_u64s(addr.wrapping_add(i * 8), 1) else {
            return ptr(addr);
        };
        match p[0] {
            0 => return format!("[{}]", items.join(", ")),
            _ if i == MAX_ELEMS as u64 => break,
            p => items.push(cstr(p)),
        }
    }
    format!("[{}, ...]", items.join(", "))
}

/// `0x7ffd... /* 23 vars */`: the environment is counted, not printed.
fn envp(addr: u64) -> String {
    if addr == 0 {
        return ptr(addr);
    }
    let mut count = 0;
    while count < MAX_ENV {
        let chunk = read_prefix(addr.wrapping_add(count as u64 * 8), 64 * 8);
        if chunk.len() < 8 {
            return ptr(addr);
        }
        for word in chunk.chunks_exact(8) {
            if word.iter().all(|&b| b == 0) {
                let noun = if count == 1 { "var" } else { "vars" };
                return format!("{addr:#x} /* {count} {noun} */");
            }
            count += 1;
        }
    }
    format!("{addr:#x} /* {count}+ vars */")
}

/// The iovecs of a vectored read after it returned `total` bytes.
fn iovec_out(addr: u64, count: u64, total: u64) -> String {
    let shown = count.min(MAX_ELEMS as u64) as usize;
    let Some(words) = read_u64s(addr, shown * 2) else {
        return ptr(addr);
    };
    let mut left = total;
    let items: Vec<String> = words
        .chunks_exact(2)
        .map(|iov| {
            let n = iov[1].min(left);
            left -= n;
            format!("{{iov_base={}, iov_len={}}}", buffer(iov[0], n), iov[1])
        })
        .collect();
    let more = if count as usize > shown { ", ..." } else { "" };
    format!("[{}{more}]", items.join(", "))
}

// ---------------------------------------------------------------------------
// Calls

/// Renders one argument of kind `kind` (I3); `next` is the following argument.
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

/// Renders `args` by signature (I3), comma-separated.
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
/// O_RDONLY|O_CLOEXEC)`. Reads guest memory only through I1.
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

// ---------------------------------------------------------------------------
// Returns

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

#[cfg(test)]
mod tests {
    use super::*;

    const AT: u64 = AT_FDCWD as u64;
    const NEG1: u64 = u64::MAX;

    fn nr(name: &str) -> u64 {
        (0..512)
            .find(|&n| syscall_name(n) == Some(name))
            .expect(name)
    }

    fn a6(xs: &[u64]) -> [u64; 6] {
        let mut a = [0; 6];
        a[..xs.len()].copy_from_slice(xs);
        a
    }

    fn at<T: ?Sized>(x: &T) -> u64 {
        x as *const T as *const u8 as u64
    }

    fn check_calls<S: AsRef<str>>(cases: &[(&str, &[u64], S)]) {
        for (name, args, want) in cases {
            assert_eq!(
                format_call(nr(name), &a6(args)),
                want.as_ref(),
                "{name}{args:x?}"
            );
        }
    }

    fn check_returns(cases: &[(&str, &[u64], i64, &str)]) {
        for &(name, args, ret, want) in cases {
            let have = format_return(nr(name), &a6(args), ret);
            assert_eq!(have, want, "{name}{args:x?} -> {ret}");
        }
    }

    #[test]
    #[rustfmt::skip]
    fn files() {
        let passwd = at(c"/etc/passwd");
        let empty = at(c"");
        let long = at(c"/a/very/long/path/that/goes/past/thirty-two/bytes");
        let exact = at(c"0123456789abcdef0123456789abcdef");
        check_calls(&[
            ("openat", &[AT, passwd, 0o2000000], r#"openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC)"#),
            ("openat", &[3, passwd, 0o1101, 0o644], r#"openat(3, "/etc/passwd", O_WRONLY|O_CREAT|O_TRUNC, 0644)"#),
            ("openat", &[AT, passwd, 0o20200002, 0], r#"openat(AT_FDCWD, "/etc/passwd", O_RDWR|O_TMPFILE, 000)"#),
            ("open", &[passwd, 0o2204000], r#"open("/etc/passwd", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY)"#),
            ("open", &[0x10, 0], "open(0x10, O_RDONLY)"),
            ("open", &[0, 0], "open(NULL, O_RDONLY)"),
            ("open", &[long, 0], r#"open("/a/very/long/path/that/goes/past"..., O_RDONLY)"#),
            ("open", &[exact, 0], r#"open("0123456789abcdef0123456789abcdef", O_RDONLY)"#),
            ("close", &[3], "close(3)"),
            ("fstat", &[3, 0x7000], "fstat(3, 0x7000)"),
            ("newfstatat", &[AT, empty, 0x7000, 0x1000], r#"newfstatat(AT_FDCWD, "", 0x7000, AT_EMPTY_PATH)"#),
            ("newfstatat", &[AT, passwd, 0x7000, 0], r#"newfstatat(AT_FDCWD, "/etc/passwd", 0x7000, 0)"#),
            ("statx", &[AT, passwd, 0, 0xfff, 0x7000], r#"statx(AT_FDCWD, "/etc/passwd", AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS|STATX_BTIME, 0x7000)"#),
            ("lseek", &[3, NEG1, 2], "lseek(3, -1, SEEK_END)"),
            ("read", &[3, 0x1000, 832], "read(3, 0x1000, 832)"),
            ("pread64", &[3, 0x1000, 64, 128], "pread64(3, 0x1000, 64, 128)"),
            ("readv", &[3, 0x7000, 2], "readv(3, 0x7000, 2)"),
            ("writev", &[1, 0x7000, 3], "writev(1, 0x7000, 3)"),
            ("access", &[passwd, 4], r#"access("/etc/passwd", R_OK)"#),
            ("access", &[passwd, 0], r#"access("/etc/passwd", F_OK)"#),
            ("faccessat", &[AT, passwd, 6], r#"faccessat(AT_FDCWD, "/etc/passwd", R_OK|W_OK)"#),
            ("faccessat2", &[AT, passwd, 1, 0x200], r#"faccessat2(AT_FDCWD, "/etc/passwd", X_OK, AT_EACCESS)"#),
            ("pipe", &[0x7000], "pipe(0x7000)"),
            ("pipe2", &[0x7000, 0o2004000], "pipe2(0x7000, O_NONBLOCK|O_CLOEXEC)"),
            ("pipe2", &[0x7000, 0], "pipe2(0x7000, 0)"),
            ("dup", &[3], "dup(3)"),
            ("dup2", &[3, 1], "dup2(3, 1)"),
            ("dup3", &[3, 1, 0o2000000], "dup3(3, 1, O_CLOEXEC)"),
            ("fcntl", &[3, 3], "fcntl(3, F_GETFL)"),
            ("fcntl", &[3, 2, 1], "fcntl(3, F_SETFD, FD_CLOEXEC)"),
            ("fcntl", &[3, 4, 0o4002], "fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK)"),
            ("fcntl", &[3, 1030, 10], "fcntl(3, F_DUPFD_CLOEXEC, 10)"),
            ("fcntl", &[3, 6, 0x7000], "fcntl(3, F_SETLK, 0x7000)"),
            ("fcntl", &[3, 999, 5], "fcntl(3, 0x3e7, 0x5)"),
            ("ioctl", &[1, 0x5401, 0x7000], "ioctl(1, TCGETS, 0x7000)"),
            ("ioctl", &[1, 0x5413, 0x7000], "ioctl(1, TIOCGWINSZ, 0x7000)"),
            ("ioctl", &[1, 0x1234, 0], "ioctl(1, 0x1234, 0)"),
            ("getcwd", &[0x1000, 4096], "getcwd(0x1000, 4096)"),
            ("chdir", &[passwd], r#"chdir("/etc/passwd")"#),
            ("mkdir", &[passwd, 0o755], r#"mkdir("/etc/passwd", 0755)"#),
            ("unlink", &[passwd], r#"unlink("/etc/passwd")"#),
            ("unlinkat", &[AT, passwd, 0x200], r#"unlinkat(AT_FDCWD, "/etc/passwd", AT_REMOVEDIR)"#),
            ("rename", &[passwd, empty], r#"rename("/etc/passwd", "")"#),
            ("readlink", &[passwd, 0x1000, 4096], r#"readlink("/etc/passwd", 0x1000, 4096)"#),
            ("readlinkat", &[3, passwd, 0x1000, 64], r#"readlinkat(3, "/etc/passwd", 0x1000, 64)"#),
            ("getdents64", &[3, 0x1000, 32768], "getdents64(3, 0x1000, 32768)"),
            ("ftruncate", &[3, 100], "ftruncate(3, 100)"),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn buffers_and_escapes() {
        let esc = b"a\"b\\c\n\t\r\x0b\x0c\x00\x017\xff";
        let long = [b'x'; 40];
        check_calls(&[
            ("write", &[1, at(b"hello\n"), 6], r#"write(1, "hello\n", 6)"#),
            ("write", &[2, at(esc), esc.len() as u64], r#"write(2, "a\"b\\c\n\t\r\v\f\0\0017\377", 14)"#),
            ("write", &[1, at(b"\x7fELF\x02"), 5], r#"write(1, "\177ELF\2", 5)"#),
            ("write", &[1, at(&long), 40], r#"write(1, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"..., 40)"#),
            ("write", &[1, 0x10, 5], "write(1, 0x10, 5)"),
            ("write", &[1, 0, 0], "write(1, NULL, 0)"),
            ("pwrite64", &[3, at(b"abc"), 3, 512], r#"pwrite64(3, "abc", 3, 512)"#),
            ("sendto", &[3, at(b"ping"), 4, 0, 0, 0], r#"sendto(3, "ping", 4, 0, NULL, 0)"#),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn memory() {
        check_calls(&[
            ("mmap", &[0, 8192, 3, 0x22, NEG1, 0], "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)"),
            ("mmap", &[0x7f0000000000, 4096, 5, 0x812, 3, 0x2000], "mmap(0x7f0000000000, 4096, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x2000)"),
            ("mmap", &[0, 1 << 21, 0, 0x40001 | (21 << 26), NEG1, 0], "mmap(NULL, 2097152, PROT_NONE, MAP_SHARED|MAP_HUGETLB|21<<MAP_HUGE_SHIFT, -1, 0)"),
            ("mprotect", &[0x1000, 4096, 0], "mprotect(0x1000, 4096, PROT_NONE)"),
            ("munmap", &[0x1000, 4096], "munmap(0x1000, 4096)"),
            ("brk", &[0], "brk(NULL)"),
            ("brk", &[0x555555559000], "brk(0x555555559000)"),
            ("madvise", &[0x1000, 4096, 4], "madvise(0x1000, 4096, MADV_DONTNEED)"),
            ("mremap", &[0x1000, 4096, 8192, 1, 0], "mremap(0x1000, 4096, 8192, MREMAP_MAYMOVE)"),
            ("mremap", &[0x1000, 4096, 8192, 3, 0x9000], "mremap(0x1000, 4096, 8192, MREMAP_MAYMOVE|MREMAP_FIXED, 0x9000)"),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn signals_and_processes() {
        let act: [u64; 4] = [0x401000, 0x1400_0000, 0x402000, 1 << 14];
        let ign: [u64; 4] = [1, 0, 0, 0];
        let (chld, no_kill): (u64, u64) = (1 << 16, !(1 << 8));
        let ts: [u64; 2] = [1, 500_000_000];
        check_calls(&[
            ("rt_sigaction", &[2, at(&act), 0, 8], "rt_sigaction(SIGINT, {sa_handler=0x401000, sa_mask=[TERM], sa_flags=SA_RESTORER|SA_RESTART, sa_restorer=0x402000}, NULL, 8)"),
            ("rt_sigaction", &[13, at(&ign), 0x7000, 8], "rt_sigaction(SIGPIPE, {sa_handler=SIG_IGN, sa_mask=[], sa_flags=0}, 0x7000, 8)"),
            ("rt_sigaction", &[11, 0x10, 0, 8], "rt_sigaction(SIGSEGV, 0x10, NULL, 8)"),
            ("rt_sigprocmask", &[0, at(&chld), 0, 8], "rt_sigprocmask(SIG_BLOCK, [CHLD], NULL, 8)"),
            ("rt_sigprocmask", &[2, at(&no_kill), 0x7000, 8], "rt_sigprocmask(SIG_SETMASK, ~[KILL], 0x7000, 8)"),
            ("kill", &[1234, 15], "kill(1234, SIGTERM)"),
            ("kill", &[1, 0], "kill(1, 0)"),
            ("tgkill", &[1, 2, 34], "tgkill(1, 2, SIGRT_2)"),
            ("getpid", &[], "getpid()"),
            ("getuid", &[], "getuid()"),
            ("geteuid", &[], "geteuid()"),
            ("getgid", &[], "getgid()"),
            ("getegid", &[], "getegid()"),
            ("exit", &[0], "exit(0)"),
            ("exit_group", &[1], "exit_group(1)"),
            ("wait4", &[NEG1, 0x7000, 1, 0], "wait4(-1, 0x7000, WNOHANG, NULL)"),
            ("uname", &[0x7000], "uname(0x7000)"),
            ("sysinfo", &[0x7000], "sysinfo(0x7000)"),
            ("sched_getaffinity", &[0, 128, 0x7000], "sched_getaffinity(0, 128, 0x7000)"),
            ("nanosleep", &[at(&ts), 0], "nanosleep({tv_sec=1, tv_nsec=500000000}, NULL)"),
            ("clock_nanosleep", &[0, 1, at(&ts), 0], "clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, {tv_sec=1, tv_nsec=500000000}, NULL)"),
            ("clock_gettime", &[1, 0x7000], "clock_gettime(CLOCK_MONOTONIC, 0x7000)"),
            ("clock_gettime", &[(-6i64) as u64, 0x7000], "clock_gettime(0xfffffffa, 0x7000)"),
            ("gettimeofday", &[0x7000, 0], "gettimeofday(0x7000, NULL)"),
            ("getrandom", &[0x1000, 16, 1], "getrandom(0x1000, 16, GRND_NONBLOCK)"),
            ("arch_prctl", &[0x1002, 0x7f00], "arch_prctl(ARCH_SET_FS, 0x7f00)"),
            ("arch_prctl", &[0x3001, 0], "arch_prctl(0x3001, NULL)"),
            ("set_tid_address", &[0x7000], "set_tid_address(0x7000)"),
            ("set_robust_list", &[0x7000, 24], "set_robust_list(0x7000, 24)"),
            ("rseq", &[0x7000, 32, 0, 0x53053053], "rseq(0x7000, 0x20, 0, 0x53053053)"),
            ("prlimit64", &[0, 3, 0, 0x7000], "prlimit64(0, RLIMIT_STACK, NULL, 0x7000)"),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn threads() {
        let vfork: [u64; 11] = [0x4100, 0, 0, 0, 17, 0x8000, 0x2000, 0, 0, 0, 0];
        let thread: [u64; 11] = [0x3d0f00, 0, 0x9000, 0x9100, 0, 0x8000, 0x2000, 0xa000, 0, 0, 0];
        check_calls(&[
            ("futex", &[0x7000, 128, 2, 0], "futex(0x7000, FUTEX_WAIT_PRIVATE, 2, NULL)"),
            ("futex", &[0x7000, 129, 1], "futex(0x7000, FUTEX_WAKE_PRIVATE, 1)"),
            ("futex", &[0x7000, 393, 0, 0, 0, 0xffff_ffff], "futex(0x7000, FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME, 0, NULL, FUTEX_BITSET_MATCH_ANY)"),
            ("futex", &[0x7000, 4, 1, 5, 0x7100, 0], "futex(0x7000, FUTEX_CMP_REQUEUE, 1, 5, 0x7100, 0)"),
            ("futex", &[0x7000, 0x7f, 1, 2, 3, 4], "futex(0x7000, 0x7f, 1, 0x2, 0x3, 0x4)"),
            ("clone", &[0x0120_0011, 0, 0, 0x7000, 0], "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7000)"),
            ("clone", &[0x3d0f00, 0x8000, 0x9000, 0x9000, 0xa000], "clone(child_stack=0x8000, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, parent_tid=0x9000, child_tidptr=0x9000, tls=0xa000)"),
            ("clone3", &[at(&vfork), 88], "clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x8000, stack_size=0x2000}, 88)"),
            ("clone3", &[at(&thread), 88], "clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x9000, parent_tid=0x9100, exit_signal=0, stack=0x8000, stack_size=0x2000, tls=0xa000}, 88)"),
            ("clone3", &[0x10, 88], "clone3(0x10, 88)"),
            ("unshare", &[0x20000], "unshare(CLONE_NEWNS)"),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn execve_and_unknown() {
        // The environment array must outlive the calls that read it.
        let env = [at(c"A=1"), at(c"B=2"), 0];
        let (path, e) = (at(c"/bin/ls"), at(&env));
        let mut many = vec![at(c"x"); 12];
        many.push(0);
        let eight = [r#""x""#; 8].join(", ");
        check_calls(&[
            ("execve", &[path, at(&[at(c"ls"), at(c"-l"), 0]), e], format!(r#"execve("/bin/ls", ["ls", "-l"], {e:#x} /* 2 vars */)"#)),
            ("execve", &[path, at(&[at(c"ok"), 0x10, 0]), 0], r#"execve("/bin/ls", ["ok", 0x10], NULL)"#.to_string()),
            ("execve", &[path, 0x10, 0x10], r#"execve("/bin/ls", 0x10, 0x10)"#.to_string()),
            ("execve", &[path, at(&many[..]), 0], format!(r#"execve("/bin/ls", [{eight}, ...], NULL)"#)),
        ]);
        assert_eq!(format_call(400, &[1, 2, 3, 0, 0, 0]), "syscall_400(0x1, 0x2, 0x3, 0x0, 0x0, 0x0)");
        assert_eq!(format_call(u64::MAX, &[0; 6]), format!("syscall_{}(0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", u64::MAX));
    }

    #[test]
    #[rustfmt::skip]
    fn returns() {
        let hello = *b"hello\n";
        let cwd = *b"/tmp\0";
        let fds: [i32; 2] = [3, 4];
        let (one, two) = (*b"hel", *b"lo wo");
        let iov: [u64; 4] = [at(&one), 3, at(&two), 5];
        let ts: [u64; 2] = [5, 7];
        let statuses: [u32; 2] = [0, 0x8b];
        check_returns(&[
            ("openat", &[AT, 0], 3, " = 3"),
            ("openat", &[AT, 0], -2, " = -1 ENOENT (No such file or directory)"),
            ("read", &[0, 0], -11, " = -1 EAGAIN (Resource temporarily unavailable)"),
            ("ioctl", &[1, 0x5401], -25, " = -1 ENOTTY (Inappropriate ioctl for device)"),
            ("mmap", &[], -12, " = -1 ENOMEM (Cannot allocate memory)"),
            ("close", &[3], -133, " = -1 EHWPOISON (Memory page has hardware error)"),
            ("close", &[3], -512, " = -1 ERESTARTSYS (To be restarted if SA_RESTART is set)"),
            ("close", &[3], -4095, " = -1 ERRNO_4095 (Unknown error 4095)"),
            ("close", &[3], -41, " = -1 ERRNO_41 (Unknown error 41)"),
            ("lseek", &[3], -4096, " = -4096"),
            ("mmap", &[], 0x7f12_3456_0000, " = 0x7f1234560000"),
            ("brk", &[0], 0x5555_5555_9000, " = 0x555555559000"),
            ("mremap", &[], 0x7f00_0000_0000, " = 0x7f0000000000"),
            ("exit_group", &[0], 0, " = ?"),
            ("read", &[0, at(&hello), 100], 6, r#" = 6 buf="hello\n""#),
            ("read", &[0, at(&hello), 100], 0, r#" = 0 buf="""#),
            ("read", &[0, 0x10, 100], 5, " = 5 buf=0x10"),
            ("pread64", &[0, at(&hello), 3, 0], 3, r#" = 3 buf="hel""#),
            ("getrandom", &[at(&hello), 2, 0], 2, r#" = 2 buf="he""#),
            ("readv", &[0, at(&iov), 2], 6, r#" = 6 iov=[{iov_base="hel", iov_len=3}, {iov_base="lo ", iov_len=5}]"#),
            ("getcwd", &[at(&cwd), 4096], 5, r#" = 5 buf="/tmp""#),
            ("readlink", &[0, at(&cwd), 64], 4, r#" = 4 buf="/tmp""#),
            ("pipe2", &[at(&fds), 0], 0, " = 0 fds=[3, 4]"),
            ("pipe", &[0x10], 0, " = 0"),
            ("wait4", &[NEG1, at(&statuses[0])], 77, " = 77 status=[{WIFEXITED(s) && WEXITSTATUS(s) == 0}]"),
            ("wait4", &[NEG1, at(&statuses[1])], 77, " = 77 status=[{WIFSIGNALED(s) && WTERMSIG(s) == SIGSEGV && WCOREDUMP(s)}]"),
            ("wait4", &[NEG1, 0], 77, " = 77"),
            ("wait4", &[NEG1, at(&statuses[0]), 1], 0, " = 0"),
            ("fcntl", &[3, 3], 0x8002, " = 0x8002 (flags O_RDWR|O_LARGEFILE)"),
            ("fcntl", &[3, 1], 1, " = 0x1 (flags FD_CLOEXEC)"),
            ("fcntl", &[3, 1], 0, " = 0"),
            ("clock_gettime", &[1, at(&ts)], 0, " = 0 tp={tv_sec=5, tv_nsec=7}"),
            ("write", &[1, at(&hello), 6], 6, " = 6"),
            ("getpid", &[], 1234, " = 1234"),
        ]);
        assert_eq!(format_return(400, &[0; 6], -2), " = -1 ENOENT (No such file or directory)");
        assert_eq!(format_return(400, &[0; 6], 7), " = 7");
    }

    /// A string or buffer that runs into an unmapped page prints as its
    /// address; one that ends before it prints normally (I1).
    #[test]
    #[allow(unsafe_code)]
    #[rustfmt::skip]
    fn reads_stop_at_unmapped_pages() {
        use libc::{MAP_ANONYMOUS, MAP_FAILED, MAP_PRIVATE, PROT_NONE, PROT_READ, PROT_WRITE};
        // SAFETY: a fresh private anonymous mapping that nothing else uses.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) };
        assert_ne!(base, MAP_FAILED);
        // SAFETY: the second page of the mapping above, which we own.
        assert_eq!(unsafe { libc::mprotect(base.cast::<u8>().add(4096).cast(), 4096, PROT_NONE) }, 0);
        // SAFETY: the first page is mapped read-write and only used here.
        let first = unsafe { std::slice::from_raw_parts_mut(base.cast::<u8>(), 4096) };
        first[4088..4091].copy_from_slice(b"ok\0");
        first[4092..].copy_from_slice(b"abcd");
        let end = base as u64 + 4096;
        let (ok, abcd) = (end - 8, end - 4);
        check_calls(&[
            ("open", &[ok, 0], r#"open("ok", O_RDONLY)"#.to_string()),
            ("open", &[abcd, 0], format!("open({abcd:#x}, O_RDONLY)")),
            ("open", &[end, 0], format!("open({end:#x}, O_RDONLY)")),
            ("write", &[1, abcd, 4], r#"write(1, "abcd", 4)"#.to_string()),
            ("write", &[1, abcd, 5], format!("write(1, {abcd:#x}, 5)")),
        ]);
        assert_eq!(format_return(0, &a6(&[0, abcd, 8]), 4), r#" = 4 buf="abcd""#);
        assert_eq!(format_return(0, &a6(&[0, abcd, 8]), 5), format!(" = 5 buf={abcd:#x}"));
        // SAFETY: unmaps only the mapping created above; `first` is not used again.
        assert_eq!(unsafe { libc::munmap(base, 8192) }, 0);
    }
}
