//! `hotlift report`'s answer for one time window: the time tree's counts
//! (src/timetree) turned into functions and call stacks with names
//! (sampling.rs), as text, JSON or folded stacks.
//!
//! I1: `samples` is the exact number of samples in the window;
//!     `unattributed` of them are below a tree node's coverage cut
//!     (timetree I3) and are in no row; every row's count is a lower bound
//!     of its true count (exact with `--tree-coverage 100`).
//! I2: a function's `self_samples` counts samples whose innermost frame
//!     it is; `inclusive` counts samples with it anywhere on the stack
//!     (once per sample, however often it recurses). Stack rows merge the
//!     threads; `threads` gives each thread's attributed samples.
//! I3: rows are sorted by count, descending, then by name, so the output
//!     is the same for the same profile.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Instant;

use serde::Serialize;

use super::export::images::{Images, SourceLine};
use super::sampling::TimeTreeSection;
use super::ContextRecord;
use crate::timetree::Cost;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FunctionRow {
    pub name: String,
    pub self_samples: u64,
    pub inclusive: u64,
    /// Where the function begins: `file` and `line` of its entry, where
    /// its module has line tables ([`Report::locate`]).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLine>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StackRow {
    /// Outermost first.
    pub frames: Vec<String>,
    pub samples: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ThreadRow {
    pub tid: i64,
    pub samples: u64,
}

/// The report for `[from_ns, to_ns]` (I1..I3).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub from_ns: u64,
    pub to_ns: u64,
    /// First and last sample time of the whole run.
    pub run_first_ns: u64,
    pub run_last_ns: u64,
    pub run_samples: u64,
    pub samples: u64,
    pub unattributed: u64,
    pub functions: Vec<FunctionRow>,
    pub stacks: Vec<StackRow>,
    pub threads: Vec<ThreadRow>,
    /// What the query touched (timetree I4), and how long it took.
    pub cost: Cost,
    pub tree_nodes: u64,
    pub query_seconds: f64,
}

/// The name of each of `sec.functions` (frames) as every output names
/// the context (export/images.rs `context_name`: demangled, entered
/// through a PLT stub by where the stub went, unnamed code
/// `module+0xOFFSET`, from debug files found by
/// build id or `.gnu_debuglink`), from the calling contexts the frames
/// stand for (sampling.rs I1): the profile's own names were made when it
/// was written, from the module's symbols alone. A frame no context
/// stands for keeps its name, and so do the root and elided markers.
pub fn frame_names(
    sec: &TimeTreeSection,
    call_tree: &[ContextRecord],
    images: &Images,
) -> Vec<String> {
    let nodes: HashMap<u32, &ContextRecord> = call_tree.iter().map(|n| (n.id, n)).collect();
    let mut names = sec.functions.clone();
    let mut named = vec![false; names.len()];
    for st in &sec.stack_types {
        let mut node = nodes.get(&st.context).copied();
        // Innermost first; indices 0 and 1 are the markers.
        for &f in st.frames.iter().rev().take_while(|&&f| f > 1) {
            let Some(n) = node else {
                break;
            };
            if let Some(done) = named.get_mut(f as usize).filter(|d| !**d) {
                *done = true;
                names[f as usize] = images.context_name(n.function, n.symbol.as_deref()).1;
            }
            node = n.parent.and_then(|p| nodes.get(&p).copied());
        }
    }
    names
}

