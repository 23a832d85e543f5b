//! Golden listings of emitted code (STYLE: encoding tests). Each case is a
//! guest byte sequence; the listing shows the IR block and the host code
//! emitted for it. `HOTLIFT_BLESS=1 cargo test --lib backend` regenerates
//! `tests/golden/backend.txt` (blocks), `prologue.txt` (exit words and the
//! inline counter), `superblock.txt` (superblock layout, guards, exit
//! units, counted loops) and `ring.txt` (a `rep` instruction's ring
//! records), so a codegen change is a reviewable diff. Path profiling's
//! probes have theirs beside them (src/paths/emit/tests.rs).

use iced_x86::{Code, Decoder, DecoderOptions, Formatter, IntelFormatter, Register};

use super::golden::{check_golden, list, STUBS};
use super::{emit_block, EmitEnv};
use crate::frontend::lift_block;
use crate::types::GuestAddr;

const CASES: &[(&str, &[u8])] = &[
    ("ret", &[0xc3]),
    ("ret imm16", &[0xc2, 0x08, 0x00]),
    ("jmp rel", &[0xeb, 0x10]),
    ("jcc", &[0x48, 0x39, 0xd8, 0x75, 0x10]),
    ("loop", &[0xe2, 0xfe]),
    ("jecxz", &[0x67, 0xe3, 0x10]),
    ("call rel", &[0xe8, 0x00, 0x01, 0x00, 0x00]),
    ("call [rip+x]", &[0xff, 0x15, 0x00, 0x10, 0x00, 0x00]),
    (
        "jmp [table+rax*8]",
        &[0xff, 0x24, 0xc5, 0x00, 0x20, 0x40, 0x00],
    ),
    ("jmp rsp-relative", &[0xff, 0x64, 0x24, 0x08]),
    (
        "lea rip-relative",
        &[0x48, 0x8d, 0x05, 0xf9, 0xff, 0xff, 0xff, 0xc3],
    ),
    ("syscall", &[0x0f, 0x05]),
    ("int3", &[0xcc]),
    ("gs load", &[0x65, 0x48, 0x8b, 0x41, 0x28, 0xc3]),
    (
        "rdgsbase/wrgsbase",
        &[0xf3, 0x48, 0x0f, 0xae, 0xc8, 0xf3, 0x0f, 0xae, 0xd9, 0xc3],
    ),
];

fn listing() -> String {
    let mut out = String::new();
    let env = EmitEnv {
        host_base: 0x1000_0000,
        first_site: 0,
        prologue: super::Prologue::None,
        stubs: STUBS,
    };
    let mut f = IntelFormatter::new();
    for (name, bytes) in CASES {
        let block = lift_block(bytes, GuestAddr(0x401000), 64).expect("lift");
        let em = emit_block(&block, &env).expect("emit");
        out.push_str(&format!("== {name}\n{block}"));
        let mut d = Decoder::with_ip(64, &em.code, env.host_base, DecoderOptions::NONE);
        for insn in &mut d {
            let mut s = String::new();
            f.format(&insn, &mut s);
            out.push_str(&format!("    {:x}  {s}\n", insn.ip() - env.host_base));
        }
        for s in &em.sites {
            out.push_str(&format!("  site {:?} -> {}\n", s.kind, s.target));
        }
    }
    let (code, at) = super::emit_shared_stubs(STUBS.site).expect("the stubs encode");
    assert_eq!(
        at, STUBS,
        "the tests' stubs are where emit_shared_stubs puts them"
    );
    out.push_str("== shared exit stubs (contract I5)\n");
    let mut d = Decoder::with_ip(64, &code, STUBS.site, DecoderOptions::NONE);
    for insn in &mut d {
        let mut s = String::new();
        f.format(&insn, &mut s);
        out.push_str(&format!("    {:x}  {s}\n", insn.ip()));
    }
    out
}

#[test]
fn emitted_code_matches_golden() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/backend.txt");
    let got = listing();
    check_golden(path, &got);
}

#[test]
fn rel32_fields_are_aligned() {
    let env = EmitEnv {
        host_base: 0x1000_0003,
        first_site: 0,
        prologue: super::Prologue::None,
        stubs: STUBS,
    };
    for (name, bytes) in CASES {
        let block = lift_block(bytes, GuestAddr(0x401000), 64).expect("lift");
        let em = emit_block(&block, &env).expect("emit");
        for s in &em.sites {
            if let super::EmittedSiteKind::Direct { field } = s.kind {
                assert_eq!(
                    (env.host_base + field as u64) % 4,
                    0,
                    "{name}: unaligned link field"
                );
            }
        }
    }
}

