//! Keeping the program's SIGTRAP what it would be natively.
//!
//! Every single-step trap reaches the tracer as a SIGTRAP that the kernel
//! *forces* on the program (`force_sig_fault`), and forcing a signal that is
//! ignored or blocked resets its disposition to SIG_DFL and unblocks it. So
//! under single-stepping a program's SIG_IGN for SIGTRAP, its block of
//! SIGTRAP, and (worse) its SIGTRAP handler while SIGTRAP is blocked (as it
//! is inside that very handler) would all be undone at the next step: the
//! program would read back a different mask, die of a SIGTRAP it ignores, or
//! die of the second `int3` its handler should catch.
//!
//! [`SigtrapShadow`] prevents that:
//! - **G1** The kernel's copy of SIGTRAP is never blocked, so no handler is
//!   ever reset. Before a syscall that would block it runs, stepcount clears
//!   SIGTRAP's bit in the mask the call reads (`rt_sigprocmask`'s set, an
//!   action's `sa_mask`, the mask `rt_sigreturn` restores) and gives a
//!   SIGTRAP handler SA_NODEFER; it restores the program's memory after the
//!   call (H-style: the program does not run in between).
//! - **G2** The program's own view is kept here (disposition, blocked bit,
//!   each action's flags and mask bit) and written into everything the
//!   kernel hands back: `rt_sigaction`'s old action, `rt_sigprocmask`'s old
//!   set, `rt_sigpending`'s set, and the mask saved in a signal frame.
//! - **G3** A SIGTRAP sent to the program (kill, raise) is dropped if the
//!   program ignores SIGTRAP, held back while the program blocks it, and
//!   delivered (with its original siginfo) at the stop where the program
//!   unblocks it, i.e. where the kernel would deliver it natively. A forced
//!   SIGTRAP (`int3`, `int1`) that the program ignores or blocks kills it,
//!   as natively.
//!
//! Not covered (no guest test needs them): the temporary masks of
//! `rt_sigsuspend`, `ppoll`, `pselect6`, `epoll_pwait`; waiting for SIGTRAP
//! with `rt_sigtimedwait` or a signalfd; `/proc/self/status`; SIGTRAP in
//! 32-bit code; threads (only the initial thread is traced).

use nix::errno::Errno;
use nix::sys::ptrace;
use nix::unistd::Pid;

use super::hide_tf::USER64_CS;

const SIGTRAP_BIT: u64 = 1 << (libc::SIGTRAP - 1);
const SA_NODEFER: u64 = 0x4000_0000;
const SA_RESETHAND: u64 = 0x8000_0000;
const SIG_DFL: u64 = 0;
const SIG_IGN: u64 = 1;
const SIG_BLOCK: u64 = 0;
const SIG_UNBLOCK: u64 = 1;
const SIG_SETMASK: u64 = 2;
/// Offset of `uc_sigmask` in the kernel's `struct ucontext` (uc_flags,
/// uc_link, uc_stack: 40 bytes; uc_mcontext: 256).
const UCONTEXT_SIGMASK: u64 = 40 + 256;

const SYS_RT_SIGACTION: u64 = 13;
const SYS_RT_SIGPROCMASK: u64 = 14;
const SYS_RT_SIGRETURN: u64 = 15;
const SYS_RT_SIGPENDING: u64 = 127;

/// The parts of one signal's action that stepcount changes in the kernel's
/// copy, as the program set them.
#[derive(Debug, Clone, Copy, Default)]
struct Action {
    flags: u64,
    mask_has_trap: bool,
}

/// What to do with a SIGTRAP the program is about to receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Deliver,
    Drop,
    /// Natively the program dies of it (a forced SIGTRAP it ignores or
    /// blocks); the kernel's copy might call a handler instead.
    KillAsSigtrap,
}

/// A syscall seen just before it ran, and the memory changed for it (G1).
#[derive(Debug, Clone, Copy)]
struct Entry {
    nr: u64,
    args: [u64; 4],
    /// Words of the program's memory (address, value) to put back after
    /// the call.
    restore: [Option<(u64, u64)>; 2],
    /// rt_sigaction: the new action as the program wrote it.
    new_action: Option<(Action, u64)>,
    /// rt_sigprocmask: whether the set has SIGTRAP; rt_sigreturn: whether
    /// the restored mask has it.
    set_has_trap: Option<bool>,
}

pub struct SigtrapShadow {
    /// The program's SIGTRAP handler: SIG_DFL, SIG_IGN or an address.
    handler: u64,
    /// Whether the program's own mask blocks SIGTRAP.
    blocked: bool,
    /// Per signal number (index 1..=64), the program's action.
    actions: [Action; 65],
    /// A SIGTRAP sent while the program blocked it (G3).
    held: Option<libc::siginfo_t>,
    entry: Option<Entry>,
}

