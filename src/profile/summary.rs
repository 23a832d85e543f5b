//! The human summary of one or more profiles: what `hotlift profile`
//! prints on stderr when the guest ends, and `hotlift summary PROFILE...`
//! prints again from saved profiles (the same function: `profile` reads
//! back the document it wrote).
//!
//! Contents: totals with wall and CPU time; the functions by inclusive
//! instructions (self, inclusive, calls); the top blocks with their source
//! line (file:line, from the module's DWARF line tables) and code;
//! exit classes; syscalls by time; start-up, end and the monitor's cost.
//! For several profiles (a process tree's) one line per process first,
//! then the same tables over all of them. At the end of a tree's first
//! process, `profile` prints the tree's: every profile its other images
//! have written by then (a process still running has written none).
//!
//! I1: function costs come from the calling-context tree: a context's
//!     instructions are its function's self cost (code a function
//!     tail-jumped to counts toward the function that was called, as in
//!     folded stacks); its inclusive cost is the instructions of its
//!     contexts and everything below them, a recursive function's nested
//!     contexts counted once. Calls are the times its contexts were
//!     entered. A profile without a call tree gets self costs from its
//!     blocks (by the function holding each) and no inclusive ones.
//! I2: functions are named as in every export (export/images.rs
//!     `function_name`: demangled, PLT stubs `name@plt`, unnamed code by
//!     module and offset; a context entered through a stub by the
//!     function the stub went to, `context_name`); a process tree's
//!     tables add up by name.

use std::collections::HashMap;
use std::fmt::Write as _;

use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

use super::export::images::Images;
use super::{Ending, Profile};

/// Blocks shown, and instructions shown of each.
const TOP_BLOCKS: usize = 10;
const LISTED: usize = 6;
/// Functions shown unless asked (`--top`).
pub const TOP_FUNCTIONS: usize = 15;

/// One function's costs (I1).
#[derive(Debug, Default, Clone, Copy)]
struct Cost {
    own: u64,
    inclusive: Option<u64>,
    calls: u64,
}

/// Function name → costs, for one profile (I1, I2).
fn functions(doc: &Profile, images: &Images) -> HashMap<String, Cost> {
    let mut out: HashMap<String, Cost> = HashMap::new();
    if doc.call_tree.is_empty() {
        for b in doc.blocks.iter().filter(|b| b.count > 0) {
            let (_, name) = images.function_name(b.addr, b.symbol.as_deref());
            out.entry(name).or_default().own += b.count * u64::from(b.instructions);
        }
        return out;
    }
    let n = doc.call_tree.len();
    let (parent, total) = doc.call_tree_sums();
    // Each node's function as a small id, one per distinct name: a name
    // is made once per function (address and symbol), not once per node
    // (c-paths: 750,000 contexts of 147 functions).
    let mut names: Vec<String> = Vec::new();
    let mut by_name: HashMap<String, u32> = HashMap::new();
    let mut by_fn: HashMap<(u64, bool, Option<&str>), u32> = HashMap::new();
    let fid: Vec<u32> = (0..n)
        .map(|i| {
            let c = &doc.call_tree[i];
            let root = c.function == 0 && c.parent.is_none();
            let key = (c.function, root, c.symbol.as_deref());
            *by_fn.entry(key).or_insert_with(|| {
                let name = if root {
                    "[before any call]".to_string()
                } else {
                    images.context_name(c.function, c.symbol.as_deref()).1
                };
                *by_name.entry(name.clone()).or_insert_with(|| {
                    names.push(name);
                    names.len() as u32 - 1
                })
            })
        })
        .collect();
    // Inclusive once per function on a path: a node counts only if no
    // ancestor is the same function (depth-first, with the functions on
    // the path counted).
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (i, p) in parent.iter().enumerate() {
        match p {
            Some(p) => kids[*p].push(i),
            None => roots.push(i),
        }
    }
    let mut costs = vec![Cost::default(); names.len()];
    let mut on_path = vec![0u32; names.len()];
    // Functions of the nodes reached from a root (a malformed tree's
    // cycle is not).
    let mut reached = vec![false; names.len()];
    let mut stack: Vec<(usize, bool)> = roots.into_iter().map(|r| (r, false)).collect();
    while let Some((i, leaving)) = stack.pop() {
        let f = fid[i] as usize;
        if leaving {
            on_path[f] -= 1;
            continue;
        }
        let c = &doc.call_tree[i];
        reached[f] = true;
        let e = &mut costs[f];
        e.own += c.self_instructions;
        e.calls += c.calls;
        if on_path[f] == 0 {
            *e.inclusive.get_or_insert(0) += total[i];
        }
        on_path[f] += 1;
        stack.push((i, true));
        stack.extend(kids[i].iter().map(|&k| (k, false)));
    }
    names
        .into_iter()
        .zip(costs)
        .zip(reached)
        .filter(|(_, r)| *r)
        .map(|((name, cost), _)| (name, cost))
        .collect()
}

