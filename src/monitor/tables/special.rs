//! The second pass (tables module docs): what a special word does besides
//! its count — calls and returns in the calling-context tree, where an
//! indirect transfer went, a syscall's block, the replay of calls and
//! returns inside a superblock pass (units.rs I1), and direct entries
//! counted toward a superblock trigger — and the charging of instructions
//! to calling contexts (tables I2).

use super::ecache::EdgeSlot;
use super::memo::ROTATES;
use super::replay::{self, Regs};
use super::units::UnitOp;
use super::words::{End, Warm, NONE, W_BLOCKS, W_INSNS};
use super::{Frame, Tables, ThreadState};
use crate::monitor::{Request, Trigger};

impl Tables {
    /// Special word `w` (words.rs I3), whose segment's running weight sum
    /// is `after` after it, of which `charged` is charged already; `next`
    /// is the word after it when the segment holds it. Returns how much of
    /// the sum is charged now.
    #[inline(always)]
    pub(super) fn special(
        &mut self,
        st: &mut ThreadState,
        w: u32,
        after: u64,
        mut charged: u64,
        next: Option<u32>,
    ) -> u64 {
        let i = &self.words[w];
        let (end, warm, ops_at, ops_n, watch) = (i.end, i.warm, i.ops_at, i.ops_n, i.watch);
        match warm {
            Warm::No => {}
            Warm::Each => self.warm_entry(w),
            Warm::Armed => self.armed_reached(w),
        }
        if ops_n > 0 {
            // Everything before the pass, then its path piece by piece
            // (a balanced path's in bulk, memo.rs).
            let weight = self.words[w].weight;
            self.charge_weight(st, after - weight - charged);
            let memo = self.words[w].memo;
            if memo != 0 && self.memo && self.memo_pass(st, w, weight, 1) {
                if memo & ROTATES != 0 {
                    // Its exit's call is in the pass.
                    return after;
                }
                charged = after;
            } else {
                let done = if watch {
                    self.replay_ops_watched(st, ops_at, ops_n)
                } else {
                    self.replay_ops(st, ops_at, ops_n)
                };
                st.blocks += weight >> W_BLOCKS;
                charged = after - ((weight & W_INSNS) - done);
            }
        }
        // Conditional branches by what the ends have in common, not one
        // indirect jump by end: calls and returns alternate.
        if end.has(End::MOVES) {
            self.charge_weight(st, after - charged);
            charged = after;
            if end.has(End::PEEK) {
                self.wait_for_target(st, w, next);
            } else {
                let (ret, target) = (self.words[w].ret, self.words[w].target);
                self.call(st, ret, target);
            }
        } else if end.has(End::PEEK) {
            self.wait_for_target(st, w, next);
        } else if end.has(End::SYS) {
            st.syscall_from = self.words[w].last;
        }
        charged
    }

    /// Word `w` ends in an indirect transfer: its target is the first
    /// block of the next exit word's code, `next` if known now.
    #[inline(always)]
    fn wait_for_target(&mut self, st: &mut ThreadState, w: u32, next: Option<u32>) {
        st.peek = w;
        if let Some(n) = next {
            let first = self.words[n].first;
            self.resolve(st, first);
        }
    }

    /// The word waiting for its target (if any) went to block `to` (NONE:
    /// no code came, tables I1): count the transition, and move the thread
    /// for a call or a return.
    #[inline(always)]
    pub(super) fn resolve(&mut self, st: &mut ThreadState, to: u32) {
        let w = st.peek;
        if w == NONE {
            return;
        }
        st.peek = NONE;
        if w == super::epoch::CARRIED {
            return self.resolve_carried(st, to);
        }
        if to == NONE {
            return self.unresolved(st, w);
        }
        self.transition(w, to);
        let (end, ret) = (self.words[w].end, self.words[w].ret);
        if end.has(End::CALL) {
            let guest = self.guest(to);
            self.call(st, ret, guest);
        } else if end.has(End::RET) {
            let guest = self.guest(to);
            self.ret(st, guest);
            if end.has(End::LANDS) {
                self.returned(st, guest);
            }
        } else if end.has(End::LANDS) {
            self.landed(st, w, to);
        }
    }

