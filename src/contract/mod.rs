//! The contract between emitted code, the dispatcher and the monitor: what
//! a ring word means, and the thread context emitted code and the stubs
//! work in (ctx.rs). Emitted code and the dispatcher produce these words,
//! the monitor consumes them; both sides import them from here, so neither
//! depends on the other for the format (a leaf: this module uses nothing
//! of the crate).
//!
//! A ring word below [`TAG`] is an *exit word*: a piece of guest code ran
//! to its end and left by one of its exits. Block `b` has three words,
//! [`block_word`]`(b, k)`: [`EXIT_FALL`] (a branch's fall-through side, or
//! the only exit of any other block: where an indirect exit went, the
//! next exit word's code tells), [`EXIT_TAKEN`] (a branch's taken side),
//! and [`PARTIAL`] (the block stopped inside, pushed by the dispatcher,
//! with a `TAG_UNRETIRED` record after it). A superblock's words are its
//! units, from [`UNIT_BASE`] on: one per exit, standing for the path of
//! member blocks that ends there, and one per member for a pass that
//! stopped inside it. A word with [`TAG`] set opens a tagged record of
//! [`record_words`] more words.
//!
//! I1: [`record_words`] is the only place that says how long a record is.
//! I2: a counted loop's iterations (a superblock whose passes loop back to
//!     its head) are not words: each loop exit `l` of the superblock
//!     running counts down `ThreadCtx::loop_left[l]` from the thread's
//!     `loop_limit` (`--sb-loop-limit`, default [`LOOP_LIMIT`]), and a
//!     [`TAG_LOOP`] record, then a [`TAG_LOOP_PASSES`] word for each
//!     counter that counted any pass, carry the passes counted (and the
//!     counters are reset) when the thread leaves the superblock having
//!     counted any (before the unit of the exit it leaves by, or the
//!     partial unit the dispatcher pushes) or when a counter reaches
//!     zero. Outside a counted loop every counter holds the limit, so all
//!     superblocks share the same counters.
//! I3: an exit word comes after every record about its code's own run (a
//!     `rep` string instruction's `TAG_REP`), and a `TAG_UNRETIRED` or
//!     `TAG_UNRETIRED_REP` record right after the (partial) word it
//!     corrects.
//! I4: indirect entries. Every block the code cache can find by guest
//!     address comes after [`BLOCK_PREFIX`] bytes whose last
//!     [`INDIRECT_ENTRY_BACK`] load the guest's RCX from its scratch slot
//!     and fall into the block's entry. An indirect lookup in emitted code
//!     jumps there through a register it cannot restore itself (RCX), so
//!     the one jump the hit takes depends on nothing but the table's entry
//!     (cache/ibl.rs I2); the dispatcher, direct links and superblocks
//!     enter at the entry itself.
//! I5: shared exit stubs. Code leaves for the dispatcher through stubs
//!     emitted once per process below the code cache's floor
//!     ([`ExitStubs`]), so that a block's cold code is a store and a jump
//!     (a direct exit's site id) or nothing at all (an indirect lookup's
//!     miss jumps straight to the shared stub): cold code sat between the
//!     hot code of consecutive blocks and took up half of it. A thread in
//!     a shared stub is on its way to the dispatcher (signal/deliver.rs).

mod ctx;

pub use ctx::{exit_reason, off, take32, Reg, ThreadCtx, CTX_BYTES, PATH_SCRATCH, SCRATCH_SLOTS};

/// Where a host offset of superblock code is, for fault reports and state
/// recovery (ascending by `off`): the backend's record of the superblock
/// code it emits, which the code cache keeps.
#[derive(Debug, Clone, Copy)]
pub struct SbPc {
    pub off: u32,
    /// Member index; `u16::MAX` in glue where no member's pass is open.
    pub member: u16,
    /// Counted instructions of the member after this one.
    pub after: u16,
    /// A `rep` string instruction bracketed by ring records.
    pub rep: bool,
    /// The code starting at `off` is the guest instruction at `guest`
    /// (machine state exact there), or glue belonging to it (`exact`
    /// false).
    pub exact: bool,
    pub guest: u64,
}

/// Entries with this bit set are tagged records, not exit words.
pub const TAG: u32 = 0x8000_0000;
/// Bits 31..30 = 10: a syscall record; the number is in the low 30 bits.
/// Followed by three words: result (low, high) and the duration in ns
/// (saturated at 2^32-1).
pub const TAG_SYSCALL: u32 = 0x8000_0000;
pub const NR_MASK: u32 = 0x3fff_ffff;
/// Bits 31..24 = 0xc1: a `rep` string instruction of the code whose exit
/// word comes next ran (I3), `TAG_REP | offset`, the offset of the
/// instruction from the start of its block (below 2^24): followed by that
/// block's `block_word(b, 0)` (a superblock's member's own block), ECX
/// before and ECX after (the last word pushed after the instruction).
pub const TAG_REP: u32 = 0xc100_0000;
/// The mask of a `TAG_REP` word's tag, and of its offset.
pub const REP_MASK: u32 = 0xff00_0000;
pub const REP_OFFSET: u32 = (1 << 24) - 1;
/// The exit word before stood for code that stopped early (a fault, a
/// trap that does not retire, a store into translated code): followed by
/// the number of its counted instructions that did not retire.
pub const TAG_UNRETIRED: u32 = 0xc000_0002;
/// The `rep` string instruction of the last `TAG_REP` record faulted: it
/// retired only its completed iterations (ECX before minus ECX at the
/// fault); followed by the number of counted instructions after it in its
/// block (which did not retire).
pub const TAG_UNRETIRED_REP: u32 = 0xc000_0003;
/// `rt_sigreturn` replaced the thread's context: what runs next does not
/// follow the code before.
pub const TAG_SIGRETURN: u32 = 0xc000_0004;
/// A frame for signal `sig` (low 8 bits) was built: the next exit word is
/// the guest's handler's. Followed by the restorer's and the handler's
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

