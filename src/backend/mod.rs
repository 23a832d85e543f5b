//! Backend: emit host code for an [`IrBlock`] at a known host address.
//!
//! Block layout: body (each guest instruction re-encoded at its new
//! address, so RIP-relative operands keep pointing at guest data), the
//! terminator's hot code, then cold exit stubs. An exit stub records its
//! site id in the context and jumps to the shared site stub, which leaves
//! through `gs:[exit_fn]`; an indirect lookup's miss jumps to the shared
//! miss stub itself (contract I5, [`emit_shared_stubs`]).
//!
//! I1: emitted code changes no guest register or flag except as the guest
//!     instruction it stands for would; helpers use `gs:` spill slots and
//!     only flag-free instructions (`mov`, `lea`, `movzx`, `rorx`, `jrcxz`).
//! I2: the stack below the guest's RSP (its red zone) is never written;
//!     calls push the guest return address exactly as `call` would.
//! I3: the pc map has one entry per guest instruction, ascending.
//!
//! Usage: `emit_block(&block, &EmitEnv { .. })` → bytes to commit at
//! `host_base`, the pc map, and the exit sites (ids from `first_site`).

pub mod asm;
mod copied;
mod far;
#[cfg(test)]
pub mod golden;
pub mod recreate;
pub mod reloc;
#[cfg(test)]
mod reloc_tests;
mod rep;
mod superblock;

use iced_x86::{Code, ConditionCode, Instruction, MemoryOperand, Mnemonic, OpKind, Register};
use thiserror::Error;

use far::{emit_far_rip, is_far_rip, with_memory_at};

pub use asm::{Asm, Rel32};
pub(crate) use rep::RepSite;
pub use superblock::{emit_superblock, SbEmitEnv, SbEmitted};

use crate::contract::{exit_reason, off};
use crate::contract::{ExitStubs, BLOCK_PREFIX, INDIRECT_ENTRY_BACK};
use crate::ir::{IrBlock, IrOp, Terminator, TrapKind};
use crate::types::GuestAddr;

#[derive(Debug, Error, Clone)]
pub enum EmitError {
    #[error("cannot re-encode the guest instruction at {guest:#x} in the code cache: {msg}")]
    Encode { guest: u64, msg: String },
}

/// Where and with what the block is emitted.
#[derive(Debug, Clone, Copy)]
pub struct EmitEnv {
    pub host_base: u64,
    pub first_site: u32,
    /// What the block prologue records for this block.
    pub prologue: Prologue,
    /// Where its exits leave through (contract I5).
    pub stubs: ExitStubs,
}

/// How a block's execution is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prologue {
    /// Nothing (monitor off).
    None,
    /// Each exit appends the block's exit word to the thread's ring (the
    /// monitor's input, contract); the block starts with the 8-byte
    /// [`PATCH_NOP`] a superblock's head patch replaces (superblock/build.rs
    /// I2).
    Ring { id: u32 },
    /// Increment the block's own 64-bit counter at its start
    /// (`--count-inline`).
    Count { id: u32 },
    /// Both (`--count-check`).
    Both { id: u32 },
}

impl Prologue {
    /// The block id whose exit words the block pushes, if it pushes any.
    pub fn ring_id(self) -> Option<u32> {
        match self {
            Prologue::Ring { id } | Prologue::Both { id } => Some(id),
            _ => None,
        }
    }
}

/// The first 8 bytes of a block that pushes exit words: `nop dword
/// [rax+rax*1+0]`, which publishing a superblock replaces with a jump to it
/// in one aligned store (blocks start 16-byte aligned).
pub const PATCH_NOP: [u8; 8] = [0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00];

/// An exit site as emitted; the cache turns it into an `ExitSite`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmittedSiteKind {
    /// Direct transfer; `field` is the buffer offset of its rel32.
    Direct {
        field: usize,
    },
    Syscall,
    Trap(TrapKind),
}

#[derive(Debug, Clone, Copy)]
pub struct EmittedSite {
    pub kind: EmittedSiteKind,
    pub target: GuestAddr,
}