/// Query `sec`'s tree for `[from, to]` (ns, inclusive) and name the rows.
pub fn report(sec: &TimeTreeSection, from: u64, to: u64) -> Report {
    let started = Instant::now();
    let w = sec.tree.window(from, to);
    let query_seconds = started.elapsed().as_secs_f64();
    let (run_first_ns, run_last_ns) = sec.tree.span().unwrap_or((0, 0));
    let name = |f: u32| sec.functions[f as usize].as_str();
    let mut by_stack: HashMap<Vec<&str>, u64> = HashMap::new();
    let mut self_n: HashMap<&str, u64> = HashMap::new();
    let mut incl: HashMap<&str, u64> = HashMap::new();
    let mut threads: HashMap<i64, u64> = HashMap::new();
    for (&s, &c) in &w.counts {
        let st = &sec.stack_types[s as usize];
        let frames: Vec<&str> = st.frames.iter().map(|&f| name(f)).collect();
        if let Some(&last) = frames.last() {
            *self_n.entry(last).or_insert(0) += c;
        }
        // Markers count only where they are the innermost frame.
        let inner = frames.len().saturating_sub(1);
        let mut seen: Vec<&str> = frames
            .iter()
            .enumerate()
            .filter(|&(i, f)| i == inner || !f.starts_with('['))
            .map(|(_, &f)| f)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        for f in seen {
            *incl.entry(f).or_insert(0) += c;
        }
        *threads.entry(sec.tid(st.thread)).or_insert(0) += c;
        *by_stack.entry(frames).or_insert(0) += c;
    }
    let mut functions: Vec<FunctionRow> = incl
        .iter()
        .map(|(&n, &inclusive)| FunctionRow {
            name: n.to_string(),
            self_samples: self_n.get(n).copied().unwrap_or(0),
            inclusive,
            source: None,
        })
        .collect();
    functions.sort_by(|a, b| {
        (b.self_samples, b.inclusive)
            .cmp(&(a.self_samples, a.inclusive))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut stacks: Vec<StackRow> = by_stack
        .into_iter()
        .map(|(f, samples)| StackRow {
            frames: f.into_iter().map(str::to_string).collect(),
            samples,
        })
        .collect();
    stacks.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then_with(|| a.frames.cmp(&b.frames))
    });
    let mut threads: Vec<ThreadRow> = threads
        .into_iter()
        .map(|(tid, samples)| ThreadRow { tid, samples })
        .collect();
    threads.sort_by_key(|t| t.tid);
    Report {
        from_ns: from,
        to_ns: to,
        run_first_ns,
        run_last_ns,
        run_samples: sec.tree.len() as u64,
        samples: w.total,
        unattributed: w.unattributed,
        functions,
        stacks,
        threads,
        cost: w.cost,
        tree_nodes: sec.tree.nodes.len() as u64,
        query_seconds,
    }
}

/// Seconds for display (the window's open ends shown as the run's).
pub fn seconds(ns: u64) -> String {
    format!("{:.6}", ns as f64 * 1e-9)
}

fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}

impl Report {
    /// Give the first `top` function rows their source line: the line of
    /// the function's entry in its module's line tables (`images`), the
    /// entry being the function of the calling contexts (`call_tree`) its
    /// frames stand for (sampling.rs I1). Rows without line tables keep
    /// none.
    pub fn locate(
        &mut self,
        sec: &TimeTreeSection,
        call_tree: &[ContextRecord],
        images: &Images,
        top: usize,
    ) {
        let nodes: HashMap<u32, &ContextRecord> = call_tree.iter().map(|n| (n.id, n)).collect();
        // Frame name → the context node of its first frame.
        let mut first: HashMap<&str, &ContextRecord> = HashMap::new();
        for st in &sec.stack_types {
            let mut node = nodes.get(&st.context).copied();
            // Innermost first; indices 0 and 1 are the root and elided
            // markers, which stand for no function.
            for &f in st.frames.iter().rev().take_while(|&&f| f > 1) {
                let Some(n) = node else {
                    break;
                };
                first.entry(sec.functions[f as usize].as_str()).or_insert(n);
                node = n.parent.and_then(|p| nodes.get(&p).copied());
            }
        }
        for row in self.functions.iter_mut().take(top) {
            let Some(n) = first.get(row.name.as_str()) else {
                continue;
            };
            let (entry, _) = images.context_name(n.function, n.symbol.as_deref());
            row.source = images
                .containing(entry)
                .and_then(|i| i.source_line(entry, true));
        }
    }

