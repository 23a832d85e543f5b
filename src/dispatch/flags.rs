//! The guest's trap flag: `popf` and `iretq`, which may set it, run here,
//! and a guest with it set runs one instruction at a time, with a SIGTRAP
//! after each, as the CPU and the kernel single-step it.
//!
//! I1: hotlift's own RFLAGS.TF is never the guest's: `popf` and `iretq`
//!     end their blocks as traps (frontend I4) that this module runs, so
//!     the host CPU never single-steps translated code for the guest (a
//!     host trap would land in hotlift's glue, where kicks use TF:
//!     signal/mod.rs). The guest's TF is `Vm::guest_tf`; `ctx.rflags`
//!     holds the rest of its flags.
//! I2: with the guest's TF set at the start of an instruction, the
//!     instruction runs alone (a one-instruction, counted block that no
//!     lookup finds) and the guest then takes SIGTRAP (TRAP_TRACE, si_addr
//!     and the frame's RIP past the instruction, trap number 1), its frame's
//!     flags with TF as the instruction left it — also after a `popf` that
//!     cleared it, as the CPU traps on the flag at the instruction's start.
//!     A `popf` that sets TF traps after the instruction after it. A `pushf`
//!     so stepped stores TF set, as the CPU's does.
//!     A stepped `syscall` traps only after the instruction after it: the
//!     kernel returns to flags with TF as `popf` sets them (measured).
//! I3: a signal frame saves TF in its flags and the handler runs without
//!     it (the kernel clears it); `rt_sigreturn` to flags with TF sets it
//!     again (signal/deliver.rs). An instruction that ends in a signal of
//!     its own (a fault, `int3`, a syscall's signal) takes that one, not
//!     the trace trap. A new thread and an `execve` start without TF.
//! I4: `iretq` at CPL 3 pops RIP, CS, RFLAGS, RSP and SS; a frame that
//!     does not return to 64-bit user code (CS 0x33, SS 0x2b) raises
//!     general protection with the bad selector as its error code
//!     (SIGSEGV, SI_KERNEL), as Linux gives it; returning to 32-bit code
//!     (CS 0x23) is not supported (a clear stop, as for every 32-bit
//!     instruction).

use super::{Vm, VmError};
use crate::contract::Reg;
use crate::ir::TrapKind;
use crate::types::{GuestAddr, HostAddr};

/// RFLAGS trap flag.
pub(crate) const TF: u64 = 1 << 8;
/// RFLAGS bits `popf` changes at CPL 3 with IOPL 0: CF PF AF ZF SF TF DF
/// OF NT AC ID (IF, IOPL, VM, VIF, VIP stay; RF is cleared).
const POPF_BITS: u64 =
    0x1 | 0x4 | 0x10 | 0x40 | 0x80 | TF | 0x400 | 0x800 | 0x4000 | 0x4_0000 | 0x20_0000;
/// RFLAGS resume flag.
const RF: u64 = 0x1_0000;
/// Linux's user code and data selectors (64-bit, 32-bit code).
const USER_CS: u64 = 0x33;
const USER32_CS: u64 = 0x23;
const USER_DS: u64 = 0x2b;
/// si_code of a single-step trap.
const TRAP_TRACE: i32 = 2;

/// What an instruction run alone (I2) did.
pub(super) struct Step {
    /// Its guest address.
    pub at: u64,
    /// Whether it is a `pushf` (I2).
    pushf: bool,
}

impl Vm {
    /// The guest's RFLAGS as it would read them: `ctx.rflags` with its TF.
    pub(crate) fn guest_rflags(&self) -> u64 {
        self.ctx.rflags.get() | if self.guest_tf { TF } else { 0 }
    }

    /// Set the guest's RFLAGS to `v` (TF kept apart, I1).
    fn set_guest_rflags(&mut self, v: u64) {
        self.guest_tf = v & TF != 0;
        self.ctx.rflags.set((v & !(TF | RF)) | 2);
    }

    /// A `Popf` or `Iret` trap at `at` (I1, I4): the host code to go on
    /// at, or None when it raised a signal for the guest instead (the
    /// caller delivers it as for other traps).
    pub(super) fn run_flags_insn(
        &mut self,
        kind: TrapKind,
        at: GuestAddr,
    ) -> Result<Option<HostAddr>, VmError> {
        let insn = self.decode_at(at);
        let rsp = self.ctx.reg(Reg::Rsp);
        let tf_before = self.guest_tf;
        match kind {
            TrapKind::Popf => {
                let wide = insn.code() == iced_x86::Code::Popfq;
                let size = if wide { 8 } else { 2 };
                let Some(v) = self.read_stack(rsp, size) else {
                    return Ok(None);
                };
                let keep = if wide {
                    !POPF_BITS
                } else {
                    !(POPF_BITS & 0xffff)
                };
                let new = (self.guest_rflags() & keep) | (v & !keep);
                self.set_guest_rflags(new);
                self.ctx.set_reg(Reg::Rsp, rsp.wrapping_add(size as u64));
            }
            TrapKind::Iret => {
                let frame: Option<Vec<u64>> = (0..5)
                    .map(|i| self.read_stack(rsp.wrapping_add(8 * i), 8))
                    .collect();
                let Some(frame) = frame else {
                    return Ok(None);
                };
                let (rip, cs, flags, new_rsp, ss) =
                    (frame[0], frame[1], frame[2], frame[3], frame[4]);
                if cs & 0xffff != USER_CS || ss & 0xffff != USER_DS {
                    if cs & 0xffff == USER32_CS && ss & 0xffff == USER_DS {
                        return Err(VmError::Unsupported(crate::frontend::Unsupported {
                            addr: at,
                            text: "iretq".into(),
                            why: "return to 32-bit code",
                        }));
                    }
                    return Ok(None);
                }
                let new = (self.guest_rflags() & !POPF_BITS) | (flags & POPF_BITS);
                self.set_guest_rflags(new);
                self.ctx.set_reg(Reg::Rsp, new_rsp);
                self.ctx.set_rip(rip);
                return Ok(Some(self.after_flags_insn(at, tf_before, rip)?));
            }
            _ => unreachable!("run_flags_insn of {kind:?}"),
        }
        let next = insn.next_ip();
        self.ctx.set_rip(next);
        Ok(Some(self.after_flags_insn(at, tf_before, next)?))
    }

