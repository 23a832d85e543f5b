//! The report of `hotlift paths`: the probes' records decoded into paths
//! (each version's plan decodes its own records, and the nodes of older
//! versions are tiled into the last version's), the reference computed
//! from the block stream, their comparison, and the text and JSON forms.
//!
//! Ids: `id` is a path's id over the whole graph of the last version
//! (method `none`: its Ball–Larus id when it crosses no back edge, else
//! the ids of its segments joined by `.`, a run of one segment written
//! `ID*COUNT`), the same whatever method profiled it; `method_id` is the
//! id the chosen method's probes computed (its own numbering).
//!
//! I1: "agrees" means: every path of interest was recorded exactly as
//!     often as the reference saw it, no recorded path was recorded more
//!     often than the reference saw it (no misattribution: the paper's
//!     inaccuracy is 0), and every record decoded.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hashbrown::HashMap;
use serde::Serialize;

use super::cfg::FuncCfg;
use super::collect::{PathsTables, ProbeTotals};
use super::plan::{Method, Plan};
use super::reference::Reference;
use crate::profile::Modules;

/// Paths of more blocks than this are shown by segments only.
const MAX_BLOCKS: usize = 4096;

/// The profiled function.
#[derive(Debug, Serialize)]
pub struct FunctionInfo {
    pub name: String,
    pub entry: String,
    pub extent: [String; 2],
    pub blocks: usize,
    pub edges: usize,
}

#[derive(Debug, Serialize)]
pub struct Totals {
    pub invocations: u64,
    pub recorded: u64,
    pub terminated_early: u64,
    /// Invocations neither recorded nor terminated: lost (a signal, a
    /// target not known yet, frames exhausted) or still running at exit.
    pub unprofiled: u64,
    pub lost: u64,
    /// Records that did not decode or did not fit (must be 0).
    pub bad_records: u64,
}

#[derive(Debug, Serialize)]
pub struct Mismatch {
    pub id: String,
    pub interest: bool,
    pub count: u64,
    pub reference_count: u64,
}

#[derive(Debug, Serialize)]
pub struct ReferenceReport {
    pub invocations: u64,
    pub completed: u64,
    pub broken: u64,
    pub unfinished: u64,
    /// The trace was cut short (too long to keep): counts are partial.
    pub incomplete: bool,
    pub interest_exact: bool,
    pub misattributed: u64,
    pub agrees: bool,
    pub mismatches: Vec<Mismatch>,
}

#[derive(Debug, Serialize)]
pub struct Block {
    pub addr: String,
    pub symbol: Option<String>,
}

/// A run of one segment.
#[derive(Debug, Serialize)]
pub struct Segment {
    pub id: u64,
    pub repeat: u64,
    pub blocks: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct PathEntry {
    pub id: String,
    pub method_id: Option<String>,
    pub interest: bool,
    pub count: u64,
    pub reference_count: Option<u64>,
    /// Blocks on the path.
    pub length: usize,
    /// The blocks (empty past [`MAX_BLOCKS`]; the segments have them).
    pub blocks: Vec<Block>,
    pub segments: Vec<Segment>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub function: Option<FunctionInfo>,
    pub method: &'static str,
    pub versions: usize,
    pub totals: Totals,
    pub reference: Option<ReferenceReport>,
    pub paths: Vec<PathEntry>,
    pub error: Option<String>,
}

/// What the report is made of.
#[derive(Debug)]
pub struct Input<'a> {
    pub name: Option<&'a str>,
    pub method: Method,
    pub versions: Vec<(&'a FuncCfg, &'a Plan)>,
    /// Paths of interest as absolute block addresses.
    pub interest: Vec<Vec<u64>>,
    pub tables: Option<&'a PathsTables>,
    pub reference: Option<&'a Reference>,
    pub modules: &'a Modules,
    pub error: Option<String>,
}

/// Segment ids written with runs (`3.5*12.7`).
pub fn id_string(digits: &[u64]) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < digits.len() {
        let mut j = i;
        while j < digits.len() && digits[j] == digits[i] {
            j += 1;
        }
        if !s.is_empty() {
            s.push('.');
        }
        let _ = write!(s, "{}", digits[i]);
        if j - i > 1 {
            let _ = write!(s, "*{}", j - i);
        }
        i = j;
    }
    s
}

fn symbol(modules: &Modules, a: u64) -> Option<String> {
    modules.find(a, None).and_then(|m| m.symbols.name(a))
}

/// The last version's nodes of a path of version `v`'s nodes.
fn tile(from: &FuncCfg, to: &FuncCfg, path: &[u32]) -> Option<Vec<u32>> {
    let mut out = Vec::with_capacity(path.len());
    for &n in path {
        let x = &from.nodes[n as usize];
        out.extend(to.tile(x.start.0, x.end().0)?);
    }
    Some(out)
}