#[test]
fn far_rip_relative_goes_through_a_register() {
    // mov eax, [rip+0x10]; lea rdx, [rip+0]; jmp [rip+0x20]
    let bytes = [
        0x8b, 0x05, 0x10, 0, 0, 0, 0x48, 0x8d, 0x15, 0, 0, 0, 0, 0xff, 0x25, 0x20, 0, 0, 0,
    ];
    let block = lift_block(&bytes, GuestAddr(0x7f00_0000_0000), 64).expect("lift");
    let env = EmitEnv {
        host_base: 0x4000_0000,
        first_site: 0,
        prologue: super::Prologue::None,
        stubs: STUBS,
    };
    let em = emit_block(&block, &env).expect("far operands are rewritten, not refused");
    let mut f = IntelFormatter::new();
    let text: Vec<String> = Decoder::with_ip(64, &em.code, env.host_base, DecoderOptions::NONE)
        .into_iter()
        .map(|i| {
            let mut s = String::new();
            f.format(&i, &mut s);
            s
        })
        .collect();
    assert!(
        text.iter().any(|l| l == "mov rcx,7F0000000016h"),
        "{text:#?}"
    );
    assert!(text.iter().any(|l| l == "mov eax,[rcx]"), "{text:#?}");
    assert!(
        text.iter().any(|l| l == "mov rdx,7F000000000Dh"),
        "{text:#?}"
    );
    assert!(
        text.iter().any(|l| l == "mov rax,7F0000000033h"),
        "{text:#?}"
    );
}

/// The prologue and the exit words of whole blocks (contract): a `ret`
/// block and a branch block pushing their exit words, and the
/// `--count-inline` prologue.
#[test]
fn prologues_match_golden() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/prologue.txt");
    let mut out = String::new();
    let mut f = IntelFormatter::new();
    // `ret`; `test eax, eax; jne +0x10`.
    let ret: &[u8] = &[0xc3];
    let branch: &[u8] = &[0x85, 0xc0, 0x75, 0x10];
    for (name, p, code) in [
        ("ring, ret", super::Prologue::Ring { id: 0x1234 }, ret),
        ("ring, branch", super::Prologue::Ring { id: 0x1234 }, branch),
        ("count-inline", super::Prologue::Count { id: 7 }, ret),
    ] {
        let env = EmitEnv {
            host_base: 0x1000_0000,
            first_site: 0,
            prologue: p,
            stubs: STUBS,
        };
        let block = lift_block(code, GuestAddr(0x401000), 64).expect("lift");
        let em = emit_block(&block, &env).expect("emit");
        out.push_str(&format!("== {name}\n"));
        for insn in Decoder::with_ip(64, &em.code, env.host_base, DecoderOptions::NONE) {
            let mut s = String::new();
            f.format(&insn, &mut s);
            out.push_str(&format!("    {s}\n"));
        }
    }
    check_golden(path, &out);
}

