//! The profile's `time_tree` section (design S4): how the monitor sampled
//! the guest's call stacks (monitor/sampler.rs), every sampled stack type
//! named as function frames, and the hierarchical time tree of the
//! samples (src/timetree). `hotlift report` answers windows from it.
//!
//! I1: frames are resolved when the profile is written, from the same
//!     module table and symbols as `call_tree`: a stack type's `frames`
//!     index `functions`, outermost first; the first is always
//!     [`ROOT_FRAME`] (the code before any call), the last the function
//!     the thread was in. `report` names the frames again from the
//!     modules' files, as every other output does (window.rs
//!     `frame_names`); `functions` are what the run's symbols said.
//! I2: a stack deeper than [`MAX_FRAMES`] keeps the root frame, then
//!     [`ELIDED_FRAME`], then its innermost `MAX_FRAMES - 2` frames, so
//!     the section grows with the number of stack types, not with the
//!     depth of recursion.
//! I3: after [`TimeTreeSection::validate`] every index in the section is
//!     in range and the tree's own invariants hold (timetree I1, I2), so
//!     queries cannot panic on a profile read from disk.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::Modules;
use crate::monitor::calltree::ROOT;
use crate::monitor::sampler::Period;
use crate::monitor::Snapshot;
use crate::timetree::TimeTree;

/// Name of the frame of the calling-context tree's root.
pub const ROOT_FRAME: &str = "[root]";
/// Stands for the frames left out of a deep stack (I2).
pub const ELIDED_FRAME: &str = "[...]";
/// Most frames kept per stack type (I2).
pub const MAX_FRAMES: usize = 128;

/// One sampled stack type: a guest thread in one calling context.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StackType {
    /// Index of the thread in the profile's `threads[]` (ring order).
    pub thread: u32,
    /// The calling context (`call_tree[].id`).
    pub context: u32,
    /// Indices into `functions`, outermost first (I1, I2).
    pub frames: Vec<u32>,
}

/// The `time_tree` section (docs/PROFILE.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimeTreeSection {
    /// `{"micros": N}` or `{"entries": K}` (monitor/sampler.rs).
    pub period: Period,
    /// What sample times count: `monitor_ns`, nanoseconds of the
    /// monitor's clock since it started.
    pub clock: String,
    /// Samples not kept (the sampler's limit).
    #[serde(default)]
    pub dropped_samples: u64,
    /// Thread id of each thread index.
    #[serde(default)]
    pub thread_tids: Vec<i32>,
    pub functions: Vec<String>,
    pub stack_types: Vec<StackType>,
    pub tree: TimeTree,
}

impl TimeTreeSection {
    /// The section for the monitor's samples (None when sampling was off).
    pub fn build(t: &Snapshot, modules: &mut Modules) -> Option<TimeTreeSection> {
        let s = &t.sampler;
        let cfg = s.config?;
        let nodes = &t.tree.nodes;
        // Depth of every context (a parent's id is smaller: calltree I2).
        let mut depth = vec![0usize; nodes.len()];
        for i in 1..nodes.len() {
            depth[i] = depth[nodes[i].parent as usize] + 1;
        }
        let mut functions = vec![ROOT_FRAME.to_string(), ELIDED_FRAME.to_string()];
        let mut by_addr: HashMap<u64, u32> = HashMap::new();
        let mut name_of = |addr: u64| -> u32 {
            *by_addr.entry(addr).or_insert_with(|| {
                let (module, offset, symbol) = modules.locate(addr, None);
                functions.push(match symbol {
                    Some(sym) => sym.split('+').next().unwrap_or(&sym).to_string(),
                    None => format!("{module}+{offset:#x}"),
                });
                functions.len() as u32 - 1
            })
        };
        let stack_types = s
            .stacks
            .iter()
            .map(|&(thread, context)| {
                let mut inner = Vec::new();
                let mut n = context;
                while n != ROOT && inner.len() < MAX_FRAMES - 2 {
                    inner.push(name_of(nodes[n as usize].func));
                    n = nodes[n as usize].parent;
                }
                let mut frames = vec![0];
                if depth[context as usize] > inner.len() {
                    frames.push(1);
                }
                frames.extend(inner.iter().rev());
                StackType {
                    thread,
                    context,
                    frames,
                }
            })
            .collect();
        Some(TimeTreeSection {
            period: cfg.period,
            clock: "monitor_ns".into(),
            dropped_samples: s.dropped,
            thread_tids: t.thread_tids.clone(),
            functions,
            stack_types,
            tree: TimeTree::build(s.samples.clone(), cfg.tree),
        })
    }

    /// I3 (a one-line reason otherwise).
    pub fn validate(&self) -> Result<(), String> {
        let nf = self.functions.len();
        for (i, st) in self.stack_types.iter().enumerate() {
            if st.frames.is_empty() || st.frames.iter().any(|&f| f as usize >= nf) {
                return Err(format!(
                    "stack type {i}: no frames, or a function out of range"
                ));
            }
        }
        self.tree.validate(self.stack_types.len())
    }

    /// Thread id of thread index `i` (the index itself when unknown).
    pub fn tid(&self, i: u32) -> i64 {
        self.thread_tids
            .get(i as usize)
            .map_or(i64::from(i), |&t| i64::from(t))
    }
}
