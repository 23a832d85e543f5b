//! Frontend: decode a guest basic block with iced-x86 and lift it to an
//! [`IrBlock`].
//!
//! I1: the frontend only sees the bytes it is given, which the caller bounds
//!     to one executable mapping, so a block never spans into unmapped or
//!     non-executable memory: an instruction cut by the end of the bytes ends
//!     the block before it, or is a `FetchFault` trap when it is first.
//! I2: special instructions are classified by `code()`/`mnemonic()`, never
//!     by flow control alone (iced calls `syscall` a call and `cpuid` next).
//! I3: once a guest thread asked for `PR_TSC_SIGSEGV` ([`set_tsc_traps`],
//!     syscall/control.rs C3), `rdtsc` and `rdtscp` end their block as a
//!     `Tsc` trap; before, they are body instructions the CPU runs. The
//!     switch is one-way and made with the translations flushed, so every
//!     lift of a process sees one setting at a time.
//! I4: instructions that change the flags' trap flag or leave through a
//!     system frame (`popf`, `iretq`) end their block as traps the
//!     dispatcher runs (dispatch/flags.rs); `sysret`/`sysexit` raise
//!     general protection and AMD's `sysenter` is undefined, as at CPL 3.
//! I5: instructions decode as the host CPU decodes them ([`decoder_options`]):
//!     on AMD a 16-bit direct jump or conditional branch goes to its target
//!     cut to 16 bits; a 16-bit call, return or indirect branch (which moves
//!     the stack by two bytes) stops the run with a message. An
//!     instruction longer than 15 bytes raises general protection
//!     (SIGSEGV), as the CPU does, not an invalid opcode.
//!
//! Usage: `lift_block(bytes, GuestAddr(start), max_insns)`.

use iced_x86::{Code, Decoder, DecoderOptions, Instruction, Mnemonic, OpKind, Register};
use thiserror::Error;

use crate::ir::{IrBlock, IrInsn, IrOp, Terminator, TrapKind};
use crate::types::GuestAddr;

pub mod rtm;

static TSC_TRAPS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// I3: do `rdtsc` and `rdtscp` trap?
pub fn tsc_traps() -> bool {
    TSC_TRAPS.load(std::sync::atomic::Ordering::Acquire)
}

/// I3: from now on `rdtsc` and `rdtscp` trap (for the whole process; the
/// caller flushes what was translated before).
pub fn set_tsc_traps() {
    TSC_TRAPS.store(true, std::sync::atomic::Ordering::Release);
}

/// I5: how the host CPU decodes: AMD's takes an operand-size prefix on a
/// near branch or `ret` as 16 bits (`66 eb` jumps to an address cut to
/// 16 bits), Intel's ignores it.
pub fn decoder_options() -> u32 {
    if cpu_is_amd() {
        DecoderOptions::AMD
    } else {
        DecoderOptions::NONE
    }
}

/// I4: whether the host CPU is AMD's, whose `sysenter` is undefined in
/// 64-bit mode (Intel's enters the kernel's 32-bit entry: not supported).
fn cpu_is_amd() -> bool {
    static AMD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AMD.get_or_init(|| {
        let v = std::arch::x86_64::__cpuid(0);
        [v.ebx, v.edx, v.ecx] == [0x6874_7541, 0x6974_6e65, 0x444d_4163]
    })
}

/// A guest instruction hotlift cannot translate (yet).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("unsupported guest instruction at {addr}: {text} ({why})")]
pub struct Unsupported {
    pub addr: GuestAddr,
    pub text: String,
    pub why: &'static str,
}

enum Step {
    Body(IrOp),
    End(Terminator),
    /// `xbegin` on a host that aborts every transaction (rtm.rs): RAX = 0
    /// (no abort reason), then on at the fallback address.
    Abort {
        fallback: GuestAddr,
    },
}

