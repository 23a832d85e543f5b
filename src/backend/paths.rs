//! Emitting the instrumented translation of a path-profiled function
//! (src/paths): node copies with probes on their out-edges, the entry
//! stub that starts an activation, and the resume stubs that take a
//! returning call (or a finished syscall) back into instrumented code.
//!
//! State (runtime `ThreadCtx`): `path_seg`, `path_tot`, `path_serial` are
//! the current activation's; a call or syscall out of an instrumented node
//! pushes a 48-byte frame on the thread's activation stack (`path_sp`,
//! `path_left` frames still free): the resume RSP (its key), the resume
//! guest address, the host address of the probe for the edge to the
//! resume node, and the three state words. A resume stub matches the top
//! frame against the RSP and its own address; frames whose key is not
//! above the RSP belong to activations that are gone (a longjmp) and are
//! dropped; a frame above it is a live caller's, so the return is not an
//! instrumented one and goes to the plain translation. The entry stub
//! drops dead frames the same way (key not above the entry RSP).
//!
//! I1: probes change no guest register and no live flag: they save RAX
//!     and RCX in `path_scratch` slots, use `mov`/`lea`/`jrcxz` only
//!     where the arithmetic flags may be live, and wrap flag-changing
//!     sequences in `lahf`+`seto`/`add al,0x7f`+`sahf` (the IR's
//!     liveness, paths/cfg.rs I3, says where they are dead).
//! I2: records go to the ring with 4-byte stores at `[rax]` (monitor/
//!     ring.rs: a store into a guard page is retried with RAX moved).
//! I3: a stub's first instruction is a `jmp rel32` with an aligned field,
//!     so a newer version's stub can take over its address with one
//!     patch (the dispatcher forwards old stubs).

use iced_x86::{Code, Instruction, MemoryOperand, Mnemonic, Register};

use super::asm::{gs_mem, mem};
use super::{
    condition_code, emit_body_insn, emit_prologue, Asm, BlockEmitter, EmitEnv, EmitError,
    Emitted, Prologue, Rel32, S_RAX,
};
use crate::ir::{IrBlock, Terminator};
use crate::monitor::TAG_PATH;
use crate::paths::plan::{Check, ExitStep, Step};
use crate::runtime::{exit_reason, off};
use crate::types::GuestAddr;

/// Bytes of one activation frame and the offsets of its words.
pub const FRAME: i64 = 48;
const F_KEY: i64 = 0;
const F_GUEST: i64 = 8;
const F_HOST: i64 = 16;
const F_TOT: i64 = 24;
const F_SEG: i64 = 32;
const F_SERIAL: i64 = 40;

/// Record kinds (bits 27..24 of a `TAG_PATH` word; bits 23..16 hold the
/// version). Words after the tag: END serial, tot lo, tot hi, seg; CHUNK
/// serial, tot lo, tot hi; TERM serial; LOST serial.
pub const REC_END: u32 = 1;
pub const REC_CHUNK: u32 = 2;
pub const REC_TERM: u32 = 3;
pub const REC_LOST: u32 = 4;

/// Words after a `TAG_PATH` record's tag.
pub fn record_words(tag: u32) -> usize {
    match (tag >> 24) & 0xf {
        REC_END => 4,
        REC_CHUNK => 3,
        _ => 1,
    }
}

/// A path record's tag word.
pub fn tag(kind: u32, version: u8) -> u32 {
    TAG_PATH | kind << 24 | (version as u32) << 16
}

const P_RAX: usize = off::path_scratch(0);
const P_RCX: usize = off::path_scratch(1);
const P_FLAGS: usize = off::path_scratch(2);
const P_X: usize = off::path_scratch(3);
const P_JMP: usize = off::path_scratch(4);
const P_RRAX: usize = off::path_scratch(5);
const P_RRCX: usize = off::path_scratch(6);
const P_TGT: usize = off::path_scratch(7);