/// The `gs:[disp32]` forms written byte for byte (asm.rs) are the bytes
/// iced encodes, for every 64-bit register and displacements of every
/// width.
#[test]
fn hand_encoded_gs_forms_match_iced() {
    use super::asm::{gs_mem, Asm};
    use iced_x86::{Code, Encoder, Instruction, Register};
    let iced = |i: Instruction| {
        let mut e = Encoder::new(64);
        e.encode(&i, 0x1000).expect("encode");
        e.take_buffer()
    };
    let regs = (0..16).map(|n| Register::RAX + n as u32);
    for disp in [0usize, 8, 0x7f, 0x80, 0x1238, 0x7fff_fff8] {
        for r in regs.clone() {
            let mut a = Asm::new(0x1000);
            a.store_gs(disp, r).unwrap();
            let want = iced(Instruction::with2(Code::Mov_rm64_r64, gs_mem(disp), r).unwrap());
            assert_eq!(a.buf, want, "mov gs:[{disp:#x}], {r:?}");
            let mut a = Asm::new(0x1000);
            a.load_gs(r, disp).unwrap();
            let want = iced(Instruction::with2(Code::Mov_r64_rm64, r, gs_mem(disp)).unwrap());
            assert_eq!(a.buf, want, "mov {r:?}, gs:[{disp:#x}]");
        }
        for imm in [0u32, 1, 0x8000_0000, u32::MAX] {
            let mut a = Asm::new(0x1000);
            a.store_gs_imm32(disp, imm).unwrap();
            let want = iced(Instruction::with2(Code::Mov_rm32_imm32, gs_mem(disp), imm).unwrap());
            assert_eq!(a.buf, want, "mov dword gs:[{disp:#x}], {imm:#x}");
        }
        let mut a = Asm::new(0x1000);
        a.jmp_gs(disp).unwrap();
        let want = iced(Instruction::with1(Code::Jmp_rm64, gs_mem(disp)).unwrap());
        assert_eq!(a.buf, want, "jmp gs:[{disp:#x}]");
    }
    // Beyond a sign-extended disp32: an error, never wrong bytes.
    assert!(Asm::new(0).store_gs(0x8000_0000, Register::RAX).is_err());
    // The ring word and return-address forms.
    let same = |emit: &dyn Fn(&mut Asm), i: Instruction| {
        let mut a = Asm::new(0x1000);
        emit(&mut a);
        assert_eq!(a.buf, iced(i), "{i}");
    };
    let mem = super::asm::mem;
    let (rax, rsp) = (Register::RAX, Register::RSP);
    for imm in [0u32, 1, 0x8000_0000, u32::MAX] {
        let store = Instruction::with2(Code::Mov_rm32_imm32, mem(rax, 0), imm);
        same(&|a| a.store_rax_imm32(imm), store.unwrap());
        let push = Instruction::with1(Code::Pushq_imm32, imm as i32);
        same(&|a| a.push_imm32(imm as i32), push.unwrap());
    }
    let load = Instruction::with2(Code::Mov_r64_rm64, rax, mem(rsp, 0));
    same(&|a| a.load_rax_from_rsp(), load.unwrap());
    for d in [8u32, 16, 0x7f, 0x80, 8 + 0xffff] {
        let up = Instruction::with2(Code::Lea_r64_m, rsp, mem(rsp, i64::from(d)));
        same(&|a| a.rsp_up(d), up.unwrap());
    }
    let past = Instruction::with2(Code::Lea_r64_m, rax, mem(rax, 4));
    same(&|a| a.rax_past_word(), past.unwrap());
    for r in regs.clone() {
        for imm in [
            0u64,
            1,
            0x7fff_ffff,
            0x8000_0000,
            0x7f12_3456_789a,
            u64::MAX,
        ] {
            let mov = Instruction::with2(Code::Mov_r64_imm64, r, imm);
            same(&|a| a.mov_imm64(r, imm), mov.unwrap());
        }
    }
}

/// `mov rax, [mem]` and `mov rax, reg` written byte for byte decode to
/// the operand asked for, over every base, index, scale, displacement
/// width and segment they take (RIP-relative at both ends of its reach),
/// and refuse the rest.
#[test]
fn hand_encoded_target_loads_decode_to_their_operands() {
    use iced_x86::Instruction;
    let decode = |a: &super::Asm, at: u64| -> Instruction {
        let mut d = Decoder::with_ip(64, &a.buf, at, DecoderOptions::NONE);
        let i = d.decode();
        assert_eq!(i.len(), a.buf.len(), "{i}: one instruction");
        i
    };
    let regs: Vec<Register> = (0..16).map(|n| Register::RAX + n as u32).collect();
    let bases = regs.iter().copied().chain([Register::None]);
    let at = 0x7f00_0000_1000u64;
    for base in bases {
        for index in regs
            .iter()
            .copied()
            .filter(|&r| r != Register::RSP)
            .chain([Register::None])
        {
            for scale in [1u32, 2, 4, 8] {
                for disp in [0i64, 8, -8, 0x7f, 0x80, -0x81, 0x1234_5678, -0x8000_0000] {
                    for seg in [Register::None, Register::FS, Register::GS] {
                        let mut a = super::Asm::new(at);
                        assert!(a.mov_rax_load(base, index, scale, disp, seg));
                        let i = decode(&a, at);
                        let what = format!("{base:?} {index:?}*{scale} {disp:#x} {seg:?}: {i}");
                        assert_eq!(i.code(), Code::Mov_r64_rm64, "{what}");
                        assert_eq!(i.op0_register(), Register::RAX, "{what}");
                        assert_eq!(i.memory_base(), base, "{what}");
                        assert_eq!(i.memory_index(), index, "{what}");
                        if index != Register::None {
                            assert_eq!(i.memory_index_scale(), scale, "{what}");
                        }
                        assert_eq!(i.memory_displacement64() as i64, disp, "{what}");
                        assert_eq!(i.segment_prefix(), seg, "{what}");
                    }
                }
            }
        }
    }
    for target in [at, at + 0x7fff_0000, at - 0x7fff_0000, at + 7] {
        for seg in [Register::None, Register::FS] {
            let mut a = super::Asm::new(at);
            assert!(a.mov_rax_load(Register::RIP, Register::None, 1, target as i64, seg));
            let i = decode(&a, at);
            assert!(i.is_ip_rel_memory_operand(), "{i}");
            assert_eq!(i.ip_rel_memory_address(), target, "{i}");
            assert_eq!(
                (i.op0_register(), i.segment_prefix()),
                (Register::RAX, seg),
                "{i}"
            );
        }
    }
    // Out of reach, 32-bit registers, a displacement beyond 32 bits,
    // another segment, RSP as an index, a scale of 3: not written.
    let mut a = super::Asm::new(at);
    let none = Register::None;
    assert!(!a.mov_rax_load(Register::RIP, none, 1, (at + (1 << 32)) as i64, none));
    assert!(!a.mov_rax_load(Register::EAX, none, 1, 0, none));
    assert!(!a.mov_rax_load(Register::RAX, none, 1, 1 << 40, none));
    assert!(!a.mov_rax_load(Register::RAX, none, 1, 0, Register::DS));
    assert!(!a.mov_rax_load(Register::RAX, Register::RSP, 1, 0, none));
    assert!(!a.mov_rax_load(Register::RAX, Register::RCX, 3, 0, none));
    assert!(a.buf.is_empty());
    for r in regs {
        let mut a = super::Asm::new(at);
        a.mov_rax_from(r);
        let i = decode(&a, at);
        assert_eq!(
            (i.code(), i.op0_register(), i.op1_register()),
            (Code::Mov_r64_rm64, Register::RAX, r)
        );
    }
}

