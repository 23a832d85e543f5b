//! Code the emitter copies instead of encoding instruction by instruction
//! through iced: the inline indirect lookup, the same in every block but
//! for its alignment (a template per start address mod 4), and a
//! RIP-relative guest instruction within reach of its operand, whose own
//! bytes are copied with the displacement moved. Both are checked in
//! tests.rs against what iced encodes.

use std::sync::OnceLock;

use iced_x86::{Instruction, Register};

use super::asm::{Asm, Rel32};
use super::{EmitError, S_RAX, S_RCX, S_RDX};
use crate::contract::off;

/// The inline lookup [`BlockEmitter::lookup_rax`] emits at an address
/// `k` mod 4, and the buffer offset of its miss jump's rel32.
pub(super) fn lookup_template(at: u64) -> (&'static [u8], usize) {
    static TEMPLATES: OnceLock<[(Vec<u8>, usize); 4]> = OnceLock::new();
    let all = TEMPLATES.get_or_init(|| {
        // Registers and gs: displacements hotlift chose: it always
        // encodes (tests.rs emits it at every alignment).
        [0, 1, 2, 3].map(|k| {
            let mut a = Asm::new(k);
            let miss = emit_lookup_rax(&mut a).expect("the lookup sequence encodes");
            (a.buf, miss.into_link_field())
        })
    });
    let (code, field) = &all[(at % 4) as usize];
    (code.as_slice(), *field)
}

/// The lookup sequence itself (see [`BlockEmitter::lookup_rax`]): its miss
/// jump's rel32 is left for the caller to point at the miss stub. RDX
/// holds the entry's offset so that the hit loads the host address beside
/// the key and jumps through RCX, to the block's indirect entry, which
/// loads the guest's RCX back (contract I4). Written byte for byte
/// (tests.rs checks each alignment against iced): through iced, its
/// first use built iced's encoder tables, about 9,000 allocations at the
/// start of every process.
pub(super) fn emit_lookup_rax(a: &mut Asm) -> Result<Rel32, EmitError> {
    a.store_gs(S_RCX, Register::RCX)?;
    a.store_gs(S_RDX, Register::RDX)?;
    // rorx rdx, rax, 16; lea rdx, [rdx+rax]; movzx edx, dx;
    // lea rdx, [rdx+rdx] (twice the index: entries are 16 bytes, scaled
    // by 8 below).
    a.bytes(&[0xc4, 0xe3, 0xfb, 0xf0, 0xd0, 0x10]);
    a.bytes(&[0x48, 0x8d, 0x14, 0x02]);
    a.bytes(&[0x0f, 0xb7, 0xd2]);
    a.bytes(&[0x48, 0x8d, 0x14, 0x12]);
    // mov rcx, gs:[rdx*8 + entry + field]
    let entry = |a: &mut Asm, field: usize| -> Result<(), EmitError> {
        let disp = i32::try_from(off::IBL + field).map_err(|_| EmitError::Encode {
            guest: 0,
            msg: "lookup table beyond a disp32".into(),
        })?;
        a.bytes(&[0x65, 0x48, 0x8b, 0x0c, 0xd5]);
        a.bytes(&disp.to_le_bytes());
        Ok(())
    };
    // RCX = -key + RAX: zero on a hit (lea rcx, [rcx+rax]).
    entry(a, 0)?;
    a.bytes(&[0x48, 0x8d, 0x0c, 0x01]);
    // jrcxz hit (over the 5-byte jmp to the miss stub, plus its padding).
    let jrcxz_at = a.len();
    a.bytes(&[0xe3, 0]);
    let miss = a.jmp_rel32();
    let hit = a.len();
    a.buf[jrcxz_at + 1] = (hit - (jrcxz_at + 2)) as u8;
    entry(a, 8)?;
    a.load_gs(Register::RAX, S_RAX)?;
    a.load_gs(Register::RDX, S_RDX)?;
    // jmp rcx
    a.bytes(&[0xff, 0xe1]);
    Ok(miss)
}

/// Append RIP-relative `insn`, whose encoding is `raw`, at `a`'s address
/// as its own bytes with the displacement moved, if [`rip_disp_at`] finds
/// it (the operand is within reach: `is_far_rip` was checked); false, and
/// nothing written, otherwise.
pub(super) fn moved_rip(a: &mut Asm, raw: &[u8], insn: &Instruction) -> bool {
    let Some(at) = rip_disp_at(raw, insn) else {
        return false;
    };
    let end = a.here() as i64 + raw.len() as i64;
    let Ok(disp) = i32::try_from(insn.ip_rel_memory_address() as i64 - end) else {
        return false;
    };
    let from = a.len();
    a.bytes(raw);
    a.buf[from + at..from + at + 4].copy_from_slice(&disp.to_le_bytes());
    a.reloc(from + at, super::reloc::RelocKind::GuestRel);
    true
}

/// Where the disp32 of RIP-relative `insn` lies in its encoding `raw`:
/// before its immediates (none, 1, 2 or 4 bytes), the one place whose
/// bytes are the displacement the instruction has. None when that is not
/// one place, or for an `[eip+disp]` operand (32-bit wrap-around).
pub(super) fn rip_disp_at(raw: &[u8], insn: &Instruction) -> Option<usize> {
    if insn.memory_base() != Register::RIP || raw.len() != insn.len() {
        return None;
    }
    let disp = insn.ip_rel_memory_address() as i64 - insn.next_ip() as i64;
    let want = i32::try_from(disp).ok()?.to_le_bytes();
    let mut found = [0, 1, 2, 4]
        .into_iter()
        .filter_map(|imm| raw.len().checked_sub(4 + imm))
        .filter(|&at| raw[at..at + 4] == want);
    let at = found.next()?;
    found.next().is_none().then_some(at)
}
