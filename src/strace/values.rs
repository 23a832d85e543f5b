//! Renderers of the values that pointer arguments point to: strings and
//! buffers (quoted and escaped like strace), `struct sigaction`,
//! `timespec`, argv and envp arrays, and the iovecs of a vectored read.
//!
//! I1: strings and buffers show at most `MAX_STR` (32) bytes, quoted and
//!     escaped like strace, followed by `...` when there was more.

use std::fmt::Write;

use super::memory::{read_exact, read_prefix, read_u64s};
use super::names::{self, flags, ptr, sigset_bits};

/// Bytes of a string or buffer shown before `...` (I1).
const MAX_STR: usize = 32;
/// Elements of an argv or iovec array shown before `...`.
const MAX_ELEMS: usize = 8;
/// Environment entries counted before giving up.
const MAX_ENV: usize = 4096;

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

pub(super) fn cstr(addr: u64) -> String {
    if addr == 0 {
        return ptr(addr);
    }
    match read_cstr(addr) {
        Some((bytes, truncated)) => quote(&bytes, truncated),
        None => ptr(addr),
    }
}

/// A buffer of `len` bytes (not NUL-terminated), first `MAX_STR` shown.
pub(super) fn buffer(addr: u64, len: u64) -> String {
    if addr == 0 {
        return ptr(addr);
    }
    let shown = len.min(MAX_STR as u64) as usize;
    match read_exact(addr, shown) {
        Some(bytes) => quote(&bytes, len > MAX_STR as u64),
        None => ptr(addr),
    }
}

/// `sa_flags`' bit for a handler with its own return trampoline (the
/// kernel's uapi value; the libc crate has none): the signal layer's
/// delivery and the dispatcher's `icebp` handler need it too.
pub const SA_RESTORER: u64 = 0x0400_0000;

pub(super) fn sigaction(addr: u64) -> String {
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

pub(super) fn timespec(addr: u64) -> String {
    match read_u64s(addr, 2) {
        Some(t) => format!("{{tv_sec={}, tv_nsec={}}}", t[0] as i64, t[1] as i64),
        None => ptr(addr),
    }
}

/// `["ls", "-l"]`: the first `MAX_ELEMS` strings of a NULL-terminated array.
pub(super) fn argv(addr: u64) -> String {
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
pub(super) fn envp(addr: u64) -> String {
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
pub(super) fn iovec_out(addr: u64, count: u64, total: u64) -> String {
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