/// The inline lookup as iced encodes it: the reference the byte-for-byte
/// `copied::emit_lookup_rax` is checked against.
fn iced_lookup_rax(a: &mut super::Asm) -> super::asm::Rel32 {
    use super::{S_RAX, S_RCX, S_RDX};
    use crate::contract::off;
    use iced_x86::{Instruction, MemoryOperand};
    let with_bi = |b, i| MemoryOperand::with_base_index(b, i);
    let (rax, rcx, rdx) = (Register::RAX, Register::RCX, Register::RDX);
    a.store_gs(S_RCX, rcx).unwrap();
    a.store_gs(S_RDX, rdx).unwrap();
    let rorx = Instruction::with3(Code::VEX_Rorx_r64_rm64_imm8, rdx, rax, 16u32);
    a.insn(&rorx.unwrap()).unwrap();
    a.lea(rdx, with_bi(rdx, rax)).unwrap();
    let movzx = Instruction::with2(Code::Movzx_r32_rm16, Register::EDX, Register::DX);
    a.insn(&movzx.unwrap()).unwrap();
    a.lea(rdx, with_bi(rdx, rdx)).unwrap();
    let entry = |field: i64| {
        let disp = off::IBL as i64 + field;
        MemoryOperand::new(Register::None, rdx, 8, disp, 4, false, Register::GS)
    };
    a.insn(&Instruction::with2(Code::Mov_r64_rm64, rcx, entry(0)).unwrap())
        .unwrap();
    a.lea(rcx, with_bi(rcx, rax)).unwrap();
    let jrcxz_at = a.len();
    a.bytes(&[0xe3, 0]);
    let miss = a.jmp_rel32();
    let hit = a.len();
    a.buf[jrcxz_at + 1] = (hit - (jrcxz_at + 2)) as u8;
    a.insn(&Instruction::with2(Code::Mov_r64_rm64, rcx, entry(8)).unwrap())
        .unwrap();
    a.load_gs(rax, S_RAX).unwrap();
    a.load_gs(rdx, S_RDX).unwrap();
    a.insn(&Instruction::with1(Code::Jmp_rm64, rcx).unwrap())
        .unwrap();
    miss
}

