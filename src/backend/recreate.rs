//! The guest's registers at a fault inside the host code of one guest
//! instruction (not at its first host instruction): the host code from
//! the instruction's start to the fault is decoded again and its effects
//! undone (the way DynamoRIO recreates application state).
//!
//! R1: the glue hotlift emits around an instruction (backend) only saves a
//!     register it borrows to a context scratch slot (`mov gs:[slot], r`)
//!     before it changes it, and loads it back from the same slot
//!     (`mov r, gs:[slot]`); it moves RSP only with `lea rsp, [rsp+d]`,
//!     `push` and `pop`; it never changes the flags and never branches
//!     before the guest's own memory access. So a register borrowed and
//!     not yet restored has its guest value in its slot, and RSP is off by
//!     what the glue moved it.
//! R2: anything else before the fault — a flag change, a branch, a write
//!     to a register not saved first — means the state cannot be
//!     recreated: [`walk`] says None and the caller stops the guest with a
//!     message instead of giving a handler a wrong state.

use iced_x86::{
    Code, Decoder, DecoderOptions, FlowControl, InstructionInfoFactory, OpAccess, OpKind, Register,
};

use crate::contract::{off, SCRATCH_SLOTS};

/// How to turn the host registers at the fault into the guest's.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Fixup {
    /// For each GPR (hardware order), the scratch slot its guest value is
    /// in, if the glue borrowed it.
    pub from_slot: [Option<usize>; 16],
    /// What the glue added to RSP.
    pub rsp_moved: i64,
}

/// The GPR index (hardware order) of a 64-bit register.
fn gpr(r: Register) -> Option<usize> {
    let f = r.full_register();
    (Register::RAX..=Register::R15)
        .contains(&f)
        .then(|| f as usize - Register::RAX as usize)
}

/// The scratch slot `gs:[d]` addresses, if the operand is one.
fn scratch_slot(i: &iced_x86::Instruction, op: u32) -> Option<usize> {
    if i.op_kind(op) != OpKind::Memory
        || i.memory_segment() != Register::GS
        || i.memory_base() != Register::None
        || i.memory_index() != Register::None
    {
        return None;
    }
    let d = i.memory_displacement64() as usize;
    (0..SCRATCH_SLOTS).find(|&s| off::scratch(s) == d)
}

