//! The contract between emitted code, the dispatcher and the monitor: what
//! a ring word means. Emitted code and the dispatcher produce these words,
//! the monitor consumes them; both sides import them from here, so neither
//! depends on the other for the format (a leaf: this module uses nothing
//! of the crate).
//!
//! A ring word below [`TAG`] is a unit id: a block id (below
//! [`UNIT_BASE`]: one block ran) or a superblock unit (at or above it: a
//! pass through a superblock ended, and with it the fixed path of member
//! blocks the unit stands for). A word with [`TAG`] set opens a tagged
//! record of [`record_words`] more words.
//!
//! I1: [`record_words`] is the only place that says how long a record is.
//! I2: a counted loop's iterations (a superblock whose passes loop back to
//!     its head) are not words: each loop exit `l` of the superblock
//!     running counts down `ThreadCtx::loop_left[l]` from the thread's
//!     `loop_limit` (`--sb-loop-limit`, default [`LOOP_LIMIT`]), and a
//!     [`TAG_LOOP`] record, then a [`TAG_LOOP_PASSES`] word for each
//!     counter that counted any pass, carry the passes counted (and the
//!     counters are reset) when the thread leaves the superblock (before
//!     the unit of the exit it leaves by, or the partial unit the
//!     dispatcher pushes) or when a counter reaches zero. Outside a
//!     counted loop every counter holds the limit, so all superblocks
//!     share the same counters.

/// Entries with this bit set are tagged records, not unit ids.
pub const TAG: u32 = 0x8000_0000;
/// Bits 31..30 = 10: a syscall record; the number is in the low 30 bits.
/// Followed by three words: result (low, high) and the duration in ns
/// (saturated at 2^32-1).
pub const TAG_SYSCALL: u32 = 0x8000_0000;
pub const NR_MASK: u32 = 0x3fff_ffff;
/// A `rep` string instruction of the block entered last ran: followed by
/// ECX before and ECX after.
pub const TAG_REP: u32 = 0xc000_0001;
/// A `rep` string instruction inside a superblock pass ran: as `TAG_REP`,
/// for the unit that ends the pass (it comes after).
pub const TAG_REP_SB: u32 = 0xc000_0005;
/// The block entered last stopped early (a fault, a trap that does not
/// retire, a store into translated code): followed by the number of its
/// counted instructions that did not retire.
pub const TAG_UNRETIRED: u32 = 0xc000_0002;
/// The `rep` string instruction of the last `TAG_REP` record faulted: it
/// retired only its completed iterations (ECX before minus ECX at the
/// fault); followed by the number of counted instructions after it in its
/// block (which did not retire).
pub const TAG_UNRETIRED_REP: u32 = 0xc000_0003;
/// `rt_sigreturn` replaced the thread's context: the next entry does not
/// follow the block before.
pub const TAG_SIGRETURN: u32 = 0xc000_0004;
/// A frame for signal `sig` (low 8 bits) was built: the next entry is the
/// guest's handler. Followed by the restorer's and the handler's
/// addresses (low, high words each).
pub const TAG_SIGNAL: u32 = 0xc000_0100;
/// Counted loop iterations (I2): `TAG_LOOP` is followed by the first unit
/// of the superblock and the time stamp counter when the record was made
/// (low, high: the monitor's samples are placed by it, since a counted
/// loop pushes so few words for its time). The [`TAG_LOOP_PASSES`] words
/// after it belong to that superblock.
pub const TAG_LOOP: u32 = 0xc000_0200;
/// Bits 31..29 = 111: a word of its own, `TAG_LOOP_PASSES | l << 24 |
/// n`: n (below 2^24) passes ended at the l-th exit that loops back to the
/// head of the superblock of the last `TAG_LOOP` record (I2).
pub const TAG_LOOP_PASSES: u32 = 0xe000_0000;
/// The mask of a `TAG_LOOP_PASSES` word's tag, and of its count.
pub const LOOP_PASSES_MASK: u32 = 0xe000_0000;
pub const LOOP_PASSES_N: u32 = (1 << 24) - 1;
/// Bits 31..28 = 1101: a path-profiling record: kind in bits 27..24
/// ([`REC_END`] …), the function's version in bits 23..16.
pub const TAG_PATH: u32 = 0xd000_0000;

/// Path record kinds. Words after the tag: END serial, tot lo, tot hi,
/// seg; CHUNK serial, tot lo, tot hi; TERM serial; LOST serial.
pub const REC_END: u32 = 1;
pub const REC_CHUNK: u32 = 2;
pub const REC_TERM: u32 = 3;
pub const REC_LOST: u32 = 4;

/// Block ids are below this (the block table's capacity).
pub const BLOCK_ID_LIMIT: u32 = 1 << 22;
/// Superblock units are numbered from here.
pub const UNIT_BASE: u32 = BLOCK_ID_LIMIT;
/// Most superblock units one run makes (building stops beyond).
pub const UNIT_LIMIT: u32 = 1 << 22;

/// Loop counters per guest thread (I2): a superblock with more loop exits
/// than this pushes a word per pass instead (at most 32: the counter's
/// index is 5 bits of a `TAG_LOOP_PASSES` word).
pub const LOOP_COUNTERS: usize = 16;
/// The default of what a loop counter holds outside a counted loop: how
/// many passes a counter takes before its record is pushed anyway, so that
/// the monitor and its superblock decisions never wait long for a thread
/// that stays in one loop, and the samples' times (placed through the
/// records' time stamps, monitor/sampler.rs I4) are off by at most this
/// many passes at a loop's start.
pub const LOOP_LIMIT: u32 = 1 << 12;

// A `TAG_LOOP_PASSES` word holds the counter's index in 5 bits.
const _: () = assert!(LOOP_COUNTERS <= 32);

/// Words that follow the tagged word `tag` (I1).
pub fn record_words(tag: u32) -> usize {
    match tag {
        t if t & 0xf000_0000 == TAG_PATH => match (t >> 24) & 0xf {
            REC_END => 4,
            REC_CHUNK => 3,
            _ => 1,
        },
        TAG_REP | TAG_REP_SB => 2,
        TAG_UNRETIRED | TAG_UNRETIRED_REP => 1,
        TAG_SIGRETURN => 0,
        t if t & !0xff == TAG_SIGNAL => 4,
        TAG_LOOP => 3,
        t if t & LOOP_PASSES_MASK == TAG_LOOP_PASSES => 0,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_do_not_overlap() {
        // Syscall records are bits 31..30 = 10; every other tag is 11.
        for t in [
            TAG_REP,
            TAG_REP_SB,
            TAG_UNRETIRED,
            TAG_UNRETIRED_REP,
            TAG_SIGRETURN,
            TAG_SIGNAL | 9,
            TAG_LOOP,
            TAG_PATH | REC_END << 24,
        ] {
            assert_eq!(t >> 30, 3, "{t:#x}");
            assert_ne!(t & !0xff, TAG_SYSCALL, "{t:#x}");
        }
        assert_eq!(record_words(TAG_LOOP), 3);
        assert_eq!(record_words(TAG_LOOP_PASSES | 15 << 24 | LOOP_PASSES_N), 0);
        for t in [TAG_REP, TAG_SIGNAL, TAG_LOOP, TAG_PATH, TAG_SYSCALL | 5] {
            assert_ne!(t & LOOP_PASSES_MASK, TAG_LOOP_PASSES, "{t:#x}");
        }
        assert_eq!(record_words(TAG_SYSCALL | 60), 3);
        assert_eq!(record_words(TAG_PATH | REC_CHUNK << 24), 3);
    }
}
