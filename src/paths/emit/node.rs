//! The instrumented copy of a node: its body as the plain translation has
//! it, then the probes on its out-edges and exit (module docs of
//! paths/emit).

use iced_x86::{Code, Instruction, Mnemonic, Register};

use crate::backend::asm::mem;
use crate::contract::{EXIT_FALL, EXIT_TAKEN};

use super::*;
use crate::backend::{condition_code, BlockEmitter, EmitEnv, S_RAX};
use crate::contract::exit_reason;
use crate::ir::Terminator;

/// The probe on an edge, then on to the target (module docs).
fn emit_edge(
    e: &mut BlockEmitter,
    l: &mut Labels,
    s: &NodeSpec,
    edge: &EdgeSpec,
) -> Result<(), EmitError> {
    let v = s.version;
    match &edge.step {
        Step::Terminate => terminate(e, l, v, edge.plain),
        Step::Go {
            add,
            check: Check::None,
        } => {
            let a = &mut e.a;
            if *add != 0 {
                if edge.live {
                    a.store_gs(P_RAX, Register::RAX)?;
                    a.load_gs(Register::RAX, off::PATH_SEG)?;
                    a.lea(Register::RAX, mem(Register::RAX, *add as i64))?;
                    a.store_gs(off::PATH_SEG, Register::RAX)?;
                    a.load_gs(Register::RAX, P_RAX)?;
                } else {
                    ins(
                        a,
                        Instruction::with2(Code::Add_rm64_imm32, gs64(off::PATH_SEG), *add as i32),
                    )?;
                }
            }
            jump_link(e, l, edge.go);
            Ok(())
        }
        Step::Go { add, check } => {
            let a = &mut e.a;
            let g = save(a, edge.live)?;
            let (ok, fail) = (l.new_label(), l.new_label());
            if *add != 0 {
                ins(
                    a,
                    Instruction::with2(Code::Add_rm64_imm32, gs64(off::PATH_SEG), *add as i32),
                )?;
            }
            a.load_gs(Register::RAX, off::PATH_SEG)?;
            emit_check(a, l, check, ok, fail)?;
            l.bind(a, ok);
            restore(a, &g)?;
            jump_link(e, l, edge.go);
            l.bind(&mut e.a, fail);
            restore(&mut e.a, &g)?;
            terminate(e, l, v, edge.plain)
        }
        Step::Fold {
            add,
            reset,
            check,
            after,
        } => {
            let a = &mut e.a;
            let g = save(a, edge.live)?;
            let (fold, fail, flush, store, after_ok) = (
                l.new_label(),
                l.new_label(),
                l.new_label(),
                l.new_label(),
                l.new_label(),
            );
            // x = the completed segment's id.
            a.load_gs(Register::RAX, off::PATH_SEG)?;
            if *add != 0 {
                ins(
                    a,
                    Instruction::with2(Code::Add_rm64_imm32, Register::RAX, *add as i32),
                )?;
            }
            emit_check(a, l, check, fold, fail)?;
            l.bind(a, fold);
            // tot = tot × radix + x, unless that passes 2^63 - 1 (plan.rs).
            a.load_gs(Register::RCX, off::PATH_TOT)?;
            ins(
                a,
                Instruction::with3(
                    Code::Imul_r64_rm64_imm32,
                    Register::RCX,
                    Register::RCX,
                    s.radix as i32,
                ),
            )?;
            l.jcc(a, CC_O, flush);
            ins(
                a,
                Instruction::with2(Code::Add_r64_rm64, Register::RCX, Register::RAX),
            )?;
            l.jcc(a, CC_O, flush);
            l.bind(a, store);
            a.store_gs(off::PATH_TOT, Register::RCX)?;
            store_gs_q(a, off::PATH_SEG, *reset)?;
            a.load_gs(Register::RAX, off::PATH_SEG)?;
            emit_check(a, l, after, after_ok, fail)?;
            l.bind(a, after_ok);
            restore(a, &g)?;
            jump_link(e, l, edge.go);
            let a = &mut e.a;
            // The chunk: tot as it was, then tot = radix + x.
            l.bind(a, flush);
            ring(
                a,
                &[
                    W::Imm(tag(REC_CHUNK, v)),
                    serial(),
                    W::Gs(off::PATH_TOT),
                    W::Gs(off::PATH_TOT + 4),
                ],
            )?;
            ins(
                a,
                Instruction::with2(Code::Mov_r32_imm32, Register::ECX, s.radix as u32),
            )?;
            ins(
                a,
                Instruction::with2(Code::Add_r64_rm64, Register::RCX, Register::RAX),
            )?;
            l.jmp(a, store);
            l.bind(a, fail);
            restore(a, &g)?;
            terminate(e, l, v, edge.plain)
        }
    }
}