/// The rewrite of an instruction with a GS-relative memory operand: two
/// general registers the instruction does not use.
fn lift_gs_memory(insn: &Instruction) -> Result<IrOp, Unsupported> {
    if insn.memory_index().is_vector_register() {
        return Err(unsupported(
            insn,
            "GS-relative vector-indexed memory access",
        ));
    }
    let mut free = crate::ir::free_gprs(insn);
    match (free.next(), free.next()) {
        (Some(tmp), Some(tmp2)) => Ok(IrOp::GsMemory { tmp, tmp2 }),
        _ => Err(unsupported(
            insn,
            "GS-relative access using every general register",
        )),
    }
}

fn text(insn: &Instruction) -> String {
    use iced_x86::Formatter;
    let mut f = iced_x86::IntelFormatter::new();
    let mut s = String::new();
    f.format(insn, &mut s);
    s
}

fn unsupported(insn: &Instruction, why: &'static str) -> Unsupported {
    Unsupported {
        addr: GuestAddr(insn.ip()),
        text: text(insn),
        why,
    }
}

/// A string instruction with a `rep`/`repe`/`repne` prefix (it iterates).
fn is_rep_string(insn: &Instruction) -> bool {
    (insn.has_rep_prefix() || insn.has_repe_prefix() || insn.has_repne_prefix())
        && (0..insn.op_count()).any(|i| {
            matches!(
                insn.op_kind(i),
                OpKind::MemorySegSI
                    | OpKind::MemorySegESI
                    | OpKind::MemorySegRSI
                    | OpKind::MemoryESDI
                    | OpKind::MemoryESEDI
                    | OpKind::MemoryESRDI
            )
        })
}

/// RTM's `xbegin`, `xend` and `xabort` as the host runs them (rtm.rs):
/// all three raise #UD where the CPU has no TSX; where every transaction
/// aborts, `xbegin` goes straight to its fallback, `xend` (never inside a
/// transaction) raises #GP and `xabort` does nothing.
fn lift_rtm(insn: &Instruction, host: rtm::Host) -> Step {
    let trap = |kind| Step::End(Terminator::Trap { kind });
    match (host, insn.mnemonic()) {
        (rtm::Host::Undefined, _) => trap(TrapKind::InvalidOpcode),
        (rtm::Host::Aborts, Mnemonic::Xbegin) => Step::Abort {
            fallback: GuestAddr(insn.near_branch_target()),
        },
        (rtm::Host::Aborts, Mnemonic::Xend) => trap(TrapKind::GeneralProtection),
        (rtm::Host::Aborts, _) => Step::Body(IrOp::Carry),
    }
}

/// I5: do `code`'s bytes start with an instruction longer than 15 bytes
/// (prefixes, then an instruction the CPU knows)?
fn too_long(code: &[u8]) -> bool {
    let prefix = |b: &u8| {
        matches!(
            b,
            0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3 | 0x40
                ..=0x4f
        )
    };
    let n = code.iter().take_while(|b| prefix(b)).count();
    if n == 0 || n >= code.len() {
        return false;
    }
    let rest = &code[n..code.len().min(n + 15)];
    let insn = Decoder::with_ip(64, rest, 0, decoder_options()).decode();
    insn.code() != Code::INVALID && n + insn.len() > 15
}

