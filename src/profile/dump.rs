//! Superblock dumps: what `hotlift dump` and `hotlift run
//! --dump-superblocks` show of a superblock — trigger, when it was built,
//! members with their counts and guest code, exits with counts, the IR
//! text, and the host code disassembled with capstone (a decoder
//! independent of the iced-x86 that emitted it) — as text, Graphviz dot,
//! or JSON.
//!
//! Usage: `render_text(&entry)`, `render_dot(&entry)`; names for guest
//! addresses come from `entry.names` (filled from the profile).

use std::fmt::Write as _;

use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

use super::SuperblockEntry;
use crate::superblock::record::SbRecord;
use crate::superblock::{ExitTo, Trigger};

impl SuperblockEntry {
    fn name(&self, addr: u64) -> String {
        match self.names.get(&addr) {
            Some(n) => format!("{addr:#x} <{n}>"),
            None => format!("{addr:#x}"),
        }
    }
}

/// Guest code of one member in Intel syntax, branch targets named.
fn guest_listing(out: &mut String, e: &SuperblockEntry, addr: u64, code: &[u8]) {
    let mut d = Decoder::with_ip(64, code, addr, DecoderOptions::NONE);
    let mut f = IntelFormatter::new();
    f.options_mut().set_branch_leading_zeros(false);
    f.options_mut().set_show_branch_size(false);
    f.options_mut().set_hex_prefix("0x");
    f.options_mut().set_hex_suffix("");
    let mut text = String::new();
    for insn in d.iter() {
        text.clear();
        f.format(&insn, &mut text);
        let target = insn.near_branch_target();
        let note = e
            .names
            .get(&target)
            .filter(|_| target != 0)
            .map(|n| format!("  ; {n}"))
            .unwrap_or_default();
        let _ = writeln!(out, "        {:#x}  {text}{note}", insn.ip());
    }
}

/// Host code, disassembled by capstone.
fn host_listing(out: &mut String, host: u64, code: &[u8]) {
    use capstone::prelude::*;
    let cs = Capstone::new()
        .x86()
        .mode(arch::x86::ArchMode::Mode64)
        .syntax(arch::x86::ArchSyntax::Intel)
        .build();
    let Ok(cs) = cs else {
        let _ = writeln!(out, "    (capstone unavailable)");
        return;
    };
    let listed = match cs.disasm_all(code, host) {
        Ok(insns) => {
            for i in insns.iter() {
                let _ = writeln!(
                    out,
                    "    {:#x}  {} {}",
                    i.address(),
                    i.mnemonic().unwrap_or("?"),
                    i.op_str().unwrap_or("")
                );
            }
            Ok(())
        }
        Err(err) => Err(err),
    };
    if let Err(err) = listed {
        let _ = writeln!(out, "    (capstone: {err})");
    }
}

/// The text dump of a superblock as it is built, before it ran
/// (`--dump-superblocks`, superblock::build::SbDump).
pub fn render_record(rec: &SbRecord) -> String {
    render_text(&SuperblockEntry::unrun(rec.clone()))
}

/// The text dump of one superblock.
pub fn render_text(e: &SuperblockEntry) -> String {
    let r = &e.record;
    let mut s = String::new();
    let _ = writeln!(s, "superblock {}  head {}", r.id, e.name(r.head));
    let _ = match r.trigger {
        Trigger::Block { count, threshold } => writeln!(
            s,
            "  trigger: head block entered {count} times by direct transfers (threshold {threshold})"
        ),
        Trigger::IndirectEdge {
            from,
            count,
            threshold,
        } => writeln!(
            s,
            "  trigger: indirect edge from {} taken {count} times (threshold {threshold})",
            e.name(from)
        ),
        Trigger::Mined {
            length,
            sequences,
            repeats,
            database,
        } => writeln!(
            s,
            "  trigger: mined pattern of {length} blocks, in {sequences} of {database} sequences, repeated {repeats} times in one (pisat)"
        ),
        Trigger::Stored { version, count } => writeln!(
            s,
            "  trigger: stored trace built by {count} earlier run(s) (profile store version {version})"
        ),
    };
    let _ = writeln!(
        s,
        "  built: {:.6} s after the monitor started, after {} ring entries; code generation {}{}",
        r.built_at_seconds,
        r.built_after_entries,
        r.generation,
        if e.flushed { " (flushed since)" } else { "" }
    );
    if r.builds > 1 {
        let _ = writeln!(
            s,
            "  built {} times (after flushes or id epochs; the latest build shown, the counts of all)",
            r.builds
        );
    }
    if let Some(n) = r.retired_after_entries {
        let _ = writeln!(
            s,
            "  taken back after {n} ring entries: its passes covered too few blocks per ring word"
        );
    }
    let _ = writeln!(
        s,
        "  entries {}, loops back to the start {}, abnormal exits {}",
        e.entries, e.loops, e.partial_exits
    );
    let _ = writeln!(
        s,
        "  members ({}, {} guest instructions):",
        r.members.len(),
        r.guest_instructions
    );
    for (i, m) in r.members.iter().enumerate() {
        let runs = e.member_runs.get(i).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "    {i:>3}  {}  {} insns, {} bytes  runs {runs}",
            e.name(m.addr),
            m.instructions,
            m.size
        );
        guest_listing(&mut s, e, m.addr, &m.code);
    }
    let _ = writeln!(s, "  exits:");
    for x in &r.exits {
        let to = match x.to {
            ExitTo::Direct { target } => e.name(target),
            ExitTo::Indirect => "indirect (lookup)".into(),
            ExitTo::Loop => "the head (loop)".into(),
        };
        let count = e.exit_counts.get(x.index as usize).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "    {:>3}  from member {} to {to}  count {count}",
            x.index, x.member
        );
    }
    let _ = writeln!(s, "  IR:");
    for line in r.ir.to_string().lines() {
        let _ = writeln!(s, "    {line}");
    }
    let _ = writeln!(
        s,
        "  host code at {:#x}, {} bytes (capstone):",
        r.host, r.host_size
    );
    host_listing(&mut s, r.host, &r.host_code);
    s
}

