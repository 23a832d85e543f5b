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

mod node;
mod stubs;
#[cfg(test)]
mod tests;

use iced_x86::{Code, Instruction, MemoryOperand, Register};

use crate::backend::asm::{gs_mem, mem};
use crate::backend::asm::{Asm, Rel32};
use crate::backend::{BlockEmitter, EmitError, Emitted};
use crate::contract::off;
use crate::contract::TAG_PATH;
use crate::ir::probe::{Check, ExitStep, Step};
use crate::ir::IrBlock;
use crate::types::GuestAddr;

pub use node::emit_node;
pub use stubs::{emit_entry_stub, emit_resume_stub};

/// Bytes of one activation frame and the offsets of its words.
pub const FRAME: i64 = 48;
const F_KEY: i64 = 0;
const F_GUEST: i64 = 8;
const F_HOST: i64 = 16;
const F_TOT: i64 = 24;
const F_SEG: i64 = 32;
const F_SERIAL: i64 = 40;

pub use crate::contract::{REC_CHUNK, REC_END, REC_LOST, REC_TERM};

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
        assert!(
            self.fixes.is_empty(),
            "a label of a path piece was never bound"
        );
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
    ins(
        a,
        Instruction::with2(Code::Mov_rm64_imm32, gs64(d), imm as i32),
    )
}

/// Compare `reg` with a constant (through RCX when it does not fit an
/// imm32; `reg` is then not RCX).
fn cmp_const(a: &mut Asm, reg: Register, v: u64) -> Result<(), EmitError> {
    if v <= i32::MAX as u64 {
        return ins(a, Instruction::with2(Code::Cmp_rm64_imm32, reg, v as i32));
    }
    assert_ne!(reg, Register::RCX, "comparing RCX with a wide constant");
    ins(a, Instruction::with2(Code::Mov_r64_imm64, Register::RCX, v))?;
    ins(
        a,
        Instruction::with2(Code::Cmp_r64_rm64, reg, Register::RCX),
    )
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
        ins(
            a,
            Instruction::with2(Code::Add_rm8_imm8, Register::AL, 0x7fu32),
        )?;
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
                ins(
                    a,
                    Instruction::with2(Code::Mov_r32_rm32, Register::ECX, gs64(d)),
                )?;
                ins(
                    a,
                    Instruction::with2(Code::Mov_rm32_r32, slot, Register::ECX),
                )?;
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
fn emit_check(
    a: &mut Asm,
    l: &mut Labels,
    check: &Check,
    ok: Label,
    fail: Label,
) -> Result<(), EmitError> {
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
                        ins(
                            a,
                            Instruction::with2(Code::Cmp_rm64_imm32, gs64(off::PATH_TOT), t as i32),
                        )?;
                    } else {
                        ins(a, Instruction::with2(Code::Mov_r64_imm64, Register::RCX, t))?;
                        ins(
                            a,
                            Instruction::with2(
                                Code::Cmp_rm64_r64,
                                gs64(off::PATH_TOT),
                                Register::RCX,
                            ),
                        )?;
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
fn segment_tree(
    a: &mut Asm,
    l: &mut Labels,
    ids: &[u64],
    ok: Label,
    fail: Label,
) -> Result<(), EmitError> {
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