/// The probe on the node's exit (the path ends here), falling through to
/// what follows. Flags are live (they flow out of the function).
fn emit_exit(a: &mut Asm, l: &mut Labels, s: &NodeSpec) -> Result<(), EmitError> {
    let v = s.version;
    let end = [
        W::Imm(tag(REC_END, v)),
        serial(),
        W::Gs(off::PATH_TOT),
        W::Gs(off::PATH_TOT + 4),
        W::Gs(P_X),
    ];
    match &s.exit {
        None | Some(ExitStep::Terminate) => ring(a, &[W::Imm(tag(REC_TERM, v)), serial()]),
        Some(ExitStep::End {
            add,
            check: Check::None,
        }) => {
            a.store_gs(P_RAX, Register::RAX)?;
            a.load_gs(Register::RAX, off::PATH_SEG)?;
            a.lea(Register::RAX, mem(Register::RAX, *add as i64))?;
            a.store_gs(P_X, Register::RAX)?;
            a.load_gs(Register::RAX, P_RAX)?;
            ring(a, &end)
        }
        Some(ExitStep::End { add, check }) => {
            let g = save(a, true)?;
            let (ok, fail, done) = (l.new_label(), l.new_label(), l.new_label());
            a.load_gs(Register::RAX, off::PATH_SEG)?;
            a.lea(Register::RAX, mem(Register::RAX, *add as i64))?;
            a.store_gs(P_X, Register::RAX)?;
            emit_check(a, l, check, ok, fail)?;
            l.bind(a, ok);
            restore(a, &g)?;
            ring(a, &end)?;
            l.jmp(a, done);
            l.bind(a, fail);
            restore(a, &g)?;
            ring(a, &[W::Imm(tag(REC_TERM, v)), serial()])?;
            l.bind(a, done);
            Ok(())
        }
    }
}

/// Push an activation frame before a call or syscall (flag-free: the
/// callee may read the flags). Returns the buffer offset of the imm64
/// that must hold the host address of the resume probe.
fn emit_push_frame(
    a: &mut Asm,
    l: &mut Labels,
    v: u8,
    resume_at: GuestAddr,
) -> Result<usize, EmitError> {
    let (full, go_on) = (l.new_label(), l.new_label());
    a.store_gs(P_RAX, Register::RAX)?;
    a.store_gs(P_RCX, Register::RCX)?;
    a.load_gs(Register::RCX, off::PATH_LEFT)?;
    // jrcxz to a trampoline to `full`, jumped over otherwise.
    let jrcxz_at = a.len();
    a.bytes(&[0xe3, 0]);
    let skip_at = a.len();
    a.bytes(&[0xeb, 0]);
    let tramp = a.len();
    a.buf[jrcxz_at + 1] = (tramp - (jrcxz_at + 2)) as u8;
    l.jmp(a, full);
    let after = a.len();
    a.buf[skip_at + 1] = u8::try_from(after - (skip_at + 2)).expect("short skip");
    a.lea(Register::RCX, mem(Register::RCX, -1))?;
    a.store_gs(off::PATH_LEFT, Register::RCX)?;
    a.load_gs(Register::RAX, off::PATH_SP)?;
    ins(
        a,
        Instruction::with2(Code::Mov_rm64_r64, mem(Register::RAX, F_KEY), Register::RSP),
    )?;
    ins(
        a,
        Instruction::with2(Code::Mov_r64_imm64, Register::RCX, resume_at.0),
    )?;
    ins(
        a,
        Instruction::with2(
            Code::Mov_rm64_r64,
            mem(Register::RAX, F_GUEST),
            Register::RCX,
        ),
    )?;
    ins(
        a,
        Instruction::with2(Code::Mov_r64_imm64, Register::RCX, u64::MAX),
    )?;
    let imm = a.len() - 8;
    ins(
        a,
        Instruction::with2(
            Code::Mov_rm64_r64,
            mem(Register::RAX, F_HOST),
            Register::RCX,
        ),
    )?;
    for (slot, at) in [
        (off::PATH_TOT, F_TOT),
        (off::PATH_SEG, F_SEG),
        (off::PATH_SERIAL, F_SERIAL),
    ] {
        a.load_gs(Register::RCX, slot)?;
        ins(
            a,
            Instruction::with2(Code::Mov_rm64_r64, mem(Register::RAX, at), Register::RCX),
        )?;
    }
    a.lea(Register::RAX, mem(Register::RAX, FRAME))?;
    a.store_gs(off::PATH_SP, Register::RAX)?;
    l.jmp(a, go_on);
    // No frame left: this activation cannot come back instrumented.
    l.bind(a, full);
    ring(a, &[W::Imm(tag(REC_LOST, v)), serial()])?;
    l.bind(a, go_on);
    a.load_gs(Register::RCX, P_RCX)?;
    a.load_gs(Register::RAX, P_RAX)?;
    Ok(imm)
}