fn ending(e: &Ending) -> String {
    match e {
        Ending::Exit { code } => format!("exit {code}"),
        Ending::Signal { signal } => format!("signal {signal}"),
        Ending::Exec => "exec".into(),
    }
}

fn share(part: u64, all: u64) -> f64 {
    if all == 0 {
        0.0
    } else {
        100.0 * part as f64 / all as f64
    }
}

/// At the end of a run: the summary on stderr (`summary`, what `hotlift
/// summary` prints from the saved profile) and `/tmp/perf-PID.map`
/// (`perf_map`, export/perfmap.rs), from one opening of the profile's
/// modules. The profile is the run's own, as built: what reading the
/// written one back would give (profile I3), without parsing megabytes
/// of JSON (python's start-up profile: 17 MB, 0.15 s).
pub fn at_exit(profile: &Profile, summary: bool, perf_map: bool) {
    let images = Images::open(profile);
    if perf_map {
        let path = format!("/tmp/perf-{}.map", std::process::id());
        let mut map = Vec::new();
        let written = super::export::perfmap::write(profile, &images, &mut map)
            .map_err(|e| e.to_string())
            .and_then(|()| std::fs::write(&path, map).map_err(|e| e.to_string()));
        if let Err(e) = written {
            crate::host::say!("hotlift: cannot write the perf map {path}: {e}");
        }
    }
    if summary {
        // A process tree's summary: the profiles its other images wrote
        // before this one, the tree's first process, ended.
        let mine = profile.process.as_ref();
        let others: Vec<Profile> = mine
            .map(|m| {
                m.tree_paths()
                    .iter()
                    .filter_map(|p| super::read::read_file(p).ok())
                    .filter(|d| d.process.as_ref().is_some_and(|p| p.same_tree(m)))
                    .collect()
            })
            .unwrap_or_default();
        let others_images: Vec<Images> = others.iter().map(Images::open).collect();
        let mut pairs: Vec<(&Profile, &Images)> = vec![(profile, &images)];
        pairs.extend(others.iter().zip(&others_images));
        pairs.sort_by_key(|(d, _)| began(d));
        crate::host::write_stderr(self::summary(&pairs, TOP_FUNCTIONS).as_bytes());
    }
}

/// Where a profile stands in its tree's order (the order its images
/// began, the tree's first process first).
fn began(d: &Profile) -> (bool, u32, u32) {
    d.process
        .as_ref()
        .map_or((false, 0, 0), |p| (p.pid != p.root_pid, p.pid, p.image))
}

/// `docs` by process tree (process.rs I1: the same first process and
/// profile base), each tree in the order its images began; a profile
/// without a `process` section is a tree of its own. Trees keep the
/// order of their first profile in `docs`.
pub fn trees(docs: Vec<Profile>) -> Vec<Vec<Profile>> {
    let mut out: Vec<Vec<Profile>> = Vec::new();
    for d in docs {
        let at = d.process.as_ref().and_then(|p| {
            out.iter()
                .position(|t| t[0].process.as_ref().is_some_and(|q| q.same_tree(p)))
        });
        match at {
            Some(i) => out[i].push(d),
            None => out.push(vec![d]),
        }
    }
    for t in &mut out {
        t.sort_by_key(began);
    }
    out
}