/// Frames of each thread's activation stack for path profiling
/// (paths/emit/stubs.rs, paths/engine/mod.rs): calls out of instrumented
/// code nested this deep still come back instrumented.
pub const PATH_FRAMES: u64 = 1 << 16;

/// Block ids are below this (the block table's capacity).
pub const BLOCK_ID_LIMIT: u32 = 1 << 22;
/// The exits of a block: the fall-through side of a branch, or the only
/// exit of any other block.
pub const EXIT_FALL: u32 = 0;
/// A branch's taken side.
pub const EXIT_TAKEN: u32 = 1;
/// The block stopped inside (pushed by the dispatcher, I3).
pub const PARTIAL: u32 = 2;
/// Superblock units are numbered from here (above every block's words).
pub const UNIT_BASE: u32 = 4 * BLOCK_ID_LIMIT;
/// Most superblock units one run makes (building stops beyond).
pub const UNIT_LIMIT: u32 = 1 << 22;
/// Every exit word is below this.
pub const WORD_LIMIT: u32 = UNIT_BASE + UNIT_LIMIT;

/// The exit word of block `b` leaving by `k` (`EXIT_FALL` …).
pub const fn block_word(b: u32, k: u32) -> u32 {
    b << 2 | k
}

/// The block and exit of a word below [`UNIT_BASE`].
pub const fn word_block(w: u32) -> (u32, u32) {
    (w >> 2, w & 3)
}

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
// Exit words stay below the tags.
const _: () = assert!(WORD_LIMIT <= TAG);

/// Words that follow the tagged word `tag` (I1).
pub fn record_words(tag: u32) -> usize {
    match tag {
        t if t & 0xf000_0000 == TAG_PATH => match (t >> 24) & 0xf {
            REC_END => 4,
            REC_CHUNK => 3,
            _ => 1,
        },
        t if t & REP_MASK == TAG_REP => 3,
        TAG_UNRETIRED | TAG_UNRETIRED_REP => 1,
        TAG_SIGRETURN => 0,
        t if t & !0xff == TAG_SIGNAL => 4,
        TAG_LOOP => 3,
        t if t & LOOP_PASSES_MASK == TAG_LOOP_PASSES => 0,
        _ => 3,
    }
}

/// Bytes the code cache puts before each block it can find by guest
/// address (I4): a multiple of 16, so the entry stays aligned as blocks
/// are.
pub const BLOCK_PREFIX: usize = 16;

/// How far before a block's entry its indirect entry is (I4): the length
/// of `mov rcx, gs:[disp32]`.
pub const INDIRECT_ENTRY_BACK: u64 = 9;

/// Host addresses of the shared exit stubs (I5), within rel32 reach of
/// all code memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExitStubs {
    /// Leaves with reason `SITE`, the site id already in `EXIT_ARG`.
    pub site: u64,
    /// An indirect lookup missed: the guest target in RAX, the guest's
    /// RAX, RCX and RDX in their scratch slots (backend `lookup_rax`).
    pub miss: u64,
    /// Leaves with reason `INDIRECT_MISS`, the target already in `RIP`
    /// (a superblock exit whose block is not translated yet).
    pub miss_rip: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_do_not_overlap() {
        // Syscall records are bits 31..30 = 10; every other tag is 11.
        for t in [
            TAG_REP,
            TAG_UNRETIRED,
            TAG_UNRETIRED_REP,
            TAG_SIGRETURN,
            TAG_SIGNAL | 9,
            TAG_LOOP,
            TAG_PATH | REC_END << 24,
        ] {
            assert_eq!(t >> 30, 3, "{t:#x}");
            assert_ne!(t & !0xff, TAG_SYSCALL, "{t:#x}");
            assert_ne!(t & LOOP_PASSES_MASK, TAG_LOOP_PASSES, "{t:#x}");
        }
        assert_eq!(record_words(TAG_LOOP), 3);
        assert_eq!(record_words(TAG_LOOP_PASSES | 15 << 24 | LOOP_PASSES_N), 0);
        assert_eq!(record_words(TAG_SYSCALL | 60), 3);
        assert_eq!(record_words(TAG_PATH | REC_CHUNK << 24), 3);
        assert_eq!(
            word_block(block_word(BLOCK_ID_LIMIT - 1, PARTIAL)).1,
            PARTIAL
        );
        assert!(block_word(BLOCK_ID_LIMIT - 1, 3) < UNIT_BASE);
    }
}
