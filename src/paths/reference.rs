//! The brute-force reference: every activation's path, computed from the
//! block stream alone (the monitor's trace of the function's blocks,
//! paths/collect.rs), never from probe records.
//!
//! Per guest thread, a stack of activations: the function's entry node
//! entered other than by an edge of the running activation starts one; a
//! call or syscall node suspends it until its resume node comes (also
//! under activations above it, which a longjmp left); a block that follows
//! by an edge of the graph (an indirect jump may go to any node) extends
//! it; a return, or leaving the function from a node with an exit edge,
//! completes it. An unknown transition, a signal or a block that stopped
//! early breaks it (broken activations are not counted as paths).
//!
//! I1: a completed activation's path is the sequence of graph nodes its
//!     blocks covered, in order (a translated block may cover several
//!     nodes joined by fall-through, [`FuncCfg::tile`]).

use hashbrown::HashMap;

use super::cfg::{FuncCfg, NodeKind};
use super::collect::{TRACE_BREAK, TRACE_OUT};
use crate::cache::BlockMeta;

/// What the reference found.
#[derive(Debug, Default, Clone)]
pub struct Reference {
    /// Completed paths (graph node sequences) and how often each ran.
    pub paths: HashMap<Vec<u32>, u64>,
    pub started: u64,
    pub completed: u64,
    pub broken: u64,
    /// Activations still open at the end (the program exited inside, or a
    /// callee never returned).
    pub unfinished: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Running,
    /// In a call or syscall that continues at the node (None: it cannot
    /// come back into the function).
    InCall(Option<u32>),
    Broken,
}

#[derive(Debug)]
struct Act {
    nodes: Vec<u32>,
    st: St,
}

struct Walker<'a> {
    cfg: &'a FuncCfg,
    stack: Vec<Act>,
    out: &'a mut Reference,
}

impl Walker<'_> {
    fn last(&self) -> Option<(u32, St)> {
        let a = self.stack.last()?;
        Some((*a.nodes.last()?, a.st))
    }

    fn kind(&self, n: u32) -> NodeKind {
        self.cfg.nodes[n as usize].kind
    }

    fn complete(&mut self) {
        let a = self.stack.pop().expect("an activation to complete");
        self.out.completed += 1;
        *self.out.paths.entry(a.nodes).or_insert(0) += 1;
    }

    fn break_top(&mut self) {
        if let Some(a) = self.stack.last_mut() {
            if a.st != St::Broken {
                a.st = St::Broken;
                self.out.broken += 1;
            }
        }
    }

    /// The top activation ran its last node; what it waits for now.
    fn settle(&mut self) {
        let Some(a) = self.stack.last_mut() else {
            return;
        };
        let last = *a.nodes.last().expect("nonempty");
        a.st = match self.cfg.nodes[last as usize].kind {
            NodeKind::Call { resume } | NodeKind::Syscall { resume } => St::InCall(resume),
            _ => St::Running,
        };
    }

    fn follows(&self, from: u32, to: u32) -> bool {
        self.cfg.graph.has_edge(from, to) || self.kind(from) == NodeKind::IndirectJump
    }

    fn step(&mut self, w: u32, meta: &impl Fn(u32) -> Option<BlockMeta>) {
        if let Some((last, St::Running)) = self.last() {
            if self.kind(last) == NodeKind::Return {
                self.complete();
            }
        }
        match w {
            TRACE_OUT => {
                if let Some((last, St::Running)) = self.last() {
                    if self.cfg.graph.exits[last as usize] {
                        self.complete();
                    } else {
                        self.break_top();
                    }
                }
            }
            TRACE_BREAK => {
                if let Some((_, St::Running)) = self.last() {
                    self.break_top();
                }
            }
            id => {
                let Some(m) = meta(id) else {
                    return;
                };
                let Some(nodes) = self.cfg.tile(m.guest, m.guest + m.guest_len as u64) else {
                    if let Some((_, St::Running)) = self.last() {
                        self.break_top();
                    }
                    return;
                };
                let first = nodes[0];
                let top = self.last();
                match top {
                    Some((last, St::Running)) if self.follows(last, first) => {
                        self.stack.last_mut().expect("top").nodes.extend(nodes);
                        self.settle();
                    }
                    Some((_, St::InCall(Some(r)))) if r == first => {
                        self.stack.last_mut().expect("top").nodes.extend(nodes);
                        self.settle();
                    }
                    _ if first == 0 => {
                        if let Some((last, St::Running)) = top {
                            if self.cfg.graph.exits[last as usize] {
                                self.complete();
                            } else {
                                self.break_top();
                            }
                        }
                        self.out.started += 1;
                        self.stack.push(Act {
                            nodes,
                            st: St::Running,
                        });
                        self.settle();
                    }
                    _ => {
                        // A return into an activation below (those above
                        // were left by a longjmp), or an unknown transition.
                        let below = self
                            .stack
                            .iter()
                            .rposition(|a| a.st == St::InCall(Some(first)));
                        match below {
                            Some(i) => {
                                while self.stack.len() > i + 1 {
                                    self.break_top();
                                    self.stack.pop();
                                }
                                self.stack.last_mut().expect("top").nodes.extend(nodes);
                                self.settle();
                            }
                            None => {
                                if let Some((_, St::Running)) = top {
                                    self.break_top();
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The reference for the traces of every thread (module docs), on the
/// function's graph `cfg` (the last version's); `meta` gives the block a
/// trace entry names.
pub fn compute<'t>(
    traces: impl Iterator<Item = &'t [u32]>,
    meta: impl Fn(u32) -> Option<BlockMeta>,
    cfg: &FuncCfg,
) -> Reference {
    let mut out = Reference::default();
    for trace in traces {
        let mut w = Walker {
            cfg,
            stack: Vec::new(),
            out: &mut out,
        };
        for &x in trace {
            w.step(x, &meta);
        }
        if let Some((last, St::Running)) = w.last() {
            if w.kind(last) == NodeKind::Return {
                w.complete();
            }
        }
        let open = w.stack.iter().filter(|a| a.st != St::Broken).count() as u64;
        w.out.unfinished += open;
    }
    out
}