    /// The text report: the window, its top `top` functions and stacks,
    /// and with `verbose` what the query cost.
    pub fn text(&self, sec: &TimeTreeSection, top: usize, verbose: bool) -> String {
        let mut s = String::new();
        let shown = |ns: u64, open: u64, run: u64| seconds(if ns == open { run } else { ns });
        let _ = writeln!(
            s,
            "window {} s .. {} s: {} samples (of {} in the run, {} s .. {} s; {})",
            shown(self.from_ns, 0, self.run_first_ns),
            shown(self.to_ns, u64::MAX, self.run_last_ns),
            self.samples,
            self.run_samples,
            seconds(self.run_first_ns),
            seconds(self.run_last_ns),
            match sec.period {
                crate::monitor::sampler::Period::Micros(us) =>
                    format!("every {us} µs of a thread's running time"),
                crate::monitor::sampler::Period::Entries(k) =>
                    format!("every {k} ring entries of a thread"),
            }
        );
        if self.unattributed > 0 {
            let _ = writeln!(
                s,
                "unattributed: {} samples ({:.1}%), of stacks below the tree's {}% coverage cut",
                self.unattributed,
                pct(self.unattributed, self.samples),
                sec.tree.params.coverage_percent
            );
        }
        if self.threads.len() > 1 {
            let list: Vec<String> = self
                .threads
                .iter()
                .map(|t| format!("{} ({})", t.tid, t.samples))
                .collect();
            let _ = writeln!(s, "threads (samples): {}", list.join(", "));
        }
        let shown: Vec<&FunctionRow> = self.functions.iter().take(top).collect();
        let w = shown
            .iter()
            .map(|f| f.name.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(12, 60);
        // A source column only where some function has a line.
        let sources = shown.iter().any(|f| f.source.is_some());
        let _ = writeln!(
            s,
            "\n  {:<w$} {:>8} {:>6} {:>9} {:>6}{}",
            "function",
            "self",
            "%",
            "inclusive",
            "%",
            if sources { "  source" } else { "" }
        );
        for f in shown {
            let _ = writeln!(
                s,
                "  {:<w$} {:>8} {:>6.1} {:>9} {:>6.1}{}",
                f.name,
                f.self_samples,
                pct(f.self_samples, self.samples),
                f.inclusive,
                pct(f.inclusive, self.samples),
                f.source
                    .as_ref()
                    .map(|l| format!("  {l}"))
                    .unwrap_or_default()
            );
        }
        let _ = writeln!(s, "\n  {:>8} {:>6}  stack", "samples", "%");
        for st in self.stacks.iter().take(top) {
            let _ = writeln!(
                s,
                "  {:>8} {:>6.1}  {}",
                st.samples,
                pct(st.samples, self.samples),
                st.frames.join(" > ")
            );
        }
        if verbose {
            let _ = writeln!(
                s,
                "\nquery: visited {} nodes (of {}), {} raw samples (of {}), {} stored counts; {:.1} µs",
                self.cost.nodes,
                self.tree_nodes,
                self.cost.samples,
                self.run_samples,
                self.cost.counts,
                self.query_seconds * 1e6
            );
        }
        s
    }

    /// Folded stacks (`frame;frame;frame count`, flame graph input), every
    /// stack of the window; unattributed samples as `[unattributed]`.
    pub fn folded(&self) -> String {
        let mut s = String::new();
        for st in &self.stacks {
            let frames: Vec<String> = st
                .frames
                .iter()
                .map(|f| f.replace([';', ' '], "_"))
                .collect();
            let _ = writeln!(s, "{} {}", frames.join(";"), st.samples);
        }
        if self.unattributed > 0 {
            let _ = writeln!(s, "[unattributed] {}", self.unattributed);
        }
        s
    }

    /// The JSON report, rows cut to `top`.
    pub fn json(&self, top: usize) -> serde_json::Value {
        let mut r = self.clone();
        r.functions.truncate(top);
        r.stacks.truncate(top);
        serde_json::to_value(&r).unwrap_or_default()
    }
}