impl Default for SigtrapShadow {
    fn default() -> Self {
        SigtrapShadow {
            handler: SIG_DFL,
            blocked: false,
            actions: [Action::default(); 65],
            held: None,
            entry: None,
        }
    }
}

fn read_word(pid: Pid, addr: u64) -> Result<u64, Errno> {
    ptrace::read(pid, addr as ptrace::AddressType).map(|w| w as u64)
}

fn write_word(pid: Pid, addr: u64, word: u64) -> Result<(), Errno> {
    ptrace::write(pid, addr as ptrace::AddressType, word as libc::c_long)
}

/// Sets or clears `bit` in the word at `addr`, if that changes it.
fn put_bit(pid: Pid, addr: u64, bit: u64, on: bool) -> Result<(), Errno> {
    let word = read_word(pid, addr)?;
    let new = if on { word | bit } else { word & !bit };
    if new != word {
        write_word(pid, addr, new)?;
    }
    Ok(())
}

impl SigtrapShadow {
    /// Just before the program steps a `syscall` (`regs` read there).
    pub fn before_syscall(&mut self, pid: Pid, regs: &libc::user_regs_struct) -> Result<(), Errno> {
        let args = [regs.rdi, regs.rsi, regs.rdx, regs.r10];
        let mut entry = Entry {
            nr: regs.rax,
            args,
            restore: [None; 2],
            new_action: None,
            set_has_trap: None,
        };
        // Unreadable arguments: the call fails with EFAULT; change nothing.
        match regs.rax {
            SYS_RT_SIGACTION if (1..=64).contains(&args[0]) && args[1] != 0 && args[3] == 8 => {
                if let (Ok(handler), Ok(flags), Ok(mask)) = (
                    read_word(pid, args[1]),
                    read_word(pid, args[1] + 8),
                    read_word(pid, args[1] + 24),
                ) {
                    let action = Action {
                        flags,
                        mask_has_trap: mask & SIGTRAP_BIT != 0,
                    };
                    entry.new_action = Some((action, handler));
                    if action.mask_has_trap {
                        write_word(pid, args[1] + 24, mask & !SIGTRAP_BIT)?;
                        entry.restore[0] = Some((args[1] + 24, mask));
                    }
                    let traps_handled = args[0] == libc::SIGTRAP as u64 && handler > SIG_IGN;
                    if traps_handled && flags & SA_NODEFER == 0 {
                        write_word(pid, args[1] + 8, flags | SA_NODEFER)?;
                        entry.restore[1] = Some((args[1] + 8, flags));
                    }
                }
            }
            SYS_RT_SIGPROCMASK if args[1] != 0 && args[3] == 8 => {
                if let Ok(set) = read_word(pid, args[1]) {
                    let has_trap = set & SIGTRAP_BIT != 0;
                    entry.set_has_trap = Some(has_trap);
                    if has_trap && matches!(args[0], SIG_BLOCK | SIG_SETMASK) {
                        write_word(pid, args[1], set & !SIGTRAP_BIT)?;
                        entry.restore[0] = Some((args[1], set));
                    }
                }
            }
            SYS_RT_SIGRETURN if regs.cs == USER64_CS => {
                // The frame's ucontext is at rsp once the handler returned.
                let at = regs.rsp + UCONTEXT_SIGMASK;
                if let Ok(mask) = read_word(pid, at) {
                    entry.set_has_trap = Some(mask & SIGTRAP_BIT != 0);
                    if mask & SIGTRAP_BIT != 0 {
                        write_word(pid, at, mask & !SIGTRAP_BIT)?;
                        entry.restore[0] = Some((at, mask)); // only if cancelled
                    }
                }
            }
            _ => {}
        }
        self.entry = Some(entry);
        Ok(())
    }

