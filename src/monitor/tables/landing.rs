//! Jumps that leave activations behind: `longjmp`. Control comes back to
//! the code after a `setjmp` call by an indirect *jump* (`__longjmp`'s
//! `jmp *%rdx`), not a return, so the frames of the calls it left stay on
//! the shadow stack, and every call after it opens a context deeper than
//! the real one. Until the function that called `setjmp` returned (an
//! unmatched return unwinds them then), a loop around `setjmp` grew the
//! calling-context tree without bound: c-paths made 751,671 contexts 265,396
//! deep, and a 107 MB profile.
//!
//! A *landing site* is a call's return address that an indirect jump went
//! to. Where a thread last returned to a landing site normally (`setjmp`
//! returning the first time), the thread's shadow depth, context and the
//! frame below are remembered; an indirect jump into the site while the
//! stack is deeper, with that frame still in place, unwinds the stack to
//! that depth and goes back to that context, as the return would have.
//!
//! I1: a word that ends in an indirect jump is marked [`End::LANDS`] when
//!     one of its new targets (a way or edge-cache slot made for it) is
//!     the return address of a call the monitor has seen; its target is
//!     then a landing site, watched from then on: the return words that
//!     go there are marked too (those that went there before, and each
//!     new target after), and superblock units whose paths return there
//!     replay their paths with the watch. Only marked words and paths
//!     look: a plain return pays nothing. The first jump into a site has
//!     nothing remembered yet: the frames it leaves stay until a return
//!     unwinds them, as before.
//! I2: a marked word whose landings never unwound anything in
//!     [`PROBATION`] landings (a jump table's case that follows a call to
//!     a `noreturn` function) is unmarked; a new target may mark it again.
//! I3: what a thread remembers of a site holds only while the frame below
//!     that depth is the same (return address and context): a jump from a
//!     stack that no longer holds the activation unwinds nothing.
//! I4: selection does not lay a landing site out as a member (a pass
//!     would jump into it without its word telling the tables): a trace
//!     stops before it (build.rs `View::stops_at`).
//! I5: a marked jump's own instructions are charged to the context it
//!     ran in, before an unwind moves the thread, as a return's are:
//!     wherever the ring's batches are cut. (They went to the landing
//!     context when the target's word came in the same batch piece, to
//!     the jump's when a timed sample cut the batch between them: the
//!     same run profiled twice differed by the jump's block.)

use hashbrown::{HashMap, HashSet};

use super::shadow::Frame;
use super::words::{End, NONE};
use super::{Tables, ThreadState};

/// Landings of a marked word before it must have unwound once (I2).
const PROBATION: u64 = 1024;

/// The tables' part (module docs).
#[derive(Debug, Default)]
pub(super) struct Watch {
    /// Return addresses of the calls the monitor has seen (I1).
    returns: HashSet<u64>,
    /// Landing sites (I1).
    sites: HashSet<u64>,
    /// One bit per site by the low six bits of its address: a lookup
    /// tests it first, and only a set bit looks in `sites`.
    bits: u64,
    /// Per marked word: its landings, and whether one unwound (I2).
    words: HashMap<u32, (u64, bool)>,
}

/// What a thread remembers of the last normal return to a landing site.
#[derive(Debug, Clone, Copy)]
pub(super) struct Landing {
    depth: u32,
    node: u32,
    below: Option<Frame>,
}

/// Per thread: by landing site.
pub(super) type Landings = HashMap<u64, Landing>;

#[inline(always)]
fn bit(g: u64) -> u64 {
    1 << (g & 63)
}

impl Watch {
    /// The marked words are gone (an id epoch ended, epoch.rs): their
    /// sites and the calls' return addresses stay.
    pub(super) fn forget_words(&mut self) {
        self.words = HashMap::new();
    }
}

impl Tables {
    /// A call returning to `ret` was seen (made as a word or a unit's
    /// path).
    pub(super) fn note_call_site(&mut self, ret: u64) {
        if ret != 0 {
            self.watch.returns.insert(ret);
        }
    }

    /// Is guest address `g` a landing site (I4)?
    pub fn is_landing_site(&self, g: u64) -> bool {
        self.watch.bits & bit(g) != 0 && self.watch.sites.contains(&g)
    }

    /// Word `p` went to block `e` for the first time, as a way or an
    /// edge-cache slot: mark it if that is a jump into a call's return
    /// address, or a return into a landing site (I1).
    #[cold]
    pub(super) fn new_target(&mut self, p: u32, e: u32) {
        let end = self.words[p].end;
        let marked = self.first_sight(end, self.guest(e));
        if marked == End::LandingJump {
            self.watch.words.entry(p).or_insert((0, false));
        }
        self.words[p].end = marked;
    }

