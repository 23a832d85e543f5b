//! Emit a superblock: the members of a [`Plan`] laid out as one
//! straight-line host block.
//!
//! Layout: each member's body and a transition into the next member — an
//! unconditional jump disappears, a conditional branch falls through on
//! the hot side and branches to a side exit on the cold one, a call pushes
//! the guest return address and goes on into the callee, a hot indirect
//! target (or return address) is checked by a flag-free guard whose
//! failure is a side exit, a loop back to the head pushes its exit's unit
//! and jumps to the start — then the cold exit stubs. Nothing is pushed
//! on the way in: a pass costs the ring one word, its exit's unit
//! (superblock/mod.rs). An exit stub first pushes its unit and then jumps
//! to the live block for its target (or leaves to the dispatcher when
//! there is none yet: the monitor links it later), or does the inline
//! lookup for an indirect exit.
//!
//! I1: as for blocks (backend I1, I2): no guest register or flag changes
//!     except as the guest instructions would; RAX and RCX are borrowed
//!     through `gs:` spill slots.
//! I2: `pcs` covers the whole code: each guest instruction's code starts
//!     at an exact entry (the machine state is the guest's there); glue is
//!     covered by inexact entries naming the member whose pass is open, or
//!     `u16::MAX` where no pass is open (after an exit's unit is pushed).

use iced_x86::{Code, Instruction, Mnemonic, Register};

use super::{
    asm, condition_code, emit_body_insn, emit_ring_words, BlockEmitter, EmitEnv, EmitError,
    Prologue, RepSite, RingWord, S_CNT, S_DX, S_RAX, S_RCX,
};
use crate::contract::off;
use crate::contract::SbPc;
use crate::contract::{ExitStubs, TAG_LOOP};
use crate::ir::superblock::{ExitTo, Next, Plan};
use crate::ir::Terminator;

/// Where a superblock is emitted and how it links.
pub struct SbEmitEnv<'a> {
    pub host_base: u64,
    /// `--count-check`: each member also counts itself in the thread's
    /// counter array, as its block's prologue would.
    pub count_check: bool,
    /// Host entry and id of the live block at a guest address, if any.
    pub resolve: &'a dyn Fn(u64) -> Option<(u64, u32)>,
    /// Exit k pushes unit `unit_base + k` (tables/units.rs).
    pub unit_base: u32,
    /// What loop counters start from (contract I2; with `Plan::count_loops`).
    pub loop_limit: u32,
    /// Where its exits leave through (contract I5).
    pub stubs: ExitStubs,
}

impl std::fmt::Debug for SbEmitEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SbEmitEnv {{ host_base: {:#x} }}", self.host_base)
    }
}

/// A superblock's code and what the monitor needs to keep about it.
#[derive(Debug)]
pub struct SbEmitted {
    pub code: Vec<u8>,
    pub pcs: Vec<SbPc>,
    /// Direct exits that leave to the dispatcher for now: (buffer offset of
    /// the aligned rel32 field, guest target). Patch them when the target
    /// has code.
    pub unresolved: Vec<(usize, u64)>,
}

const NO_PASS: u16 = u16::MAX;

/// Where a jump inside a superblock goes.
#[derive(Debug, Clone, Copy)]
enum To {
    Exit(usize),
    Member(usize),
}

struct SbEmitter<'a> {
    e: BlockEmitter,
    plan: &'a Plan,
    pcs: Vec<SbPc>,
    /// Jumps to the stub of exit k.
    to_stub: Vec<(asm::Rel32, usize)>,
    /// Jumps to the start of member m (a branch's cold side in a tree).
    to_member: Vec<(asm::Rel32, usize)>,
    next_exit: usize,
    unit_base: u32,
    /// Counted loops (contract I2): the exit index of each loop counter's
    /// exit (empty: every pass pushes its unit).
    loops: Vec<u32>,
    /// The status flags are dead at the head (a counter may use `sub`).
    head_flags_dead: bool,
    loop_limit: u32,
}