/// The summary of `docs` (one profile, or a process tree's), each with
/// its opened modules; at most `top` functions.
pub fn summary(docs: &[(&Profile, &Images)], top: usize) -> String {
    let mut s = String::new();
    let insns: u64 = docs.iter().map(|(d, _)| d.totals.guest_instructions).sum();
    let runs: u64 = docs.iter().map(|(d, _)| d.totals.block_executions).sum();
    let translated: u64 = docs.iter().map(|(d, _)| d.totals.translated_blocks).sum();
    let cpu: f64 = docs.iter().map(|(d, _)| d.times.process_cpu_seconds).sum();
    if docs.len() > 1 {
        let _ = writeln!(s, "hotlift profile: {} processes", docs.len());
        for (d, _) in docs {
            let (pid, how) = match &d.process {
                Some(p) => (p.pid.to_string(), p.began.clone()),
                // 0: a profile that does not say.
                None if d.pid == 0 => ("?".into(), "?".into()),
                None => (d.pid.to_string(), "?".into()),
            };
            let _ = writeln!(
                s,
                "  pid {pid:>7} ({how:<7}) {}: {} instructions, {:.3} s wall, {:.3} s CPU, {}",
                d.binary.path,
                d.totals.guest_instructions,
                d.times.wall_seconds,
                d.times.process_cpu_seconds,
                ending(&d.ending)
            );
        }
    }
    let wall = docs.first().map_or(0.0, |(d, _)| d.times.wall_seconds);
    let _ = writeln!(
        s,
        "hotlift profile: {insns} guest instructions in {runs} block executions ({translated} blocks translated); {wall:.3} s wall{}, {cpu:.3} s CPU",
        if docs.len() > 1 { " (first process)" } else { "" },
    );
    let mut exits: std::collections::BTreeMap<&str, u64> = Default::default();
    for (d, _) in docs {
        for (k, v) in &d.totals.exits {
            *exits.entry(&**k).or_insert(0) += v;
        }
    }
    s.push_str("exits:");
    for (k, v) in &exits {
        let _ = write!(s, " {k}={v}");
    }
    s.push('\n');

    // Functions (I1, I2).
    let mut funcs: HashMap<String, Cost> = HashMap::new();
    for (d, images) in docs {
        for (name, c) in functions(d, images) {
            let e = funcs.entry(name).or_default();
            e.own += c.own;
            e.calls += c.calls;
            if let Some(i) = c.inclusive {
                *e.inclusive.get_or_insert(0) += i;
            }
        }
    }
    let mut list: Vec<(&String, &Cost)> = funcs.iter().collect();
    list.sort_by_key(|(name, c)| (std::cmp::Reverse(c.inclusive.unwrap_or(c.own)), *name));
    let _ = writeln!(
        s,
        "functions by inclusive instructions ({} of {}):",
        top.min(list.len()),
        list.len()
    );
    let _ = writeln!(
        s,
        "  {:>14} {:>6} {:>14} {:>6} {:>10}  function",
        "inclusive", "%", "self", "%", "calls"
    );
    for (name, c) in list.iter().take(top) {
        let (inc, incp) = match c.inclusive {
            Some(i) => (i.to_string(), format!("{:.1}", share(i, insns))),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            s,
            "  {inc:>14} {incp:>6} {:>14} {:>6.1} {:>10}  {name}",
            c.own,
            share(c.own, insns),
            c.calls
        );
    }

    if let [(d, images)] = docs {
        top_blocks(&mut s, d, images);
    }

    // Syscalls by time.
    let mut calls: HashMap<&str, (u64, u64, f64)> = HashMap::new();
    for (d, _) in docs {
        for c in &d.syscalls {
            let e = calls.entry(c.name.as_str()).or_default();
            e.0 += c.count;
            e.1 += c.errors;
            e.2 += c.seconds;
        }
    }
    if !calls.is_empty() {
        let mut v: Vec<_> = calls.into_iter().collect();
        // Ties (calls that took no measurable time) by name: the map's order
        // differs from one process to the next, and `hotlift summary` must
        // print what the run printed at exit.
        v.sort_by(|a, b| {
            (b.1 .2.total_cmp(&a.1 .2))
                .then(b.1 .0.cmp(&a.1 .0))
                .then(a.0.cmp(b.0))
        });
        s.push_str("syscalls by time:\n");
        for (name, (count, errors, secs)) in v {
            let _ = writeln!(
                s,
                "  {name:<18} {count:>8} calls {errors:>6} errors {secs:>10.6} s"
            );
        }
    }

    let t = |f: fn(&Profile) -> f64| docs.iter().map(|(d, _)| f(d)).sum::<f64>();
    let translate = t(|d| d.times.translation_seconds);
    let setup = t(|d| d.times.setup_seconds);
    let u = |f: fn(&super::Startup) -> f64| {
        docs.iter().map(|(d, _)| f(&d.times.startup)).sum::<f64>() * 1e3
    };
    let steps = [
        u(|u| u.loading_seconds),
        u(|u| u.code_cache_seconds),
        u(|u| u.monitor_seconds),
        u(|u| u.first_thread_seconds),
    ];
    // Profiles before 2026-12-01 have no steps.
    let split = if steps.iter().sum::<f64>() > 0.0 {
        format!(
            " (options and loading {:.1}, code cache {:.1}, profiling and monitor {:.1}, \
             first thread {:.1}, the rest {:.1}; {:.1} ms of CPU before hotlift's main)",
            steps[0],
            steps[1],
            steps[2],
            steps[3],
            (setup * 1e3 - steps.iter().sum::<f64>()).max(0.0),
            u(|u| u.before_main_cpu_seconds),
        )
    } else {
        String::new()
    };
    // Blocks placed from what an earlier run kept cost less than the ones
    // lifted and emitted: the share says which a start-up paid for.
    let kept: u64 = docs.iter().map(|(d, _)| d.totals.kept_blocks).sum();
    let kept = if kept > 0 {
        format!("; {kept} of them placed from the cache directory")
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "start-up and translation: {:.1} ms of hotlift set-up before the first guest \
         instruction{split}, {translated} blocks translated in {:.1} ms ({:.2} us a block{kept})",
        setup * 1e3,
        translate * 1e3,
        translate * 1e6 / translated.max(1) as f64,
    );
    let d = docs.iter().fold(super::Dispatcher::default(), |a, (p, _)| {
        let b = p.dispatcher;
        super::Dispatcher {
            entries: a.entries + b.entries,
            direct_exits: a.direct_exits + b.direct_exits,
            links: a.links + b.links,
            prelinks: a.prelinks + b.prelinks,
            indirect_misses: a.indirect_misses + b.indirect_misses,
            syscalls: a.syscalls + b.syscalls,
            code_writes: a.code_writes + b.code_writes,
        }
    });
    // Profiles written before the counts were have none.
    if d.entries > 0 {
        let _ = writeln!(
            s,
            "dispatcher: {} entries: {} direct exits ({} linked; {} more linked as translated), \
             {} indirect lookups missed, {} syscalls, {} stores into code",
            d.entries,
            d.direct_exits,
            d.links,
            d.prelinks,
            d.indirect_misses,
            d.syscalls,
            d.code_writes,
        );
    }
    let _ = writeln!(
        s,
        "end: {:.1} ms waiting for the monitor to take in the rings, {:.1} ms reading \
         symbols and building the profile",
        t(|d| d.times.drain_seconds) * 1e3,
        t(|d| d.times.profile_seconds) * 1e3,
    );
    let rings: Vec<&super::RingStats> = docs.iter().filter_map(|(d, _)| d.ring.as_ref()).collect();
    if !rings.is_empty() {
        let words: u64 = rings.iter().map(|r| r.entries).sum();
        let waits: u64 = rings.iter().map(|r| r.waits).sum();
        let waited: f64 = rings.iter().map(|r| r.wait_seconds).sum();
        let mon = t(|d| d.times.monitor_cpu_seconds);
        let _ = writeln!(
            s,
            "monitor: {words} ring words ({:.3} per block run), {mon:.3} s CPU, {:.2} ns per word; \
             guest waited {waits} times ({waited:.6} s), peak lag {} words",
            words as f64 / runs.max(1) as f64,
            mon * 1e9 / words.max(1) as f64,
            rings.iter().map(|r| r.peak_lag_entries).max().unwrap_or(0),
        );
    }
    s
}

