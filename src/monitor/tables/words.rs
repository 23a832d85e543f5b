//! What the monitor keeps per exit word (contract): its count and the
//! instructions and blocks it stands for, which the first pass bumps for
//! every word, and in the same cache line what the second pass (special
//! words) and the end read; beside them, for indirect ends, where they
//! went. Both are tables indexed by the word itself: no hashing, and a
//! word costs one cache line.
//!
//! I1: the tables are `MAP_NORESERVE` mappings of [`WORD_LIMIT`] entries;
//!     only the entries in use take memory.
//! I2: a word's entry is made before the word is counted: a block's
//!     three when the monitor first meets one of them (from the block
//!     table), a superblock's units when the superblock is added, before
//!     its code can run (superblock/mod.rs I2). A made entry weighs at
//!     least one block, an entry never made is all zero: `weight != 0`
//!     tells them apart, and a zero entry reads as no count, no end.
//! I4: where entries are made in order (blocks and units are numbered
//!     upward), they are made writable before the first pass can read
//!     them: the code that makes an entry asks for it
//!     ([`WordTable::ready`]), which populates its chunk and the next one
//!     writable when the chunk continues the populated run from the start
//!     of its range (blocks' words, units). Reading an untouched page
//!     first would map the zero page, and the write after it would fault
//!     again and shoot down the other CPU's TLB. Entries made out of order
//!     (a forked child meeting its parent's blocks here and there) fault
//!     in page by page: populating ahead of them would touch far more
//!     memory than they use, so a forked child's monitor (started idle,
//!     monitor I5, with its parent's blocks published) populates nothing
//!     ([`WordTable::set_sparse`]: a python child's monitor spent 0.9 ms
//!     of its 5 populating chunks). Whether an entry of a block is made
//!     is read from a dense list (`Tables::made`), not from the entry, so
//!     that such a page's first touch is the write that makes it. A
//!     process's own monitor readies the entries of every block published
//!     so far, in id order, before it makes one (ahead.rs A1,
//!     [`WordTable::ready_through`]).
//! I3: [`Word::count`]'s top bit ([`SPECIAL`]) is set exactly when the word
//!     needs the second pass: its code ends in a call, a return, an
//!     indirect transfer or a syscall, its path has calls or returns
//!     between members, or its target's superblock trigger is still
//!     counting each entry ([`Word::warm`] `Each`); an armed word
//!     (warm.rs I2) from the execution that reaches its trigger on.
//! I5: where entries are made in order, every 2 MB of a range but its
//!     first is asked for as a transparent huge page before its first
//!     chunk is populated: a python start-up's 38 K blocks fill 10 MB of
//!     words, which took 2,400 small pages (and the TLB a miss every 16
//!     blocks). A process with fewer than 8,192 blocks, and a monitor
//!     that meets its blocks far apart (I4), use small pages only.
#![allow(unsafe_code)]

use crate::contract::{UNIT_BASE, WORD_LIMIT};

/// `Hot::count`'s flag: the word goes to the second pass (I3).
pub(super) const SPECIAL: u64 = 1 << 63;
/// `Hot::weight`: instructions in the low 32 bits, blocks above.
pub(super) const W_INSNS: u64 = (1 << 32) - 1;
pub(super) const W_BLOCKS: u32 = 32;
/// No block (an empty way, no target).
pub(super) const NONE: u32 = u32::MAX;

/// How a word's code left: what the second pass does with it. Bit flags,
/// so the second pass tests what ends have in common with plain branches
/// rather than dispatching on the end (calls and returns alternate, and
/// an indirect jump by end mispredicts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(transparent)]
pub(super) struct End(u8);

#[allow(non_upper_case_globals)]
impl End {
    /// Charges its instructions, then moves (or may move) the thread in
    /// the calling-context tree.
    pub const MOVES: u8 = 1;
    /// Its target is the next exit word's code.
    pub const PEEK: u8 = 2;
    pub const CALL: u8 = 4;
    pub const RET: u8 = 8;
    pub const SYS: u8 = 16;
    pub const PART: u8 = 32;
    /// An indirect jump or a return into a landing site (landing.rs I1).
    pub const LANDS: u8 = 64;
    /// To `Word::target` (0: nowhere the monitor follows, a trap).
    pub const Direct: End = End(0);
    /// A direct call of `Word::target`, returning to `Word::ret`.
    pub const Call: End = End(Self::MOVES | Self::CALL);
    pub const IndirectJump: End = End(Self::PEEK);
    /// An indirect jump that went to a landing site (landing.rs I1).
    /// It moves the thread when it unwinds (landing.rs I5): charged first,
    /// where it ran, as a call or a return is.
    pub const LandingJump: End = End(Self::MOVES | Self::PEEK | Self::LANDS);
    /// An indirect call returning to `Word::ret`.
    pub const IndirectCall: End = End(Self::MOVES | Self::PEEK | Self::CALL);
    pub const Return: End = End(Self::MOVES | Self::PEEK | Self::RET);
    /// A return that went to a landing site (landing.rs I1).
    pub const LandingReturn: End = End(Self::MOVES | Self::PEEK | Self::RET | Self::LANDS);
    /// A syscall, which goes on at `Word::target` when it completes.
    pub const Syscall: End = End(Self::SYS);
    /// Stopped inside (a block's `PARTIAL` word, a superblock's partial
    /// unit): no exit.
    pub const Partial: End = End(Self::PART);