/// Classify one decoded instruction (I2).
fn lift_insn(insn: &Instruction) -> Result<Step, Unsupported> {
    let next = GuestAddr(insn.next_ip());
    if insn.code() == Code::INVALID {
        return Ok(Step::End(Terminator::Trap {
            kind: TrapKind::InvalidOpcode,
        }));
    }
    let m = insn.mnemonic();
    // GS is hotlift's (the ThreadCtx): guest GS memory accesses are
    // rewritten (`lea` and hint nops access no memory).
    let explicit_mem = (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory);
    let gs_mem = explicit_mem
        && insn.memory_segment() == Register::GS
        && m != Mnemonic::Lea
        && m != Mnemonic::Nop;
    let gs_string = !explicit_mem
        && insn.segment_prefix() == Register::GS
        && (0..insn.op_count()).any(|i| {
            matches!(
                insn.op_kind(i),
                OpKind::MemorySegRSI | OpKind::MemorySegESI | OpKind::MemorySegSI
            )
        });
    if gs_string {
        return Err(unsupported(insn, "GS-relative string instruction"));
    }
    if gs_mem && matches!(m, Mnemonic::Jmp | Mnemonic::Call) {
        return Err(unsupported(insn, "GS-relative indirect branch"));
    }
    // Loading the GS selector would clear the base that points at the
    // ThreadCtx.
    let writes_gs_selector = matches!(m, Mnemonic::Lgs)
        || (matches!(m, Mnemonic::Mov | Mnemonic::Pop)
            && insn.op_count() >= 1
            && insn.op0_kind() == OpKind::Register
            && insn.op0_register() == Register::GS);
    if writes_gs_selector {
        return Err(unsupported(insn, "write to the GS segment selector"));
    }
    if gs_mem {
        return lift_gs_memory(insn).map(Step::Body);
    }
    if insn.is_jmp_far_indirect() || insn.is_call_far_indirect() {
        // Through a memory operand (m16:64): not a near indirect branch.
        return Err(unsupported(insn, "far transfer"));
    }
    let step = match m {
        Mnemonic::Jmp | Mnemonic::Call
            if matches!(insn.code(), Code::Jmp_rm16 | Code::Call_rm16) =>
        {
            return Err(unsupported(insn, "16-bit indirect branch"));
        }
        Mnemonic::Call if insn.op0_kind() == OpKind::NearBranch16 => {
            return Err(unsupported(insn, "16-bit call"));
        }
        Mnemonic::Jmp => match insn.op0_kind() {
            OpKind::NearBranch64 | OpKind::NearBranch16 => Step::End(Terminator::Jump {
                target: GuestAddr(insn.near_branch_target()),
            }),
            OpKind::Register | OpKind::Memory => {
                Step::End(Terminator::IndirectJump { insn: *insn })
            }
            _ => return Err(unsupported(insn, "far jump")),
        },
        Mnemonic::Call => match insn.op0_kind() {
            OpKind::NearBranch64 => Step::End(Terminator::Call {
                target: GuestAddr(insn.near_branch_target()),
                return_to: next,
            }),
            OpKind::Register | OpKind::Memory => Step::End(Terminator::IndirectCall {
                insn: *insn,
                return_to: next,
            }),
            _ => return Err(unsupported(insn, "far call")),
        },
        Mnemonic::Ret => {
            if insn.code() == Code::Retnw || insn.code() == Code::Retnw_imm16 {
                return Err(unsupported(insn, "16-bit return"));
            }
            let pop = if insn.op_count() == 1 {
                insn.immediate16()
            } else {
                0
            };
            Step::End(Terminator::Return { pop })
        }
        Mnemonic::Loop | Mnemonic::Loope | Mnemonic::Loopne | Mnemonic::Jrcxz | Mnemonic::Jecxz => {
            Step::End(Terminator::Branch {
                insn: *insn,
                taken: GuestAddr(insn.near_branch_target()),
                fallthrough: next,
            })
        }
        _ if insn.is_jcc_short_or_near() => Step::End(Terminator::Branch {
            insn: *insn,
            taken: GuestAddr(insn.near_branch_target()),
            fallthrough: next,
        }),
        Mnemonic::Syscall => Step::End(Terminator::Syscall { next }),
        Mnemonic::Int3 => Step::End(Terminator::Trap {
            kind: TrapKind::Breakpoint,
        }),
        Mnemonic::Int1 => Step::End(Terminator::Trap {
            kind: TrapKind::Icebp,
        }),
        Mnemonic::Ud0 | Mnemonic::Ud1 | Mnemonic::Ud2 => Step::End(Terminator::Trap {
            kind: TrapKind::InvalidOpcode,
        }),
        Mnemonic::Hlt => Step::End(Terminator::Trap {
            kind: TrapKind::GeneralProtection,
        }),
        Mnemonic::Int => {
            if insn.immediate8() == 0x80 {
                return Err(unsupported(insn, "32-bit system call through int 0x80"));
            }
            if insn.immediate8() == 3 {
                // `int $3` (cd 03): the breakpoint gate, as `int3`.
                return Ok(Step::End(Terminator::Trap {
                    kind: TrapKind::Breakpoint,
                }));
            }
            Step::End(Terminator::Trap {
                kind: TrapKind::GeneralProtection,
            })
        }
        Mnemonic::Xbegin | Mnemonic::Xend | Mnemonic::Xabort => lift_rtm(insn, rtm::host()),
        // I4: privileged at CPL 3 (general protection), `sysenter` is #UD
        // in 64-bit mode on AMD CPUs.
        Mnemonic::Sysexit | Mnemonic::Sysret => Step::End(Terminator::Trap {
            kind: TrapKind::GeneralProtection,
        }),
        Mnemonic::Sysenter if cpu_is_amd() => Step::End(Terminator::Trap {
            kind: TrapKind::InvalidOpcode,
        }),
        Mnemonic::Popf | Mnemonic::Popfq => Step::End(Terminator::Trap {
            kind: TrapKind::Popf,
        }),
        Mnemonic::Iretq => Step::End(Terminator::Trap {
            kind: TrapKind::Iret,
        }),
        Mnemonic::Sysenter | Mnemonic::Iret | Mnemonic::Iretd => {
            return Err(unsupported(insn, "system-level control transfer"))
        }
        Mnemonic::Rdgsbase => Step::Body(IrOp::ReadGsBase {
            dst: insn.op0_register(),
        }),
        // A 64-bit value may be non-canonical: the dispatcher checks it.
        Mnemonic::Wrgsbase if insn.op0_register().size() == 8 => Step::End(Terminator::Trap {
            kind: TrapKind::WriteGsBase,
        }),
        Mnemonic::Wrgsbase => Step::Body(IrOp::WriteGsBase {
            src: insn.op0_register(),
        }),
        Mnemonic::Swapgs => Step::End(Terminator::Trap {
            kind: TrapKind::GeneralProtection,
        }),
        Mnemonic::Rdtsc | Mnemonic::Rdtscp if tsc_traps() => Step::End(Terminator::Trap {
            kind: TrapKind::Tsc,
        }),
        Mnemonic::Retf | Mnemonic::Jmpe => return Err(unsupported(insn, "far transfer")),
        _ if is_rep_string(insn) => Step::Body(IrOp::RepString),
        _ => Step::Body(IrOp::Carry),
    };
    Ok(step)
}

