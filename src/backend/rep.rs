//! A `rep` string instruction's record in the ring (contract `TAG_REP`):
//! which instruction it is, and ECX before it (ECX after it follows the
//! instruction).

use super::{emit_ring_words, Asm, EmitError, RingWord};
use crate::contract::{block_word, REP_OFFSET, TAG_REP};
use crate::ir::{IrBlock, IrInsn};

/// Where a `rep` string instruction's record says it is: its block's id,
/// whose exit word `block_word(id, 0)` the record carries, as a
/// `BlockWord` field when `moves` (a block's own id), or as it is (a
/// superblock member's block).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RepSite {
    pub block: u32,
    pub moves: bool,
}

impl RepSite {
    /// The record's words before instruction `i` of block `b`: the tag
    /// with `i`'s offset in the block, the block's word, ECX.
    pub(super) fn emit_record(self, a: &mut Asm, b: &IrBlock, i: &IrInsn) -> Result<(), EmitError> {
        let off = i.addr.0.wrapping_sub(b.start.0);
        let off = u32::try_from(off)
            .ok()
            .filter(|&o| o <= REP_OFFSET)
            .ok_or_else(|| EmitError::Encode {
                guest: i.addr.0,
                msg: "a rep string instruction too far from its block's start".into(),
            })?;
        let w = block_word(self.block, 0);
        let block = if self.moves {
            RingWord::Block(w)
        } else {
            RingWord::Imm(w)
        };
        emit_ring_words(a, &[RingWord::Imm(TAG_REP | off), block, RingWord::Ecx])
    }
}
