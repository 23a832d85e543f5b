//! Trap instructions (`int3`, `ud2`, `hlt`, a fetch from memory that is
//! not executable (or the vsyscall page: vsyscall.rs), `rdtsc` after `PR_SET_TSC`, `popf`/`iretq`:
//! flags.rs): run by the dispatcher, which gives the guest the signal and
//! frame the kernel would, or lets it die of it.

use super::{icebp, Vm, VmError};
use crate::contract::Reg;
use crate::ir::TrapKind;
use crate::profile::Ending;
use crate::types::{GuestAddr, HostAddr};

impl Vm {
    /// A trap instruction at `at`: the guest's handler runs, or the guest
    /// dies of it as the kernel would kill it.
    pub(super) fn trap(&mut self, kind: TrapKind, at: GuestAddr) -> Result<HostAddr, VmError> {
        if kind == TrapKind::FetchFault && super::vsyscall::is_call(at) {
            return self.vsyscall(at);
        }
        if kind == TrapKind::Tsc && !self.tsc_traps {
            return self.read_tsc(at);
        }
        if kind == TrapKind::WriteGsBase {
            if let Some(host) = self.write_gs_base(at)? {
                return Ok(host);
            }
        }
        if matches!(kind, TrapKind::Popf | TrapKind::Iret) {
            if let Some(host) = self.run_flags_insn(kind, at)? {
                return Ok(host);
            }
        }
        // The trap instruction is the last one its block counted; `int3`
        // retires (the signal's rip is past it), `int1` as the CPU does.
        let retires = match kind {
            TrapKind::Breakpoint => true,
            TrapKind::Icebp => icebp::retires(),
            _ => false,
        };
        if kind.counted() && !retires {
            self.record_unretired(1);
        }
        // A fetch from a page the guest mapped executable that still
        // faults is past the end of its file: SIGBUS (guest_mem/probe.rs).
        let past_eof = kind == TrapKind::FetchFault && self.fetch_past_eof(at);
        let sig = if past_eof {
            libc::SIGBUS
        } else {
            kind.signal()
        };
        // siginfo and frame as the kernel fills them: (si_code, si_addr,
        // trap number, rip).
        let (code, addr, trapno, rip) = match kind {
            // `int3`, or the two-byte `int $3`.
            TrapKind::Breakpoint => (0x80, 0, 3, at.0 + self.insn_len(at)),
            TrapKind::Icebp => {
                // A debug exception: TRAP_BRKPT, at the rip it reports.
                let rip = at.0 + u64::from(retires);
                (1, rip, 1, rip)
            }
            TrapKind::InvalidOpcode => (2, at.0, 6, at.0),
            TrapKind::GeneralProtection
            | TrapKind::Tsc
            | TrapKind::Iret
            | TrapKind::WriteGsBase => (0x80, 0, 13, at.0),
            // Its stack is not readable guest memory (SEGV_MAPERR).
            TrapKind::Popf => (1, self.ctx.reg(Reg::Rsp), 14, at.0),
            // BUS_ADRERR.
            TrapKind::FetchFault if past_eof => (2, at.0, 14, at.0),
            TrapKind::FetchFault => (self.fetch_fault_code(at), at.0, 14, at.0),
        };
        let mut info = [0u8; 128];
        info[0..4].copy_from_slice(&sig.to_le_bytes());
        info[8..12].copy_from_slice(&code.to_le_bytes());
        info[16..24].copy_from_slice(&addr.to_le_bytes());
        let err = match kind {
            TrapKind::FetchFault => 0x14,
            TrapKind::Iret => self.iret_fault_selector(),
            _ => 0,
        };
        self.ctx.set_rip(rip);
        if self.deliver_sync(sig, &info, [err, trapno, addr])? {
            return self.host_for(GuestAddr(self.ctx.rip()));
        }
        self.die_of_trap(kind, at, sig)
    }