    /// What a word ending `end` becomes when it goes to guest address `g`
    /// as a new target (I1): a return into a landing site is marked, a
    /// jump into a call's return address too, `g` a landing site from
    /// then on. Also for a word of an ended id epoch (epoch.rs I2).
    pub(super) fn first_sight(&mut self, end: End, g: u64) -> End {
        if end == End::Return {
            return if self.is_landing_site(g) {
                End::LandingReturn
            } else {
                end
            };
        }
        if !matches!(end, End::IndirectJump | End::LandingJump) || !self.watch.returns.contains(&g)
        {
            return end;
        }
        if self.watch.sites.insert(g) {
            self.watch.bits |= bit(g);
            self.watch_returns_into(g);
        }
        End::LandingJump
    }

    /// `g` became a landing site: mark the words that returned there
    /// already (by their ways and edge-cache slots) and have the units
    /// whose paths return there replayed with the watch, not in bulk
    /// (I1). Once per site: a walk over every word.
    #[cold]
    #[inline(never)]
    fn watch_returns_into(&mut self, g: u64) {
        for w in self.made_words() {
            let i = self.words[w];
            if i.end == End::Return
                && self.ways[w]
                    .to
                    .iter()
                    .any(|&b| b != NONE && self.guest(b) == g)
            {
                self.words[w].end = End::LandingReturn;
            }
            let ops = i.ops_at as usize..i.ops_at as usize + usize::from(i.ops_n);
            if i.ops_n > 0
                && self.unit_ops[ops]
                    .iter()
                    .any(|op| op.ret == 0 && op.to == g)
            {
                // Passes waiting in its memo go first (memo.rs I2).
                if i.memo_n != 0 {
                    self.replay_memo(w, i.memo_node, i.memo_n);
                    self.words[w].memo_n = 0;
                }
                self.words[w].memo = 0;
                self.words[w].watch = true;
            }
        }
        for slot in self.ecache.entries() {
            if slot.n != 0 && self.words[slot.p].end == End::Return && self.guest(slot.e) == g {
                self.words[slot.p].end = End::LandingReturn;
            }
        }
    }

    /// A thread returned to `to` (a word or path marked for it, or an
    /// unmatched return): remember it if `to` is a landing site.
    #[inline(always)]
    pub(super) fn returned(&mut self, st: &mut ThreadState, to: u64) {
        if self.watch.bits & bit(to) != 0 {
            self.remember(st, to);
        }
    }

    #[cold]
    #[inline(never)]
    fn remember(&mut self, st: &mut ThreadState, to: u64) {
        if !self.watch.sites.contains(&to) {
            return;
        }
        let depth = st.shadow.len();
        let at = Landing {
            depth: u32::try_from(depth).unwrap_or(u32::MAX),
            node: st.node,
            below: depth.checked_sub(1).and_then(|d| st.shadow.get(d)),
        };
        st.landings.insert(to, at);
    }

    /// Marked word `w` jumped into block `to` (I1-I3).
    #[cold]
    #[inline(never)]
    pub(super) fn landed(&mut self, st: &mut ThreadState, w: u32, to: u32) {
        let g = self.guest(to);
        let unwound = self.unwind_landing(st, g);
        let Some(stat) = self.watch.words.get_mut(&w) else {
            return;
        };
        stat.0 += 1;
        stat.1 |= unwound;
        if !stat.1 && stat.0 >= PROBATION {
            self.watch.words.remove(&w);
            self.words[w].end = End::IndirectJump;
        }
    }