#[derive(Debug, Default)]
pub struct Emitted {
    pub code: Vec<u8>,
    pub pc_map: Vec<(u32, GuestAddr)>,
    pub sites: Vec<EmittedSite>,
    /// Indices into `pc_map` of the `rep` string instructions whose ECX is
    /// pushed to the ring before and after (`TAG_REP`).
    pub rep_ring: Vec<u32>,
    /// Its fields that depend on where it is (reloc.rs), when all of them
    /// are known (`relocatable`).
    pub relocs: Vec<reloc::Reloc>,
    pub relocatable: bool,
}

pub const S_RAX: usize = off::scratch(0);
const S_RCX: usize = off::scratch(1);
const S_RDX: usize = off::scratch(2);
const S_TMP: usize = off::scratch(3);
const S_TMP2: usize = off::scratch(4);
const S_PRO: usize = off::scratch(5);

/// A word appended to the ring by emitted code.
#[derive(Clone, Copy)]
enum RingWord {
    Imm(u32),
    /// An exit word of the block (a `BlockWord` field, reloc.rs).
    Block(u32),
    Ecx,
    /// The passes loop counter `l` counted down from `limit`, as a
    /// `TAG_LOOP_PASSES` word, and only if it counted any (contract I2);
    /// the counter is then reset to `limit`.
    Counter {
        l: usize,
        limit: u32,
    },
    /// The time stamp counter read before the first word (`rdtsc`): its
    /// low and high halves (before any `Counter`).
    TscLo,
    TscHi,
}

/// Spill slots of RCX and RDX while loop counters and time stamps are
/// pushed.
const S_CNT: usize = S_TMP2;
const S_DX: usize = off::scratch(6);

/// Append `words` to the thread's ring (I1: `mov`/`lea` only, RAX and RCX
/// restored). Each store is at `[rax]` followed by `lea rax, [rax+4]`, so a
/// store into a guard page is retried by the fault handler with RAX moved
/// to the next segment (monitor/ring.rs).
fn emit_ring_words(a: &mut Asm, words: &[RingWord]) -> Result<(), EmitError> {
    let tsc = words.iter().any(|w| matches!(w, RingWord::TscLo));
    let counters = tsc || words.iter().any(|w| matches!(w, RingWord::Counter { .. }));
    a.store_gs(S_PRO, Register::RAX)?;
    if counters {
        a.store_gs(S_CNT, Register::RCX)?;
    }
    if tsc {
        // rdtsc: EDX:EAX (no flags); the low half waits in ECX.
        a.store_gs(S_DX, Register::RDX)?;
        a.bytes(&[0x0f, 0x31]);
        a.insn(
            &Instruction::with2(Code::Mov_r32_rm32, Register::ECX, Register::EAX).expect("mov"),
        )?;
    }
    a.load_gs(Register::RAX, off::RING_POS)?;
    for w in words {
        let slot = asm::mem(Register::RAX, 0);
        let store = match *w {
            RingWord::Imm(v) => {
                a.store_rax_imm32(v);
                a.rax_past_word();
                continue;
            }
            RingWord::Block(v) => {
                a.store_rax_imm32(v);
                a.reloc_last(reloc::RelocKind::BlockWord);
                a.rax_past_word();
                continue;
            }
            RingWord::Ecx | RingWord::TscLo => {
                Instruction::with2(Code::Mov_rm32_r32, slot, Register::ECX)
            }
            RingWord::TscHi => Instruction::with2(Code::Mov_rm32_r32, slot, Register::EDX),
            RingWord::Counter { l, limit } => {
                emit_counter_word(a, l, limit)?;
                continue;
            }
        };
        a.insn(&store.expect("mov"))?;
        a.lea(Register::RAX, asm::mem(Register::RAX, 4))?;
    }
    a.store_gs(off::RING_POS, Register::RAX)?;
    if tsc {
        a.load_gs(Register::RDX, S_DX)?;
    }
    if counters {
        a.load_gs(Register::RCX, S_CNT)?;
    }
    a.load_gs(Register::RAX, S_PRO)
}