    /// After a `popf` or `iretq` that retired: a stepped one traps (I2).
    fn after_flags_insn(
        &mut self,
        at: GuestAddr,
        tf_before: bool,
        next: u64,
    ) -> Result<HostAddr, VmError> {
        if tf_before {
            self.trace_trap(
                Step {
                    at: at.0,
                    pushf: false,
                },
                next,
            )?;
        }
        self.host_for(GuestAddr(self.ctx.rip()))
    }

    /// I4: the error code of an `iretq`'s general protection: the
    /// selector (RPL cleared) that is not the one user code returns with.
    pub(super) fn iret_fault_selector(&self) -> u64 {
        let rsp = self.ctx.reg(Reg::Rsp);
        let word = |i: u64| self.read_stack(rsp.wrapping_add(8 * i), 8).unwrap_or(0) & 0xffff;
        let (cs, ss) = (word(1), word(4));
        if cs != USER_CS && cs != USER32_CS {
            cs & 0xfffc
        } else if ss != USER_DS {
            ss & 0xfffc
        } else {
            0
        }
    }

    /// The length of the (translated, so readable) instruction at `at`.
    pub(super) fn insn_len(&self, at: GuestAddr) -> u64 {
        self.decode_at(at).len() as u64
    }

    /// The decoded instruction at `at` (a trap's, which was translated,
    /// so readable: guest_mem G2; also traps.rs' `rdtsc`).
    pub(super) fn decode_at(&self, at: GuestAddr) -> iced_x86::Instruction {
        let bytes = (1..=15)
            .rev()
            .find_map(|n| crate::guest_mem::read_bytes(at.0, n))
            .unwrap_or_default();
        iced_x86::Decoder::with_ip(64, &bytes, at.0, crate::frontend::decoder_options()).decode()
    }

    /// `size` bytes (≤ 8) of the guest's stack at `addr`, little-endian;
    /// None (the caller raises SIGSEGV) where it is not guest memory.
    pub(super) fn read_stack(&self, addr: u64, size: usize) -> Option<u64> {
        let len = size as u64;
        let reach = super::Reach::Bytes { addr, len };
        if self.check_reaches(|out| out(reach)).is_some() {
            return None;
        }
        let b = crate::guest_mem::read_bytes(addr, size)?;
        let mut w = [0u8; 8];
        w[..size].copy_from_slice(&b);
        Some(u64::from_le_bytes(w))
    }

    /// I2: the host code of the guest's instruction at `ctx.rip()` alone
    /// (None: `next` already is, the uncounted re-run of a store into
    /// code, smc.rs I2), and what to look at after it. The thread's lookup
    /// table is emptied first: no lookup may run on past the instruction.
    pub(super) fn step_block(&mut self, rerun: bool) -> Result<(Option<HostAddr>, Step), VmError> {
        self.ibl.clear();
        let at = GuestAddr(self.ctx.rip());
        let m = self.decode_at(at).mnemonic();
        let step = Step {
            at: at.0,
            pushf: matches!(m, iced_x86::Mnemonic::Pushfq | iced_x86::Mnemonic::Pushf),
        };
        if rerun {
            return Ok((None, step));
        }
        let proc = self.proc.clone();
        let mut l = proc.lock();
        let id = self.translate_with(&mut l, at, 1, false, true)?;
        Ok((Some(l.cache.block(id).host), step))
    }

    /// I2: after the stepped instruction `step` retired with the guest at
    /// `rip`, the guest takes SIGTRAP (or dies of it).
    pub(super) fn trace_trap(&mut self, step: Step, rip: u64) -> Result<(), VmError> {
        if step.pushf {
            let rsp = self.ctx.reg(Reg::Rsp);
            if let Some(v) = self.read_stack(rsp, 8) {
                // The store just made by the guest's own pushf.
                let _ = self.write_guest(rsp, &(v | TF).to_le_bytes());
            }
        }
        let sig = libc::SIGTRAP;
        let mut info = [0u8; 128];
        info[0..4].copy_from_slice(&sig.to_le_bytes());
        info[8..12].copy_from_slice(&TRAP_TRACE.to_le_bytes());
        info[16..24].copy_from_slice(&rip.to_le_bytes());
        if self.deliver_sync(sig, &info, [0, 1, 0])? {
            return Ok(());
        }
        if self.proc.opts.verbose {
            crate::host::say!(
                "hotlift: guest killed by SIGTRAP after guest {}: single-step trap (trap flag set)",
                GuestAddr(step.at)
            );
        }
        self.finish(crate::profile::Ending::Signal { signal: sig });
        crate::status::die_with(sig)
    }
}