    /// Unwind the thread's shadow stack to where it last returned to
    /// landing site `g`, if that activation is still there and the stack
    /// is deeper (I3).
    pub(super) fn unwind_landing(&mut self, st: &mut ThreadState, g: u64) -> bool {
        let Some(&at) = st.landings.get(&g) else {
            return false;
        };
        let depth = at.depth as usize;
        let below = depth.checked_sub(1).and_then(|d| st.shadow.get(d));
        if st.shadow.len() <= depth || below != at.below {
            return false;
        }
        st.shadow.truncate(depth);
        st.node = at.node;
        self.unwinding_jumps += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{BlockMeta, BlockTable};
    use crate::contract::{block_word, EXIT_FALL, EXIT_TAKEN};
    use crate::monitor::ExitKind;

    fn block(t: &BlockTable, guest: u64, exit: ExitKind, target: u64, next: u64) {
        t.push_meta(BlockMeta {
            guest,
            target,
            next,
            guest_len: 2,
            insns: 2,
            exit,
        });
    }

    fn fall(b: u32) -> u32 {
        block_word(b, EXIT_FALL)
    }

    /// A loop around `setjmp` whose callee `longjmp`s back each time,
    /// `n` times: through both passes and through the general path; with
    /// `sb`, `setjmp`'s return and R run as one superblock pass, built
    /// before R is known as a landing site.
    fn setjmp_loop(n: usize, fast: bool, sb: bool) -> Tables {
        setjmp_loop_in(n, fast, sb, 5)
    }

    /// [`setjmp_loop`], its stream given to the tables `chunk` words at a
    /// time (where timed samples cut batches).
    fn setjmp_loop_in(n: usize, fast: bool, sb: bool, chunk: usize) -> Tables {
        let blocks = BlockTable::new(16).unwrap();
        // 0 main: call setjmp, returning to R = 0x110.
        block(&blocks, 0x100, ExitKind::Call, 0x400, 0x110);
        // 1 setjmp: returns.
        block(&blocks, 0x400, ExitKind::Return, 0, 0);
        // 2 R: to 0x120 (taken) the first time, to 0x130 after the jump.
        block(&blocks, 0x110, ExitKind::Branch, 0x120, 0x130);
        // 3 g: calls longjmp.
        block(&blocks, 0x200, ExitKind::Call, 0x300, 0x208);
        // 4 longjmp: jumps to R.
        block(&blocks, 0x300, ExitKind::IndirectJump, 0, 0);
        // 5 main: call g.
        block(&blocks, 0x120, ExitKind::Call, 0x200, 0x128);
        // 6 main: back to the loop's start.
        block(&blocks, 0x130, ExitKind::Jump, 0x100, 0);
        let mut t = Tables::new(crate::monitor::tables::SbConfig::default());
        t.fast = fast;
        // Members 1 (setjmp's return) and 2 (R), leaving by R's branch.
        let unit = sb.then(|| {
            use crate::monitor::tables::{PassOp, SbAccount, SbExitAcct};
            let ret = PassOp {
                at: 1,
                call: None,
                to: 0x110,
            };
            let exits = vec![SbExitAcct::direct(1, 0x120), SbExitAcct::direct(1, 0x130)];
            let base = t.next_units(4).unwrap();
            let acc = SbAccount::new(
                vec![1, 2],
                vec![u16::MAX, 0],
                &[2, 2],
                exits,
                vec![ret],
                base,
            );
            t.add_superblock(0, acc, blocks.published());
            base
        });
        let mut stream = Vec::new();
        for _ in 0..n {
            match unit {
                Some(u) => stream.extend_from_slice(&[fall(0), u]),
                None => stream.extend_from_slice(&[fall(0), fall(1), block_word(2, EXIT_TAKEN)]),
            }
            stream.extend_from_slice(&[fall(5), fall(3), fall(4), fall(2), fall(6)]);
        }
        for piece in stream.chunks(chunk) {
            t.process(0, piece, &blocks);
        }
        t.finish();
        t
    }

    #[test]
    fn a_jump_back_after_setjmp_unwinds_the_frames_it_left() {
        for (fast, sb) in [(true, false), (false, false), (true, true), (false, true)] {
            let t = setjmp_loop(1000, fast, sb);
            // The first jump leaves its two frames (nothing remembered
            // yet, I1); every later one unwinds them.
            assert_eq!(t.unwinding_jumps, 999, "fast {fast}, superblock {sb}");
            assert_eq!(t.threads[0].shadow.len(), 2);
            // Contexts: root, setjmp, g, longjmp once from main, and the
            // same three again under the first longjmp's context.
            assert_eq!(t.tree.nodes.len(), 7, "fast {fast}");
            assert!(t.max_shadow_depth <= 4);
            let charged: u64 = t.tree.nodes.iter().map(|n| n.self_insns).sum();
            assert_eq!(charged, 1000 * 8 * 2, "calltree I1");
        }
    }

    #[test]
    fn where_batches_are_cut_changes_no_context_cost() {
        // I5: a cut between the jump and its target's word once charged
        // the jump's block to the context it unwound to.
        for (fast, sb) in [(true, false), (false, false), (true, true), (false, true)] {
            let costs = |chunk| {
                let t = setjmp_loop_in(50, fast, sb, chunk);
                let v: Vec<(u32, u64, u64)> = t
                    .tree
                    .nodes
                    .iter()
                    .map(|n| (n.parent, n.func, n.self_insns))
                    .collect();
                v
            };
            let whole = costs(usize::MAX);
            for chunk in 1..9 {
                assert_eq!(
                    costs(chunk),
                    whole,
                    "fast {fast}, superblock {sb}, chunk {chunk}"
                );
            }
        }
    }

    #[test]
    fn a_jump_table_into_a_return_address_is_unmarked() {
        let blocks = BlockTable::new(16).unwrap();
        // 0: call f, returning to 0x110; 1 f returns; 2 (0x110) jumps
        // through a table to itself, at the same depth.
        block(&blocks, 0x100, ExitKind::Call, 0x200, 0x110);
        block(&blocks, 0x200, ExitKind::Return, 0, 0);
        block(&blocks, 0x110, ExitKind::IndirectJump, 0, 0);
        let mut t = Tables::new(crate::monitor::tables::SbConfig::default());
        let mut stream = vec![fall(0), fall(1)];
        stream.extend(std::iter::repeat_n(fall(2), PROBATION as usize + 10));
        t.process(0, &stream, &blocks);
        assert!(t.is_landing_site(0x110));
        assert_eq!(t.words[fall(2)].end, End::IndirectJump, "I2");
        assert_eq!(t.unwinding_jumps, 0);
    }
}