/// Loop counter `l` as a `TAG_LOOP_PASSES` word at `[rax]` (RAX on past
/// it, the counter reset to `limit`), if it counted any pass; ECX is
/// borrowed. Flag-free: the passes are `limit - left` = `not(left) + 1 +
/// limit`, and `jrcxz` skips a counter with none.
fn emit_counter_word(a: &mut Asm, l: usize, limit: u32) -> Result<(), EmitError> {
    use crate::contract::TAG_LOOP_PASSES;
    let c = asm::gs_mem(off::loop_left(l));
    a.insn(&Instruction::with2(Code::Mov_r32_rm32, Register::ECX, c).expect("mov"))?;
    a.insn(&Instruction::with1(Code::Not_rm32, Register::ECX).expect("not"))?;
    let passes = asm::mem(Register::RCX, i64::from(limit) + 1);
    a.insn(&Instruction::with2(Code::Lea_r32_m, Register::ECX, passes).expect("lea"))?;
    a.bytes(&[0xe3, 0]);
    let skip = a.len() - 1;
    let tag = (TAG_LOOP_PASSES | (l as u32) << 24) as i32;
    let word = asm::mem(Register::RCX, i64::from(tag));
    a.insn(&Instruction::with2(Code::Lea_r32_m, Register::ECX, word).expect("lea"))?;
    a.insn(
        &Instruction::with2(
            Code::Mov_rm32_r32,
            asm::mem(Register::RAX, 0),
            Register::ECX,
        )
        .expect("mov"),
    )?;
    a.lea(Register::RAX, asm::mem(Register::RAX, 4))?;
    a.store_gs_imm32(off::loop_left(l), limit)?;
    let to = a.len();
    a.set_rel8(skip, to);
    Ok(())
}

/// The prologue (I1: only `mov` and `lea`, RAX restored).
fn emit_prologue(a: &mut Asm, p: Prologue) -> Result<(), EmitError> {
    match p {
        Prologue::None => Ok(()),
        Prologue::Ring { .. } => {
            a.bytes(&PATCH_NOP);
            Ok(())
        }
        Prologue::Count { id } => emit_count(a, id),
        Prologue::Both { id } => {
            a.bytes(&PATCH_NOP);
            emit_count(a, id)
        }
    }
}

/// Increment block `id`'s 64-bit counter in the thread's array (I1:
/// `mov`/`lea` only, RAX and RCX restored). Its slot's displacement is not
/// a field reloc.rs moves: such code is not placed again.
fn emit_count(a: &mut Asm, id: u32) -> Result<(), EmitError> {
    a.unrelocatable = true;
    a.store_gs(S_PRO, Register::RAX)?;
    a.store_gs(S_TMP, Register::RCX)?;
    a.load_gs(Register::RCX, off::INLINE_COUNTS)?;
    let slot = asm::mem(Register::RCX, 8 * id as i64);
    a.mov_load(Register::RAX, slot)?;
    a.lea(Register::RAX, asm::mem(Register::RAX, 1))?;
    a.insn(&Instruction::with2(Code::Mov_rm64_r64, slot, Register::RAX).expect("mov"))?;
    a.load_gs(Register::RCX, S_TMP)?;
    a.load_gs(Register::RAX, S_PRO)
}