    /// At the stop after a syscall returned (`regs` read there). Returns
    /// true if a held SIGTRAP must be delivered now (its siginfo is set).
    pub fn after_syscall(
        &mut self,
        pid: Pid,
        regs: &libc::user_regs_struct,
    ) -> Result<bool, Errno> {
        let Some(entry) = self.entry else {
            return Ok(false);
        };
        // rt_sigreturn sets orig_rax to -1 (no syscall to restart).
        let nr = if regs.orig_rax == u64::MAX {
            SYS_RT_SIGRETURN
        } else {
            regs.orig_rax
        };
        if entry.nr != nr {
            // Not the call we saw begin (the kernel rewound rip to restart
            // another one): leave the program's memory as it was.
            self.cancel_syscall(pid)?;
            return Ok(false);
        }
        self.entry = None;
        let ok = regs.rax == 0;
        let [a0, a1, a2, _] = entry.args;
        let was_blocked = self.blocked;
        // When the new and the old value share one buffer, the kernel read
        // the new one before writing the old one there: leave that (it is
        // patched below) instead of putting the new one back. The frame
        // rt_sigreturn read is dead.
        if a1 != a2 && entry.nr != SYS_RT_SIGRETURN {
            for (addr, word) in entry.restore.into_iter().flatten() {
                write_word(pid, addr, word)?;
            }
        }
        match entry.nr {
            SYS_RT_SIGACTION if ok => {
                let sig = a0 as usize;
                let old = self.actions[sig];
                if a2 != 0 {
                    put_bit(pid, a2 + 24, SIGTRAP_BIT, old.mask_has_trap)?;
                    if sig == libc::SIGTRAP as usize {
                        write_word(pid, a2, self.handler)?;
                        put_bit(pid, a2 + 8, SA_NODEFER, old.flags & SA_NODEFER != 0)?;
                    }
                }
                if let Some((action, handler)) = entry.new_action {
                    self.actions[sig] = action;
                    if sig == libc::SIGTRAP as usize {
                        self.handler = handler;
                        if handler == SIG_IGN {
                            self.held = None; // SIG_IGN discards a pending signal
                        }
                    }
                }
            }
            SYS_RT_SIGPROCMASK if ok => {
                if a2 != 0 {
                    put_bit(pid, a2, SIGTRAP_BIT, was_blocked)?;
                }
                if let Some(has_trap) = entry.set_has_trap {
                    self.blocked = match a0 {
                        SIG_BLOCK => was_blocked || has_trap,
                        SIG_UNBLOCK => was_blocked && !has_trap,
                        SIG_SETMASK => has_trap,
                        _ => was_blocked,
                    };
                }
            }
            SYS_RT_SIGRETURN => {
                if let Some(has_trap) = entry.set_has_trap {
                    self.blocked = has_trap;
                }
            }
            SYS_RT_SIGPENDING if ok && a0 != 0 && self.held.is_some() => {
                put_bit(pid, a0, SIGTRAP_BIT, true)?;
            }
            _ => {}
        }
        if was_blocked && !self.blocked {
            if let Some(info) = self.held.take() {
                ptrace::setsiginfo(pid, &info)?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// At any stop other than the return of the syscall prepared by
    /// [`before_syscall`](Self::before_syscall) (a signal arrived before it
    /// ran, or it was a `tkill` whose return merged into a SIGTRAP): puts
    /// the program's memory back and forgets the call.
    pub fn cancel_syscall(&mut self, pid: Pid) -> Result<(), Errno> {
        if let Some(entry) = self.entry.take() {
            for (addr, word) in entry.restore.into_iter().flatten() {
                write_word(pid, addr, word)?;
            }
        }
        Ok(())
    }

    /// At the stop where the kernel has just entered the handler for
    /// `signal` (`regs` read there): the frame shows the program's mask,
    /// and the handler runs with the action's mask added.
    pub fn at_handler_entry(
        &mut self,
        pid: Pid,
        regs: &libc::user_regs_struct,
        signal: i32,
    ) -> Result<(), Errno> {
        if regs.cs == USER64_CS && self.blocked {
            put_bit(pid, regs.rdx + UCONTEXT_SIGMASK, SIGTRAP_BIT, true)?;
        }
        let Some(action) = usize::try_from(signal)
            .ok()
            .and_then(|s| self.actions.get(s).copied())
        else {
            return Ok(());
        };
        let is_trap = signal == libc::SIGTRAP;
        self.blocked |= action.mask_has_trap || (is_trap && action.flags & SA_NODEFER == 0);
        if is_trap && action.flags & SA_RESETHAND != 0 {
            self.handler = SIG_DFL;
        }
        Ok(())
    }

    /// A SIGTRAP sent to the program (kill, tkill, …), with its siginfo.
    pub fn on_sent_sigtrap(&mut self, info: &libc::siginfo_t) -> Verdict {
        if self.handler == SIG_IGN {
            Verdict::Drop
        } else if self.blocked {
            self.held.get_or_insert(*info); // standard signals do not queue
            Verdict::Drop
        } else {
            Verdict::Deliver
        }
    }

    /// A SIGTRAP forced by an instruction (`int3`, `int1`).
    pub fn on_forced_sigtrap(&mut self) -> Verdict {
        if self.handler == SIG_IGN || self.blocked {
            Verdict::KillAsSigtrap
        } else {
            Verdict::Deliver
        }
    }

    /// After `execve`: handlers are reset, SIG_IGN and the mask stay.
    pub fn on_exec(&mut self) {
        if self.handler != SIG_IGN {
            self.handler = SIG_DFL;
        }
        self.actions = [Action::default(); 65];
        self.entry = None;
    }
}