/// The lookup sequence copied from its template, and the byte-for-byte
/// emitter the template is made with, are what iced encodes at that
/// address, at every alignment, the miss rel32 where the copy says.
#[test]
fn lookup_templates_are_the_emitted_sequence() {
    for base in [0x1000u64, 0x1001, 0x1002, 0x1003, 0x7f00_1234_5677] {
        for lead in 0..4usize {
            let mut iced = super::Asm::new(base);
            iced.bytes(&vec![0x90; lead]);
            let field = iced_lookup_rax(&mut iced).into_link_field();
            let mut direct = super::Asm::new(base);
            direct.bytes(&vec![0x90; lead]);
            let miss = super::copied::emit_lookup_rax(&mut direct).unwrap();
            assert_eq!(direct.buf, iced.buf, "base {base:#x} + {lead}");
            assert_eq!(miss.into_link_field(), field, "base {base:#x} + {lead}");
            let mut copied = super::Asm::new(base);
            copied.bytes(&vec![0x90; lead]);
            let (code, at) = super::copied::lookup_template(copied.here());
            let r = copied.bytes_with_rel32(code, at);
            assert_eq!(copied.buf, iced.buf, "base {base:#x} + {lead}");
            assert_eq!(r.into_link_field(), field, "base {base:#x} + {lead}");
        }
    }
}

/// RIP-relative instructions copied with their displacement moved decode,
/// at their new address, to the instruction iced encodes there: same
/// operation, same absolute operand address (immediates after the
/// displacement, vector forms, a displacement that looks like an
/// immediate).
#[test]
fn moved_rip_relative_instructions_are_the_reencoded_ones() {
    use iced_x86::{Decoder, DecoderOptions, Encoder};
    let cases: &[&[u8]] = &[
        &[0x48, 0x8d, 0x05, 0xf9, 0xff, 0xff, 0xff], // lea rax, [rip-7]
        &[0x83, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x05], // cmp dword [rip+16], 5
        &[
            0x48, 0xc7, 0x05, 0x00, 0x01, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12,
        ], // mov qword [rip+256], 0x12345678
        &[0x66, 0x81, 0x3d, 0x20, 0x00, 0x00, 0x00, 0x34, 0x12], // cmp word [rip+32], 0x1234
        &[0xf3, 0x0f, 0x10, 0x05, 0x00, 0x20, 0x00, 0x00], // movss xmm0, [rip+0x2000]
        &[0xc5, 0xfd, 0x74, 0x0d, 0x40, 0x00, 0x00, 0x00], // vpcmpeqb ymm1, ymm0, [rip+64]
        &[0x80, 0x3d, 0x05, 0x00, 0x00, 0x00, 0x05], // cmp byte [rip+5], 5
        &[0xff, 0x35, 0x08, 0x00, 0x00, 0x00],       // push qword [rip+8]
    ];
    let guest = 0x40_1000u64;
    for raw in cases {
        let mut d = Decoder::with_ip(64, raw, guest, DecoderOptions::NONE);
        let insn = d.decode();
        assert!(
            !insn.is_invalid() && insn.is_ip_rel_memory_operand(),
            "{raw:02x?}"
        );
        let at = super::copied::rip_disp_at(raw, &insn).expect("displacement found");
        for host in [0x7f00_0000_1000u64, 0x4000_0003] {
            if (insn.ip_rel_memory_address() as i64 - host as i64).abs() > 1 << 30 {
                continue;
            }
            let mut moved = raw.to_vec();
            let disp = insn.ip_rel_memory_address() as i64 - (host + raw.len() as u64) as i64;
            moved[at..at + 4].copy_from_slice(&(disp as i32).to_le_bytes());
            let got = Decoder::with_ip(64, &moved, host, DecoderOptions::NONE).decode();
            let mut e = Encoder::new(64);
            e.encode(&insn, host).expect("iced re-encodes it");
            let iced = e.take_buffer();
            let want = Decoder::with_ip(64, &iced, host, DecoderOptions::NONE).decode();
            assert_eq!(got.code(), want.code(), "{raw:02x?} at {host:#x}");
            assert_eq!(
                got.ip_rel_memory_address(),
                insn.ip_rel_memory_address(),
                "{raw:02x?} at {host:#x}"
            );
            assert_eq!(got.len(), raw.len());
        }
    }
}

/// Contract I4: a block's prefix ends in its indirect entry, the one
/// instruction `mov rcx, gs:[S_RCX]` the lookup's hit relies on, and is
/// padding before it.
#[test]
fn the_block_prefix_ends_in_the_indirect_entry() {
    use crate::contract::{BLOCK_PREFIX, INDIRECT_ENTRY_BACK};
    let p = super::BLOCK_PREFIX_BYTES;
    let mut a = super::Asm::new(0);
    a.load_gs(Register::RCX, super::S_RCX).unwrap();
    let back = INDIRECT_ENTRY_BACK as usize;
    assert_eq!(&p[BLOCK_PREFIX - back..], &a.buf[..]);
    assert!(p[..BLOCK_PREFIX - back].iter().all(|&b| b == 0xcc));
    let i = iced_x86::Decoder::with_ip(64, &p[BLOCK_PREFIX - back..], 0, 0).decode();
    assert_eq!(i.code(), Code::Mov_r64_rm64);
    assert_eq!(i.op0_register(), Register::RCX);
    assert_eq!(i.memory_segment(), Register::GS);
    assert_eq!(i.len(), back);
}