/// Emit a guest GS access (IR I1) against the guest GS base in the context.
fn emit_gs(a: &mut Asm, insn: &Instruction, op: IrOp) -> Result<(), EmitError> {
    match op {
        IrOp::Carry | IrOp::RepString | IrOp::XbeginAbort => a.insn(insn),
        IrOp::ReadGsBase { dst } => {
            let code = if dst.size() == 8 {
                Code::Mov_r64_rm64
            } else {
                Code::Mov_r32_rm32
            };
            a.insn(
                &Instruction::with2(code, dst, asm::gs_mem(off::GUEST_GS)).expect("mov r, gs:[d]"),
            )
        }
        IrOp::WriteGsBase { src } => {
            if src.size() == 8 {
                return a.store_gs(off::GUEST_GS, src);
            }
            let lo = Instruction::with2(Code::Mov_rm32_r32, asm::gs_mem(off::GUEST_GS), src)
                .expect("mov");
            a.insn(&lo)?;
            a.store_gs_imm32(off::GUEST_GS + 4, 0)
        }
        IrOp::GsMemory { tmp, tmp2 } => {
            a.store_gs(S_TMP, tmp)?;
            a.store_gs(S_TMP2, tmp2)?;
            let ea = MemoryOperand::new(
                insn.memory_base(),
                insn.memory_index(),
                insn.memory_index_scale(),
                insn.memory_displacement64() as i64,
                if insn.memory_base() == Register::None && insn.memory_index() == Register::None {
                    8
                } else {
                    insn.memory_displ_size()
                },
                false,
                Register::None,
            );
            let mut lea = Instruction::with2(Code::Lea_r64_m, tmp, ea).expect("lea");
            lea.set_ip(insn.ip());
            a.insn(&lea)?;
            a.load_gs(tmp2, off::GUEST_GS)?;
            a.lea(tmp, MemoryOperand::with_base_index(tmp, tmp2))?;
            a.load_gs(tmp2, S_TMP2)?;
            // The guest GS base is already added into `tmp`.
            a.insn(&with_memory_at(insn, Register::None, tmp))?;
            a.load_gs(tmp, S_TMP)
        }
    }
}

/// One block's emission in progress (also path profiling's node copies
/// and stubs, src/paths/emit): the assembler, the target, the exit sites.
#[derive(Debug)]
pub struct BlockEmitter {
    pub a: Asm,
    pub env: EmitEnv,
    pub sites: Vec<EmittedSite>,
    /// Direct exits waiting for their cold stub: (rel32, site index).
    pending: Vec<(Rel32, usize)>,
    /// 64-bit constants the code loads RIP-relative (`push_return`),
    /// placed after the cold code.
    consts: Vec<(Rel32, u64)>,
}

impl BlockEmitter {
    /// An emitter writing with `a` for `env`.
    pub fn new(a: Asm, env: EmitEnv) -> BlockEmitter {
        BlockEmitter {
            a,
            env,
            sites: Vec::new(),
            pending: Vec::new(),
            consts: Vec::new(),
        }
    }

    /// The prologue and body up to the terminator, for blocks and path
    /// profiling's node copies: the pc map (the terminator's address last)
    /// and the `rep` instructions that push their ECX ([`Emitted`]).
    #[allow(clippy::type_complexity)]
    pub fn body(&mut self, b: &IrBlock) -> Result<(Vec<(u32, GuestAddr)>, Vec<u32>), EmitError> {
        let env = self.env;
        let mut pc_map = Vec::with_capacity(b.body.len() + 1);
        let mut rep_ring = Vec::new();
        emit_prologue(&mut self.a, env.prologue)?;
        let ring = matches!(env.prologue, Prologue::Ring { .. } | Prologue::Both { .. });
        let rep_site = env
            .prologue
            .ring_id()
            .map(|block| RepSite { block, moves: true });
        for i in &b.body {
            pc_map.push((self.a.len() as u32, i.addr));
            if ring && i.op == IrOp::RepString {
                rep_ring.push(pc_map.len() as u32 - 1);
            }
            emit_body_insn(&mut self.a, b, i, rep_site)?;
        }
        pc_map.push((self.a.len() as u32, b.term_addr));
        Ok((pc_map, rep_ring))
    }

    fn site(&mut self, kind: EmittedSiteKind, target: GuestAddr) -> u32 {
        self.sites.push(EmittedSite { kind, target });
        self.env.first_site + self.sites.len() as u32 - 1
    }

    /// Leave to the dispatcher through site `id` (inline): its id, then
    /// the shared site stub (contract I5).
    fn exit_via_site(&mut self, id: u32) -> Result<(), EmitError> {
        self.a.store_gs_imm32(off::EXIT_ARG, id)?;
        self.a.reloc_last(reloc::RelocKind::SiteId);
        self.a.jmp_fixed(self.env.stubs.site);
        Ok(())
    }