/// Build the report (module docs).
pub fn build(inp: &Input) -> Report {
    let method = inp.method.name();
    let probe_totals = inp.tables.map(|t| t.totals).unwrap_or_default();
    let mut bad = inp.tables.map_or(0, |t| t.record_errors);
    let Some(&(last, last_plan)) = inp.versions.last() else {
        return Report {
            function: None,
            method,
            versions: 0,
            totals: totals(probe_totals, bad),
            reference: None,
            paths: Vec::new(),
            error: inp.error.clone().or_else(|| {
                Some(match inp.name {
                    Some(n) => format!("{n} was never entered"),
                    None => "the function was not found".into(),
                })
            }),
        };
    };
    // Recorded paths, in the last version's nodes.
    let mut recorded: HashMap<Vec<u32>, u64> = HashMap::new();
    if let Some(t) = inp.tables {
        for (raw, n) in t.recorded() {
            let decoded = inp
                .versions
                .get(raw.version as usize)
                .and_then(|&(cfg, plan)| {
                    let p = plan.decode(&raw.chunks, raw.tot, raw.seg)?;
                    tile(cfg, last, &p)
                });
            match decoded {
                Some(p) => *recorded.entry(p).or_insert(0) += n,
                None => bad += n,
            }
        }
    }
    let interest: Vec<Vec<u32>> = inp
        .interest
        .iter()
        .filter_map(|p| last.path_of(p))
        .collect();
    let mut all: BTreeMap<Vec<u32>, ()> = BTreeMap::new();
    for p in recorded.keys().chain(interest.iter()) {
        all.insert(p.clone(), ());
    }
    if let Some(r) = inp.reference {
        for p in r.paths.keys() {
            all.insert(p.clone(), ());
        }
    }
    let canon = Plan::new(Method::None, &last.graph, &[]);
    let digits_of = |plan: &Plan, p: &[u32]| {
        plan.run(p)
            .and_then(|r| plan.digits(&r.chunks, r.end.0, r.end.1))
    };
    let mut paths = Vec::new();
    let mut mismatches = Vec::new();
    let (mut interest_exact, mut misattributed) = (true, 0u64);
    for p in all.keys() {
        let is_interest = interest.contains(p);
        let count = recorded.get(p).copied().unwrap_or(0);
        let reference_count = inp.reference.map(|r| r.paths.get(p).copied().unwrap_or(0));
        let digits = digits_of(&canon, p).unwrap_or_default();
        let id = id_string(&digits);
        if let Some(rc) = reference_count {
            if is_interest && rc != count {
                interest_exact = false;
            }
            if count > rc {
                misattributed += count - rc;
            }
            if (is_interest && rc != count) || count > rc {
                mismatches.push(Mismatch {
                    id: id.clone(),
                    interest: is_interest,
                    count,
                    reference_count: rc,
                });
            }
        }
        let method_id = if inp.method == Method::None {
            None
        } else {
            digits_of(last_plan, p).map(|d| id_string(&d))
        };
        let addr = |n: u32| last.addr(n).0;
        let blocks = if p.len() <= MAX_BLOCKS {
            p.iter()
                .map(|&n| Block {
                    addr: format!("{:#x}", addr(n)),
                    symbol: symbol(inp.modules, addr(n)),
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut segments: Vec<Segment> = Vec::new();
        if let Some(segs) = canon.segments_of(p) {
            let d = &canon.dag;
            for (s, &id) in segs.iter().zip(&digits) {
                if let Some(last_seg) = segments.last_mut() {
                    if last_seg.id == id {
                        last_seg.repeat += 1;
                        continue;
                    }
                }
                let blocks = s
                    .iter()
                    .map(|&e| d.edges[e as usize].dst)
                    .filter(|&x| x < d.n)
                    .map(|x| format!("{:#x}", addr(x)))
                    .collect();
                segments.push(Segment {
                    id,
                    repeat: 1,
                    blocks,
                });
            }
        }
        paths.push(PathEntry {
            id,
            method_id,
            interest: is_interest,
            count,
            reference_count,
            length: p.len(),
            blocks,
            segments,
        });
    }
    paths.sort_by(|a, b| {
        (
            b.interest,
            b.count.max(b.reference_count.unwrap_or(0)),
            &a.id,
        )
            .cmp(&(
                a.interest,
                a.count.max(a.reference_count.unwrap_or(0)),
                &b.id,
            ))
    });
    let reference = inp.reference.map(|r| ReferenceReport {
        invocations: r.started,
        completed: r.completed,
        broken: r.broken,
        unfinished: r.unfinished,
        incomplete: inp.tables.is_some_and(|t| t.trace_overflow),
        interest_exact,
        misattributed,
        agrees: interest_exact && misattributed == 0 && bad == 0,
        mismatches,
    });
    let edges: usize = last.graph.succs.iter().map(Vec::len).sum();
    Report {
        function: Some(FunctionInfo {
            name: inp.name.unwrap_or("?").to_string(),
            entry: format!("{:#x}", last.entry.0),
            extent: [format!("{:#x}", last.lo), format!("{:#x}", last.hi)],
            blocks: last.nodes.len(),
            edges,
        }),
        method,
        versions: inp.versions.len(),
        totals: totals(probe_totals, bad),
        reference,
        paths,
        error: inp.error.clone(),
    }
}

fn totals(t: ProbeTotals, bad: u64) -> Totals {
    Totals {
        invocations: t.invocations,
        recorded: t.recorded,
        terminated_early: t.terminated,
        unprofiled: t.invocations.saturating_sub(t.recorded + t.terminated),
        lost: t.lost,
        bad_records: bad,
    }
}

/// Most paths the text form lists (the JSON has them all).
const TEXT_PATHS: usize = 60;
/// Longer ids are cut in the text form (the JSON has them whole).
const ID_WIDTH: usize = 48;

/// The text form.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    let Some(f) = &r.function else {
        let _ = writeln!(
            s,
            "hotlift paths: {}",
            r.error.as_deref().unwrap_or("no function")
        );
        return s;
    };
    let _ = writeln!(
        s,
        "hotlift paths: {} at {} ({}..{}): {} blocks, {} edges; method {}, {} version{}",
        f.name,
        f.entry,
        f.extent[0],
        f.extent[1],
        f.blocks,
        f.edges,
        r.method,
        r.versions,
        if r.versions == 1 { "" } else { "s" }
    );
    let t = &r.totals;
    let _ = writeln!(
        s,
        "invocations {}: {} recorded, {} terminated early, {} unprofiled{}",
        t.invocations,
        t.recorded,
        t.terminated_early,
        t.unprofiled,
        if t.bad_records > 0 {
            format!(", {} BAD RECORDS", t.bad_records)
        } else {
            String::new()
        }
    );
    if let Some(x) = &r.reference {
        let _ = writeln!(
            s,
            "reference: {} invocations, {} completed, {} broken, {} unfinished; {}",
            x.invocations,
            x.completed,
            x.broken,
            x.unfinished,
            if x.agrees {
                "paths of interest exact, no misattribution".to_string()
            } else {
                format!(
                    "MISMATCH: paths of interest {}, {} misattributed",
                    if x.interest_exact { "exact" } else { "differ" },
                    x.misattributed
                )
            }
        );
    }
    if let Some(e) = &r.error {
        let _ = writeln!(s, "error: {e}");
    }
    let _ = writeln!(s);
    let refc = r.reference.is_some();
    let shown = |id: &str| -> String {
        if id.chars().count() > ID_WIDTH {
            let mut t: String = id.chars().take(ID_WIDTH - 1).collect();
            t.push('…');
            t
        } else {
            id.to_string()
        }
    };
    let w = r
        .paths
        .iter()
        .take(TEXT_PATHS)
        .map(|p| shown(&p.id).chars().count())
        .max()
        .unwrap_or(2)
        .max(2);
    let _ = writeln!(
        s,
        "{:>12}{}  interest  {:<w$}  blocks",
        "count",
        if refc { "   reference" } else { "" },
        "id"
    );
    for p in r.paths.iter().take(TEXT_PATHS) {
        let blocks = if p.blocks.is_empty() {
            format!(
                "({} blocks in {} runs of segments)",
                p.length,
                p.segments.len()
            )
        } else {
            p.blocks
                .iter()
                .map(|b| match &b.symbol {
                    Some(s) => crate::profile::names::display(s).into_owned(),
                    None => b.addr.clone(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = writeln!(
            s,
            "{:>12}{}  {:<8}  {:<w$}  {}",
            p.count,
            p.reference_count
                .map(|c| format!("{c:>12}"))
                .unwrap_or_default(),
            if p.interest { "yes" } else { "" },
            shown(&p.id),
            blocks
        );
    }
    if r.paths.len() > TEXT_PATHS {
        let _ = writeln!(
            s,
            "... {} more paths (all in --format json)",
            r.paths.len() - TEXT_PATHS
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_compress_runs_of_a_segment() {
        assert_eq!(id_string(&[5]), "5");
        assert_eq!(id_string(&[3, 5, 5, 5, 7]), "3.5*3.7");
        assert_eq!(id_string(&[0, 0]), "0*2");
    }
}
