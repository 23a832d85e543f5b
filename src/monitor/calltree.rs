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
//! I4: see [`CallTree`]: a node's fields are split by use.

use hashbrown::HashMap;

pub const ROOT: u32 = 0;
pub const MAX_NODES: usize = 1 << 20;

/// One calling context, as [`CallTree::node`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtxNode {
    pub parent: u32,
    /// Guest address the call went to (0 for the root).
    pub func: u64,
    pub calls: u64,
    pub self_insns: u64,
}

/// What a call or a charge writes of a node: 16 bytes, four nodes to a
/// cache line (I4).
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    calls: u64,
    self_insns: u64,
}

/// The last two children a node entered (function, node), checked before
/// the cache and the hash table: a function calling a comparator and
/// itself alternately, a recursion's two calls.
type Kids = [(u64, u32); 2];

const NO_KIDS: Kids = [(u64::MAX, ROOT); 2];

/// A remembered child: (parent, function) → child, in a direct-mapped
/// cache in front of the hash table (a comparator called from a sort, a
/// recursion's next level: one probe, no hashing).
#[derive(Debug, Clone, Copy)]
struct Recent {
    func: u64,
    parent: u32,
    child: u32,
}

/// Entries of the cache (16 bytes each).
const RECENT: usize = 1 << 12;

/// I4: a node's fields live in three arrays by when they are used, not
/// in one record: its counts (every call and every charge), its recent
/// children (every call made from it) and its parent and function (made
/// once, read by the memo check and the profile). A deep recursion walks
/// consecutive node ids, so a cache line of counts serves four levels of
/// it where a 64-byte record served one (c-recursion: 100,000 and 16,000
/// levels deep).
#[derive(Debug)]
pub struct CallTree {
    counts: Vec<Counts>,
    kids: Vec<Kids>,
    links: Vec<(u32, u64)>,
    children: HashMap<(u32, u64), u32>,
    recent: Box<[Recent]>,
    /// Calls not given a node of their own (I3).
    pub truncated: u64,
}

impl Default for CallTree {
    fn default() -> Self {
        CallTree {
            counts: vec![Counts::default()],
            kids: vec![NO_KIDS],
            links: vec![(ROOT, 0)],
            children: HashMap::new(),
            recent: vec![
                Recent {
                    func: u64::MAX,
                    parent: u32::MAX,
                    child: ROOT,
                };
                RECENT
            ]
            .into_boxed_slice(),
            truncated: 0,
        }
    }
}

fn recent_index(parent: u32, func: u64) -> usize {
    let k = (func ^ u64::from(parent).rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (k >> (64 - RECENT.trailing_zeros())) as usize
}

impl CallTree {
    /// How many nodes the tree has (ids 0..len).
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Never: the root is always there (I2).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Node `n`.
    pub fn node(&self, n: u32) -> CtxNode {
        let (parent, func) = self.links[n as usize];
        let c = self.counts[n as usize];
        CtxNode {
            parent,
            func,
            calls: c.calls,
            self_insns: c.self_insns,
        }
    }

    /// Every node, by id.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = CtxNode> + '_ {
        (0..self.len() as u32).map(|n| self.node(n))
    }

    /// Node `n`'s parent (the root's: itself).
    #[inline(always)]
    pub fn parent(&self, n: u32) -> u32 {
        self.links[n as usize].0
    }

    /// The function node `n` was entered at (0 for the root).
    #[inline(always)]
    pub fn func(&self, n: u32) -> u64 {
        self.links[n as usize].1
    }

    /// Add `insns` to node `n` (I1).
    #[inline]
    pub fn charge(&mut self, n: u32, insns: u64) {
        // Wrapping: instructions that did not retire are taken back from
        // a count that may not have been charged yet (tables.rs).
        let s = &mut self.counts[n as usize].self_insns;
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
        let k = &mut self.kids[parent as usize];
        let child = if k[0].0 == func {
            k[0].1
        } else if k[1].0 == func {
            k.swap(0, 1);
            k[0].1
        } else {
            let r = self.recent[recent_index(parent, func)];
            let c = if r.func == func && r.parent == parent {
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
            let k = &mut self.kids[parent as usize];
            k[1] = k[0];
            k[0] = (func, c);
            c
        };
        self.counts[child as usize].calls += n;
        child
    }

    /// The child of `parent` for `func` if the parent has it cached (no
    /// change): the fast path's half of [`CallTree::enter`].
    #[inline(always)]
    pub fn cached_child(&self, parent: u32, func: u64) -> Option<u32> {
        let k = &self.kids[parent as usize];
        if k[0].0 == func {
            Some(k[0].1)
        } else if k[1].0 == func {
            Some(k[1].1)
        } else {
            let r = self.recent[recent_index(parent, func)];
            (r.func == func && r.parent == parent).then_some(r.child)
        }
    }

    /// `child` (a [`CallTree::cached_child`]) was entered once more.
    #[inline(always)]
    pub fn entered(&mut self, child: u32) {
        self.counts[child as usize].calls += 1;
    }

    /// The child of `parent` for `func`, made if new (None: the tree is
    /// full, I3, and the caller counts the calls in `truncated`), and
    /// remembered in the cache.
    #[cold]
    fn look_up(&mut self, parent: u32, func: u64) -> Option<u32> {
        let next = self.len() as u32;
        let child = match self.children.get(&(parent, func)) {
            Some(&c) => c,
            None if self.len() >= MAX_NODES => return None,
            None => {
                self.children.insert((parent, func), next);
                self.counts.push(Counts::default());
                self.kids.push(NO_KIDS);
                self.links.push((parent, func));
                next
            }
        };
        self.recent[recent_index(parent, func)] = Recent {
            func,
            parent,
            child,
        };
        Some(child)
    }

    /// The stack of node `n` from the root's child down to `n`, as
    /// function addresses.
    pub fn stack(&self, mut n: u32) -> Vec<u64> {
        let mut v = Vec::new();
        while n != ROOT {
            let (parent, func) = self.links[n as usize];
            v.push(func);
            n = parent;
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
        let a = t.enter(ROOT, 0xa);
        let b1 = t.enter(a, 0xb);
        let b2 = t.enter(ROOT, 0xb);
        assert_ne!(b1, b2, "same function, different callers: two contexts");
        assert_eq!(t.enter(a, 0xb), b1);
        assert_eq!(t.enter(a, 0xc), t.enter(a, 0xc));
        assert_eq!(t.enter(a, 0xb), b1, "found again after another child");
        assert_eq!(t.node(b1).calls, 3);
        assert_eq!(t.stack(b1), vec![0xa, 0xb]);
        assert!(t.nodes().skip(1).all(|n| n.parent < t.len() as u32));
    }
}