    /// A word waiting for its target got none (tables I1).
    #[cold]
    fn unresolved(&mut self, st: &mut ThreadState, w: u32) {
        self.unresolved_exits += 1;
        let (end, ret) = (self.words[w].end, self.words[w].ret);
        if end.has(End::CALL) {
            // The call happened, to code never seen: its return comes back
            // to the frame.
            let node = st.node;
            self.push_frame(st, ret, node);
        } else if end.has(End::RET) {
            self.ret(st, 0);
        }
    }

    /// Count one transition of indirect word `p` into block `e` (I1): a
    /// way of the word, or the edge cache, whose evicted entry goes to
    /// `edges`; a way or cached edge reaching the edge threshold asks for
    /// a superblock at `e`.
    #[inline(always)]
    fn transition(&mut self, p: u32, e: u32) {
        let way = &mut self.ways[p];
        let n = match way.hit(e) {
            Some(n) => n,
            None if way.to[1] != NONE => self.edge_count(p, e),
            None => self.way_miss(p, e),
        };
        if n == self.edge_threshold {
            self.edge_trigger(p, e, n);
        }
    }

    /// A successor in neither way: a free way, or the edge cache.
    #[cold]
    #[inline(never)]
    fn way_miss(&mut self, p: u32, e: u32) -> u64 {
        let i = &mut self.ways[p];
        if let Some(k) = i.to.iter().position(|&x| x == NONE) {
            i.to[k] = e;
            i.n[k] = 1;
            self.new_target(p, e);
            return 1;
        }
        self.cached_transition(p, e)
    }

    /// One more transition of word `p`, whose two ways hold other
    /// blocks, into block `e`: its edge-cache slot's count (the common
    /// case, a slot it has already, inline: an interpreter's dispatch
    /// jump takes this path on most of its transitions).
    #[inline(always)]
    pub(super) fn edge_count(&mut self, p: u32, e: u32) -> u64 {
        if let Some(slot) = self.ecache.get_mut(self.ecache.index(p, e)) {
            if slot.p == p && slot.e == e && slot.n != 0 {
                slot.n += 1;
                return slot.n;
            }
        }
        self.cached_transition(p, e)
    }

    /// The indirect edge from word `p` into block `e` was taken `n` times,
    /// the threshold.
    #[cold]
    pub(super) fn edge_trigger(&mut self, p: u32, e: u32, n: u64) {
        self.requests.push(Request::counted(
            e,
            Trigger::IndirectEdge {
                from: self.guest(self.words[p].last),
                count: n,
                threshold: n,
            },
        ));
    }

    /// A transition beyond the word's two ways (I1); its count so far.
    #[cold]
    #[inline(never)]
    fn cached_transition(&mut self, p: u32, e: u32) -> u64 {
        let i = self.ecache.index(p, e);
        if let Some(slot) = self.ecache.get_mut(i) {
            if slot.p == p && slot.e == e && slot.n != 0 {
                slot.n += 1;
                return slot.n;
            }
        }
        // No allocation on the way: the growth's list is empty but when
        // the table grows, and an eviction is one entry.
        for old in self.ecache.grow_if_due() {
            self.add_edge(old.p, old.e, old.n);
        }
        if let Some(old) = self.ecache.put(EdgeSlot { p, e, n: 1 }) {
            self.add_edge(old.p, old.e, old.n);
        }
        let index = self.targets_index.get_mut();
        if index.at.is_some() {
            index.new.insert(p);
        }
        self.new_target(p, e);
        1
    }

    /// Charge `n` instructions (wrapping: instructions that did not retire
    /// are taken back) to the thread's context (I2) and total.
    #[inline(always)]
    pub(super) fn charge(&mut self, st: &mut ThreadState, n: u64) {
        if n != 0 {
            st.insns = st.insns.wrapping_add(n);
            self.tree.charge(st.node, n);
        }
    }