    /// A linkable direct transfer to `target`: a rel32 that first points at
    /// a cold stub exiting through a new site.
    pub fn direct(&mut self, r: Rel32, target: GuestAddr) {
        let idx = self.sites.len();
        self.sites.push(EmittedSite {
            kind: EmittedSiteKind::Direct { field: r.field },
            target,
        });
        self.pending.push((r, idx));
    }

    pub fn jump_to(&mut self, target: GuestAddr) {
        let r = self.a.jmp_rel32();
        self.direct(r, target);
    }

    /// Push the guest return address, flag-free and exactly as `call` (I2),
    /// with one 64-bit store: the `ret` that loads it back gets it by store
    /// forwarding. (Two 32-bit halves cannot be forwarded to that load,
    /// which then waits for both stores to commit: a dozen cycles per
    /// return; cpie-qsort ran 3.5 times slower than c-qsort translated.)
    /// An address above 2 GiB is pushed from a constant after the block's
    /// cold code ([`BlockEmitter::cold`]).
    fn push_return(&mut self, ret: GuestAddr) -> Result<(), EmitError> {
        if ret.0 < 0x8000_0000 {
            self.a.push_imm32(ret.0 as i32);
            self.a.reloc_last(reloc::RelocKind::GuestAbs32);
            return Ok(());
        }
        let r = self.a.push_rip_rel32();
        self.consts.push((r, ret.0));
        Ok(())
    }

    /// Flag-free inline lookup of the guest target in RAX (its guest value
    /// saved in S_RAX) in the thread's table at `gs:[off::IBL]` (runtime
    /// I4); RCX and RDX are still the guest's. Jumps to the block's
    /// indirect entry on a hit (contract I4), jumps to the shared miss
    /// stub otherwise (contract I5). The sequence is the same in every
    /// block but for the `nop`s that align its rel32 (one copy per start
    /// address mod 4, [`copied::lookup_template`]): encoding its instructions
    /// through iced was a quarter of the emitter's time.
    pub fn lookup_rax(&mut self) -> Result<(), EmitError> {
        let (code, field) = copied::lookup_template(self.a.here());
        let miss = self.a.bytes_with_rel32(code, field);
        self.a.resolve(miss, self.env.stubs.miss);
        Ok(())
    }

    /// `mov rax, <operand of insn>` for an indirect jump or call, RAX saved.
    pub fn load_target(&mut self, insn: &Instruction) -> Result<(), EmitError> {
        self.a.store_gs(S_RAX, Register::RAX)?;
        match insn.op0_kind() {
            OpKind::Register => {
                let r = insn.op0_register();
                if r != Register::RAX {
                    self.a.mov_rax_from(r);
                }
                Ok(())
            }
            _ if is_far_rip(&self.a, insn) => {
                self.a
                    .mov_imm64(Register::RAX, insn.ip_rel_memory_address());
                let at = self.a.len() - 8;
                self.a.reloc(at, reloc::RelocKind::GuestAbs64);
                let (rax, none) = (Register::RAX, Register::None);
                assert!(self.a.mov_rax_load(rax, none, 1, 0, none), "mov rax, [rax]");
                Ok(())
            }
            _ => {
                let (base, index, scale) = (
                    insn.memory_base(),
                    insn.memory_index(),
                    insn.memory_index_scale(),
                );
                let disp = insn.memory_displacement64() as i64;
                let seg = insn.segment_prefix();
                if self.a.mov_rax_load(base, index, scale, disp, seg) {
                    return Ok(());
                }
                let m = MemoryOperand::new(
                    base,
                    index,
                    scale,
                    disp,
                    insn.memory_displ_size(),
                    false,
                    seg,
                );
                let mut mov =
                    Instruction::with2(Code::Mov_r64_rm64, Register::RAX, m).expect("mov");
                mov.set_ip(insn.ip());
                self.a.insn(&mov)
            }
        }
    }