/// Where a jump of the unit goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// Another piece of the unit (patched in once it is committed).
    Piece(usize),
    /// The ordinary translation of a guest address (a linkable exit).
    Guest(GuestAddr),
}

/// The probe on one out-edge of a node.
#[derive(Clone, Debug)]
pub struct EdgeSpec {
    pub target: GuestAddr,
    pub step: Step,
    /// Arithmetic flags live at the target (cfg.rs I3).
    pub live: bool,
    /// The target's instrumented copy.
    pub go: Link,
    /// Where a terminated activation goes on (the target, plain).
    pub plain: Link,
}

/// One instrumented node.
#[derive(Clone, Debug)]
pub struct NodeSpec<'a> {
    pub ir: &'a IrBlock,
    pub version: u8,
    pub node: u32,
    pub edges: Vec<EdgeSpec>,
    /// The probe on the node's exit (a return, a jump out of the
    /// function, an indirect jump out of it).
    pub exit: Option<ExitStep>,
    /// The function's extent, for indirect jumps.
    pub extent: (u64, u64),
    /// An indirect jump to an unknown target inside the function exits to
    /// the dispatcher to learn it (else it goes on through the lookup).
    pub learn: bool,
    /// The record such a jump makes: `REC_LOST` (all paths: it just was
    /// not known yet) or `REC_TERM` (under PSP: not of interest).
    pub miss: u32,
    pub radix: u64,
}

/// What the entry stub does.
#[derive(Clone, Copy, Debug)]
pub struct EntrySpec {
    pub live: bool,
    pub start: u64,
    pub go: Link,
}

/// What a resume stub does.
#[derive(Clone, Copy, Debug)]
pub struct ResumeSpec {
    pub at: GuestAddr,
    pub live: bool,
    pub plain: Link,
}

/// An emitted piece and its jumps to other pieces: (buffer offset of a
/// rel32 field, piece).
#[derive(Debug)]
pub struct Piece {
    pub em: Emitted,
    pub links: Vec<(usize, usize)>,
}

/// A forward or backward label inside one piece.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Label(usize);

/// Labels of one piece, and jumps to other pieces.
#[derive(Default)]
struct Labels {
    at: Vec<Option<u64>>,
    fixes: Vec<(Rel32, Label)>,
    links: Vec<(usize, usize)>,
}

impl Labels {
    fn new_label(&mut self) -> Label {
        self.at.push(None);
        Label(self.at.len() - 1)
    }

    fn bind(&mut self, a: &mut Asm, l: Label) {
        let here = a.here();
        self.at[l.0] = Some(here);
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.fixes)
            .into_iter()
            .partition(|(_, t)| *t == l);
        self.fixes = later;
        for (r, _) in now {
            a.resolve(r, here);
        }
    }

    fn to(&mut self, a: &mut Asm, r: Rel32, l: Label) {
        match self.at[l.0] {
            Some(t) => a.resolve(r, t),
            None => self.fixes.push((r, l)),
        }
    }

    fn jmp(&mut self, a: &mut Asm, l: Label) {
        let r = a.jmp_rel32();
        self.to(a, r, l);
    }

    fn jcc(&mut self, a: &mut Asm, cc: u8, l: Label) {
        let r = a.jcc_rel32(cc);
        self.to(a, r, l);
    }

    fn done(self) -> Vec<(usize, usize)> {
        assert!(self.fixes.is_empty(), "a label of a path piece was never bound");
        self.links
    }
}

const CC_O: u8 = 0;
const CC_B: u8 = 2;
const CC_AE: u8 = 3;
const CC_E: u8 = 4;
const CC_NE: u8 = 5;
const CC_A: u8 = 7;

fn ins(a: &mut Asm, i: Result<Instruction, iced_x86::IcedError>) -> Result<(), EmitError> {
    a.insn(&i.expect("a valid probe instruction"))
}

fn gs64(d: usize) -> MemoryOperand {
    gs_mem(d)
}