    /// Charge a sum of word weights: its instructions to the context, its
    /// blocks to the thread.
    #[inline(always)]
    pub(super) fn charge_weight(&mut self, st: &mut ThreadState, weight: u64) {
        st.blocks += weight >> W_BLOCKS;
        self.charge(st, weight & W_INSNS);
    }

    #[inline(always)]
    pub(super) fn push_frame(&mut self, st: &mut ThreadState, ret: u64, node: u32) {
        st.shadow.push(Frame { ret, node });
        self.max_shadow_depth = self.max_shadow_depth.max(st.shadow.len());
    }

    /// A call to `to` that returns to `ret`: the thread enters the
    /// callee's context.
    #[inline(always)]
    pub(super) fn call(&mut self, st: &mut ThreadState, ret: u64, to: u64) {
        let node = st.node;
        self.push_frame(st, ret, node);
        // A child the node has cached (its two last, or the recent
        // cache): no write to the parent, whose two cached children a
        // three-way rotating call would replace on every call.
        st.node = match self.tree.cached_child(node, to) {
            Some(c) => {
                self.tree.entered(c);
                c
            }
            None => self.tree.enter(node, to),
        };
    }

    /// A return to `to`: the thread is back in the context of the call.
    #[inline(always)]
    pub(super) fn ret(&mut self, st: &mut ThreadState, to: u64) {
        self.returns += 1;
        match st.shadow.last() {
            Some(f) if f.ret == to => {
                st.node = f.node;
                st.shadow.pop();
            }
            _ => self.unmatched_return(st, to),
        }
    }

    /// A return that does not go to the shadow stack's top (longjmp, a
    /// thread switching stacks): to the newest frame returning there, if
    /// any.
    #[cold]
    fn unmatched_return(&mut self, st: &mut ThreadState, to: u64) {
        self.unmatched_returns += 1;
        if let Some(f) = st.shadow.unwind_to(to) {
            st.node = f.node;
            self.returned(st, to);
        }
    }

    /// Replay the calls and returns of a superblock pass's path (units.rs
    /// I1), from `unit_ops[at]`, `n` of them, charging the path's
    /// instructions before each where they ran, for a path whose returns
    /// may go into a landing site (landing.rs), out of the common path's
    /// way ([`Tables::replay_ops`] for any other); how many instructions
    /// of the path came before the last.
    #[cold]
    #[inline(never)]
    fn replay_ops_watched(&mut self, st: &mut ThreadState, at: u32, n: u16) -> u64 {
        let mut done = 0;
        for k in at as usize..at as usize + n as usize {
            done = self.replay_op::<true>(st, self.unit_ops[k], done);
        }
        done
    }

    /// One op of a path the general way, `done` of the path's
    /// instructions charged before it: how many are after it.
    #[inline(always)]
    fn replay_op<const WATCH: bool>(&mut self, st: &mut ThreadState, op: UnitOp, done: u64) -> u64 {
        self.charge(st, op.before - done);
        if op.ret != 0 {
            self.call(st, op.ret, op.to);
        } else {
            self.ret(st, op.to);
            if WATCH {
                self.returned(st, op.to);
            }
        }
        op.before
    }

    /// [`Tables::replay_ops_watched`] of a path that returns into no
    /// landing site: as far as it goes in registers (replay.rs I1), each
    /// op it leaves the general way.
    #[inline(always)]
    fn replay_ops(&mut self, st: &mut ThreadState, at: u32, n: u16) -> u64 {
        let ops = at as usize..at as usize + n as usize;
        let (mut k, mut done) = (ops.start, 0);
        loop {
            let mut r = Regs {
                node: st.node,
                insns: st.insns,
                returns: self.returns,
                deepest: self.max_shadow_depth,
            };
            let ops = &self.unit_ops[..ops.end];
            (k, done) = replay::run(&mut self.tree, &mut st.shadow, ops, k, done, &mut r);
            st.node = r.node;
            st.insns = r.insns;
            self.returns = r.returns;
            self.max_shadow_depth = r.deepest;
            let Some(&op) = ops.get(k) else {
                return done;
            };
            done = self.replay_op::<false>(st, op, done);
            k += 1;
        }
    }
}
