//! The IR block: what the frontend lifts a guest basic block into and what
//! the backend emits from.
//!
//! An IR block is a list of guest instructions carried through (each with its
//! guest address and RFLAGS use/definition) plus one explicit [`Terminator`].
//! The monitor classifies a block's exit by [`Terminator::class`].
//!
//! I1: no body instruction transfers control or touches RIP other than
//!     through a RIP-relative memory operand; those end the block as a
//!     terminator. GS accesses are explicit [`IrOp`] rewrites.
//! I2: `Display` is the text format `dump` prints and golden files store.
//!
//! Beside the block: [`superblock`], the plan of a trace of blocks the
//! backend lays out as one, and [`probe`], what the probes of a
//! path-profiled function do on its edges (src/paths makes both kinds of
//! plan that the backend emits).

pub mod probe;
pub mod superblock;

use std::fmt;

use iced_x86::{Formatter, Instruction, IntelFormatter, Register};

use crate::types::GuestAddr;

/// General registers emitted glue may borrow, in order of preference.
const SCRATCH_GPRS: [Register; 14] = [
    Register::RAX,
    Register::RCX,
    Register::RDX,
    Register::RBX,
    Register::RSI,
    Register::RDI,
    Register::R8,
    Register::R9,
    Register::R10,
    Register::R11,
    Register::R12,
    Register::R13,
    Register::R14,
    Register::R15,
];

/// General registers `insn` does not use at all (explicitly or
/// implicitly), in order of preference: safe scratch around it.
pub fn free_gprs(insn: &Instruction) -> impl Iterator<Item = Register> {
    let mut info = iced_x86::InstructionInfoFactory::new();
    let used: Vec<Register> = info
        .info(insn)
        .used_registers()
        .iter()
        .map(|u| u.register().full_register())
        .collect();
    SCRATCH_GPRS.into_iter().filter(move |r| !used.contains(r))
}

/// How a body instruction is emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrOp {
    /// Re-encoded as it is at its new address.
    Carry,
    /// A GS-relative memory operand (GS is hotlift's): the address is formed
    /// in `tmp` from the guest GS base in the context, with `tmp2` as a
    /// second scratch; neither is used by the instruction.
    GsMemory { tmp: Register, tmp2: Register },
    /// `rdgsbase dst`: read the guest GS base from the context.
    ReadGsBase { dst: Register },
    /// `wrgsbase src`: write the guest GS base in the context.
    WriteGsBase { src: Register },
    /// A `rep`-prefixed string instruction, carried through; with the
    /// monitor on, RCX before and after goes to the ring so the profile
    /// counts every iteration (as single-stepping does).
    RepString,
    /// `xbegin` on a host that aborts every transaction (frontend/rtm.rs):
    /// `insn` is `mov eax, 0` (the abort status; RAX is written, no flags)
    /// and the block goes on at the fallback. Not counted: a native
    /// single-step does not count an aborted `xbegin`, and its block's
    /// terminator restarts at the `xbegin` (`term_addr`).
    XbeginAbort,
}

impl IrOp {
    /// Whether the instruction counts as a guest instruction.
    pub fn counted(self) -> bool {
        self != IrOp::XbeginAbort
    }
}

/// One guest instruction of a block body.
#[derive(Clone, Debug)]
pub struct IrInsn {
    pub addr: GuestAddr,
    pub insn: Instruction,
    pub op: IrOp,
    /// RFLAGS bits read (iced `RflagsBits`).
    pub flags_read: u32,
    /// RFLAGS bits written, cleared, set or made undefined.
    pub flags_modified: u32,
}

/// Why a guest instruction stops the guest the way the kernel would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrapKind {
    /// `int3`: SIGTRAP, retired.
    Breakpoint,
    /// `int1` (icebp): SIGTRAP; whether it retires is the host CPU's
    /// (dispatch/icebp.rs).
    Icebp,
    /// `ud0/1/2`, invalid or unsupported-by-this-CPU encodings: SIGILL.
    InvalidOpcode,
    /// `hlt`, `int n`, privileged instructions: SIGSEGV (general protection).
    GeneralProtection,
    /// Instruction fetch from memory that is not mapped executable: SIGSEGV.
    FetchFault,
    /// `rdtsc`/`rdtscp` once a thread of the process asked for
    /// `PR_TSC_SIGSEGV` (frontend I3): SIGSEGV in such a thread, else the
    /// dispatcher reads the counter and the instruction retires.
    Tsc,
    /// `popf`: run by the dispatcher (dispatch/flags.rs), which keeps the
    /// trap flag it may set for the guest (hotlift's own TF stays clear);
    /// it retires.
    Popf,
    /// `iretq`: run by the dispatcher (dispatch/flags.rs) to a 64-bit user
    /// frame; another frame raises general protection (SIGSEGV).
    Iret,
    /// `wrgsbase` of a 64-bit register: run by the dispatcher
    /// (dispatch/traps.rs), which raises general protection (SIGSEGV) for
    /// a non-canonical address as the CPU does; else it retires.
    WriteGsBase,
}