/// The instrumented copy of a node.
pub fn emit_node(s: &NodeSpec, env: &EmitEnv) -> Result<Piece, EmitError> {
    let mut e = BlockEmitter::new(Asm::new(env.host_base), *env);
    let mut l = Labels::default();
    let b = s.ir;
    let (pc_map, rep_ring) = e.body(b)?;
    emit_terminator(&mut e, &mut l, s)?;
    e.cold()?;
    let links = l.done();
    Ok(Piece {
        em: Emitted {
            code: e.a.buf,
            pc_map,
            sites: e.sites,
            rep_ring,
            // Path pieces are never placed again (reloc.rs).
            relocs: Vec::new(),
            relocatable: false,
        },
        links,
    })
}

/// The side of a transfer to guest `t`, exit `k` of the block: its exit
/// word, then an edge probe, or the exit probe and an ordinary jump out.
fn side(
    e: &mut BlockEmitter,
    l: &mut Labels,
    s: &NodeSpec,
    t: GuestAddr,
    k: u32,
) -> Result<(), EmitError> {
    e.push_exit(k)?;
    if let Some(edge) = s.edges.iter().find(|x| x.target == t) {
        return emit_edge(e, l, s, edge);
    }
    emit_exit(&mut e.a, l, s)?;
    e.jump_to(t);
    Ok(())
}

fn emit_terminator(e: &mut BlockEmitter, l: &mut Labels, s: &NodeSpec) -> Result<(), EmitError> {
    let b = s.ir;
    match &b.term {
        Terminator::Jump { target } | Terminator::Fallthrough { next: target } => {
            side(e, l, s, *target, EXIT_FALL)
        }
        Terminator::Branch {
            insn,
            taken,
            fallthrough,
        } => {
            let lt = l.new_label();
            match insn.mnemonic() {
                Mnemonic::Loop
                | Mnemonic::Loope
                | Mnemonic::Loopne
                | Mnemonic::Jrcxz
                | Mnemonic::Jecxz => {
                    // rel8 only: `op T; jmp ft; T: jmp taken`.
                    let rel8 = e.a.short_branch(insn);
                    let lf = l.new_label();
                    l.jmp(&mut e.a, lf);
                    let t_pos = e.a.len();
                    e.a.set_rel8(rel8, t_pos);
                    l.jmp(&mut e.a, lt);
                    l.bind(&mut e.a, lf);
                }
                _ => {
                    let r = e.a.jcc_rel32(condition_code(insn.condition_code()));
                    l.to(&mut e.a, r, lt);
                }
            }
            side(e, l, s, *fallthrough, EXIT_FALL)?;
            l.bind(&mut e.a, lt);
            side(e, l, s, *taken, EXIT_TAKEN)
        }
        Terminator::Call { return_to, .. } | Terminator::IndirectCall { return_to, .. } => {
            call_or_syscall(e, l, s, *return_to)
        }
        Terminator::Syscall { next } => call_or_syscall(e, l, s, *next),
        Terminator::Return { .. } => {
            emit_exit(&mut e.a, l, s)?;
            e.terminator(b)
        }
        Terminator::IndirectJump { insn } => indirect_jump(e, l, s, insn),
        Terminator::Trap { .. } => {
            ring(&mut e.a, &[W::Imm(tag(REC_LOST, s.version)), serial()])?;
            e.terminator(b)
        }
    }
}

