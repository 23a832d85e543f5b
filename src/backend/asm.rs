//! A small assembler over iced-x86's `Encoder`: one instruction at a time at
//! a known host address (FACTS: never `BlockEncoder`, which re-targets
//! branches and RIP-relative operands that hit its own instructions).
//!
//! I1: a rel32 field that will be patched is 4-byte aligned ([`Asm::jmp_rel32`],
//!     [`Asm::jcc_rel32`] pad with `nop` first), so one aligned store patches it.
//! I2: every [`Rel32`] is resolved before the block is committed: dropping
//!     one unresolved panics (an exit left pointing nowhere).

use iced_x86::{Code, Encoder, Instruction, MemoryOperand, Mnemonic, Register};

use super::EmitError;

/// A 4-byte aligned rel32 field inside the buffer that must be resolved.
#[must_use = "a rel32 field must be resolved with Asm::resolve"]
#[derive(Debug)]
pub struct Rel32 {
    pub(crate) field: usize,
    armed: bool,
}

impl Rel32 {
    /// Position of the field in the buffer, consuming the obligation: the
    /// caller patches it later through the code cache (a link site).
    pub fn into_link_field(mut self) -> usize {
        self.armed = false;
        self.field
    }
}

impl Drop for Rel32 {
    fn drop(&mut self) {
        if self.armed && !std::thread::panicking() {
            panic!(
                "rel32 field at buffer offset {} dropped unresolved",
                self.field
            );
        }
    }
}

pub struct Asm {
    pub buf: Vec<u8>,
    /// Fields that depend on where the code is (reloc.rs), in order.
    pub relocs: Vec<super::reloc::Reloc>,
    /// Something was emitted whose fields were not all recorded (reloc.rs
    /// I1 does not hold): the code may not be placed again.
    pub unrelocatable: bool,
    base: u64,
    /// Made at the first instruction iced encodes: most blocks need none
    /// (the fixed sequences are written byte for byte), and the first
    /// encoder of a process builds iced's handler tables (half a
    /// millisecond of `/bin/true`'s start-up).
    enc: Option<Encoder>,
}

impl std::fmt::Debug for Asm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Asm {{ base: {:#x}, len: {} }}",
            self.base,
            self.buf.len()
        )
    }
}

/// `gs:[disp]`, absolute (no base, no index). Displacement size 8 gives
/// the 64-bit form (SIB, no base, disp32) without an address-size prefix.
pub fn gs_mem(disp: usize) -> MemoryOperand {
    MemoryOperand::new(
        Register::None,
        Register::None,
        1,
        disp as i64,
        8,
        false,
        Register::GS,
    )
}

/// `[base + disp]`.
pub fn mem(base: Register, disp: i64) -> MemoryOperand {
    let size = match disp {
        0 => 0,
        -128..=127 => 1,
        _ => 8,
    };
    MemoryOperand::new(base, Register::None, 1, disp, size, false, Register::None)
}

/// An absolute displacement as the sign-extended disp32 it is encoded as.
fn disp32(disp: usize) -> Result<[u8; 4], EmitError> {
    i32::try_from(disp)
        .map(i32::to_le_bytes)
        .map_err(|_| EmitError::Encode {
            guest: 0,
            msg: format!("gs displacement {disp:#x} out of range"),
        })
}

impl Asm {
    pub fn new(base: u64) -> Asm {
        Asm {
            buf: Vec::with_capacity(256),
            relocs: Vec::new(),
            unrelocatable: false,
            base,
            enc: None,
        }
    }