impl TrapKind {
    /// Whether the trap instruction counts as one of its block's
    /// instructions (a fetch fault has no instruction).
    pub fn counted(self) -> bool {
        self != TrapKind::FetchFault
    }

    /// The signal the kernel delivers for this trap.
    pub fn signal(self) -> i32 {
        match self {
            TrapKind::Breakpoint | TrapKind::Icebp => libc::SIGTRAP,
            TrapKind::InvalidOpcode => libc::SIGILL,
            TrapKind::GeneralProtection
            | TrapKind::FetchFault
            | TrapKind::Tsc
            | TrapKind::Popf
            | TrapKind::Iret
            | TrapKind::WriteGsBase => libc::SIGSEGV,
        }
    }
}

/// How a block ends: the one classification of block exits (the
/// profile's `exit`, the monitor's block table, kept translations). A
/// [`Terminator`] has one ([`Terminator::kind`]); [`ExitClass`] groups
/// them.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[repr(u8)]
pub enum ExitKind {
    #[default]
    Jump = 0,
    Branch = 1,
    Call = 2,
    IndirectJump = 3,
    IndirectCall = 4,
    Return = 5,
    Syscall = 6,
    Trap = 7,
    Fallthrough = 8,
}

impl ExitKind {
    /// A transfer whose target is known only when it runs: an indirect
    /// jump or call, or a return.
    pub fn indirect(self) -> bool {
        matches!(
            self,
            ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return
        )
    }

    /// The kind whose `as u8` is `v`.
    pub fn from_repr(v: u8) -> Option<ExitKind> {
        [
            ExitKind::Jump,
            ExitKind::Branch,
            ExitKind::Call,
            ExitKind::IndirectJump,
            ExitKind::IndirectCall,
            ExitKind::Return,
            ExitKind::Syscall,
            ExitKind::Trap,
            ExitKind::Fallthrough,
        ]
        .into_iter()
        .find(|&k| k as u8 == v)
    }

    /// Its class: how the dispatcher and the code cache treat the exit.
    pub fn class(self) -> ExitClass {
        match self {
            ExitKind::Jump | ExitKind::Branch | ExitKind::Call | ExitKind::Fallthrough => {
                ExitClass::Direct
            }
            ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return => {
                ExitClass::Indirect
            }
            ExitKind::Syscall => ExitClass::Syscall,
            ExitKind::Trap => ExitClass::Trap,
        }
    }
}

/// A group of [`ExitKind`]s ([`ExitKind::class`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitClass {
    Direct,
    Indirect,
    Syscall,
    Trap,
}

/// How a block ends.
#[derive(Clone, Debug)]
pub enum Terminator {
    Jump {
        target: GuestAddr,
    },
    /// A conditional branch: `jcc`, `loop*`, `jrcxz`/`jecxz` (`insn` is the original).
    Branch {
        insn: Instruction,
        taken: GuestAddr,
        fallthrough: GuestAddr,
    },
    Call {
        target: GuestAddr,
        return_to: GuestAddr,
    },
    /// `jmp r/m64`; `insn` is the original (its operand gives the target).
    IndirectJump {
        insn: Instruction,
    },
    IndirectCall {
        insn: Instruction,
        return_to: GuestAddr,
    },
    /// `ret` / `ret imm16`.
    Return {
        pop: u16,
    },
    Syscall {
        next: GuestAddr,
    },
    Trap {
        kind: TrapKind,
    },
    /// The block reached the size limit or a page/region boundary.
    Fallthrough {
        next: GuestAddr,
    },
}

impl Terminator {
    pub fn kind(&self) -> ExitKind {
        match self {
            Terminator::Jump { .. } => ExitKind::Jump,
            Terminator::Fallthrough { .. } => ExitKind::Fallthrough,
            Terminator::Branch { .. } => ExitKind::Branch,
            Terminator::Call { .. } => ExitKind::Call,
            Terminator::IndirectJump { .. } => ExitKind::IndirectJump,
            Terminator::IndirectCall { .. } => ExitKind::IndirectCall,
            Terminator::Return { .. } => ExitKind::Return,
            Terminator::Syscall { .. } => ExitKind::Syscall,
            Terminator::Trap { .. } => ExitKind::Trap,
        }
    }

    pub fn class(&self) -> ExitClass {
        self.kind().class()
    }
}

/// A lifted guest basic block.
#[derive(Clone, Debug)]
pub struct IrBlock {
    pub start: GuestAddr,
    pub body: Vec<IrInsn>,
    pub term: Terminator,
    /// Address of the terminating instruction (equal to `end` for
    /// `Fallthrough`).
    pub term_addr: GuestAddr,
    /// First byte past the block's last guest instruction.
    pub end: GuestAddr,
    /// The guest bytes [start, end) the block was decoded from (a copy
    /// made before decoding: guest threads may be writing the code).
    pub raw: Vec<u8>,
}