impl SbEmitter<'_> {
    /// The code from here on is member `member`'s (or no member's) with
    /// `after` counted instructions of the member still to come.
    fn pc(&mut self, member: u16, exact: bool, guest: u64, after: u16, rep: bool) {
        let e = SbPc {
            off: self.e.a.len() as u32,
            member,
            after,
            rep,
            exact,
            guest,
        };
        match self.pcs.last_mut() {
            Some(last) if last.off == e.off => *last = e,
            _ => self.pcs.push(e),
        }
    }

    /// The next exit in plan order (exits are numbered as they are laid
    /// out); it must belong to `member`.
    fn take_exit(&mut self, member: usize) -> usize {
        let k = self.next_exit;
        assert_eq!(
            self.plan.exits[k].member as usize, member,
            "exit {k} laid out in the wrong member"
        );
        self.next_exit += 1;
        k
    }

    fn jmp_to(&mut self, t: To) {
        let r = self.e.a.jmp_rel32();
        self.note(r, t);
    }

    fn jcc_to(&mut self, cc: u8, t: To) {
        let r = self.e.a.jcc_rel32(cc);
        self.note(r, t);
    }

    fn note(&mut self, r: asm::Rel32, t: To) {
        match t {
            To::Exit(k) => self.to_stub.push((r, k)),
            To::Member(m) => self.to_member.push((r, m)),
        }
    }

    fn jmp_exit(&mut self, k: usize) {
        self.jmp_to(To::Exit(k));
    }

    fn jcc_exit(&mut self, cc: u8, k: usize) {
        self.jcc_to(cc, To::Exit(k));
    }

    fn jmp_start(&mut self) {
        let r = self.e.a.jmp_rel32();
        let start = self.e.a.addr_of(0);
        self.e.a.resolve(r, start);
    }

    /// Flag-free check that RAX (guest RAX saved in S_RAX) is `expected`:
    /// on a hit RAX and RCX are the guest's again and code goes on; else,
    /// when RAX is the address of one of `alternates` (ir/superblock.rs
    /// I2), the same and on in that member; on a miss, to exit `k` with
    /// RAX = target.
    fn guard(&mut self, expected: u64, alternates: &[usize], k: usize) -> Result<(), EmitError> {
        let plan = self.plan;
        let targets: Vec<u64> = std::iter::once(expected)
            .chain(alternates.iter().map(|&m| plan.members[m].ir.start.0))
            .collect();
        let a = &mut self.e.a;
        a.store_gs(S_RCX, Register::RCX)?;
        // One test per target: RCX = RAX - target, zero on a hit.
        let mut hits = Vec::with_capacity(targets.len());
        for &t in &targets {
            let neg = (t as i64).wrapping_neg();
            if i32::try_from(neg).is_ok() {
                a.lea(Register::RCX, asm::mem(Register::RAX, neg))?;
            } else {
                a.insn(
                    &Instruction::with2(Code::Mov_r64_imm64, Register::RCX, neg as u64)
                        .expect("mov"),
                )?;
                a.lea(
                    Register::RCX,
                    iced_x86::MemoryOperand::with_base_index(Register::RAX, Register::RCX),
                )?;
            }
            hits.push(a.len());
            a.bytes(&[0xe3, 0]);
        }
        a.load_gs(Register::RCX, S_RCX)?;
        self.jmp_exit(k);
        // The alternates' hits, then the hot one's, which goes on below.
        for (n, &at) in hits
            .iter()
            .enumerate()
            .skip(1)
            .chain(hits.iter().enumerate().take(1))
        {
            let a = &mut self.e.a;
            let hit = a.len();
            a.buf[at + 1] = u8::try_from(hit - (at + 2)).map_err(|_| EmitError::Encode {
                guest: expected,
                msg: "an indirect guard's tests are too far from their hits".into(),
            })?;
            a.load_gs(Register::RCX, S_RCX)?;
            a.load_gs(Register::RAX, S_RAX)?;
            if n > 0 {
                self.jmp_to(To::Member(alternates[n - 1]));
            }
        }
        Ok(())
    }

    /// `loop*`/`jrcxz` (rel8 only): control goes on at the returned
    /// position when the branch is taken iff `on_taken`, and reaches
    /// `k` otherwise.
    fn short_branch(&mut self, insn: &Instruction, on_taken: bool, k: To) {
        let rel_at = self.e.a.short_branch(insn);
        if on_taken {
            // loop L; jmp exit; L:
            self.jmp_to(k);
            let l = self.e.a.len();
            self.e.a.set_rel8(rel_at, l);
        } else {
            // loop Lx; jmp short L; Lx: jmp exit; L:
            let a = &mut self.e.a;
            a.bytes(&[0xeb, 0]);
            let short_at = a.len() - 1;
            let lx = a.len();
            a.set_rel8(rel_at, lx);
            self.jmp_to(k);
            let l = self.e.a.len();
            self.e.a.set_rel8(short_at, l);
        }
    }

    /// Code after member `i`'s body: into the next member, back to the
    /// start, or out.
    fn transition(&mut self, i: usize) -> Result<(), EmitError> {
        let m = &self.plan.members[i];
        let hot = match m.next {
            Next::Member => Some(self.plan.members[i + 1].ir.start),
            Next::Head => Some(self.plan.members[0].ir.start),
            Next::Leave => None,
        };
        match (&m.ir.term, hot) {
            (Terminator::Jump { .. } | Terminator::Fallthrough { .. }, Some(_)) => {}
            (Terminator::Call { return_to, .. }, Some(_)) => self.e.push_return(*return_to)?,
            (
                Terminator::Branch {
                    insn,
                    taken,
                    fallthrough: _,
                },
                Some(hot),
            ) => {
                // The cold side: a side exit, or on in a member of its own.
                let k = match m.cold {
                    Some(c) => To::Member(c as usize),
                    None => To::Exit(self.take_exit(i)),
                };
                let hot_taken = hot == *taken;
                match insn.mnemonic() {
                    Mnemonic::Loop
                    | Mnemonic::Loope
                    | Mnemonic::Loopne
                    | Mnemonic::Jrcxz
                    | Mnemonic::Jecxz => self.short_branch(insn, hot_taken, k),
                    _ => {
                        let cc = condition_code(insn.condition_code());
                        // Off on the cold side: the inverse condition when
                        // the hot side is the taken one.
                        self.jcc_to(if hot_taken { cc ^ 1 } else { cc }, k);
                    }
                }
            }
            (Terminator::Return { pop }, Some(hot)) => {
                let k = self.take_exit(i);
                self.load_return(*pop)?;
                self.guard(hot.0, &self.plan.alternates(i), k)?;
            }
            (Terminator::IndirectJump { insn }, Some(hot)) => {
                let k = self.take_exit(i);
                self.e.load_target(insn)?;
                self.guard(hot.0, &self.plan.alternates(i), k)?;
            }
            (Terminator::IndirectCall { insn, return_to }, Some(hot)) => {
                let k = self.take_exit(i);
                self.e.load_target(insn)?;
                self.e.push_return(*return_to)?;
                self.guard(hot.0, &self.plan.alternates(i), k)?;
            }
            (Terminator::Jump { .. } | Terminator::Fallthrough { .. }, None) => {
                let k = self.take_exit(i);
                self.jmp_exit(k);
            }
            (Terminator::Call { return_to, .. }, None) => {
                let k = self.take_exit(i);
                self.e.push_return(*return_to)?;
                self.jmp_exit(k);
            }
            (Terminator::Branch { insn, .. }, None) => {
                let (kt, kf) = (self.take_exit(i), self.take_exit(i));
                match insn.mnemonic() {
                    Mnemonic::Loop
                    | Mnemonic::Loope
                    | Mnemonic::Loopne
                    | Mnemonic::Jrcxz
                    | Mnemonic::Jecxz => {
                        self.short_branch(insn, true, To::Exit(kf));
                        self.jmp_exit(kt);
                    }
                    _ => {
                        self.jcc_exit(condition_code(insn.condition_code()), kt);
                        self.jmp_exit(kf);
                    }
                }
            }
            (Terminator::Return { pop }, None) => {
                let k = self.take_exit(i);
                self.load_return(*pop)?;
                self.jmp_exit(k);
            }
            (Terminator::IndirectJump { insn }, None) => {
                let k = self.take_exit(i);
                self.e.load_target(insn)?;
                self.jmp_exit(k);
            }
            (Terminator::IndirectCall { insn, return_to }, None) => {
                let k = self.take_exit(i);
                self.e.load_target(insn)?;
                self.e.push_return(*return_to)?;
                self.jmp_exit(k);
            }
            (Terminator::Syscall { .. } | Terminator::Trap { .. }, _) => {
                unreachable!("superblock member ends in a syscall or trap (select I1)")
            }
        }
        if m.next == Next::Head {
            let k = self.take_exit(i);
            match self.loops.iter().position(|&x| x as usize == k) {
                Some(l) => self.count_loop(l)?,
                None => {
                    emit_ring_words(&mut self.e.a, &[RingWord::Imm(self.unit_base + k as u32)])?;
                    self.pc(NO_PASS, false, self.plan.members[0].ir.start.0, 0, false);
                    self.jmp_start();
                }
            }
        }
        Ok(())
    }

    /// The words that carry the loop counters (contract I2), if counted.
    fn loop_words(&self) -> Vec<RingWord> {
        if self.loops.is_empty() {
            return Vec::new();
        }
        let mut w = vec![
            RingWord::Imm(TAG_LOOP),
            RingWord::Imm(self.unit_base),
            RingWord::TscLo,
            RingWord::TscHi,
        ];
        let limit = self.loop_limit;
        w.extend((0..self.loops.len()).map(|l| RingWord::Counter { l, limit }));
        w
    }

    /// At an exit, the loop counters' record (contract I2) if any of them
    /// counted a pass: the sum of what is left in them is below
    /// `loops * limit` exactly then (each holds at most the limit), and a
    /// stay that left before looping (a function's superblock entered from
    /// elsewhere than its loop) pushes nothing more than its exit's unit.
    /// Flag-free through RCX and RDX (`mov`, `lea`, `jrcxz`).
    fn loop_record_if_counted(&mut self) -> Result<(), EmitError> {
        let words = self.loop_words();
        if words.is_empty() {
            return Ok(());
        }
        let n = self.loops.len();
        let a = &mut self.e.a;
        a.store_gs(S_CNT, Register::RCX)?;
        a.store_gs(S_DX, Register::RDX)?;
        let counter = |l: usize| asm::gs_mem(off::loop_left(l));
        a.insn(&Instruction::with2(Code::Mov_r32_rm32, Register::ECX, counter(0)).expect("mov"))?;
        for l in 1..n {
            a.insn(
                &Instruction::with2(Code::Mov_r32_rm32, Register::EDX, counter(l)).expect("mov"),
            )?;
            a.lea(
                Register::RCX,
                iced_x86::MemoryOperand::with_base_index(Register::RCX, Register::RDX),
            )?;
        }
        let untouched = -(i64::from(self.loop_limit) * n as i64);
        a.insn(
            &Instruction::with2(
                Code::Lea_r32_m,
                Register::ECX,
                asm::mem(Register::RCX, untouched),
            )
            .expect("lea"),
        )?;
        a.load_gs(Register::RDX, S_DX)?;
        // jrcxz none; then on into the record, or past it from `none`.
        let jrcxz = a.len();
        a.bytes(&[0xe3, 0]);
        a.load_gs(Register::RCX, S_CNT)?;
        let to_record = a.jmp_rel32();
        let none = a.len();
        a.set_rel8(jrcxz + 1, none);
        a.load_gs(Register::RCX, S_CNT)?;
        let past = a.jmp_rel32();
        let here = a.here();
        a.resolve(to_record, here);
        emit_ring_words(a, &words)?;
        let here = a.here();
        a.resolve(past, here);
        Ok(())
    }

    /// A pass loops back through counted exit `l`: count it down, and when
    /// the counter runs out push every counter's record; then on at the
    /// start. Where the flags are dead at the head, `sub` and `jnz`;
    /// elsewhere flag-free through RCX (`lea`, `jrcxz`).
    fn count_loop(&mut self, l: usize) -> Result<(), EmitError> {
        let head = self.plan.members[0].ir.start.0;
        let counter = asm::gs_mem(off::loop_left(l));
        if self.head_flags_dead {
            self.e.a.insn(
                &Instruction::with2(Code::Sub_rm32_imm8, counter, 1u32).expect("sub gs:[d], 1"),
            )?;
            self.pc(NO_PASS, false, head, 0, false);
            let r = self.e.a.jcc_rel32(5); // jnz: iterations left
            let start = self.e.a.addr_of(0);
            self.e.a.resolve(r, start);
        } else {
            let a = &mut self.e.a;
            a.store_gs(S_RCX, Register::RCX)?;
            a.insn(&Instruction::with2(Code::Mov_r32_rm32, Register::ECX, counter).expect("mov"))?;
            a.insn(
                &Instruction::with2(Code::Lea_r32_m, Register::ECX, asm::mem(Register::RCX, -1))
                    .expect("lea"),
            )?;
            a.insn(&Instruction::with2(Code::Mov_rm32_r32, counter, Register::ECX).expect("mov"))?;
            self.pc(NO_PASS, false, head, 0, false);
            // jrcxz flush; restore RCX and on at the start.
            let a = &mut self.e.a;
            a.bytes(&[0xe3, 0]);
            let rel8 = a.len() - 1;
            a.load_gs(Register::RCX, S_RCX)?;
            self.jmp_start();
            let a = &mut self.e.a;
            let flush = a.len();
            a.set_rel8(rel8, flush);
            a.load_gs(Register::RCX, S_RCX)?;
        }
        let words = self.loop_words();
        emit_ring_words(&mut self.e.a, &words)?;
        self.jmp_start();
        Ok(())
    }

    /// `ret`: RAX = the return address (guest RAX in S_RAX), popped.
    fn load_return(&mut self, pop: u16) -> Result<(), EmitError> {
        let a = &mut self.e.a;
        a.store_gs(S_RAX, Register::RAX)?;
        a.mov_load(Register::RAX, asm::mem(Register::RSP, 0))?;
        a.lea(Register::RSP, asm::mem(Register::RSP, 8 + pop as i64))
    }
}