    pub fn here(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The field at buffer offset `at` depends on `kind` (reloc.rs).
    pub fn reloc(&mut self, at: usize, kind: super::reloc::RelocKind) {
        self.relocs.push(super::reloc::Reloc {
            at: at as u32,
            kind,
        });
    }

    /// The 8 bytes just written are a guest address (`GuestAbs64`).
    pub fn reloc_last8(&mut self) {
        self.reloc(self.buf.len() - 8, super::reloc::RelocKind::GuestAbs64);
    }

    /// The 4-byte field just written depends on `kind`.
    pub fn reloc_last(&mut self, kind: super::reloc::RelocKind) {
        self.reloc(self.buf.len() - 4, kind);
    }

    /// Encode `insn` at the current address. A RIP-relative operand (guest
    /// memory: hotlift's own code has none) is a `GuestRel` field.
    pub fn insn(&mut self, insn: &Instruction) -> Result<(), EmitError> {
        let ip = self.here();
        let enc = self.enc.get_or_insert_with(|| Encoder::new(64));
        match enc.encode(insn, ip) {
            Ok(_) => {
                let start = self.buf.len();
                // The encoder's buffer goes back to it, emptied: no
                // allocation per instruction.
                let mut out = enc.take_buffer();
                self.buf.extend_from_slice(&out);
                out.clear();
                enc.set_buffer(out);
                if insn.is_ip_rel_memory_operand() {
                    let c = enc.get_constant_offsets();
                    if c.has_displacement() && c.displacement_size() == 4 {
                        let at = start + c.displacement_offset();
                        self.reloc(at, super::reloc::RelocKind::GuestRel);
                    } else {
                        self.unrelocatable = true;
                    }
                }
                Ok(())
            }
            Err(e) => {
                // FACTS iced #4: the failed bytes stay in the buffer.
                let _ = enc.take_buffer();
                Err(EmitError::Encode {
                    guest: insn.ip(),
                    msg: e.to_string(),
                })
            }
        }
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// One `nop` of 0 to 3 bytes before an opcode of `opcode_len` bytes,
    /// so that the field after it is aligned (I1). One instruction, not
    /// one per byte: the padding runs on every block's way out.
    fn pad_for_field(&mut self, opcode_len: usize) {
        const NOPS: [&[u8]; 4] = [&[], &[0x90], &[0x66, 0x90], &[0x0f, 0x1f, 0x00]];
        let past = (self.here() + opcode_len as u64) % 4;
        self.buf.extend_from_slice(NOPS[((4 - past) % 4) as usize]);
    }

    /// `jmp rel32` with an aligned field (I1).
    pub fn jmp_rel32(&mut self) -> Rel32 {
        self.pad_for_field(1);
        self.buf.push(0xe9);
        self.field()
    }

    /// `jmp rel32` to `target`, a jump never patched (its field unaligned:
    /// no padding).
    pub fn jmp_fixed(&mut self, target: u64) {
        self.buf.push(0xe9);
        let r = self.field();
        self.resolve(r, target);
    }

    /// `push qword [rip + rel32]`: the field is resolved to the address of
    /// 8 bytes of data in the same buffer (not a link site).
    pub fn push_rip_rel32(&mut self) -> Rel32 {
        self.buf.extend_from_slice(&[0xff, 0x35]);
        self.field()
    }

    /// The guest's `loop`/`loope`/`loopne`/`jrcxz`/`jecxz` `insn` (they
    /// only have rel8; a 32-bit address size counts ECX) with its rel8
    /// still 0: the rel8's buffer offset, for [`Asm::set_rel8`].
    pub fn short_branch(&mut self, insn: &Instruction) -> usize {
        let addr32 = matches!(
            insn.code(),
            Code::Loop_rel8_64_ECX | Code::Loope_rel8_64_ECX | Code::Loopne_rel8_64_ECX
        ) || insn.mnemonic() == Mnemonic::Jecxz;
        if addr32 {
            self.buf.push(0x67);
        }
        self.buf.push(match insn.mnemonic() {
            Mnemonic::Loop => 0xe2,
            Mnemonic::Loope => 0xe1,
            Mnemonic::Loopne => 0xe0,
            Mnemonic::Jrcxz | Mnemonic::Jecxz => 0xe3,
            m => panic!("{m:?} is not a short-only branch"),
        });
        self.buf.push(0);
        self.buf.len() - 1
    }

    /// Point the rel8 at buffer offset `at` to buffer offset `to`.
    pub fn set_rel8(&mut self, at: usize, to: usize) {
        self.buf[at] = u8::try_from(to - (at + 1)).expect("short branch span");
    }

    /// `jcc rel8` (condition code 0..=15 as in the opcode) with its rel8
    /// still 0: the rel8's buffer offset, for [`Asm::set_rel8`].
    pub fn jcc_rel8(&mut self, cc: u8) -> usize {
        self.buf.extend_from_slice(&[0x70 | cc, 0]);
        self.buf.len() - 1
    }

    /// `jcc rel32` (condition code 0..=15 as in the opcode) with an aligned field (I1).
    pub fn jcc_rel32(&mut self, cc: u8) -> Rel32 {
        self.pad_for_field(2);
        self.buf.extend_from_slice(&[0x0f, 0x80 | cc]);
        self.field()
    }

    /// Append `code`, a sequence with a rel32 field to resolve at offset
    /// `field` in it (aligned where `code` was made for this address mod 4,
    /// I1).
    pub fn bytes_with_rel32(&mut self, code: &[u8], field: usize) -> Rel32 {
        let field = self.buf.len() + field;
        debug_assert!((self.base + field as u64).is_multiple_of(4), "I1");
        self.buf.extend_from_slice(code);
        Rel32 { field, armed: true }
    }

    fn field(&mut self) -> Rel32 {
        let field = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        Rel32 { field, armed: true }
    }

    /// Point `r` at host address `target`: outside the code emitted so
    /// far (the shared stubs), a `HostRel` field.
    pub fn resolve(&mut self, mut r: Rel32, target: u64) {
        r.armed = false;
        if target < self.base || target > self.here() {
            self.reloc(r.field, super::reloc::RelocKind::HostRel);
        }
        let rel = target.wrapping_sub(self.base + r.field as u64 + 4) as i64;
        let rel =
            i32::try_from(rel).expect("rel32 within code memory (at most 1 GiB, --cache-mib)");
        self.buf[r.field..r.field + 4].copy_from_slice(&rel.to_le_bytes());
    }

    /// Host address of a buffer offset.
    pub fn addr_of(&self, off: usize) -> u64 {
        self.base + off as u64
    }

    // --- small helpers for the fixed sequences -------------------------
    //
    // The `gs:[disp32]` forms every block uses are written byte for byte
    // (the same bytes iced gives: tests.rs checks every register): a
    // translation is mostly these, and encoding each through iced cost
    // more than the rest of the emitter.

    /// `gs:` prefix, REX.W (with REX.R for `reg`), `op`, and the ModRM/SIB
    /// of an absolute `[disp32]`.
    fn gs_abs(&mut self, op: u8, reg: u8, disp: usize) -> Result<(), EmitError> {
        let d = disp32(disp)?;
        let rex = 0x48 | (reg >> 3) << 2;
        let [a, b, c, e] = d;
        self.buf
            .extend_from_slice(&[0x65, rex, op, (reg & 7) << 3 | 4, 0x25, a, b, c, e]);
        Ok(())
    }

    /// `mov gs:[disp], reg` (a 64-bit register).
    pub fn store_gs(&mut self, disp: usize, reg: Register) -> Result<(), EmitError> {
        if !reg.is_gpr64() {
            return self.insn(
                &Instruction::with2(Code::Mov_rm64_r64, gs_mem(disp), reg)
                    .expect("mov gs:[d], r64"),
            );
        }
        self.gs_abs(0x89, reg.number() as u8, disp)
    }

    /// `mov reg, gs:[disp]` (a 64-bit register).
    pub fn load_gs(&mut self, reg: Register, disp: usize) -> Result<(), EmitError> {
        if !reg.is_gpr64() {
            return self.insn(
                &Instruction::with2(Code::Mov_r64_rm64, reg, gs_mem(disp))
                    .expect("mov r64, gs:[d]"),
            );
        }
        self.gs_abs(0x8b, reg.number() as u8, disp)
    }

    /// `mov reg, imm64` (a 64-bit register; the 10-byte form). Made
    /// through iced, even an `Instruction` for it built iced's encoder
    /// tables (thousands of allocations, about a millisecond of every
    /// process that met one far RIP-relative `lea`).
    pub fn mov_imm64(&mut self, reg: Register, imm: u64) {
        assert!(reg.is_gpr64(), "mov {reg:?}, imm64");
        let n = reg.number() as u8;
        self.buf.extend_from_slice(&[0x48 | n >> 3, 0xb8 | (n & 7)]);
        self.buf.extend_from_slice(&imm.to_le_bytes());
    }

    /// `mov rax, reg` (a 64-bit register), as iced encodes it.
    pub fn mov_rax_from(&mut self, reg: Register) {
        assert!(reg.is_gpr64(), "mov rax, {reg:?}");
        let n = reg.number() as u8;
        self.buf
            .extend_from_slice(&[0x48 | n >> 3, 0x8b, 0xc0 | (n & 7)]);
    }

    /// `mov rax, qword seg:[base + index*scale + disp]` written byte for
    /// byte (an indirect jump's or call's target; through iced, the first
    /// one built iced's encoder tables in every process): `base` a 64-bit
    /// register, `RIP` (`disp` is then the absolute address) or none,
    /// `index` one or none, `seg` none, FS or GS. False, and nothing
    /// written, for any other operand (or a displacement beyond 32 bits).
    pub fn mov_rax_load(
        &mut self,
        base: Register,
        index: Register,
        scale: u32,
        disp: i64,
        seg: Register,
    ) -> bool {
        let prefix: &[u8] = match seg {
            Register::None => &[],
            Register::FS => &[0x64],
            Register::GS => &[0x65],
            _ => return false,
        };
        let gpr = |r: Register| r == Register::None || r.is_gpr64();
        let ss = match scale {
            1 => 0u8,
            2 => 1,
            4 => 2,
            8 => 3,
            _ => return false,
        };
        if base == Register::RIP {
            if index != Register::None {
                return false;
            }
            let end = self.here() as i64 + prefix.len() as i64 + 7;
            let Ok(rel) = i32::try_from(disp.wrapping_sub(end)) else {
                return false;
            };
            self.buf.extend_from_slice(prefix);
            self.buf.extend_from_slice(&[0x48, 0x8b, 0x05]);
            self.buf.extend_from_slice(&rel.to_le_bytes());
            self.reloc_last(super::reloc::RelocKind::GuestRel);
            return true;
        }
        if !gpr(base) || !gpr(index) || index == Register::RSP {
            return false;
        }
        let Ok(d32) = i32::try_from(disp) else {
            return false;
        };
        let num = |r: Register| r.number() as u8;
        let mut rex = 0x48u8;
        // mod: no base takes a disp32 (SIB base 101); [rbp]/[r13] need a
        // displacement even when it is 0.
        let md: u8 = if base == Register::None || d32 == 0 && num(base) & 7 != 5 {
            0
        } else if i8::try_from(d32).is_ok() {
            1
        } else {
            2
        };
        let mut bytes = Vec::with_capacity(8);
        if index == Register::None && base != Register::None && num(base) & 7 != 4 {
            rex |= num(base) >> 3;
            bytes.push(md << 6 | (num(base) & 7));
        } else {
            let sib_index = match index {
                Register::None => 4,
                r => {
                    rex |= (num(r) >> 3) << 1;
                    num(r) & 7
                }
            };
            let sib_base = match base {
                Register::None => 5,
                r => {
                    rex |= num(r) >> 3;
                    num(r) & 7
                }
            };
            bytes.push(md << 6 | 4);
            bytes.push(ss << 6 | sib_index << 3 | sib_base);
        }
        match (md, base) {
            (0, Register::None) | (2, _) => bytes.extend_from_slice(&d32.to_le_bytes()),
            (1, _) => bytes.push(d32 as i8 as u8),
            _ => {}
        }
        self.buf.extend_from_slice(prefix);
        self.buf.extend_from_slice(&[rex, 0x8b]);
        self.buf.extend_from_slice(&bytes);
        true
    }

    /// `mov dword gs:[disp], imm`.
    pub fn store_gs_imm32(&mut self, disp: usize, imm: u32) -> Result<(), EmitError> {
        let d = disp32(disp)?;
        self.buf.extend_from_slice(&[0x65, 0xc7, 0x04, 0x25]);
        self.buf.extend_from_slice(&d);
        self.buf.extend_from_slice(&imm.to_le_bytes());
        Ok(())
    }

    /// `jmp qword gs:[disp]`.
    pub fn jmp_gs(&mut self, disp: usize) -> Result<(), EmitError> {
        let d = disp32(disp)?;
        self.buf.extend_from_slice(&[0x65, 0xff, 0x24, 0x25]);
        self.buf.extend_from_slice(&d);
        Ok(())
    }

    /// `mov dword [rax], imm` (a ring word).
    pub fn store_rax_imm32(&mut self, imm: u32) {
        self.buf.extend_from_slice(&[0xc7, 0x00]);
        self.buf.extend_from_slice(&imm.to_le_bytes());
    }

    /// `mov dword [rax-4], imm` (the ring word just written, again).
    pub fn rewrite_last_word(&mut self, imm: u32) {
        self.buf.extend_from_slice(&[0xc7, 0x40, 0xfc]);
        self.buf.extend_from_slice(&imm.to_le_bytes());
    }

    /// `lea rax, [rax+4]` (past a ring word, flag-free).
    pub fn rax_past_word(&mut self) {
        self.buf.extend_from_slice(&[0x48, 0x8d, 0x40, 0x04]);
    }

    /// `mov rax, [rsp]` (a return's target).
    pub fn load_rax_from_rsp(&mut self) {
        self.buf.extend_from_slice(&[0x48, 0x8b, 0x04, 0x24]);
    }

    /// `lea rsp, [rsp + d]` (a return's pop, flag-free).
    pub fn rsp_up(&mut self, d: u32) {
        if d <= 0x7f {
            self.buf
                .extend_from_slice(&[0x48, 0x8d, 0x64, 0x24, d as u8]);
        } else {
            self.buf.extend_from_slice(&[0x48, 0x8d, 0xa4, 0x24]);
            self.buf.extend_from_slice(&d.to_le_bytes());
        }
    }

    /// `push imm32` (sign-extended to 64 bits).
    pub fn push_imm32(&mut self, imm: i32) {
        self.buf.push(0x68);
        self.buf.extend_from_slice(&imm.to_le_bytes());
    }

    pub fn lea(&mut self, dst: Register, m: MemoryOperand) -> Result<(), EmitError> {
        self.insn(&Instruction::with2(Code::Lea_r64_m, dst, m).expect("lea"))
    }

    pub fn mov_load(&mut self, dst: Register, m: MemoryOperand) -> Result<(), EmitError> {
        self.insn(&Instruction::with2(Code::Mov_r64_rm64, dst, m).expect("mov r64, m"))
    }
}
