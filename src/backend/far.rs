//! Memory operands the emitter cannot carry as they are: a RIP-relative
//! one out of rel32 reach from the code cache (guest data more than
//! ±2 GiB away, docs/ARCHITECTURE.md "Far RIP-relative operands"), and
//! any whose address glue computed into a register (a guest GS access).

use iced_x86::{Code, Instruction, Mnemonic, Register};

use super::asm::Asm;
use super::{EmitError, S_TMP};

/// The rm form of a `moffs` move, whose absolute operand cannot take a base.
fn without_moffs(code: Code) -> Code {
    match code {
        Code::Mov_AL_moffs8 => Code::Mov_r8_rm8,
        Code::Mov_AX_moffs16 => Code::Mov_r16_rm16,
        Code::Mov_EAX_moffs32 => Code::Mov_r32_rm32,
        Code::Mov_RAX_moffs64 => Code::Mov_r64_rm64,
        Code::Mov_moffs8_AL => Code::Mov_rm8_r8,
        Code::Mov_moffs16_AX => Code::Mov_rm16_r16,
        Code::Mov_moffs32_EAX => Code::Mov_rm32_r32,
        Code::Mov_moffs64_RAX => Code::Mov_rm64_r64,
        c => c,
    }
}

/// Does `insn` have a RIP-relative operand that rel32 cannot reach from
/// here (guest data more than ±2 GiB from the code cache)?
pub(super) fn is_far_rip(a: &Asm, insn: &Instruction) -> bool {
    if !insn.is_ip_rel_memory_operand() {
        return false;
    }
    let target = insn.ip_rel_memory_address();
    let here = a.here() as i64;
    let d = (target as i64).wrapping_sub(here);
    !(-(1i64 << 31) + (1 << 16)..(1i64 << 31) - (1 << 16)).contains(&d)
}

/// Emit an instruction whose RIP-relative operand is out of reach: its
/// absolute address goes through a scratch register the instruction does
/// not use (flag-free: `mov r, imm64`).
pub(super) fn emit_far_rip(a: &mut Asm, insn: &Instruction) -> Result<(), EmitError> {
    let target = insn.ip_rel_memory_address();
    if insn.mnemonic() == Mnemonic::Lea && insn.op0_register().size() == 8 {
        a.mov_imm64(insn.op0_register(), target);
        a.reloc(a.len() - 8, super::reloc::RelocKind::GuestAbs64);
        return Ok(());
    }
    let tmp = crate::ir::free_gprs(insn)
        .next()
        .expect("no instruction uses every general register");
    a.store_gs(S_TMP, tmp)?;
    a.mov_imm64(tmp, target);
    a.reloc(a.len() - 8, super::reloc::RelocKind::GuestAbs64);
    // A segment override (fs:) still applies to the absolute address.
    a.insn(&with_memory_at(insn, insn.segment_prefix(), tmp))?;
    a.load_gs(tmp, S_TMP)
}

/// `insn` with its memory operand replaced by `segment:[base]` (no index
/// or displacement), for operands whose address glue computed.
pub(super) fn with_memory_at(insn: &Instruction, segment: Register, base: Register) -> Instruction {
    let mut r = *insn;
    r.set_code(without_moffs(insn.code()));
    r.set_segment_prefix(segment);
    r.set_memory_base(base);
    r.set_memory_index(Register::None);
    r.set_memory_index_scale(1);
    r.set_memory_displacement64(0);
    r.set_memory_displ_size(0);
    r
}
