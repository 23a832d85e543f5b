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
//! number of instructions. These fix-ups clear the bit in each copy at the
//! stop right after the copy is made, before the program's next instruction.
//! (Signal frames need nothing: the kernel drops a debugger's TF before it
//! saves the registers in the frame; a test pins that.)
//!
//! Invariant:
//! - **H1** Only a copy made by the step just taken is changed, and only its
//!   bit 8: the word at rsp after a `pushf` whose end address is where the
//!   step trap says rip now is; r11 after a `syscall` (the bytes before rip
//!   are `0f 05`, and the call was not `rt_sigreturn` or `execve`, which
//!   load r11 from elsewhere) in 64-bit code.
//!
//! Limit: a program that sets TF itself (its own single-stepping) is not
//! supported.

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::unistd::Pid;

use super::code::read_code;

/// RFLAGS.TF.
const TF: u64 = 0x100;

/// The user code segment selector of 64-bit processes (`__USER_CS`).
pub const USER64_CS: u64 = 0x33;

/// Syscalls after which r11 does not hold RFLAGS. After `rt_sigreturn`,
/// orig_rax reads -1.
const SYS_RT_SIGRETURN: u64 = 15;
const SYS_EXECVE: u64 = 59;
const SYS_EXECVEAT: u64 = 322;
const NO_SYSCALL: u64 = u64::MAX;

/// After a step that ran `pushf`: clears TF in the value it pushed.
pub fn after_pushf(pid: Pid) -> Result<(), Errno> {
    let regs = ptrace::getregs(pid)?;
    let word = ptrace::read(pid, regs.rsp as ptrace::AddressType)? as u64;
    if word & TF != 0 {
        ptrace::write(
            pid,
            regs.rsp as ptrace::AddressType,
            (word & !TF) as libc::c_long,
        )?;
    }
    Ok(())
}

/// At the stop after a syscall returned (`regs` as read there): clears TF
/// in r11 if the instruction was `syscall`.
pub fn after_syscall(pid: Pid, regs: &mut libc::user_regs_struct) -> Result<(), Errno> {
    let r11_holds_rflags = !matches!(
        regs.orig_rax,
        SYS_RT_SIGRETURN | SYS_EXECVE | SYS_EXECVEAT | NO_SYSCALL
    );
    if regs.cs == USER64_CS && r11_holds_rflags && regs.r11 & TF != 0 {
        let (bytes, n) = read_code(pid, regs.rip.wrapping_sub(2));
        if n >= 2 && bytes[..2] == [0x0f, 0x05] {
            regs.r11 &= !TF;
            ptrace::setregs(pid, *regs)?;
        }
    }
    Ok(())
}