/// R1: decode `code` (the host bytes at `start`) up to `pc` and tell how
/// the guest state differs there; None under R2.
pub fn walk(code: &[u8], start: u64, pc: u64) -> Option<Fixup> {
    let mut fix = Fixup::default();
    let mut dec = Decoder::with_ip(64, code, start, DecoderOptions::NONE);
    let mut info = InstructionInfoFactory::new();
    while dec.can_decode() {
        let i = dec.decode();
        if i.ip() >= pc {
            return (i.ip() == pc).then_some(fix);
        }
        if i.is_invalid() || i.flow_control() != FlowControl::Next || i.rflags_modified() != 0 {
            return None;
        }
        match i.code() {
            Code::Mov_rm64_r64 if scratch_slot(&i, 0).is_some() => {
                let r = gpr(i.op1_register())?;
                if fix.from_slot[r].is_none() {
                    fix.from_slot[r] = scratch_slot(&i, 0);
                }
                continue;
            }
            Code::Mov_r64_rm64 if scratch_slot(&i, 1).is_some() => {
                let r = gpr(i.op0_register())?;
                if fix.from_slot[r] == scratch_slot(&i, 1) {
                    fix.from_slot[r] = None;
                } else {
                    // A load into a register the glue borrowed (R1).
                    fix.from_slot[r]?;
                }
                continue;
            }
            Code::Lea_r64_m
                if i.op0_register() == Register::RSP
                    && i.memory_base() == Register::RSP
                    && i.memory_index() == Register::None =>
            {
                fix.rsp_moved += i.memory_displacement64() as i64;
                continue;
            }
            Code::Pushq_imm32 | Code::Pushq_imm8 | Code::Push_r64 | Code::Push_rm64 => {
                fix.rsp_moved -= 8;
                continue;
            }
            Code::Pop_r64 => {
                let r = gpr(i.op0_register())?;
                if r != 4 && fix.from_slot[r].is_none() {
                    return None;
                }
                fix.rsp_moved += 8;
                continue;
            }
            _ => {}
        }
        // Any other instruction may write memory, and registers only that
        // the glue borrowed (R1).
        for u in info.info(&i).used_registers() {
            let writes = matches!(
                u.access(),
                OpAccess::Write
                    | OpAccess::CondWrite
                    | OpAccess::ReadWrite
                    | OpAccess::ReadCondWrite
            );
            if !writes {
                continue;
            }
            match gpr(u.register()) {
                Some(r) if r != 4 && fix.from_slot[r].is_some() => {}
                _ => return None,
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::code_asm::*;

    fn bytes(build: impl FnOnce(&mut CodeAssembler)) -> Vec<u8> {
        let mut a = CodeAssembler::new(64).unwrap();
        build(&mut a);
        a.assemble(0x1000).unwrap()
    }

    /// The offset of the instruction after the first `n`.
    fn after(code: &[u8], n: usize) -> u64 {
        let mut d = Decoder::with_ip(64, code, 0x1000, DecoderOptions::NONE);
        for _ in 0..n {
            let _ = d.decode();
        }
        d.ip()
    }

    #[test]
    fn a_borrowed_register_comes_from_its_slot_until_restored() {
        let s = off::scratch(3) as u64;
        let code = bytes(|a| {
            a.mov(qword_ptr(s).gs(), rbx).unwrap();
            a.mov(rbx, 0x1234_5678_9abc_u64).unwrap();
            a.mov(eax, dword_ptr(rbx)).unwrap();
            a.mov(rbx, qword_ptr(s).gs()).unwrap();
            a.nop().unwrap();
        });
        let at_load = walk(&code, 0x1000, after(&code, 2)).unwrap();
        assert_eq!(at_load.from_slot[3], Some(3));
        // Past the guest's own load (which writes EAX): not glue.
        assert_eq!(walk(&code, 0x1000, after(&code, 4)), None);
        let restored = bytes(|a| {
            a.mov(qword_ptr(s).gs(), rbx).unwrap();
            a.mov(rbx, 0x1234_5678_9abc_u64).unwrap();
            a.mov(rbx, qword_ptr(s).gs()).unwrap();
            a.nop().unwrap();
        });
        assert_eq!(
            walk(&restored, 0x1000, after(&restored, 3)),
            Some(Fixup::default())
        );
    }

    #[test]
    fn a_return_address_pushed_from_a_constant_moves_rsp() {
        // backend push_return for a return address above 2 GiB.
        let code = bytes(|a| {
            // push qword [rip+0x40]
            a.db(&[0xff, 0x35, 0x40, 0, 0, 0]).unwrap();
            a.nop().unwrap();
        });
        let at_push = walk(&code, 0x1000, after(&code, 0)).unwrap();
        assert_eq!(at_push.rsp_moved, 0);
        let after_push = walk(&code, 0x1000, after(&code, 1)).unwrap();
        assert_eq!(after_push.rsp_moved, -8);
    }

    #[test]
    fn glue_moving_rsp_is_undone() {
        let code = bytes(|a| {
            a.lea(rsp, ptr(rsp - 8)).unwrap();
            a.mov(dword_ptr(rsp), 0x5678).unwrap();
            a.mov(dword_ptr(rsp + 4), 0x7fff).unwrap();
        });
        assert_eq!(walk(&code, 0x1000, after(&code, 1)).unwrap().rsp_moved, -8);
        assert_eq!(walk(&code, 0x1000, after(&code, 2)).unwrap().rsp_moved, -8);
    }

    #[test]
    fn flags_branches_and_unsaved_writes_cannot_be_undone() {
        let flags = bytes(|a| {
            a.add(rax, 1).unwrap();
            a.nop().unwrap();
        });
        assert_eq!(walk(&flags, 0x1000, after(&flags, 1)), None);
        let unsaved = bytes(|a| {
            a.mov(rcx, 5u64).unwrap();
            a.nop().unwrap();
        });
        assert_eq!(walk(&unsaved, 0x1000, after(&unsaved, 1)), None);
        let branch = bytes(|a| {
            let mut l = a.create_label();
            a.jmp(l).unwrap();
            a.set_label(&mut l).unwrap();
            a.nop().unwrap();
        });
        assert_eq!(walk(&branch, 0x1000, after(&branch, 1)), None);
        // A pc that is not an instruction boundary of the walk.
        let plain = bytes(|a| {
            a.mov(qword_ptr(off::scratch(0) as u64).gs(), rax).unwrap();
            a.nop().unwrap();
        });
        assert_eq!(walk(&plain, 0x1000, 0x1001), None);
    }
}
