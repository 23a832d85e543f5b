//! The entry stub and the resume stubs (module docs of paths/emit).

use iced_x86::{Code, Instruction, Register};

use super::*;
use crate::backend::asm::mem;
use crate::backend::{EmitEnv, Prologue};
use crate::contract::ExitStubs;

/// Start a stub: the forwarding `jmp rel32` (I3), resolved to what follows.
fn stub_head(a: &mut Asm) -> usize {
    let r = a.jmp_rel32();
    let field = r.field;
    let here = a.here();
    a.resolve(r, here);
    field
}

/// The entry stub: drop dead frames, start an activation, enter the
/// instrumented entry node. Returns the piece and its forwarding field.
pub fn emit_entry_stub(s: &EntrySpec, host_base: u64) -> Result<(Piece, usize), EmitError> {
    let mut a = Asm::new(host_base);
    let mut l = Labels::default();
    let field = stub_head(&mut a);
    let g = save(&mut a, s.live)?;
    let (purge, done) = (l.new_label(), l.new_label());
    l.bind(&mut a, purge);
    ins(
        &mut a,
        Instruction::with2(
            Code::Cmp_rm64_imm32,
            gs64(off::PATH_LEFT),
            crate::contract::PATH_FRAMES as i32,
        ),
    )?;
    l.jcc(&mut a, CC_E, done);
    a.load_gs(Register::RAX, off::PATH_SP)?;
    ins(
        &mut a,
        Instruction::with2(
            Code::Cmp_rm64_r64,
            mem(Register::RAX, F_KEY - FRAME),
            Register::RSP,
        ),
    )?;
    l.jcc(&mut a, CC_A, done);
    a.lea(Register::RAX, mem(Register::RAX, -FRAME))?;
    a.store_gs(off::PATH_SP, Register::RAX)?;
    ins(
        &mut a,
        Instruction::with1(Code::Inc_rm64, gs64(off::PATH_LEFT)),
    )?;
    l.jmp(&mut a, purge);
    l.bind(&mut a, done);
    a.load_gs(Register::RCX, off::PATH_NEXT)?;
    a.lea(Register::RCX, mem(Register::RCX, 1))?;
    a.store_gs(off::PATH_NEXT, Register::RCX)?;
    a.store_gs(off::PATH_SERIAL, Register::RCX)?;
    store_gs_q(&mut a, off::PATH_TOT, 1)?;
    store_gs_q(&mut a, off::PATH_SEG, s.start)?;
    restore(&mut a, &g)?;
    Ok((finish(a, l, s.go), field))
}

/// A resume stub (module docs). Returns the piece and its forwarding
/// field.
pub fn emit_resume_stub(s: &ResumeSpec, host_base: u64) -> Result<(Piece, usize), EmitError> {
    let mut a = Asm::new(host_base);
    let mut l = Labels::default();
    let field = stub_head(&mut a);
    let g = save(&mut a, s.live)?;
    let (top, pop, plain) = (l.new_label(), l.new_label(), l.new_label());
    l.bind(&mut a, top);
    ins(
        &mut a,
        Instruction::with2(
            Code::Cmp_rm64_imm32,
            gs64(off::PATH_LEFT),
            crate::contract::PATH_FRAMES as i32,
        ),
    )?;
    l.jcc(&mut a, CC_E, plain);
    a.load_gs(Register::RAX, off::PATH_SP)?;
    a.mov_load(Register::RCX, mem(Register::RAX, F_KEY - FRAME))?;
    ins(
        &mut a,
        Instruction::with2(Code::Cmp_r64_rm64, Register::RCX, Register::RSP),
    )?;
    l.jcc(&mut a, CC_A, plain);
    l.jcc(&mut a, CC_NE, pop);
    ins(
        &mut a,
        Instruction::with2(Code::Mov_r64_imm64, Register::RCX, s.at.0),
    )?;
    ins(
        &mut a,
        Instruction::with2(
            Code::Cmp_rm64_r64,
            mem(Register::RAX, F_GUEST - FRAME),
            Register::RCX,
        ),
    )?;
    l.jcc(&mut a, CC_NE, pop);
    // The caller's frame: pop it and go on instrumented.
    a.lea(Register::RAX, mem(Register::RAX, -FRAME))?;
    a.store_gs(off::PATH_SP, Register::RAX)?;
    ins(
        &mut a,
        Instruction::with1(Code::Inc_rm64, gs64(off::PATH_LEFT)),
    )?;
    for (slot, at) in [
        (off::PATH_TOT, F_TOT),
        (off::PATH_SEG, F_SEG),
        (off::PATH_SERIAL, F_SERIAL),
        (P_JMP, F_HOST),
    ] {
        a.mov_load(Register::RCX, mem(Register::RAX, at))?;
        a.store_gs(slot, Register::RCX)?;
    }
    restore(&mut a, &g)?;
    a.jmp_gs(P_JMP)?;
    // A dead frame.
    l.bind(&mut a, pop);
    a.lea(Register::RAX, mem(Register::RAX, -FRAME))?;
    a.store_gs(off::PATH_SP, Register::RAX)?;
    ins(
        &mut a,
        Instruction::with1(Code::Inc_rm64, gs64(off::PATH_LEFT)),
    )?;
    l.jmp(&mut a, top);
    l.bind(&mut a, plain);
    restore(&mut a, &g)?;
    Ok((finish(a, l, s.plain), field))
}

/// The stub in `a` ends with a jump to `to`: the piece.
fn finish(a: Asm, mut l: Labels, to: Link) -> Piece {
    let mut e = dummy_emitter(a);
    jump_link(&mut e, &mut l, to);
    assert!(e.sites.is_empty(), "stubs only jump to other pieces");
    Piece {
        em: Emitted {
            code: e.a.buf,
            pc_map: Vec::new(),
            sites: Vec::new(),
            rep_ring: Vec::new(),
            // Path pieces are never placed again (reloc.rs).
            relocs: Vec::new(),
            relocatable: false,
        },
        links: l.done(),
    }
}

/// An emitter around `a` for stubs, which only jump to other pieces.
fn dummy_emitter(a: Asm) -> BlockEmitter {
    let env = EmitEnv {
        host_base: a.here(),
        first_site: 0,
        prologue: Prologue::None,
        // Stubs only jump to other pieces (`finish` checks).
        stubs: ExitStubs::default(),
    };
    BlockEmitter::new(a, env)
}
