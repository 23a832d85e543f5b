//! The calling-context tree: one node per distinct chain of calls from the
//! start of the program (the shadow call stack, interned), with the number
//! of times the context was entered and the guest instructions executed in
//! it (not in its callees). Folded stacks, flame graphs and callgrind's
//! inclusive costs come from it; a node id is also a compact name for a
//! whole stack (for timed samples).
//!
//! I1: instructions are charged to exactly one node: Σ `self_insns` over
//!     the tree is every instruction the monitor counted.
//! I2: node 0 is the root (code that runs before any call, e.g. `_start`);
//!     every other node's parent has a smaller id.
//! I3: the tree holds at most [`MAX_NODES`] nodes; a new context beyond
//!     that is charged to its caller's node (`truncated` counts those
//!     calls), so I1 still holds.

use hashbrown::HashMap;

pub const ROOT: u32 = 0;
pub const MAX_NODES: usize = 1 << 20;

/// One calling context.
#[derive(Debug, Clone, Copy)]
pub struct CtxNode {
    pub parent: u32,
    /// Guest address the call went to (0 for the root).
    pub func: u64,
    pub calls: u64,
    pub self_insns: u64,
    /// The last two children entered (function, node), on the cache line
    /// the call charges anyway: a function calling a comparator and
    /// itself alternately, a recursion's two calls.
    kids: [(u64, u32); 2],
}

impl CtxNode {
    fn new(parent: u32, func: u64) -> CtxNode {
        CtxNode {
            parent,
            func,
            calls: 0,
            self_insns: 0,
            kids: [(u64::MAX, ROOT); 2],
        }
    }
}

/// A remembered child: (parent, function) → child, in a direct-mapped
/// cache in front of the hash table (a comparator called from a sort, a
/// recursion's next level: one probe, no hashing). `tag` is the parent's
/// id plus one, so that an all-zero entry is empty: the cache comes
/// zeroed (`anon::UnforkedVec::zeroed`), not written empty (its 64 KB were 16
/// page faults in every process's monitor), and populated.
#[derive(Debug, Clone, Copy)]
struct Recent {
    func: u64,
    tag: u32,
    child: u32,
}

impl Recent {
    fn holds(&self, parent: u32, func: u64) -> bool {
        self.func == func && self.tag == parent + 1
    }
}

/// Entries of the cache (16 bytes each).
const RECENT: usize = 1 << 12;

#[derive(Debug)]
pub struct CallTree {
    /// In memory a forked child does not get (`anon::UnforkedVec`): the
    /// parent's monitor writes them at every call.
    pub nodes: crate::anon::UnforkedVec<CtxNode>,
    children: HashMap<(u32, u64), u32>,
    recent: crate::anon::UnforkedVec<Recent>,
    /// Calls not given a node of their own (I3).
    pub truncated: u64,
}

impl Default for CallTree {
    fn default() -> Self {
        let mut nodes = crate::anon::UnforkedVec::with_capacity(MAX_NODES);
        nodes.push(CtxNode::new(ROOT, 0));
        // SAFETY: an all-zero `Recent` (integers) is an empty entry.
        #[allow(unsafe_code)]
        let recent = unsafe { crate::anon::UnforkedVec::zeroed(RECENT) };
        // Probed before it is written: its 16 pages made at once, not
        // each a read fault, a write fault and a TLB shoot-down of the
        // guest's CPU (0.15 ms of a 17 ms `/bin/true`).
        recent.populate();
        CallTree {
            nodes,
            children: HashMap::new(),
            recent,
            truncated: 0,
        }
    }
}

