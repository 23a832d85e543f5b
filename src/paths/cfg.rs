//! A guest function's control-flow graph, discovered from guest memory
//! with the frontend: from the entry, follow fall-throughs and direct
//! jumps and branches that stay inside the function's extent; a call
//! continues at its return address (calls are not edges to the callee); a
//! return, or a jump out of the extent (a tail call), ends a path; an
//! indirect jump inside the function goes to the targets learned so far
//! (from the paths of interest and from earlier runs of the jump) or ends
//! the path when it leaves the extent.
//!
//! Nodes are basic blocks: a node starts at every leader (the entry,
//! every target and return address, every address a path of interest
//! names, every learned target) and ends at its first control transfer,
//! the next leader, or `max_insns` instructions.
//!
//! I1: node 0 is the entry; the others follow in address order.
//! I2: a node's `ir` is exactly what `frontend::lift_block` gives from its
//!     start with `max_insns = ir.guest_insns()` (its end is a transfer,
//!     or a `Fallthrough` at the next node), so a plain translation made
//!     for a node start with that limit covers exactly the node.
//! I3: `live_in` of a node holds the arithmetic flags (OF SF ZF AF CF
//!     PF) some execution may read before writing them from the node's
//!     start: flowing out of the function (exits, calls, syscalls, traps,
//!     indirect jumps) counts as reading all of them.

use std::collections::BTreeSet;

use hashbrown::HashMap;
use thiserror::Error;

use super::dag::Graph;
use crate::frontend::lift_block;
use crate::ir::{IrBlock, Terminator};
use crate::types::GuestAddr;

/// iced-x86 `RflagsBits` of the flags probe arithmetic changes.
pub const ARITH_FLAGS: u32 = 0x3f;

/// Most nodes a function may have.
pub const MAX_NODES: usize = 1 << 15;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CfgError {
    #[error("cannot read the function's code at {0}")]
    Unreadable(GuestAddr),
    #[error("{0}")]
    Lift(#[from] crate::frontend::Unsupported),
    #[error("the function has more than {MAX_NODES} blocks")]
    TooLarge,
}

/// How a node ends, as path profiling sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// Jumps, branches and fall-throughs.
    Flow,
    /// A call; the path goes on at node `resume` when it returns (None: the
    /// return address is outside the function).
    Call {
        resume: Option<u32>,
    },
    /// A syscall; the path goes on at node `resume`.
    Syscall {
        resume: Option<u32>,
    },
    Return,
    IndirectJump,
    Trap,
}

/// One basic block of the function.
#[derive(Clone, Debug)]
pub struct Node {
    pub start: GuestAddr,
    /// The block (I2).
    pub ir: IrBlock,
    pub kind: NodeKind,
    /// I3.
    pub live_in: u32,
}

impl Node {
    pub fn end(&self) -> GuestAddr {
        self.ir.end
    }
}

/// What discovery starts from and what earlier versions learned.
#[derive(Clone, Debug, Default)]
pub struct Seeds {
    /// Addresses that must start a node (paths of interest).
    pub leaders: BTreeSet<u64>,
    /// Learned indirect edges: (address of the indirect jump, target).
    pub indirect: BTreeSet<(u64, u64)>,
}

/// The function's graph (module docs).
#[derive(Clone, Debug)]
pub struct FuncCfg {
    pub entry: GuestAddr,
    /// The extent `[lo, hi)`.
    pub lo: u64,
    pub hi: u64,
    pub nodes: Vec<Node>,
    pub by_start: HashMap<u64, u32>,
    pub graph: Graph,
}

impl FuncCfg {
    /// Is `a` inside the function's extent?
    pub fn contains(&self, a: u64) -> bool {
        (self.lo..self.hi).contains(&a)
    }

    /// The node starting at `a`.
    pub fn node_at(&self, a: u64) -> Option<u32> {
        self.by_start.get(&a).copied()
    }