/// The blocks that ran the most instructions, with their code from the
/// module files.
fn top_blocks(s: &mut String, d: &Profile, images: &Images) {
    let all = d.totals.guest_instructions;
    // A `rep` string instruction's iterations are its block's.
    let reps = d.rep_by_block();
    let insns = |b: &super::BlockRecord| {
        b.count * u64::from(b.instructions) + reps.get(&b.addr).copied().unwrap_or(0)
    };
    let mut top: Vec<_> = d.blocks.iter().filter(|b| b.count > 0).collect();
    top.sort_by_key(|b| (std::cmp::Reverse(insns(b)), b.addr));
    s.push_str("top blocks by instructions executed:\n");
    for b in top.iter().take(TOP_BLOCKS) {
        let name = images.code_name(b.addr, b.symbol.as_deref());
        let n = insns(b);
        let image = images.by_name(&b.module);
        // Its source line, where the module has line tables (lines.rs).
        let at = image
            .and_then(|i| i.source_line(b.addr, false))
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  {:#x} {}+{:#x} {name}{at}: {n} insns ({:.1}%), {} runs",
            b.addr,
            b.module,
            b.offset,
            share(n, all),
            b.count
        );
        let code = image.and_then(|i| i.code(b.addr, b.size as usize));
        if let Some(bytes) = code {
            disassemble(s, bytes, b.addr, b.instructions as usize);
        }
    }
}