/// `mov qword gs:[d], imm` (imm below 2^31).
fn store_gs_q(a: &mut Asm, d: usize, imm: u64) -> Result<(), EmitError> {
    ins(a, Instruction::with2(Code::Mov_rm64_imm32, gs64(d), imm as i32))
}

/// Compare `reg` with a constant (through RCX when it does not fit an
/// imm32; `reg` is then not RCX).
fn cmp_const(a: &mut Asm, reg: Register, v: u64) -> Result<(), EmitError> {
    if v <= i32::MAX as u64 {
        return ins(a, Instruction::with2(Code::Cmp_rm64_imm32, reg, v as i32));
    }
    assert_ne!(reg, Register::RCX, "comparing RCX with a wide constant");
    ins(a, Instruction::with2(Code::Mov_r64_imm64, Register::RCX, v))?;
    ins(a, Instruction::with2(Code::Cmp_r64_rm64, reg, Register::RCX))
}

/// A probe's working registers and flags (I1).
struct Guard {
    flags: bool,
}

fn save(a: &mut Asm, flags: bool) -> Result<Guard, EmitError> {
    a.store_gs(P_RAX, Register::RAX)?;
    a.store_gs(P_RCX, Register::RCX)?;
    if flags {
        ins(a, Ok(Instruction::with(Code::Lahf)))?;
        ins(a, Instruction::with1(Code::Seto_rm8, Register::AL))?;
        a.store_gs(P_FLAGS, Register::RAX)?;
    }
    Ok(Guard { flags })
}

fn restore(a: &mut Asm, g: &Guard) -> Result<(), EmitError> {
    if g.flags {
        a.load_gs(Register::RAX, P_FLAGS)?;
        ins(a, Instruction::with2(Code::Add_rm8_imm8, Register::AL, 0x7fu32))?;
        ins(a, Ok(Instruction::with(Code::Sahf)))?;
    }
    a.load_gs(Register::RCX, P_RCX)?;
    a.load_gs(Register::RAX, P_RAX)
}

/// A word of a path record.
#[derive(Clone, Copy)]
enum W {
    Imm(u32),
    /// The dword at `gs:[off]`.
    Gs(usize),
}

/// Push a record to the ring: `mov`/`lea` only, RAX and RCX kept (I2).
fn ring(a: &mut Asm, words: &[W]) -> Result<(), EmitError> {
    a.store_gs(P_RRAX, Register::RAX)?;
    a.store_gs(P_RRCX, Register::RCX)?;
    a.load_gs(Register::RAX, off::RING_POS)?;
    for w in words {
        let slot = mem(Register::RAX, 0);
        match *w {
            W::Imm(v) => ins(a, Instruction::with2(Code::Mov_rm32_imm32, slot, v))?,
            W::Gs(d) => {
                ins(a, Instruction::with2(Code::Mov_r32_rm32, Register::ECX, gs64(d)))?;
                ins(a, Instruction::with2(Code::Mov_rm32_r32, slot, Register::ECX))?;
            }
        }
        a.lea(Register::RAX, mem(Register::RAX, 4))?;
    }
    a.store_gs(off::RING_POS, Register::RAX)?;
    a.load_gs(Register::RCX, P_RRCX)?;
    a.load_gs(Register::RAX, P_RRAX)
}

fn serial() -> W {
    W::Gs(off::PATH_SERIAL)
}

/// `TERM` and on to `plain` (guest state restored already).
fn terminate(e: &mut BlockEmitter, l: &mut Labels, v: u8, plain: Link) -> Result<(), EmitError> {
    ring(&mut e.a, &[W::Imm(tag(REC_TERM, v)), serial()])?;
    jump_link(e, l, plain);
    Ok(())
}