    #[inline(always)]
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// Where the code went is the next exit word's code.
    pub fn indirect(self) -> bool {
        self.has(Self::PEEK)
    }

    /// Indirect, and not into a landing site: the second pass's common
    /// case (as cheap as [`End::indirect`]).
    #[inline(always)]
    pub fn plain_indirect(self) -> bool {
        self.0 & (Self::PEEK | Self::LANDS) == Self::PEEK
    }

    /// The second pass has something to do for every execution.
    pub fn special(self) -> bool {
        self.0 & !Self::PART != 0
    }
}

/// Whether a word counts toward its target's superblock trigger (I3,
/// warm.rs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Warm {
    /// No (its end is not direct, or the trigger is done).
    #[default]
    No,
    /// Every entry, in the second pass.
    Each,
    /// In its own count, from a bias (warm.rs I2).
    Armed,
}

/// Everything the monitor keeps per word in one cache line: the first
/// pass reads `count` and `weight`, the second pass (special words) the
/// rest, which the first just brought in.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Word {
    /// Executions, and [`SPECIAL`].
    pub count: u64,
    /// Instructions and blocks of one execution (`W_INSNS`, `W_BLOCKS`).
    pub weight: u64,
    /// `Direct`, `Call`, `Syscall`: the guest address it goes on at (0:
    /// none).
    pub target: u64,
    /// `Call`, `IndirectCall`: the return address pushed.
    pub ret: u64,
    /// The first block of the word's code (the block itself, or the
    /// superblock's head): where an indirect transfer into it went.
    pub first: u32,
    /// The block the word's path ends at (edges start there).
    pub last: u32,
    /// Calls and returns between members (units.rs I1): from
    /// `Tables::unit_ops[ops_at]` on, `ops_n` of them.
    pub ops_at: u32,
    /// Its target's slot in `Tables::warm_n` while [`Word::warm`].
    pub warm_at: u32,
    pub ops_n: u16,
    pub end: End,
    /// A superblock unit (not a block's word).
    pub unit: bool,
    /// Its target's direct-entry count toward a superblock is still open
    /// (I3; warm.rs).
    pub warm: Warm,
    /// A unit whose passes come back to the context they started in: how
    /// (memo.rs `kind`); 0 for any other word.
    pub memo: u8,
    /// Its path returns into a landing site: replayed with the landing
    /// watch (landing.rs I1).
    pub watch: bool,
    /// Passes of a balanced unit not yet replayed into the calling-context
    /// tree, all from context `memo_node` (memo.rs I1).
    pub memo_node: u32,
    pub memo_n: u32,
}

// One cache line a word (module docs): the memo fields filled the last
// bytes.
const _: () = assert!(std::mem::size_of::<Word>() == 64);

impl Default for Word {
    fn default() -> Self {
        Word {
            count: 0,
            weight: 0,
            target: 0,
            ret: 0,
            first: NONE,
            last: NONE,
            ops_at: 0,
            warm_at: 0,
            ops_n: 0,
            end: End::Direct,
            unit: false,
            warm: Warm::No,
            memo: 0,
            watch: false,
            memo_node: 0,
            memo_n: 0,
        }
    }
}

impl Word {
    /// Executions: an armed word's count runs from its bias (warm.rs I2).
    #[inline]
    pub fn n(&self) -> u64 {
        if self.warm == Warm::Armed {
            self.count.wrapping_sub(self.ret)
        } else {
            self.count & !SPECIAL
        }
    }

    /// Set [`SPECIAL`] as I3 says (not on an armed word, whose count holds
    /// its bias).
    pub fn refresh_special(&mut self) {
        debug_assert_ne!(self.warm, Warm::Armed);
        let on = self.end.special() || self.warm != Warm::No || self.ops_n > 0;
        self.count = self.count & !SPECIAL | if on { SPECIAL } else { 0 };
    }
}

/// Where an indirect end went: the first two successors seen (by first
/// block, `NONE`: free), with their transitions (tables I1).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
pub(super) struct Ways {
    pub to: [u32; 2],
    pub n: [u64; 2],
}

impl Ways {
    pub const EMPTY: Ways = Ways {
        to: [NONE; 2],
        n: [0; 2],
    };

    /// One more transition into block `to`, if a way holds it: that
    /// way's count now.
    #[inline(always)]
    pub fn hit(&mut self, to: u32) -> Option<u64> {
        let k = if self.to[0] == to {
            0
        } else if self.to[1] == to {
            1
        } else {
            return None;
        };
        self.n[k] += 1;
        Some(self.n[k])
    }
}

/// A table of `T` indexed by exit word (I1).
#[derive(Debug)]
pub(super) struct WordTable<T> {
    base: *mut T,
    /// One bit per [`CHUNK`] bytes: populated (I4).
    ready: Vec<u64>,
    /// I4: entries are made far apart (a forked child's monitor): no
    /// chunk is populated.
    sparse: bool,
}