/// The block of `body`, ending in `term` at `term_addr`, `end` past its
/// last byte, with the bytes it was decoded from (`raw`, cut to its extent).
fn block(
    start: GuestAddr,
    body: Vec<IrInsn>,
    term: Terminator,
    term_addr: GuestAddr,
    end: GuestAddr,
    mut raw: Vec<u8>,
) -> IrBlock {
    raw.truncate((end.0 - start.0) as usize);
    IrBlock {
        start,
        body,
        term,
        term_addr,
        end,
        raw,
    }
}

/// A block cut before `here` (the size limit, or no more bytes to decode):
/// it falls through to `here`, or, with no instruction and `fault`, is a
/// fetch fault.
fn cut(start: GuestAddr, body: Vec<IrInsn>, here: GuestAddr, raw: Vec<u8>, fault: bool) -> IrBlock {
    let term = if body.is_empty() && fault {
        Terminator::Trap {
            kind: TrapKind::FetchFault,
        }
    } else {
        Terminator::Fallthrough { next: here }
    };
    block(start, body, term, here, here, raw)
}

/// Decode and lift the guest block starting at `start`, whose bytes (up to
/// the end of its executable mapping) are `bytes`.
pub fn lift_block(
    bytes: &[u8],
    start: GuestAddr,
    max_insns: usize,
) -> Result<IrBlock, Unsupported> {
    let take = bytes.len().min(max_insns.max(1).saturating_mul(15) + 15);
    lift_copy(bytes[..take].to_vec(), start, max_insns)
}