/// Superblocks as the second tier emits them (`emit_superblock`): their
/// layout, the guards on an indirect transfer's hot target, the exits'
/// unit pushes, and a loop closed at the head. `HOTLIFT_BLESS=1 cargo
/// test --lib backend` regenerates `tests/golden/superblock.txt`.
#[test]
fn superblocks_match_golden() {
    use crate::ir::superblock::{Member, Next, Plan};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/superblock.txt");
    let member = |block: u32, at: u64, bytes: &[u8], next: Next| Member {
        block,
        ir: lift_block(bytes, GuestAddr(at), 64).expect("lift"),
        next,
        cold: None,
        alt: None,
    };
    // add rax, 1; cmp rax, rbx; jne +7 (to member 1) | dec rcx; jnz back
    // to the head.
    let two_member_loop = || {
        vec![
            member(
                0,
                0x40_1000,
                &[0x48, 0x83, 0xc0, 0x01, 0x48, 0x39, 0xd8, 0x75, 0x07],
                Next::Member,
            ),
            member(1, 0x40_1010, &[0x48, 0xff, 0xc9, 0x75, 0xeb], Next::Head),
        ]
    };
    let cases = [
        ("a loop of two members", false, two_member_loop()),
        ("the same loop, its passes counted", true, two_member_loop()),
        // call f | f: xor eax, eax; ret (guarded: back to the call's
        // return address) | add rbx, rax; ret (leaves).
        (
            "a call and its return inside",
            false,
            vec![
                member(0, 0x40_2000, &[0xe8, 0xfb, 0x00, 0x00, 0x00], Next::Member),
                member(1, 0x40_2100, &[0x31, 0xc0, 0xc3], Next::Member),
                member(2, 0x40_2005, &[0x48, 0x01, 0xc3, 0xc3], Next::Leave),
            ],
        ),
    ];
    let mut out = String::new();
    let mut f = IntelFormatter::new();
    for (name, count_loops, members) in cases {
        let mut plan = Plan::new(0, members);
        plan.count_loops = count_loops;
        assert!(plan.check(), "{name}: a valid plan");
        let env = super::SbEmitEnv {
            host_base: 0x2000_0000,
            count_check: false,
            resolve: &|_| None,
            unit_base: 0x10_0000,
            loop_limit: 3,
            stubs: STUBS,
        };
        let em = super::emit_superblock(&plan, &env).expect("emit");
        out.push_str(&format!("== {name}\n"));
        for e in &plan.exits {
            out.push_str(&format!(
                "exit {} from member {}: {:?}\n",
                e.index, e.member, e.to
            ));
        }
        for m in &plan.members {
            out.push_str(&format!(
                "member {} at {:#x}: {:?}\n",
                m.block, m.ir.start.0, m.next
            ));
        }
        for insn in Decoder::with_ip(64, &em.code, env.host_base, DecoderOptions::NONE) {
            let mut s = String::new();
            f.format(&insn, &mut s);
            out.push_str(&format!("    {:x}  {s}\n", insn.ip() - env.host_base));
        }
    }
    check_golden(path, &out);
}

/// A `rep` string instruction's ring records (its ECX before and after,
/// contract `TAG_REP`). `HOTLIFT_BLESS=1 cargo test --lib backend`
/// regenerates `tests/golden/ring.txt`.
#[test]
fn ring_records_match_golden() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/ring.txt");
    let mut out = String::new();
    let env = EmitEnv {
        host_base: 0x1000_0000,
        first_site: 0,
        prologue: super::Prologue::Ring { id: 0x1234 },
        stubs: STUBS,
    };
    // rep movsb; ret
    let rep = lift_block(&[0xf3, 0xa4, 0xc3], GuestAddr(0x40_1000), 64).expect("lift");
    let em = emit_block(&rep, &env).expect("emit");
    list(
        &mut out,
        "rep movsb; ret, pushing exit words",
        &em.code,
        env.host_base,
    );
    check_golden(path, &out);
}