    /// Discover the graph of the function at `entry` with extent `[lo,
    /// hi)`. `read(a)` gives the guest bytes from `a` to the end of its
    /// executable mapping (at most what `max_insns` instructions can take).
    pub fn discover(
        entry: GuestAddr,
        lo: u64,
        hi: u64,
        max_insns: usize,
        seeds: &Seeds,
        read: &dyn Fn(u64) -> Option<Vec<u8>>,
    ) -> Result<FuncCfg, CfgError> {
        let inside = |a: u64| (lo..hi).contains(&a);
        let lift_at = |a: u64, max: usize| -> Result<IrBlock, CfgError> {
            let bytes = read(a).ok_or(CfgError::Unreadable(GuestAddr(a)))?;
            Ok(lift_block(&bytes, GuestAddr(a), max)?)
        };
        let learned_from = |jump: u64| {
            seeds
                .indirect
                .iter()
                .filter(move |&&(j, t)| j == jump && inside(t))
                .map(|&(_, t)| t)
        };
        // Phase 1: every leader, from linear runs.
        let mut leaders: BTreeSet<u64> = BTreeSet::new();
        let mut work: Vec<u64> = vec![entry.0];
        work.extend(seeds.leaders.iter().copied().filter(|&a| inside(a)));
        work.extend(
            seeds
                .indirect
                .iter()
                .map(|&(_, t)| t)
                .filter(|&t| inside(t)),
        );
        while let Some(a) = work.pop() {
            if !leaders.insert(a) {
                continue;
            }
            if leaders.len() > MAX_NODES {
                return Err(CfgError::TooLarge);
            }
            let b = lift_at(a, max_insns)?;
            for t in successors(&b)
                .into_iter()
                .chain(learned_from(b.term_addr.0))
            {
                if inside(t) && !leaders.contains(&t) {
                    work.push(t);
                }
            }
        }
        // Phase 2: nodes, cut at the next leader (I2).
        let mut order: Vec<u64> = vec![entry.0];
        order.extend(leaders.iter().copied().filter(|&a| a != entry.0));
        let by_start: HashMap<u64, u32> = order
            .iter()
            .enumerate()
            .map(|(i, &a)| (a, i as u32))
            .collect();
        let mut irs = Vec::with_capacity(order.len());
        for &a in &order {
            let mut b = lift_at(a, max_insns)?;
            // A leader at a later body instruction, or at the terminator
            // (when it is not the first instruction), ends the node there.
            let cut = b
                .body
                .iter()
                .skip(1)
                .map(|i| i.addr)
                .chain((!b.body.is_empty()).then_some(b.term_addr))
                .find(|x| leaders.contains(&x.0));
            if let Some(cut) = cut {
                let keep = b.body.iter().take_while(|i| i.addr != cut).count();
                b.body.truncate(keep);
                b.term = Terminator::Fallthrough { next: cut };
                b.term_addr = cut;
                b.end = cut;
            }
            irs.push(b);
        }
        let mut nodes = Vec::with_capacity(irs.len());
        let mut graph = Graph {
            succs: vec![Vec::new(); irs.len()],
            exits: vec![false; irs.len()],
        };
        for (i, b) in irs.into_iter().enumerate() {
            let node = |a: u64| by_start.get(&a).copied().filter(|_| inside(a));
            let succ = |t: u64, g: &mut Graph| match node(t) {
                Some(v) => {
                    if !g.succs[i].contains(&v) {
                        g.succs[i].push(v);
                    }
                }
                None => g.exits[i] = true,
            };
            let kind = match &b.term {
                Terminator::Jump { target } | Terminator::Fallthrough { next: target } => {
                    succ(target.0, &mut graph);
                    NodeKind::Flow
                }
                Terminator::Branch {
                    taken, fallthrough, ..
                } => {
                    succ(taken.0, &mut graph);
                    succ(fallthrough.0, &mut graph);
                    NodeKind::Flow
                }
                Terminator::Call { return_to, .. } | Terminator::IndirectCall { return_to, .. } => {
                    let resume = node(return_to.0);
                    if let Some(v) = resume {
                        graph.succs[i].push(v);
                    }
                    NodeKind::Call { resume }
                }
                Terminator::Syscall { next } => {
                    let resume = node(next.0);
                    if let Some(v) = resume {
                        graph.succs[i].push(v);
                    }
                    NodeKind::Syscall { resume }
                }
                Terminator::Return { .. } => {
                    graph.exits[i] = true;
                    NodeKind::Return
                }
                Terminator::IndirectJump { .. } => {
                    for t in learned_from(b.term_addr.0) {
                        succ(t, &mut graph);
                    }
                    // Anything else it jumps to: out of the function, or
                    // a target not learned yet (not an edge of this graph).
                    graph.exits[i] = true;
                    NodeKind::IndirectJump
                }
                Terminator::Trap { .. } => NodeKind::Trap,
            };
            nodes.push(Node {
                start: b.start,
                ir: b,
                kind,
                live_in: 0,
            });
        }
        let mut cfg = FuncCfg {
            entry,
            lo,
            hi,
            nodes,
            by_start,
            graph,
        };
        cfg.compute_liveness();
        Ok(cfg)
    }

    /// I3: backward dataflow to a fixed point.
    fn compute_liveness(&mut self) {
        let n = self.nodes.len();
        let local: Vec<(u32, u32)> = self.nodes.iter().map(|x| use_def(&x.ir)).collect();
        let external: Vec<bool> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, x)| self.graph.exits[i] || !matches!(x.kind, NodeKind::Flow))
            .collect();
        let mut live = vec![0u32; n];
        let mut changed = true;
        while changed {
            changed = false;
            for i in (0..n).rev() {
                let mut out = if external[i] { ARITH_FLAGS } else { 0 };
                for &s in &self.graph.succs[i] {
                    out |= live[s as usize];
                }
                let (used, defined) = local[i];
                let new = (used | (out & !defined)) & ARITH_FLAGS;
                if new != live[i] {
                    live[i] = new;
                    changed = true;
                }
            }
        }
        for (x, l) in self.nodes.iter_mut().zip(live) {
            x.live_in = l;
        }
    }

    /// Address and symbol-free description of node `i` ("0x401136").
    pub fn addr(&self, i: u32) -> GuestAddr {
        self.nodes[i as usize].start
    }

    /// Node indices of a path given as node start addresses (None: an
    /// address is not a node start).
    pub fn path_of(&self, addrs: &[u64]) -> Option<Vec<u32>> {
        addrs.iter().map(|a| self.node_at(*a)).collect()
    }

    /// The nodes of this graph that cover `[start, end)` of another
    /// version's node, in order (graphs of later versions split nodes at
    /// new leaders); None if they do not tile it exactly.
    pub fn tile(&self, start: u64, end: u64) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        let mut a = start;
        while a < end {
            let i = self.node_at(a)?;
            out.push(i);
            let e = self.nodes[i as usize].end().0;
            if e <= a {
                return None;
            }
            a = e;
        }
        (a == end).then_some(out)
    }
}