/// Up to `LISTED` of the block's `n` instructions, Intel syntax, indented.
fn disassemble(s: &mut String, bytes: &[u8], addr: u64, n: usize) {
    let mut d = Decoder::with_ip(64, bytes, addr, DecoderOptions::NONE);
    let mut f = IntelFormatter::new();
    f.options_mut().set_branch_leading_zeros(false);
    f.options_mut().set_show_branch_size(false);
    f.options_mut().set_hex_prefix("0x");
    f.options_mut().set_hex_suffix("");
    let mut text = String::new();
    for (i, insn) in d.iter().take(n.min(LISTED)).enumerate() {
        text.clear();
        f.format(&insn, &mut text);
        let _ = writeln!(s, "      {:#x}  {text}", insn.ip());
        if i + 1 == LISTED && n > LISTED {
            let _ = writeln!(s, "      … {} more", n - LISTED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hotlift summary` prints what the run printed at exit: rows that tie
    /// (syscalls that took no measurable time, blocks of equal cost) come in
    /// one order, not the order of a hash map seeded per process.
    #[test]
    fn ties_print_in_one_order() {
        let doc = |calls: &[&str]| -> Profile {
            let syscalls: Vec<_> = calls
                .iter()
                .enumerate()
                .map(|(i, n)| serde_json::json!({"nr": i, "name": n, "count": 1, "seconds": 0.0}))
                .collect();
            let blocks: Vec<_> = (0..calls.len() as u64)
                .rev()
                .map(|i| serde_json::json!({"addr": 0x1000 + i * 16, "module": "m", "offset": i * 16, "size": 4, "instructions": 2, "count": 3, "exit": "jump"}))
                .collect();
            serde_json::from_value(serde_json::json!({
                "schema_version": 1,
                "binary": {"path": "m", "sha256": ""},
                "ending": {"kind": "exit", "code": 0},
                "totals": {"guest_instructions": 6 * calls.len() as u64},
                "blocks": blocks,
                "syscalls": syscalls,
            }))
            .unwrap()
        };
        let names = [
            "rseq",
            "arch_prctl",
            "readlink",
            "exit_group",
            "brk",
            "getpid",
        ];
        let mut sorted = names;
        sorted.sort_unstable();
        let reversed: Vec<&str> = names.iter().rev().copied().collect();
        let mut printed = None;
        for calls in [&names[..], &reversed[..]].iter().cycle().take(8) {
            let d = doc(calls);
            let text = summary(&[(&d, &Images::open(&d))], 10);
            let at = |s: &str| text.find(&format!("  {s} ")).unwrap();
            assert!(sorted.windows(2).all(|w| at(w[0]) < at(w[1])), "{text}");
            assert!(
                text.find("0x1000").unwrap() < text.find("0x1010").unwrap(),
                "{text}"
            );
            assert_eq!(printed.get_or_insert_with(|| text.clone()), &text);
        }
    }
}