fn recent_index(parent: u32, func: u64) -> usize {
    let k = (func ^ u64::from(parent).rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (k >> (64 - RECENT.trailing_zeros())) as usize
}

impl CallTree {
    /// Add `insns` to node `n` (I1).
    #[inline]
    pub fn charge(&mut self, n: u32, insns: u64) {
        // Wrapping: instructions that did not retire are taken back from
        // a count that may not have been charged yet (tables/mod.rs).
        let s = &mut self.nodes[n as usize].self_insns;
        *s = s.wrapping_add(insns);
    }

    /// A call from context `parent` to `func`: the callee's context.
    #[inline]
    pub fn enter(&mut self, parent: u32, func: u64) -> u32 {
        self.enter_n(parent, func, 1)
    }

    /// `n` calls from context `parent` to `func` (a balanced superblock
    /// path's, replayed together: tables/memo.rs): the callee's context.
    #[inline]
    pub fn enter_n(&mut self, parent: u32, func: u64, n: u64) -> u32 {
        let p = &mut self.nodes[parent as usize];
        let child = if p.kids[0].0 == func {
            p.kids[0].1
        } else if p.kids[1].0 == func {
            p.kids.swap(0, 1);
            p.kids[0].1
        } else {
            let r = self.recent[recent_index(parent, func)];
            let c = if r.holds(parent, func) {
                r.child
            } else {
                match self.look_up(parent, func) {
                    Some(c) => c,
                    None => {
                        self.truncated += n;
                        return parent;
                    }
                }
            };
            let p = &mut self.nodes[parent as usize];
            p.kids[1] = p.kids[0];
            p.kids[0] = (func, c);
            c
        };
        self.nodes[child as usize].calls += n;
        child
    }

    /// The child of `parent` for `func` if the parent has it cached (no
    /// change): the fast path's half of [`CallTree::enter`].
    #[inline(always)]
    pub fn cached_child(&self, parent: u32, func: u64) -> Option<u32> {
        let k = &self.nodes[parent as usize].kids;
        if k[0].0 == func {
            Some(k[0].1)
        } else if k[1].0 == func {
            Some(k[1].1)
        } else {
            let r = self.recent[recent_index(parent, func)];
            r.holds(parent, func).then_some(r.child)
        }
    }

    /// `child` (a [`CallTree::cached_child`]) was entered once more.
    #[inline(always)]
    pub fn entered(&mut self, child: u32) {
        self.nodes[child as usize].calls += 1;
    }

    /// The child of `parent` for `func`, made if new (None: the tree is
    /// full, I3, and the caller counts the calls in `truncated`), and
    /// remembered in the cache.
    #[cold]
    fn look_up(&mut self, parent: u32, func: u64) -> Option<u32> {
        let next = self.nodes.len() as u32;
        let child = match self.children.get(&(parent, func)) {
            Some(&c) => c,
            None if self.nodes.len() >= MAX_NODES => return None,
            None => {
                self.children.insert((parent, func), next);
                // Room for MAX_NODES (checked above).
                self.nodes.push(CtxNode::new(parent, func));
                next
            }
        };
        self.recent[recent_index(parent, func)] = Recent {
            func,
            tag: parent + 1,
            child,
        };
        Some(child)
    }

    /// The stack of node `n` from the root's child down to `n`, as
    /// function addresses.
    pub fn stack(&self, mut n: u32) -> Vec<u64> {
        let mut v = Vec::new();
        while n != ROOT {
            let node = &self.nodes[n as usize];
            v.push(node.func);
            n = node.parent;
        }
        v.reverse();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_are_interned_per_parent() {
        let mut t = CallTree::default();
        // The zeroed cache holds nothing, not even (root, 0) -> root.
        assert_eq!(t.cached_child(ROOT, 0), None);
        let a = t.enter(ROOT, 0xa);
        let b1 = t.enter(a, 0xb);
        let b2 = t.enter(ROOT, 0xb);
        assert_ne!(b1, b2, "same function, different callers: two contexts");
        assert_eq!(t.enter(a, 0xb), b1);
        assert_eq!(t.enter(a, 0xc), t.enter(a, 0xc));
        assert_eq!(t.enter(a, 0xb), b1, "found again after another child");
        assert_eq!(t.nodes[b1 as usize].calls, 3);
        assert_eq!(t.stack(b1), vec![0xa, 0xb]);
        assert!(t
            .nodes
            .iter()
            .skip(1)
            .all(|n| n.parent < t.nodes.len() as u32));
    }
}