/// Flags a block reads before writing them, and flags it writes (iced
/// bits); the terminator's reads count (a `jcc`).
fn use_def(b: &IrBlock) -> (u32, u32) {
    let (mut used, mut defined) = (0u32, 0u32);
    for i in &b.body {
        used |= i.flags_read & !defined;
        defined |= i.flags_modified;
    }
    if let Terminator::Branch { insn, .. } = &b.term {
        used |= insn.rflags_read() & !defined;
    }
    (used & ARITH_FLAGS, defined & ARITH_FLAGS)
}

/// Direct successors of a block (targets, fall-throughs, return
/// addresses), whatever the extent.
fn successors(b: &IrBlock) -> Vec<u64> {
    match &b.term {
        Terminator::Jump { target } | Terminator::Fallthrough { next: target } => vec![target.0],
        Terminator::Branch {
            taken, fallthrough, ..
        } => vec![taken.0, fallthrough.0],
        Terminator::Call { return_to, .. } | Terminator::IndirectCall { return_to, .. } => {
            vec![return_to.0]
        }
        Terminator::Syscall { next } => vec![next.0],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-assembled function at 0x1000:
    ///   0x1000: test edi, edi        85 ff
    ///   0x1002: je 0x1009            74 05
    ///   0x1004: call 0x2000          e8 f7 0f 00 00
    ///   0x1009: dec edi              ff cf
    ///   0x100b: jne 0x1009           75 fc
    ///   0x100d: ret                  c3
    const CODE: &[u8] = &[
        0x85, 0xff, 0x74, 0x05, 0xe8, 0xf7, 0x0f, 0x00, 0x00, 0xff, 0xcf, 0x75, 0xfc, 0xc3,
    ];

    fn read(a: u64) -> Option<Vec<u8>> {
        let off = a.checked_sub(0x1000)? as usize;
        CODE.get(off..).map(<[u8]>::to_vec)
    }

    #[test]
    fn discovers_blocks_calls_loops_and_exits() {
        let cfg = FuncCfg::discover(
            GuestAddr(0x1000),
            0x1000,
            0x100e,
            64,
            &Seeds::default(),
            &read,
        )
        .unwrap();
        let starts: Vec<u64> = cfg.nodes.iter().map(|x| x.start.0).collect();
        assert_eq!(starts, vec![0x1000, 0x1004, 0x1009, 0x100d]);
        // 0x1000 branches to 0x1009 or falls to 0x1004; the call returns
        // to 0x1009 (a leader that also cut nothing here); the loop at
        // 0x1009 goes back to itself or on to the return.
        assert_eq!(cfg.graph.succs[0], vec![2, 1]);
        assert_eq!(cfg.nodes[1].kind, NodeKind::Call { resume: Some(2) });
        assert_eq!(cfg.graph.succs[2], vec![2, 3]);
        assert!(cfg.graph.exits[3] && !cfg.graph.exits[2]);
        // `dec` writes the flags `jne` reads but not CF, which flows on to
        // the caller through the return; the entry's `test` writes
        // everything before `je` reads.
        assert_eq!(cfg.nodes[2].live_in, 0x10, "CF only");
        assert_eq!(cfg.nodes[0].live_in, 0);
        // The return: flags flow out to the caller.
        assert_eq!(cfg.nodes[3].live_in, ARITH_FLAGS);
    }

    #[test]
    fn leaders_from_seeds_split_nodes() {
        let mut seeds = Seeds::default();
        seeds.leaders.insert(0x100b);
        let cfg = FuncCfg::discover(GuestAddr(0x1000), 0x1000, 0x100e, 64, &seeds, &read).unwrap();
        let n = cfg.node_at(0x1009).unwrap();
        assert_eq!(cfg.nodes[n as usize].end().0, 0x100b);
        assert_eq!(cfg.tile(0x1009, 0x100d).unwrap().len(), 2);
        // `jne` at 0x100b reads ZF, which `dec` set in the node before.
        let m = cfg.node_at(0x100b).unwrap();
        assert_ne!(cfg.nodes[m as usize].live_in, 0);
    }
}
