//! Relocations of a block's host code: every field whose value depends on
//! where the block is, where its guest code is, or the ids it was given,
//! so that code emitted once can be placed again elsewhere (translations
//! kept across runs, persist/translations). Each field's value moves by a
//! difference of those, so applying one is an addition, checked.
//!
//! I1: a block emitted with [`super::emit_block`] whose `relocatable` is
//!     true, relocated from its environment to another with
//!     [`relocate`], has the bytes `emit_block` gives for the other
//!     (reloc_tests.rs checks this on real code, with guest, host, id and
//!     site bases changed one at a time and all together), or
//!     [`relocate`] says it cannot (a field out of its range: a guest
//!     operand out of rel32 reach, a return address no longer below 2 GiB).
//! I2: no other byte depends on those: the block's own branches and data
//!     are relative within it, and host code starts 16-byte aligned, so
//!     padding (asm.rs I1) is the same at any block start.

/// What a field's value depends on (the field is 4 bytes unless named 64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RelocKind {
    /// A rel32 to the shared exit stubs (contract I5): moves with them
    /// and against the block's host address.
    HostRel,
    /// A rel32/disp32 to guest memory (a RIP-relative operand): moves with
    /// the guest code and against the block's host address.
    GuestRel,
    /// A guest address, 64 bits (a far operand, a return address in the
    /// block's constants).
    GuestAbs64,
    /// A guest address as a sign-extended imm32 (`push imm32` of a return
    /// address below 2 GiB).
    GuestAbs32,
    /// An exit word of the block (`block_word(id, k)`).
    BlockWord,
    /// An exit site's id.
    SiteId,
}

/// A field at byte `at` of the block's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reloc {
    pub at: u32,
    pub kind: RelocKind,
}

/// Where a block is and what it was given: a relocation moves a field by
/// the difference of two of these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Placement {
    pub host: u64,
    /// The guest code's load address (any fixed point of its module).
    pub guest: u64,
    pub block: u32,
    pub first_site: u32,
    /// The shared exit stubs (`ExitStubs::site`; the others lie at fixed
    /// distances from it).
    pub stubs: u64,
}

/// Move `code`'s fields from placement `from` to `to` (I1); false, with
/// `code` partly changed, where a field would leave its range.
pub fn relocate(code: &mut [u8], relocs: &[Reloc], from: &Placement, to: &Placement) -> bool {
    let dh = to.host.wrapping_sub(from.host) as i64;
    let dst = to.stubs.wrapping_sub(from.stubs) as i64;
    let dg = to.guest.wrapping_sub(from.guest) as i64;
    let dw = (i64::from(to.block) - i64::from(from.block)) * 4;
    let ds = i64::from(to.first_site) - i64::from(from.first_site);
    for r in relocs {
        let at = r.at as usize;
        if r.kind == RelocKind::GuestAbs64 {
            let Some(f) = code.get_mut(at..at + 8) else {
                return false;
            };
            let v = u64::from_le_bytes(f.try_into().expect("8 bytes"));
            f.copy_from_slice(&v.wrapping_add(dg as u64).to_le_bytes());
            continue;
        }
        let Some(f) = code.get_mut(at..at + 4) else {
            return false;
        };
        let v = i32::from_le_bytes(f.try_into().expect("4 bytes"));
        let moved = match r.kind {
            RelocKind::HostRel => i64::from(v) + dst - dh,
            RelocKind::GuestRel => i64::from(v) + dg - dh,
            // Sign-extended to 64 bits: still an address below 2 GiB.
            RelocKind::GuestAbs32 => match i64::from(v) + dg {
                a if (0..1 << 31).contains(&a) => a,
                _ => return false,
            },
            RelocKind::BlockWord | RelocKind::SiteId => {
                let d = if r.kind == RelocKind::BlockWord {
                    dw
                } else {
                    ds
                };
                match i64::from(v as u32) + d {
                    a if (0..=i64::from(u32::MAX)).contains(&a) => a as u32 as i32 as i64,
                    _ => return false,
                }
            }
            RelocKind::GuestAbs64 => unreachable!("handled above"),
        };
        let Ok(moved) = i32::try_from(moved) else {
            return false;
        };
        f.copy_from_slice(&moved.to_le_bytes());
    }
    true
}