/// A jump to `to`: another piece (linked later) or a guest address (an
/// ordinary exit site).
fn jump_link(e: &mut BlockEmitter, l: &mut Labels, to: Link) {
    let r = e.a.jmp_rel32();
    match to {
        Link::Piece(p) => l.links.push((r.into_link_field(), p)),
        Link::Guest(g) => e.direct(r, g),
    }
}

/// Check RAX (= the value being checked; the running `tot` is in
/// `gs:[path_tot]`) and go to `ok` or `fail`. Flags are free; RCX too.
fn emit_check(a: &mut Asm, l: &mut Labels, check: &Check, ok: Label, fail: Label) -> Result<(), EmitError> {
    match check {
        Check::None => l.jmp(a, ok),
        Check::Segment(ids) => segment_tree(a, l, ids, ok, fail)?,
        Check::Pairs(pairs) => {
            let mut pairs = pairs.clone();
            pairs.sort_unstable_by_key(|&(t, s)| (s, t));
            let mut i = 0;
            while i < pairs.len() {
                let s = pairs[i].1;
                let next = l.new_label();
                cmp_const(a, Register::RAX, s)?;
                l.jcc(a, CC_NE, next);
                while i < pairs.len() && pairs[i].1 == s {
                    let t = pairs[i].0;
                    if t <= i32::MAX as u64 {
                        ins(a, Instruction::with2(Code::Cmp_rm64_imm32, gs64(off::PATH_TOT), t as i32))?;
                    } else {
                        ins(a, Instruction::with2(Code::Mov_r64_imm64, Register::RCX, t))?;
                        ins(a, Instruction::with2(Code::Cmp_rm64_r64, gs64(off::PATH_TOT), Register::RCX))?;
                    }
                    l.jcc(a, CC_E, ok);
                    i += 1;
                }
                l.jmp(a, fail);
                l.bind(a, next);
            }
            l.jmp(a, fail);
        }
    }
    Ok(())
}

/// A binary search of sorted `ids` for RAX.
fn segment_tree(a: &mut Asm, l: &mut Labels, ids: &[u64], ok: Label, fail: Label) -> Result<(), EmitError> {
    if ids.len() <= 4 {
        for &id in ids {
            cmp_const(a, Register::RAX, id)?;
            l.jcc(a, CC_E, ok);
        }
        l.jmp(a, fail);
        return Ok(());
    }
    let mid = ids.len() / 2;
    let left = l.new_label();
    cmp_const(a, Register::RAX, ids[mid])?;
    l.jcc(a, CC_E, ok);
    l.jcc(a, CC_B, left);
    segment_tree(a, l, &ids[mid + 1..], ok, fail)?;
    l.bind(a, left);
    segment_tree(a, l, &ids[..mid], ok, fail)
}

