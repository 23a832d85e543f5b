//! Hiding the trap flag that single-stepping sets.
//!
//! `PTRACE_SINGLESTEP` runs the program with RFLAGS.TF (bit 8) set, and two
//! instructions copy RFLAGS to where the program can read it:
//!
//! 1. `pushf`/`pushfw`: the value pushed;
//! 2. `syscall`: r11 = RFLAGS.
//!
//! Natively TF is clear in both, and a program that looks (asm-flags-misc
//! prints `pushf & 0xfff`) would take another path and run a different
//! number of instructions. [`TfHider`] clears the bit in each copy at the
//! stop right after the copy is made, before the program's next instruction.
//! (Signal frames need nothing: the kernel drops a debugger's TF before it
//! saves the registers in the frame; a test pins that.)
//!
//! Invariants:
//! - **H1** Only a copy made by the step just taken is changed, and only its
//!   bit 8: after a `pushf` whose end address is where the step trap says rip
//!   now is; r11 after a `syscall` (the bytes before rip are `0f 05`, and the
//!   call was not `rt_sigreturn` or `execve`, which load r11 from elsewhere)
//!   in 64-bit code.
//! - **H2** Per step the cost is one hash lookup of the next rip; its code
//!   is read (`PTRACE_PEEKTEXT`) only the first time that rip is seen.
//!   The cache is dropped on `execve` and on every call that can change
//!   what code is mapped (`mmap`, `mprotect`, `munmap`, `mremap`, …).
//!
//! Limits: a program that sets TF itself (its own single-stepping) is not
//! supported. Code rewritten in place in writable+executable memory without
//! one of those calls keeps its cached kind, so a `pushf` written where other
//! code has already run would show TF (no guest test does this).

use std::collections::HashMap;

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::unistd::Pid;

/// RFLAGS.TF.
const TF: u64 = 0x100;

/// The user code segment selector of 64-bit processes (`__USER_CS`).
const USER64_CS: u64 = 0x33;

/// Syscalls after which r11 does not hold RFLAGS.
const SYS_RT_SIGRETURN: u64 = 15;
const SYS_EXECVE: u64 = 59;
const SYS_EXECVEAT: u64 = 322;

/// Syscalls that can change which code is mapped where (H2).
const CODE_MAP_SYSCALLS: [u64; 8] = [
    9,   // mmap
    10,  // mprotect
    11,  // munmap
    25,  // mremap
    30,  // shmat
    67,  // shmdt
    216, // remap_file_pages
    329, // pkey_mprotect
];

/// What stepcount needs to know about an instruction before stepping it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Other,
    /// `pushf` in any operand size, `len` bytes long with its prefixes.
    Pushf {
        len: u8,
    },
    /// `int1` (icebp), which the kernel reports without advancing rip.
    Int1,
}

/// The per-address cache of instruction kinds, and the fix-ups.
#[derive(Default)]
pub struct TfHider {
    kinds: HashMap<u64, Kind>,
}

impl TfHider {
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
    pub fn forget_code(&mut self) {
        self.kinds.clear();
    }

    /// After a step that ran `pushf`: clears TF in the value it pushed.
    pub fn after_pushf(&self, pid: Pid) -> Result<(), Errno> {
        let regs = ptrace::getregs(pid)?;
        clear_tf_in_word(pid, regs.rsp)
    }

    /// At the stop after a syscall returned (`regs` as read there): clears TF
    /// in r11 if the instruction was `syscall`, and drops the code cache if
    /// the call could have changed the code.
    pub fn after_syscall(
        &mut self,
        pid: Pid,
        regs: &mut libc::user_regs_struct,
    ) -> Result<(), Errno> {
        let nr = regs.orig_rax;
        if CODE_MAP_SYSCALLS.contains(&nr) || nr == SYS_EXECVE || nr == SYS_EXECVEAT {
            self.forget_code();
        }
        let r11_holds_rflags = !matches!(nr, SYS_RT_SIGRETURN | SYS_EXECVE | SYS_EXECVEAT);
        if regs.cs == USER64_CS && r11_holds_rflags && regs.r11 & TF != 0 {
            let (bytes, n) = read_code(pid, regs.rip.wrapping_sub(2));
            if n >= 2 && bytes[..2] == [0x0f, 0x05] {
                regs.r11 &= !TF;
                ptrace::setregs(pid, *regs)?;
            }
        }
        Ok(())
    }
}

fn clear_tf_in_word(pid: Pid, addr: u64) -> Result<(), Errno> {
    let word = ptrace::read(pid, addr as ptrace::AddressType)? as u64;
    if word & TF != 0 {
        ptrace::write(
            pid,
            addr as ptrace::AddressType,
            (word & !TF) as libc::c_long,
        )?;
    }
    Ok(())
}

/// Up to 8 bytes of the program's memory from `addr`, with aligned reads so
/// that an unmapped page after the instruction only shortens the result.
fn read_code(pid: Pid, addr: u64) -> ([u8; 8], usize) {
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
    match bytes.get(i) {
        Some(0x9c) => Kind::Pushf { len: i as u8 + 1 },
        Some(0xf1) => Kind::Int1,
        _ => Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::{classify, Kind};

    #[test]
    fn classify_finds_pushf_and_int1_behind_prefixes() {
        let cases: &[(&[u8], Kind)] = &[
            (&[0x9c], Kind::Pushf { len: 1 }),       // pushfq
            (&[0x66, 0x9c], Kind::Pushf { len: 2 }), // pushfw
            (&[0x48, 0x9c], Kind::Pushf { len: 2 }), // rex.w pushfq
            (&[0x2e, 0x66, 0x41, 0x9c], Kind::Pushf { len: 4 }),
            (&[0xf1], Kind::Int1),
            (&[0x9d], Kind::Other),             // popfq
            (&[0x0f, 0x9c, 0xc0], Kind::Other), // setl al
            (&[0x66, 0x66], Kind::Other),       // cut short
            (&[], Kind::Other),
        ];
        for &(bytes, want) in cases {
            assert_eq!(classify(bytes), want, "{bytes:02x?}");
        }
    }
}