    /// A `Tsc` trap in a thread that did not ask for `PR_TSC_SIGSEGV`
    /// (syscall/control.rs C3): the `rdtsc` or `rdtscp` at `at` runs here
    /// and retires.
    fn read_tsc(&mut self, at: GuestAddr) -> Result<HostAddr, VmError> {
        let insn = self.decode_at(at);
        let mut aux = 0u32;
        // SAFETY: rdtsc and rdtscp have no preconditions (hotlift's own
        // counter reads never trap: C3).
        let tsc = match insn.mnemonic() {
            iced_x86::Mnemonic::Rdtscp => {
                let t = unsafe { std::arch::x86_64::__rdtscp(&mut aux) };
                self.ctx.set_reg(Reg::Rcx, u64::from(aux));
                t
            }
            iced_x86::Mnemonic::Rdtsc => unsafe { std::arch::x86_64::_rdtsc() },
            m => {
                return Err(VmError::Host(format!(
                    "a time stamp counter trap at guest {at} found {m:?} there"
                )))
            }
        };
        self.ctx.set_reg(Reg::Rax, tsc & 0xffff_ffff);
        self.ctx.set_reg(Reg::Rdx, tsc >> 32);
        self.ctx.set_rip(insn.next_ip());
        self.host_for(GuestAddr(self.ctx.rip()))
    }

    /// Is `at` executable guest memory whose read faults (a file
    /// mapping's page past the file's end)?
    fn fetch_past_eof(&self, at: GuestAddr) -> bool {
        let exec = self.proc.lock().mem.exec_end(at.0).is_some();
        exec && !crate::guest_mem::probe::readable(at.0)
    }

    /// A `WriteGsBase` trap: the `wrgsbase` at `at` sets the guest's GS
    /// base and retires (the host code to go on at), or its address is
    /// not canonical (None: general protection, as the CPU raises it).
    fn write_gs_base(&mut self, at: GuestAddr) -> Result<Option<HostAddr>, VmError> {
        let insn = self.decode_at(at);
        let r = insn.op0_register().full_register();
        if insn.mnemonic() != iced_x86::Mnemonic::Wrgsbase
            || !(iced_x86::Register::RAX..=iced_x86::Register::R15).contains(&r)
        {
            return Err(VmError::Host(format!(
                "a wrgsbase trap at guest {at} found {:?} there",
                insn.mnemonic()
            )));
        }
        let v = self.ctx.gpr[r as usize - iced_x86::Register::RAX as usize].get();
        // Canonical: bits 63..47 all equal.
        if ((v as i64) << 16 >> 16) as u64 != v {
            return Ok(None);
        }
        self.ctx.guest_gs.set(v);
        self.ctx.set_rip(insn.next_ip());
        self.host_for(GuestAddr(self.ctx.rip())).map(Some)
    }

    /// si_code of a fetch from `at`: SEGV_MAPERR where nothing is mapped,
    /// SEGV_ACCERR where the memory is not executable.
    fn fetch_fault_code(&self, at: GuestAddr) -> i32 {
        let mapped = self.proc.lock().mem.owns_all(at.0, at.0 + 1);
        if mapped {
            2
        } else {
            1
        }
    }

    fn die_of_trap(&mut self, kind: TrapKind, at: GuestAddr, sig: i32) -> ! {
        if self.proc.opts.verbose {
            let what = match kind {
                TrapKind::Breakpoint => "breakpoint trap",
                TrapKind::Icebp => "debug trap (int1)",
                TrapKind::InvalidOpcode => "invalid opcode",
                TrapKind::GeneralProtection => "privileged or faulting instruction",
                TrapKind::FetchFault if sig == libc::SIGBUS => {
                    "instruction fetch past the end of a mapped file"
                }
                TrapKind::FetchFault => "instruction fetch from non-executable memory",
                TrapKind::Tsc => "time stamp counter read after PR_SET_TSC(PR_TSC_SIGSEGV)",
                TrapKind::Popf => "popf from an unreadable stack",
                TrapKind::Iret => "iretq to a frame that is not 64-bit user code",
                TrapKind::WriteGsBase => "wrgsbase of a non-canonical address",
            };
            crate::host::say!(
                "hotlift: guest killed by SIG{} at guest {at}: {what}",
                crate::strace::sig_name(sig)
            );
        }
        self.finish(Ending::Signal { signal: sig });
        crate::status::die_with(sig)
    }
}