/// [`lift_block`] of a copy of the guest's bytes (guest_mem G2), kept as
/// the block's `raw`: another guest thread may be writing the code, and
/// the raw bytes kept for the emitter must be what was decoded.
pub fn lift_copy(
    mut raw: Vec<u8>,
    start: GuestAddr,
    max_insns: usize,
) -> Result<IrBlock, Unsupported> {
    raw.truncate(max_insns.max(1).saturating_mul(15) + 15);
    let mut decoder = Decoder::with_ip(64, &raw, start.0, decoder_options());
    let mut body = Vec::new();
    let mut insn = Instruction::default();
    loop {
        let here = GuestAddr(decoder.ip());
        if body.len() >= max_insns.max(1) || !decoder.can_decode() {
            let fault = !decoder.can_decode();
            return Ok(cut(start, body, here, raw, fault));
        }
        decoder.decode_out(&mut insn);
        if insn.code() == Code::INVALID
            && decoder.last_error() == iced_x86::DecoderError::NoMoreBytes
        {
            // I1: the instruction runs past the mapping.
            return Ok(cut(start, body, here, raw, true));
        }
        let step = if insn.code() == Code::INVALID && too_long(&raw[(here.0 - start.0) as usize..])
        {
            Step::End(Terminator::Trap {
                kind: TrapKind::GeneralProtection,
            })
        } else {
            lift_insn(&insn)?
        };
        match step {
            Step::Body(op) => {
                body.push(IrInsn {
                    addr: here,
                    insn,
                    op,
                    flags_read: insn.rflags_read(),
                    flags_modified: insn.rflags_modified(),
                });
            }
            Step::Abort { fallback } => {
                // `mov eax, 0` in xbegin's place (it writes RAX and no
                // flags), and a plain transfer to the fallback.
                let mut zero = Instruction::with2(Code::Mov_r32_imm32, Register::EAX, 0u32)
                    .expect("mov eax, imm32");
                zero.set_ip(here.0);
                zero.set_len(insn.len());
                body.push(IrInsn {
                    addr: here,
                    insn: zero,
                    op: IrOp::XbeginAbort,
                    flags_read: 0,
                    flags_modified: 0,
                });
                // Interrupted before the transfer, the guest goes on at the
                // xbegin, which aborts again (IrOp::XbeginAbort).
                let end = GuestAddr(insn.next_ip());
                let term = Terminator::Fallthrough { next: fallback };
                return Ok(block(start, body, term, here, end, raw));
            }
            Step::End(term) => {
                let end = GuestAddr(insn.next_ip());
                return Ok(block(start, body, term, here, end, raw));
            }
        }
    }
}