/// The probe on an edge, then on to the target (module docs).
fn emit_edge(e: &mut BlockEmitter, l: &mut Labels, s: &NodeSpec, edge: &EdgeSpec) -> Result<(), EmitError> {
    let v = s.version;
    match &edge.step {
        Step::Terminate => terminate(e, l, v, edge.plain),
        Step::Go { add, check: Check::None } => {
            let a = &mut e.a;
            if *add != 0 {
                if edge.live {
                    a.store_gs(P_RAX, Register::RAX)?;
                    a.load_gs(Register::RAX, off::PATH_SEG)?;
                    a.lea(Register::RAX, mem(Register::RAX, *add as i64))?;
                    a.store_gs(off::PATH_SEG, Register::RAX)?;
                    a.load_gs(Register::RAX, P_RAX)?;
                } else {
                    ins(a, Instruction::with2(Code::Add_rm64_imm32, gs64(off::PATH_SEG), *add as i32))?;
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
                ins(a, Instruction::with2(Code::Add_rm64_imm32, gs64(off::PATH_SEG), *add as i32))?;
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
        Step::Fold { add, reset, check, after } => {
            let a = &mut e.a;
            let g = save(a, edge.live)?;
            let (fold, fail, flush, store, after_ok) =
                (l.new_label(), l.new_label(), l.new_label(), l.new_label(), l.new_label());
            // x = the completed segment's id.
            a.load_gs(Register::RAX, off::PATH_SEG)?;
            if *add != 0 {
                ins(a, Instruction::with2(Code::Add_rm64_imm32, Register::RAX, *add as i32))?;
            }
            emit_check(a, l, check, fold, fail)?;
            l.bind(a, fold);
            // tot = tot × radix + x, unless that passes 2^63 - 1 (plan.rs).
            a.load_gs(Register::RCX, off::PATH_TOT)?;
            ins(a, Instruction::with3(Code::Imul_r64_rm64_imm32, Register::RCX, Register::RCX, s.radix as i32))?;
            l.jcc(a, CC_O, flush);
            ins(a, Instruction::with2(Code::Add_r64_rm64, Register::RCX, Register::RAX))?;
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
            ring(a, &[W::Imm(tag(REC_CHUNK, v)), serial(), W::Gs(off::PATH_TOT), W::Gs(off::PATH_TOT + 4)])?;
            ins(a, Instruction::with2(Code::Mov_r32_imm32, Register::ECX, s.radix as u32))?;
            ins(a, Instruction::with2(Code::Add_r64_rm64, Register::RCX, Register::RAX))?;
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
    let end = [W::Imm(tag(REC_END, v)), serial(), W::Gs(off::PATH_TOT), W::Gs(off::PATH_TOT + 4), W::Gs(P_X)];
    match &s.exit {
        None | Some(ExitStep::Terminate) => ring(a, &[W::Imm(tag(REC_TERM, v)), serial()]),
        Some(ExitStep::End { add, check: Check::None }) => {
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
fn emit_push_frame(a: &mut Asm, l: &mut Labels, v: u8, resume_at: GuestAddr) -> Result<usize, EmitError> {
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
    ins(a, Instruction::with2(Code::Mov_rm64_r64, mem(Register::RAX, F_KEY), Register::RSP))?;
    ins(a, Instruction::with2(Code::Mov_r64_imm64, Register::RCX, resume_at.0))?;
    ins(a, Instruction::with2(Code::Mov_rm64_r64, mem(Register::RAX, F_GUEST), Register::RCX))?;
    ins(a, Instruction::with2(Code::Mov_r64_imm64, Register::RCX, u64::MAX))?;
    let imm = a.len() - 8;
    ins(a, Instruction::with2(Code::Mov_rm64_r64, mem(Register::RAX, F_HOST), Register::RCX))?;
    for (slot, at) in [(off::PATH_TOT, F_TOT), (off::PATH_SEG, F_SEG), (off::PATH_SERIAL, F_SERIAL)] {
        a.load_gs(Register::RCX, slot)?;
        ins(a, Instruction::with2(Code::Mov_rm64_r64, mem(Register::RAX, at), Register::RCX))?;
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
    let mut e = BlockEmitter {
        a: Asm::new(env.host_base),
        env: *env,
        sites: Vec::new(),
        pending: Vec::new(),
        cold_miss: Vec::new(),
    };
    let mut l = Labels::default();
    let b = s.ir;
    let mut pc_map = Vec::with_capacity(b.body.len() + 1);
    let mut rep_ring = Vec::new();
    emit_prologue(&mut e.a, env.prologue)?;
    let ring_on = matches!(env.prologue, Prologue::Ring { .. } | Prologue::Both { .. });
    for i in &b.body {
        pc_map.push((e.a.len() as u32, i.addr));
        if ring_on && i.op == crate::ir::IrOp::RepString {
            rep_ring.push(pc_map.len() as u32 - 1);
        }
        emit_body_insn(&mut e.a, i, ring_on)?;
    }
    pc_map.push((e.a.len() as u32, b.term_addr));
    emit_terminator(&mut e, &mut l, s)?;
    e.cold()?;
    let links = l.done();
    Ok(Piece {
        em: Emitted {
            code: e.a.buf,
            pc_map,
            sites: e.sites,
            rep_ring,
        },
        links,
    })
}

/// The side of a transfer to guest `t`: an edge probe, or the exit probe
/// and an ordinary jump out.
fn side(e: &mut BlockEmitter, l: &mut Labels, s: &NodeSpec, t: GuestAddr) -> Result<(), EmitError> {
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
        Terminator::Jump { target } | Terminator::Fallthrough { next: target } => side(e, l, s, *target),
        Terminator::Branch { insn, taken, fallthrough } => {
            let lt = l.new_label();
            match insn.mnemonic() {
                Mnemonic::Loop | Mnemonic::Loope | Mnemonic::Loopne | Mnemonic::Jrcxz | Mnemonic::Jecxz => {
                    // rel8 only: `op T; jmp ft; T: jmp taken`.
                    let op: &[u8] = match insn.mnemonic() {
                        Mnemonic::Loop => &[0xe2],
                        Mnemonic::Loope => &[0xe1],
                        Mnemonic::Loopne => &[0xe0],
                        Mnemonic::Jrcxz => &[0xe3],
                        _ => &[0x67, 0xe3],
                    };
                    let addr32 = matches!(
                        insn.code(),
                        Code::Loop_rel8_64_ECX | Code::Loope_rel8_64_ECX | Code::Loopne_rel8_64_ECX
                    );
                    if addr32 {
                        e.a.bytes(&[0x67]);
                    }
                    let at = e.a.len();
                    e.a.bytes(op);
                    e.a.bytes(&[0]);
                    let lf = l.new_label();
                    l.jmp(&mut e.a, lf);
                    let t_pos = e.a.len();
                    e.a.buf[at + op.len()] =
                        u8::try_from(t_pos - (at + op.len() + 1)).expect("short branch span");
                    l.jmp(&mut e.a, lt);
                    l.bind(&mut e.a, lf);
                }
                _ => {
                    let r = e.a.jcc_rel32(condition_code(insn.condition_code()));
                    l.to(&mut e.a, r, lt);
                }
            }
            side(e, l, s, *fallthrough)?;
            l.bind(&mut e.a, lt);
            side(e, l, s, *taken)
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
fn call_or_syscall(e: &mut BlockEmitter, l: &mut Labels, s: &NodeSpec, resume: GuestAddr) -> Result<(), EmitError> {
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
    ins(a, Instruction::with2(Code::Add_rm8_imm8, Register::AL, 0x7fu32))?;
    ins(a, Ok(Instruction::with(Code::Sahf)))?;
    a.load_gs(Register::RCX, P_RCX)?;
    a.load_gs(Register::RAX, S_RAX)
}

/// An indirect jump: to a known target's edge probe, out of the function
/// (exit probe), or to an unknown target inside it (learn, or terminate).
fn indirect_jump(e: &mut BlockEmitter, l: &mut Labels, s: &NodeSpec, insn: &Instruction) -> Result<(), EmitError> {
    e.load_target(insn)?;
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
    ins(&mut a, Instruction::with2(Code::Cmp_rm64_imm32, gs64(off::PATH_LEFT), crate::paths::FRAMES as i32))?;
    l.jcc(&mut a, CC_E, done);
    a.load_gs(Register::RAX, off::PATH_SP)?;
    ins(&mut a, Instruction::with2(Code::Cmp_rm64_r64, mem(Register::RAX, F_KEY - FRAME), Register::RSP))?;
    l.jcc(&mut a, CC_A, done);
    a.lea(Register::RAX, mem(Register::RAX, -FRAME))?;
    a.store_gs(off::PATH_SP, Register::RAX)?;
    ins(&mut a, Instruction::with1(Code::Inc_rm64, gs64(off::PATH_LEFT)))?;
    l.jmp(&mut a, purge);
    l.bind(&mut a, done);
    a.load_gs(Register::RCX, off::PATH_NEXT)?;
    a.lea(Register::RCX, mem(Register::RCX, 1))?;
    a.store_gs(off::PATH_NEXT, Register::RCX)?;
    a.store_gs(off::PATH_SERIAL, Register::RCX)?;
    store_gs_q(&mut a, off::PATH_TOT, 1)?;
    store_gs_q(&mut a, off::PATH_SEG, s.start)?;
    restore(&mut a, &g)?;
    let mut e = dummy_emitter(a);
    jump_link(&mut e, &mut l, s.go);
    assert!(e.sites.is_empty(), "stubs only jump to other pieces");
    let a = e.a;
    let links = l.done();
    Ok((
        Piece {
            em: Emitted {
                code: a.buf,
                pc_map: Vec::new(),
                sites: Vec::new(),
                rep_ring: Vec::new(),
            },
            links,
        },
        field,
    ))
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
    ins(&mut a, Instruction::with2(Code::Cmp_rm64_imm32, gs64(off::PATH_LEFT), crate::paths::FRAMES as i32))?;
    l.jcc(&mut a, CC_E, plain);
    a.load_gs(Register::RAX, off::PATH_SP)?;
    a.mov_load(Register::RCX, mem(Register::RAX, F_KEY - FRAME))?;
    ins(&mut a, Instruction::with2(Code::Cmp_r64_rm64, Register::RCX, Register::RSP))?;
    l.jcc(&mut a, CC_A, plain);
    l.jcc(&mut a, CC_NE, pop);
    ins(&mut a, Instruction::with2(Code::Mov_r64_imm64, Register::RCX, s.at.0))?;
    ins(&mut a, Instruction::with2(Code::Cmp_rm64_r64, mem(Register::RAX, F_GUEST - FRAME), Register::RCX))?;
    l.jcc(&mut a, CC_NE, pop);
    // The caller's frame: pop it and go on instrumented.
    a.lea(Register::RAX, mem(Register::RAX, -FRAME))?;
    a.store_gs(off::PATH_SP, Register::RAX)?;
    ins(&mut a, Instruction::with1(Code::Inc_rm64, gs64(off::PATH_LEFT)))?;
    for (slot, at) in [(off::PATH_TOT, F_TOT), (off::PATH_SEG, F_SEG), (off::PATH_SERIAL, F_SERIAL), (P_JMP, F_HOST)] {
        a.mov_load(Register::RCX, mem(Register::RAX, at))?;
        a.store_gs(slot, Register::RCX)?;
    }
    restore(&mut a, &g)?;
    a.jmp_gs(P_JMP)?;
    // A dead frame.
    l.bind(&mut a, pop);
    a.lea(Register::RAX, mem(Register::RAX, -FRAME))?;
    a.store_gs(off::PATH_SP, Register::RAX)?;
    ins(&mut a, Instruction::with1(Code::Inc_rm64, gs64(off::PATH_LEFT)))?;
    l.jmp(&mut a, top);
    l.bind(&mut a, plain);
    restore(&mut a, &g)?;
    let mut e = dummy_emitter(a);
    jump_link(&mut e, &mut l, s.plain);
    assert!(e.sites.is_empty(), "stubs only jump to other pieces");
    let a = e.a;
    let links = l.done();
    Ok((
        Piece {
            em: Emitted {
                code: a.buf,
                pc_map: Vec::new(),
                sites: Vec::new(),
                rep_ring: Vec::new(),
            },
            links,
        },
        field,
    ))
}

/// An emitter around `a` for stubs, which only jump to other pieces.
fn dummy_emitter(a: Asm) -> BlockEmitter {
    BlockEmitter {
        env: EmitEnv {
            host_base: a.here(),
            first_site: 0,
            prologue: Prologue::None,
        },
        a,
        sites: Vec::new(),
        pending: Vec::new(),
        cold_miss: Vec::new(),
    }
}