/// The six status flags (OF SF ZF AF CF PF, iced `RflagsBits`).
const STATUS_FLAGS: u32 = 0x3f;

impl IrBlock {
    /// The guest bytes of body instruction `i` as they were decoded (None
    /// for an instruction lifting made up: an aborted `xbegin`'s `mov`).
    pub fn bytes_of(&self, i: &IrInsn) -> Option<&[u8]> {
        if i.op == IrOp::XbeginAbort {
            return None;
        }
        let at = usize::try_from(i.addr.0.checked_sub(self.start.0)?).ok()?;
        self.raw.get(at..at.checked_add(i.insn.len())?)
    }

    /// Are the status flags dead where the block starts: does an
    /// instruction of its body overwrite all six before any is read? Only
    /// writes that always happen count: a shift or rotate by zero and a
    /// `rep` string instruction that runs no iteration leave the flags as
    /// they were, and flags an instruction leaves undefined keep whatever
    /// the CPU makes of them, which a guest may read (the CPU is the
    /// oracle). Emitted glue may then use flag-writing instructions at the
    /// block's start.
    pub fn status_flags_dead_at_start(&self) -> bool {
        use iced_x86::Mnemonic as M;
        for i in &self.body {
            if i.flags_read & STATUS_FLAGS != 0 {
                return false;
            }
            let sometimes = i.op != IrOp::Carry
                || matches!(
                    i.insn.mnemonic(),
                    M::Shl
                        | M::Sal
                        | M::Shr
                        | M::Sar
                        | M::Rol
                        | M::Ror
                        | M::Rcl
                        | M::Rcr
                        | M::Shld
                        | M::Shrd
                );
            let always = i.insn.rflags_written() | i.insn.rflags_cleared() | i.insn.rflags_set();
            if !sometimes && always & STATUS_FLAGS == STATUS_FLAGS {
                return true;
            }
        }
        false
    }

    /// Guest instructions in the block, the terminator's included when it is
    /// an instruction.
    pub fn guest_insns(&self) -> u32 {
        let term = match self.term {
            Terminator::Fallthrough { .. } => 0,
            Terminator::Trap { kind } if !kind.counted() => 0,
            _ => 1,
        };
        self.body.iter().filter(|i| i.op.counted()).count() as u32 + term
    }
}

fn fmt_insn(insn: &Instruction) -> String {
    thread_local! {
        // One formatter a thread: making one per instruction was a quarter
        // of the monitor's superblock building (the record's `ir` text).
        static FORMATTER: std::cell::RefCell<IntelFormatter> = std::cell::RefCell::new({
            let mut f = IntelFormatter::new();
            f.options_mut().set_first_operand_char_index(0);
            f.options_mut().set_space_after_operand_separator(true);
            f
        });
    }
    let mut s = String::new();
    FORMATTER.with_borrow_mut(|f| f.format(insn, &mut s));
    s
}

impl fmt::Display for Terminator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Terminator::Jump { target } => write!(f, "jump {target}"),
            Terminator::Branch {
                insn,
                taken,
                fallthrough,
            } => {
                write!(
                    f,
                    "branch {:?} taken {taken} else {fallthrough}",
                    insn.mnemonic()
                )
            }
            Terminator::Call { target, return_to } => write!(f, "call {target} return {return_to}"),
            Terminator::IndirectJump { insn } => write!(f, "indirect-jump [{}]", fmt_insn(insn)),
            Terminator::IndirectCall { insn, return_to } => {
                write!(f, "indirect-call [{}] return {return_to}", fmt_insn(insn))
            }
            Terminator::Return { pop } => write!(f, "return pop {pop}"),
            Terminator::Syscall { next } => write!(f, "syscall next {next}"),
            Terminator::Trap { kind } => write!(f, "trap {kind:?}"),
            Terminator::Fallthrough { next } => write!(f, "fallthrough {next}"),
        }
    }
}

impl fmt::Display for IrBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "block {} .. {} ({} insns)",
            self.start,
            self.end,
            self.guest_insns()
        )?;
        for i in &self.body {
            match i.op {
                IrOp::Carry => writeln!(f, "  {}  {}", i.addr, fmt_insn(&i.insn))?,
                op => writeln!(f, "  {}  {}  ; {op:?}", i.addr, fmt_insn(&i.insn))?,
            }
        }
        writeln!(f, "  {}  => {}", self.term_addr, self.term)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_kind_comes_back_from_its_repr() {
        let kinds: Vec<ExitKind> = (0..=u8::MAX).filter_map(ExitKind::from_repr).collect();
        assert_eq!(kinds.len(), 9);
        assert!(kinds
            .iter()
            .all(|&k| ExitKind::from_repr(k as u8) == Some(k)));
        assert_eq!(ExitKind::Return.class(), ExitClass::Indirect);
        assert!(ExitKind::Return.indirect() && !ExitKind::Call.indirect());
    }
}