/// [`lift_copy`] of the guest's block at `addr`, `len` of whose bytes are
/// mapped (guest_mem G2). A window of them is copied first, made larger
/// only for a block whose end comes within 15 bytes of the window's (an
/// instruction there could have needed bytes past it): most blocks are a
/// few dozen bytes and `len` is up to 1,935 (copying it all took 0.4-0.8
/// µs a block, a sixth of translating, Intel Xeon model 207).
pub fn lift_guest(addr: GuestAddr, len: usize, max_insns: usize) -> Result<IrBlock, Unsupported> {
    let mut window = len.min(256);
    loop {
        let raw = crate::guest_mem::copy_mapped(addr.0, window);
        // A page that faulted ends the bytes (guest_mem G2): what came
        // before it is all there is.
        let cut = raw.len() < window;
        let block = lift_copy(raw, addr, max_insns)?;
        // Decoding reads an instruction's own bytes, at most 15: a block
        // that ends 15 or more bytes before the window's end is the one
        // the whole range gives.
        if cut || window == len || block.end.0 + 15 <= addr.0 + window as u64 {
            return Ok(block);
        }
        window = (window * 4).min(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lift(bytes: &[u8]) -> IrBlock {
        lift_block(bytes, GuestAddr(0x401000), 64).expect("lift")
    }

    /// A block longer than the first window, one whose last instruction
    /// straddles it, and one cut at the end of the bytes lift from the
    /// guest's memory as from all its bytes.
    #[test]
    fn a_window_of_guest_bytes_lifts_as_all_of_them() {
        // 40 `mov rax, imm64` (10 bytes each), then `ret`.
        let mut movs: Vec<u8> = (0..40u8)
            .flat_map(|k| [0x48, 0xb8, k, 0, 0, 0, 0, 0, 0, 0])
            .collect();
        movs.push(0xc3);
        let nops = vec![0x90u8; 600];
        let cut = [0x90, 0x90, 0x48, 0xb8, 1, 2];
        for (bytes, max) in [
            (&movs[..], 128),
            (&movs[..], 26),
            (&nops[..], 128),
            (&cut[..], 8),
        ] {
            let at = GuestAddr(bytes.as_ptr() as u64);
            let got = lift_guest(at, bytes.len(), max).unwrap();
            let want = lift_block(bytes, at, max).unwrap();
            assert_eq!((got.end, got.raw.len()), (want.end, want.raw.len()));
            assert_eq!(got.term.to_string(), want.term.to_string());
            assert_eq!(got.body.len(), want.body.len());
        }
    }

    #[test]
    fn rtm_as_the_host_runs_it() {
        let decode = |bytes: &[u8]| {
            let mut d = Decoder::with_ip(64, bytes, 0x401000, DecoderOptions::NONE);
            d.decode()
        };
        let xbegin = decode(&[0xc7, 0xf8, 0x10, 0, 0, 0]);
        let (xend, xabort) = (decode(&[0x0f, 0x01, 0xd5]), decode(&[0xc6, 0xf8, 5]));
        let term = |s: Step| match s {
            Step::End(t) => t.to_string(),
            Step::Body(op) => format!("{op:?}"),
            Step::Abort { fallback } => format!("abort to {fallback}"),
        };
        for i in [&xbegin, &xend, &xabort] {
            assert_eq!(
                term(lift_rtm(i, rtm::Host::Undefined)),
                "trap InvalidOpcode"
            );
        }
        assert_eq!(
            term(lift_rtm(&xbegin, rtm::Host::Aborts)),
            "abort to 0x401016"
        );
        assert_eq!(
            term(lift_rtm(&xend, rtm::Host::Aborts)),
            "trap GeneralProtection"
        );
        assert_eq!(term(lift_rtm(&xabort, rtm::Host::Aborts)), "Carry");
        if rtm::host() == rtm::Host::Aborts {
            // RAX = 0, then on at the fallback; not counted (a native
            // single-step does not count an aborted xbegin either).
            let b = lift(&[0xc7, 0xf8, 0x10, 0, 0, 0]);
            assert_eq!(b.guest_insns(), 0);
            assert_eq!(b.term_addr, GuestAddr(0x401000));
            assert_eq!(b.term.to_string(), "fallthrough 0x401016");
            assert_eq!(text(&b.body[0].insn), "mov eax,0");
        }
    }

    #[test]
    fn terminators_one_line_each() {
        let cases: &[(&[u8], &str)] = &[
            (&[0x48, 0x01, 0xd8, 0xc3], "return pop 0"),
            (&[0xc2, 0x10, 0x00], "return pop 16"),
            (&[0xeb, 0xfe], "jump 0x401000"),
            (&[0x74, 0x02], "branch Je taken 0x401004 else 0x401002"),
            (&[0xe2, 0xfe], "branch Loop taken 0x401000 else 0x401002"),
            (&[0xe8, 0, 0, 0, 0], "call 0x401005 return 0x401005"),
            (&[0xff, 0xe0], "indirect-jump [jmp rax]"),
            (&[0xff, 0xd3], "indirect-call [call rbx] return 0x401002"),
            (&[0x0f, 0x05], "syscall next 0x401002"),
            (&[0xcc], "trap Breakpoint"),
            (&[0x0f, 0x0b], "trap InvalidOpcode"),
            (&[0xf4], "trap GeneralProtection"),
            (&[0xcd, 0x03], "trap Breakpoint"),
            (&[0xcd, 0x05], "trap GeneralProtection"),
            (&[0x06, 0x90, 0x90], "trap InvalidOpcode"),
            (&[0x48, 0x89], "trap FetchFault"),
            (&[0x90, 0x48, 0x89], "fallthrough 0x401001"),
        ];
        for (bytes, want) in cases {
            assert_eq!(lift(bytes).term.to_string(), *want, "bytes {bytes:02x?}");
        }
    }

    /// I5: past 15 bytes an instruction raises general protection; a
    /// 16-bit branch is the host CPU's.
    #[test]
    fn instructions_decode_as_the_host_cpu_does() {
        let mut long = vec![0x66u8; 15];
        long.push(0x90);
        assert_eq!(lift(&long).term.to_string(), "trap GeneralProtection");
        // 14 prefixes and a nop: 15 bytes, a body instruction.
        assert_eq!(lift(&long[1..]).body.len(), 1);
        // Not a valid instruction after its prefixes: invalid opcode.
        let mut bad = vec![0x66u8; 15];
        bad.push(0x06);
        assert_eq!(lift(&bad).term.to_string(), "trap InvalidOpcode");
        let jmp16 = lift(&[0x66, 0xeb, 0x00]).term.to_string();
        let call16 = lift_block(&[0x66, 0xe8, 0, 0, 0, 0], GuestAddr(0x401000), 8);
        let ret16 = lift_block(&[0x66, 0xc3], GuestAddr(0x401000), 8);
        if cpu_is_amd() {
            assert_eq!(jmp16, "jump 0x1003");
            assert!(call16.unwrap_err().to_string().contains("16-bit call"));
            assert!(ret16.unwrap_err().to_string().contains("16-bit return"));
        } else {
            assert_eq!(jmp16, "jump 0x401003");
            assert_eq!(
                call16.unwrap().term.to_string(),
                "call 0x401006 return 0x401006"
            );
        }
    }

    #[test]
    fn cpuid_and_rdtsc_are_body_instructions() {
        let b = lift(&[0x0f, 0xa2, 0x0f, 0x31, 0xc3]);
        assert_eq!(b.body.len(), 2);
        assert_eq!(b.guest_insns(), 3);
    }

    #[test]
    fn size_limit_falls_through() {
        let b = lift_block(&[0x90; 10], GuestAddr(0x1000), 4).unwrap();
        assert_eq!(b.term.to_string(), "fallthrough 0x1004");
    }

    #[test]
    fn gs_access_is_rewritten_with_free_temps() {
        // mov rax, gs:[rcx+0x28]
        let b = lift_block(&[0x65, 0x48, 0x8b, 0x41, 0x28, 0xc3], GuestAddr(0x1000), 8).unwrap();
        assert_eq!(
            b.body[0].op,
            IrOp::GsMemory {
                tmp: Register::RDX,
                tmp2: Register::RBX
            }
        );
        // gs rep movsb has no explicit operand to rewrite
        let e = lift_block(&[0x65, 0xf3, 0xa4], GuestAddr(0x1000), 8).unwrap_err();
        assert_eq!(e.addr, GuestAddr(0x1000));
        assert!(e.to_string().contains("GS-relative string"), "{e}");
    }

    #[test]
    fn int80_is_refused() {
        assert!(lift_block(&[0xcd, 0x80], GuestAddr(0x1000), 8).is_err());
    }
}