/// Bytes populated together (I4).
const CHUNK: usize = 1 << 16;

/// A transparent huge page (I5).
const HUGE: usize = 2 << 20;

// SAFETY: the table is owned by one `Tables`, used by one thread at a time.
unsafe impl<T> Send for WordTable<T> {}

impl<T> Default for WordTable<T> {
    fn default() -> Self {
        let bytes = WORD_LIMIT as usize * std::mem::size_of::<T>();
        let p = crate::anon::map_unforked(bytes, libc::MAP_NORESERVE).unwrap_or_else(|e| {
            crate::anon::no_room_for(
                &format!("the monitor's {bytes}-byte table of exit words"),
                e,
            )
        });
        WordTable {
            base: p as *mut T,
            ready: Vec::new(),
            sparse: false,
        }
    }
}

impl<T> Drop for WordTable<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `default`, no longer referenced.
        unsafe {
            libc::munmap(
                self.base as *mut libc::c_void,
                WORD_LIMIT as usize * std::mem::size_of::<T>(),
            )
        };
    }
}

impl<T> WordTable<T> {
    fn populated(&self, c: usize) -> bool {
        self.ready
            .get(c / 64)
            .is_some_and(|b| b & 1 << (c % 64) != 0)
    }

    /// Entry `w` is about to be written (I4): its chunk and the next are
    /// populated writable, once, if its chunk continues the populated run.
    /// Where the kernel cannot (before Linux 5.14), pages fault in on
    /// first touch as before.
    #[inline]
    pub fn ready(&mut self, w: u32) {
        if self.sparse {
            return;
        }
        let size = std::mem::size_of::<T>();
        let total = WORD_LIMIT as usize * size;
        let first = w as usize * size / CHUNK;
        let starts = first == 0 || first == UNIT_BASE as usize * size / CHUNK;
        if !starts && !self.populated(first - 1) {
            return;
        }
        for c in first..first + 2 {
            if c * CHUNK >= total {
                break;
            }
            let (i, bit) = (c / 64, 1u64 << (c % 64));
            if self.ready.len() <= i {
                self.ready.resize(i + 1, 0);
            }
            if self.ready[i] & bit != 0 {
                continue;
            }
            self.ready[i] |= bit;
            let len = CHUNK.min(total - c * CHUNK);
            let off = c * CHUNK;
            let range = if off >= UNIT_BASE as usize * size {
                UNIT_BASE as usize * size
            } else {
                0
            };
            if off.is_multiple_of(HUGE)
                && off >= range + HUGE
                && (self.base as usize).is_multiple_of(HUGE)
            {
                // I5. SAFETY: advice on [off, off + 2 MB) of the mapping.
                unsafe {
                    libc::madvise(
                        (self.base as *mut u8).add(off) as *mut libc::c_void,
                        HUGE.min(total - off),
                        libc::MADV_HUGEPAGE,
                    )
                };
            }
            // SAFETY: [c*CHUNK, c*CHUNK + len) lies inside the mapping.
            unsafe { crate::anon::populate_write((self.base as *mut u8).add(off), len) };
        }
    }

    /// Entries up to `w` will be made (I4: the blocks published so far,
    /// which a run placing a module's plan publishes thousands at a time,
    /// their blocks then made in the order they run): every chunk from
    /// the populated run through `w`'s populated, in order, so that no
    /// entry's page is read (the zero page) before it is written.
    pub fn ready_through(&mut self, w: u32) {
        if self.sparse {
            return;
        }
        let size = std::mem::size_of::<T>();
        let last = w as usize * size / CHUNK;
        let mut c = last;
        while c > 0 && c != UNIT_BASE as usize * size / CHUNK && !self.populated(c - 1) {
            c -= 1;
        }
        while c <= last {
            // The first entry that starts in chunk c.
            self.ready((c * CHUNK).div_ceil(size) as u32);
            c += 2;
        }
    }

    pub fn sparse(&self) -> bool {
        self.sparse
    }

    /// I4: entries will be made far apart: populate nothing.
    pub fn set_sparse(&mut self) {
        self.sparse = true;
    }

    /// The first entry, for the first pass, which keeps within the
    /// initialised entries (I2) on its own.
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.base
    }
}

impl<T> std::ops::Index<u32> for WordTable<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, w: u32) -> &T {
        assert!(w < WORD_LIMIT, "exit word {w:#x} out of the table");
        // SAFETY: w < WORD_LIMIT, inside the mapping; zeroed memory is a
        // valid `Word` and `Ways` (an empty way is written before it is
        // compared, and a word before it is read: I2).
        unsafe { &*self.base.add(w as usize) }
    }
}

impl<T> std::ops::IndexMut<u32> for WordTable<T> {
    #[inline(always)]
    fn index_mut(&mut self, w: u32) -> &mut T {
        assert!(w < WORD_LIMIT, "exit word {w:#x} out of the table");
        // SAFETY: as for `index`; `&mut self` makes it the only reference.
        unsafe { &mut *self.base.add(w as usize) }
    }
}