    /// Push the block's exit word for exit `k` (contract), if it pushes
    /// any.
    pub fn push_exit(&mut self, k: u32) -> Result<(), EmitError> {
        match self.env.prologue.ring_id() {
            Some(id) => emit_ring_words(
                &mut self.a,
                &[RingWord::Block(crate::contract::block_word(id, k))],
            ),
            None => Ok(()),
        }
    }

    /// A conditional branch's exit word, pushed once (I1: `mov`/`lea`
    /// only, so the flags the branch tests are the guest's): the
    /// fall-through word is written before the branch and the taken side
    /// writes its own over it; each side then publishes it (the monitor
    /// reads only below `ring_pos`, monitor/ring.rs I2) and restores RAX.
    /// Half the bytes of a push on each side, which every conditional
    /// block had.
    fn branch_exit_words(
        &mut self,
        id: u32,
        cc: u8,
        taken: GuestAddr,
        fallthrough: GuestAddr,
    ) -> Result<(), EmitError> {
        use crate::contract::{block_word, EXIT_FALL, EXIT_TAKEN};
        let a = &mut self.a;
        a.store_gs(S_PRO, Register::RAX)?;
        a.load_gs(Register::RAX, off::RING_POS)?;
        a.store_rax_imm32(block_word(id, EXIT_FALL));
        a.reloc_last(reloc::RelocKind::BlockWord);
        a.rax_past_word();
        let rel8 = a.jcc_rel8(cc);
        a.store_gs(off::RING_POS, Register::RAX)?;
        a.load_gs(Register::RAX, S_PRO)?;
        self.jump_to(fallthrough);
        let here = self.a.len();
        self.a.set_rel8(rel8, here);
        self.a.rewrite_last_word(block_word(id, EXIT_TAKEN));
        self.a.reloc_last(reloc::RelocKind::BlockWord);
        self.a.store_gs(off::RING_POS, Register::RAX)?;
        self.a.load_gs(Register::RAX, S_PRO)?;
        self.jump_to(taken);
        Ok(())
    }

    pub fn terminator(&mut self, b: &IrBlock) -> Result<(), EmitError> {
        use crate::contract::{EXIT_FALL, EXIT_TAKEN};
        let ring = self.env.prologue.ring_id().is_some();
        match &b.term {
            Terminator::Jump { target } | Terminator::Fallthrough { next: target } => {
                self.push_exit(EXIT_FALL)?;
                self.jump_to(*target)
            }
            // The exit word goes after every instruction of the
            // terminator that can fault (a push into an unmapped stack, a
            // load of the target): a faulting block is the dispatcher's
            // PARTIAL word instead.
            Terminator::Call { target, return_to } => {
                self.push_return(*return_to)?;
                self.push_exit(EXIT_FALL)?;
                self.jump_to(*target);
            }
            Terminator::Branch {
                insn,
                taken,
                fallthrough,
            } => match insn.mnemonic() {
                Mnemonic::Loop
                | Mnemonic::Loope
                | Mnemonic::Loopne
                | Mnemonic::Jrcxz
                | Mnemonic::Jecxz => {
                    // loopX/jrcxz only have rel8: branch over the
                    // fall-through side to the taken side.
                    let rel8 = self.a.short_branch(insn);
                    self.push_exit(EXIT_FALL)?;
                    let fall = self.a.jmp_rel32();
                    self.direct(fall, *fallthrough);
                    if ring {
                        let here = self.a.len();
                        self.a.set_rel8(rel8, here);
                        self.push_exit(EXIT_TAKEN)?;
                        self.jump_to(*taken);
                    } else {
                        let t = self.a.jmp_rel32();
                        self.a.set_rel8(rel8, t.field - 1);
                        self.direct(t, *taken);
                    }
                }
                _ => {
                    let cc = condition_code(insn.condition_code());
                    if let Some(id) = self.env.prologue.ring_id() {
                        self.branch_exit_words(id, cc, *taken, *fallthrough)?;
                    } else {
                        let t = self.a.jcc_rel32(cc);
                        self.direct(t, *taken);
                        self.jump_to(*fallthrough);
                    }
                }
            },
            Terminator::IndirectJump { insn } => {
                self.load_target(insn)?;
                self.push_exit(EXIT_FALL)?;
                self.lookup_rax()?;
            }
            Terminator::IndirectCall { insn, return_to } => {
                self.load_target(insn)?;
                self.push_return(*return_to)?;
                self.push_exit(EXIT_FALL)?;
                self.lookup_rax()?;
            }
            Terminator::Return { pop } => {
                self.a.store_gs(S_RAX, Register::RAX)?;
                self.a.load_rax_from_rsp();
                self.a.rsp_up(8 + u32::from(*pop));
                self.push_exit(EXIT_FALL)?;
                self.lookup_rax()?;
            }
            Terminator::Syscall { next } => {
                self.push_exit(EXIT_FALL)?;
                let id = self.site(EmittedSiteKind::Syscall, *next);
                self.exit_via_site(id)?;
            }
            Terminator::Trap { kind } => {
                self.push_exit(EXIT_FALL)?;
                let id = self.site(EmittedSiteKind::Trap(*kind), b.term_addr);
                self.exit_via_site(id)?;
            }
        }
        Ok(())
    }