/// Emit `plan` to run at `env.host_base` (module docs).
pub fn emit_superblock(plan: &Plan, env: &SbEmitEnv<'_>) -> Result<SbEmitted, EmitError> {
    let mut s = SbEmitter {
        e: BlockEmitter {
            a: asm::Asm::new(env.host_base),
            env: EmitEnv {
                host_base: env.host_base,
                first_site: 0,
                prologue: Prologue::Ring { id: 0 },
                stubs: env.stubs,
            },
            sites: Vec::new(),
            pending: Vec::new(),
            consts: Vec::new(),
        },
        plan,
        pcs: Vec::new(),
        to_stub: Vec::new(),
        to_member: Vec::new(),
        next_exit: 0,
        unit_base: env.unit_base,
        loops: if plan.count_loops {
            plan.loop_exits()
        } else {
            Vec::new()
        },
        head_flags_dead: plan.members[0].ir.status_flags_dead_at_start(),
        loop_limit: env.loop_limit,
    };
    for (i, m) in plan.members.iter().enumerate() {
        // A cold side that goes on here (trees: its jump comes first).
        let here = s.e.a.here();
        for (r, _) in s.to_member.extract_if(.., |&mut (_, j)| j == i) {
            s.e.a.resolve(r, here);
        }
        let n = m.ir.guest_insns() as u16;
        s.pc(i as u16, false, m.ir.start.0, n.saturating_sub(1), false);
        if env.count_check {
            super::emit_count(&mut s.e.a, m.block)?;
        }
        for (j, insn) in m.ir.body.iter().enumerate() {
            let rep = insn.op == crate::ir::IrOp::RepString;
            let after = n.saturating_sub(j as u16 + 1);
            s.pc(i as u16, true, insn.addr.0, after, rep);
            let site = RepSite {
                block: m.block,
                moves: false,
            };
            emit_body_insn(&mut s.e.a, &m.ir, insn, Some(site))?;
        }
        s.pc(i as u16, true, m.ir.term_addr.0, 0, false);
        s.transition(i)?;
    }
    assert_eq!(s.next_exit, plan.exits.len(), "every exit laid out");
    assert!(
        s.to_member.is_empty(),
        "every cold side laid out (Plan::check)"
    );
    let resolved: Vec<Option<(u64, u32)>> = plan
        .exits
        .iter()
        .map(|x| match x.to {
            ExitTo::Direct { target } => (env.resolve)(target),
            ExitTo::Indirect | ExitTo::Loop => None,
        })
        .collect();
    // Cold exit stubs, in exit order.
    let mut unresolved_tails = Vec::new();
    let mut unresolved = Vec::new();
    let mut jumps = std::mem::take(&mut s.to_stub);
    jumps.sort_by_key(|&(_, k)| k);
    let mut jumps = jumps.into_iter().peekable();
    for x in plan.exits.iter().filter(|x| x.to != ExitTo::Loop) {
        let k = x.index as usize;
        let stub = s.e.a.here();
        while jumps.peek().is_some_and(|&(_, j)| j == k) {
            let (r, _) = jumps.next().expect("peeked");
            s.e.a.resolve(r, stub);
        }
        let m = &plan.members[x.member as usize];
        s.pc(x.member, false, m.ir.term_addr.0, 0, false);
        s.loop_record_if_counted()?;
        emit_ring_words(&mut s.e.a, &[RingWord::Imm(env.unit_base + x.index)])?;
        match x.to {
            ExitTo::Direct { target } => {
                s.pc(NO_PASS, false, target, 0, false);
                let r = s.e.a.jmp_rel32();
                match resolved[k] {
                    Some((host, _)) => s.e.a.resolve(r, host),
                    None => {
                        unresolved.push((r.field, target));
                        unresolved_tails.push((r, target));
                    }
                }
            }
            ExitTo::Indirect => {
                s.pc(NO_PASS, false, 0, 0, false);
                s.e.lookup_rax()?;
            }
            ExitTo::Loop => unreachable!("loop exits are laid out inline"),
        }
    }
    // Direct exits without a target block yet leave to the dispatcher,
    // which translates the target; the monitor patches the rel32 later.
    for (r, target) in unresolved_tails {
        let a = &mut s.e.a;
        let tail = a.here();
        a.resolve(r, tail);
        a.store_gs_imm32(off::RIP, target as u32)?;
        a.store_gs_imm32(off::RIP + 4, (target >> 32) as u32)?;
        a.jmp_fixed(env.stubs.miss_rip);
    }
    s.e.cold()?;
    debug_assert!(s.e.sites.is_empty(), "superblocks make no dispatcher sites");
    Ok(SbEmitted {
        code: s.e.a.buf,
        pcs: s.pcs,
        unresolved,
    })
}