/// A call or syscall: a frame (if the path goes on inside the function),
/// the ordinary transfer, and the probe for the edge to the resume node,
/// where the resume stub jumps.
fn call_or_syscall(
    e: &mut BlockEmitter,
    l: &mut Labels,
    s: &NodeSpec,
    resume: GuestAddr,
) -> Result<(), EmitError> {
    let Some(edge) = s.edges.iter().find(|x| x.target == resume) else {
        // The path cannot come back into the function here.
        return e.terminator(s.ir);
    };
    if edge.step == Step::Terminate {
        // Known not of interest already: no frame, it comes back plain.
        ring(&mut e.a, &[W::Imm(tag(REC_TERM, s.version)), serial()])?;
        return e.terminator(s.ir);
    }
    let imm = emit_push_frame(&mut e.a, l, s.version, resume)?;
    e.terminator(s.ir)?;
    let here = e.a.here();
    e.a.buf[imm..imm + 8].copy_from_slice(&here.to_le_bytes());
    emit_edge(e, l, s, edge)
}

/// Put the guest's RAX, RCX and flags back after the target test of an
/// indirect jump.
fn indirect_back(a: &mut Asm) -> Result<(), EmitError> {
    a.load_gs(Register::RAX, P_FLAGS)?;
    ins(
        a,
        Instruction::with2(Code::Add_rm8_imm8, Register::AL, 0x7fu32),
    )?;
    ins(a, Ok(Instruction::with(Code::Sahf)))?;
    a.load_gs(Register::RCX, P_RCX)?;
    a.load_gs(Register::RAX, S_RAX)
}

/// An indirect jump: to a known target's edge probe, out of the function
/// (exit probe), or to an unknown target inside it (learn, or terminate).
fn indirect_jump(
    e: &mut BlockEmitter,
    l: &mut Labels,
    s: &NodeSpec,
    insn: &Instruction,
) -> Result<(), EmitError> {
    e.load_target(insn)?;
    e.push_exit(EXIT_FALL)?;
    let a = &mut e.a;
    a.store_gs(P_TGT, Register::RAX)?;
    a.store_gs(P_RCX, Register::RCX)?;
    ins(a, Ok(Instruction::with(Code::Lahf)))?;
    ins(a, Instruction::with1(Code::Seto_rm8, Register::AL))?;
    a.store_gs(P_FLAGS, Register::RAX)?;
    a.load_gs(Register::RAX, P_TGT)?;
    let hits: Vec<Label> = s.edges.iter().map(|_| l.new_label()).collect();
    for (edge, &hit) in s.edges.iter().zip(&hits) {
        cmp_const(a, Register::RAX, edge.target.0)?;
        l.jcc(a, CC_E, hit);
    }
    let out = l.new_label();
    cmp_const(a, Register::RAX, s.extent.0)?;
    l.jcc(a, CC_B, out);
    cmp_const(a, Register::RAX, s.extent.1)?;
    l.jcc(a, CC_AE, out);
    // An unknown target inside the function.
    indirect_back(a)?;
    ring(a, &[W::Imm(tag(s.miss, s.version)), serial()])?;
    if s.learn {
        a.store_gs(P_X, Register::RAX)?;
        a.load_gs(Register::RAX, P_TGT)?;
        a.store_gs(off::RIP, Register::RAX)?;
        a.load_gs(Register::RAX, P_X)?;
        a.store_gs_imm32(off::EXIT_ARG, (s.version as u32) << 16 | s.node)?;
        a.store_gs_imm32(off::EXIT_REASON, exit_reason::PATH_MISS)?;
        a.jmp_gs(off::EXIT_FN)?;
    } else {
        a.load_gs(Register::RAX, P_TGT)?;
        e.lookup_rax()?;
    }
    for (edge, hit) in s.edges.iter().zip(hits) {
        l.bind(&mut e.a, hit);
        indirect_back(&mut e.a)?;
        emit_edge(e, l, s, edge)?;
    }
    l.bind(&mut e.a, out);
    indirect_back(&mut e.a)?;
    emit_exit(&mut e.a, l, s)?;
    e.a.load_gs(Register::RAX, P_TGT)?;
    e.lookup_rax()
}