    pub fn cold(&mut self) -> Result<(), EmitError> {
        for (r, idx) in std::mem::take(&mut self.pending) {
            let stub = self.a.here();
            self.a.resolve(r, stub);
            let id = self.env.first_site + idx as u32;
            self.exit_via_site(id)?;
        }
        let consts = std::mem::take(&mut self.consts);
        if !consts.is_empty() {
            while !self.a.here().is_multiple_of(8) {
                self.a.bytes(&[0xcc]);
            }
        }
        for (r, v) in consts {
            let at = self.a.here();
            self.a.resolve(r, at);
            self.a.bytes(&v.to_le_bytes());
            self.a.reloc_last8();
        }
        Ok(())
    }
}

pub fn condition_code(cc: ConditionCode) -> u8 {
    match cc {
        ConditionCode::o => 0,
        ConditionCode::no => 1,
        ConditionCode::b => 2,
        ConditionCode::ae => 3,
        ConditionCode::e => 4,
        ConditionCode::ne => 5,
        ConditionCode::be => 6,
        ConditionCode::a => 7,
        ConditionCode::s => 8,
        ConditionCode::ns => 9,
        ConditionCode::p => 10,
        ConditionCode::np => 11,
        ConditionCode::l => 12,
        ConditionCode::ge => 13,
        ConditionCode::le => 14,
        ConditionCode::g => 15,
        ConditionCode::None => panic!("conditional branch without a condition code"),
    }
}

/// Emit body instruction `i` of block `b`; with `rep` the iterations of a
/// `rep` string instruction go to the ring (contract `TAG_REP`).
/// An instruction carried as it is whose meaning does not depend on where
/// it runs (no RIP-relative operand) is copied byte for byte from the guest
/// bytes it was decoded from, not encoded again.
fn emit_body_insn(
    a: &mut Asm,
    b: &crate::ir::IrBlock,
    i: &crate::ir::IrInsn,
    rep: Option<RepSite>,
) -> Result<(), EmitError> {
    // The guest's own bytes where it has them: encoding through iced
    // costs more, and its first use builds iced's encoder tables.
    let carry = |a: &mut Asm| match b.bytes_of(i) {
        Some(raw) => {
            a.bytes(raw);
            Ok(())
        }
        None => a.insn(&i.insn),
    };
    match i.op {
        IrOp::Carry if !i.insn.is_ip_rel_memory_operand() => carry(a),
        IrOp::Carry if is_far_rip(a, &i.insn) => emit_far_rip(a, &i.insn),
        // RIP-relative within reach: the guest's own bytes with the
        // displacement moved (encoding them again through iced cost more
        // than the rest of such a block's emission).
        IrOp::Carry => match b.bytes_of(i) {
            Some(raw) if copied::moved_rip(a, raw, &i.insn) => Ok(()),
            _ => a.insn(&i.insn),
        },
        IrOp::XbeginAbort => a.insn(&i.insn),
        IrOp::RepString => {
            if let Some(site) = rep {
                site.emit_record(a, b, i)?;
            }
            carry(a)?;
            if rep.is_some() {
                emit_ring_words(a, &[RingWord::Ecx])?;
            }
            Ok(())
        }
        op => emit_gs(a, &i.insn, op),
    }
}

