//! What stepcount needs to know about the instruction it is about to step.
//!
//! [`CodeCache::kind_at`] classifies the instruction at an address from its
//! first bytes (legacy prefixes, an optional REX, the opcode) and caches the
//! answer per address. stepcount carries its own few-line classifier rather
//! than hotlift's decoder, so the oracle does not share the translator's
//! bugs.
//!
//! Invariants:
//! - **K1** Per step the cost is one hash lookup; the code is read
//!   (`PTRACE_PEEKTEXT`) only the first time an address is seen.
//! - **K2** The cache is dropped on `execve` and after every syscall that can
//!   change which code is mapped where ([`CODE_MAP_SYSCALLS`]). Code
//!   rewritten in place in writable+executable memory without such a call
//!   keeps its old kind; the kinds only steer the TF and SIGTRAP fix-ups,
//!   which check the machine state again before they change anything.

use std::collections::HashMap;

use nix::sys::ptrace;
use nix::unistd::Pid;

/// Syscalls that can change which code is mapped where (K2).
pub const CODE_MAP_SYSCALLS: [u64; 10] = [
    9,   // mmap
    10,  // mprotect
    11,  // munmap
    25,  // mremap
    30,  // shmat
    67,  // shmdt
    59,  // execve
    216, // remap_file_pages
    322, // execveat
    329, // pkey_mprotect
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Other,
    /// `pushf` in any operand size, `len` bytes long with its prefixes.
    Pushf {
        len: u8,
    },
    /// `int1` (icebp): a trap, reported as TRAP_BRKPT (trace.rs).
    Int1,
    /// `syscall` (`0f 05`).
    Syscall,
}

#[derive(Default)]
pub struct CodeCache {
    kinds: HashMap<u64, Kind>,
}

impl CodeCache {
    /// The kind of the instruction at `ip` (0: unknown, taken as Other).
    pub fn kind_at(&mut self, pid: Pid, ip: u64) -> Kind {
        if ip == 0 {
            return Kind::Other;
        }
        *self.kinds.entry(ip).or_insert_with(|| {
            let (bytes, n) = read_code(pid, ip);
            classify(&bytes[..n])
        })
    }

    /// Forgets every cached kind (the program's code may have changed).
    pub fn forget(&mut self) {
        self.kinds.clear();
    }
}

/// Up to 8 bytes of the program's memory from `addr`, with aligned reads so
/// that an unmapped page after the instruction only shortens the result.
pub fn read_code(pid: Pid, addr: u64) -> ([u8; 8], usize) {
    let mut out = [0u8; 8];
    let base = addr & !7;
    let skip = (addr - base) as usize;
    let Ok(first) = ptrace::read(pid, base as ptrace::AddressType) else {
        return (out, 0);
    };
    let mut n = 8 - skip;
    out[..n].copy_from_slice(&first.to_le_bytes()[skip..]);
    if skip > 0 {
        if let Ok(second) = ptrace::read(pid, (base + 8) as ptrace::AddressType) {
            out[n..].copy_from_slice(&second.to_le_bytes()[..skip]);
            n = 8;
        }
    }
    (out, n)
}

/// Classifies 64-bit code: legacy prefixes, an optional REX, the opcode.
fn classify(bytes: &[u8]) -> Kind {
    let is_legacy_prefix = |b: &u8| {
        matches!(
            b,
            0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3
        )
    };
    let mut i = bytes.iter().take_while(|b| is_legacy_prefix(b)).count();
    if bytes.get(i).is_some_and(|b| (0x40..=0x4f).contains(b)) {
        i += 1;
    }
    match (bytes.get(i), bytes.get(i + 1)) {
        (Some(0x9c), _) => Kind::Pushf { len: i as u8 + 1 },
        (Some(0xf1), _) => Kind::Int1,
        (Some(0x0f), Some(0x05)) if i == 0 => Kind::Syscall,
        _ => Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::{classify, Kind};

    #[test]
    fn classify_finds_pushf_int1_and_syscall() {
        let cases: &[(&[u8], Kind)] = &[
            (&[0x9c], Kind::Pushf { len: 1 }),       // pushfq
            (&[0x66, 0x9c], Kind::Pushf { len: 2 }), // pushfw
            (&[0x48, 0x9c], Kind::Pushf { len: 2 }), // rex.w pushfq
            (&[0x2e, 0x66, 0x41, 0x9c], Kind::Pushf { len: 4 }),
            (&[0xf1], Kind::Int1),
            (&[0x0f, 0x05, 0xc3], Kind::Syscall),
            (&[0x9d], Kind::Other),             // popfq
            (&[0x0f, 0x9c, 0xc0], Kind::Other), // setl al
            (&[0x0f, 0x34], Kind::Other),       // sysenter
            (&[0x66, 0x66], Kind::Other),       // cut short
            (&[], Kind::Other),
        ];
        for &(bytes, want) in cases {
            assert_eq!(classify(bytes), want, "{bytes:02x?}");
        }
    }
}