/// A Graphviz graph of the members and exits, edges weighted by counts.
pub fn render_dot(e: &SuperblockEntry) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph superblock_{} {{", e.record.id);
    let _ = writeln!(s, "  node [shape=box, fontname=\"monospace\"];");
    s.push_str(&dot_body(e, ""));
    s.push_str("}\n");
    s
}

/// Several superblocks in one graph, a cluster each (`dump --format dot`
/// without `--superblock`).
pub fn render_dot_all(list: &[&SuperblockEntry]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph superblocks {{");
    let _ = writeln!(s, "  node [shape=box, fontname=\"monospace\"];");
    for e in list {
        let id = e.record.id;
        let _ = writeln!(s, "  subgraph cluster_{id} {{");
        let _ = writeln!(s, "  label=\"superblock {id}\";");
        s.push_str(&dot_body(e, &format!("s{id}_")));
        let _ = writeln!(s, "  }}");
    }
    s.push_str("}\n");
    s
}

/// The nodes and edges of one superblock, node names prefixed by `p`.
fn dot_body(e: &SuperblockEntry, p: &str) -> String {
    let r = &e.record;
    let mut s = String::new();
    let esc = |t: String| t.replace('\\', "\\\\").replace('"', "\\\"");
    let _ = writeln!(
        s,
        "  {p}entry [shape=oval, label=\"superblock {}\\nentries {}\"];",
        r.id, e.entries
    );
    let runs = |i: usize| e.member_runs.get(i).copied().unwrap_or(0);
    let max = (e.entries + e.loops).max(1) as f64;
    let width = |c: u64| 1.0 + 4.0 * (c as f64 / max).min(1.0);
    for (i, m) in r.members.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {p}m{i} [label=\"{}\\n{} insns\\nruns {}\"];",
            esc(e.name(m.addr)),
            m.instructions,
            runs(i)
        );
    }
    let _ = writeln!(
        s,
        "  {p}entry -> {p}m0 [label=\"{}\", penwidth={:.2}];",
        e.entries,
        width(e.entries)
    );
    for i in 1..r.members.len() {
        let c = runs(i);
        let _ = writeln!(
            s,
            "  {p}m{} -> {p}m{i} [label=\"{c}\", penwidth={:.2}];",
            r.parent(i),
            width(c)
        );
    }
    for x in &r.exits {
        let count = e.exit_counts.get(x.index as usize).copied().unwrap_or(0);
        let to = match x.to {
            ExitTo::Direct { target } => e.name(target),
            ExitTo::Indirect => "indirect".into(),
            ExitTo::Loop => {
                let _ = writeln!(
                    s,
                    "  {p}m{} -> {p}m0 [label=\"loop {count}\", style=bold, penwidth={:.2}];",
                    x.member,
                    width(count)
                );
                continue;
            }
        };
        let _ = writeln!(
            s,
            "  {p}x{} [shape=plaintext, label=\"exit {}\\n{}\"];",
            x.index,
            x.index,
            esc(to)
        );
        let _ = writeln!(
            s,
            "  {p}m{} -> {p}x{} [style=dashed, label=\"{count}\", penwidth={:.2}];",
            x.member,
            x.index,
            width(count)
        );
    }
    s
}