/// Emit host code for `b` to run at `env.host_base`.
pub fn emit_block(b: &IrBlock, env: &EmitEnv) -> Result<Emitted, EmitError> {
    let mut e = BlockEmitter::new(Asm::new(env.host_base), *env);
    let (pc_map, rep_ring) = e.body(b)?;
    e.terminator(b)?;
    e.cold()?;
    Ok(Emitted {
        code: e.a.buf,
        pc_map,
        sites: e.sites,
        rep_ring,
        relocs: e.a.relocs,
        relocatable: !e.a.unrelocatable,
    })
}

/// The bytes the code cache puts before a block (contract I4): `int3`
/// padding, then its indirect entry, `mov rcx, gs:[S_RCX]`, which falls
/// into the block's entry (tests.rs checks the encoding against iced's).
pub const BLOCK_PREFIX_BYTES: [u8; BLOCK_PREFIX] = {
    let d = (S_RCX as u32).to_le_bytes();
    let mut out = [0xcc; BLOCK_PREFIX];
    let entry = [0x65, 0x48, 0x8b, 0x0c, 0x25, d[0], d[1], d[2], d[3]];
    assert!(entry.len() as u64 == INDIRECT_ENTRY_BACK);
    let mut i = 0;
    while i < entry.len() {
        out[BLOCK_PREFIX - entry.len() + i] = entry[i];
        i += 1;
    }
    out
};

/// A shared stub that leaves with `reason` (the rest of the context already
/// set by whoever jumps here).
pub fn emit_exit_stub(host_base: u64, reason: u32) -> Result<Vec<u8>, EmitError> {
    let mut a = Asm::new(host_base);
    leave_with(&mut a, reason)?;
    Ok(a.buf)
}

/// Set the exit reason and leave through `gs:[exit_fn]`.
fn leave_with(a: &mut Asm, reason: u32) -> Result<(), EmitError> {
    a.store_gs_imm32(off::EXIT_REASON, reason)?;
    a.jmp_gs(off::EXIT_FN)
}

/// The shared exit stubs (contract I5), to be placed at `host_base`: the
/// bytes and where each stub is. The miss stub keeps the guest target
/// (RAX) for the dispatcher, puts the guest's RAX, RCX and RDX back and
/// falls into the `miss_rip` stub.
pub fn emit_shared_stubs(host_base: u64) -> Result<(Vec<u8>, ExitStubs), EmitError> {
    let mut a = Asm::new(host_base);
    let site = a.here();
    leave_with(&mut a, exit_reason::SITE)?;
    let miss = a.here();
    a.store_gs(off::RIP, Register::RAX)?;
    a.load_gs(Register::RAX, S_RAX)?;
    a.load_gs(Register::RCX, S_RCX)?;
    a.load_gs(Register::RDX, S_RDX)?;
    let miss_rip = a.here();
    leave_with(&mut a, exit_reason::INDIRECT_MISS)?;
    Ok((
        a.buf,
        ExitStubs {
            site,
            miss,
            miss_rip,
        },
    ))
}

/// The stub empty lookup-table entries point at: only target -1 can reach
/// it (cache::ibl I1), so it reports a miss for -1. Like an indirect entry
/// (contract I4) it loads the guest's RCX back first.
pub fn emit_empty_ibl_stub(host_base: u64) -> Result<Vec<u8>, EmitError> {
    let mut a = Asm::new(host_base);
    a.load_gs(Register::RCX, S_RCX)?;
    a.store_gs_imm32(off::RIP, u32::MAX)?;
    a.store_gs_imm32(off::RIP + 4, u32::MAX)?;
    a.store_gs_imm32(off::EXIT_REASON, exit_reason::INDIRECT_MISS)?;
    a.jmp_gs(off::EXIT_FN)?;
    Ok(a.buf)
}

#[cfg(test)]
mod tests;
