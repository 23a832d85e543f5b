//! The profile: the monitor's exact tables turned into the versioned JSON
//! document `hotlift profile` and `hotlift run --profile` write.
//!
//! I1: counts are exact: a block's `count` is the number of times the guest
//!     entered it, summed over every translation of that guest address.
//! I2: `schema_version` changes whenever a field changes meaning or goes
//!     away; docs/PROFILE.md describes every field.
//!
//! Usage: `Profile::build(&inputs)`, then `write_json(path)` / `summary()`.

pub mod diff;
pub mod export;
pub mod read;
mod symbols;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::monitor::{BlockMeta, ExitKind, MonitorInfo, SyscallStat, Tables};
use crate::syscall::strace;
pub use symbols::Symbols;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize)]
pub struct Binary {
    pub path: String,
    pub sha256: String,
    pub build_id: Option<String>,
    pub size: u64,
}

/// How the guest ended.
#[derive(Debug, Serialize, Clone, Copy)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    Exit { code: i32 },
    Signal { signal: i32 },
}

#[derive(Debug, Serialize)]
pub struct Times {
    pub wall_seconds: f64,
    pub process_cpu_seconds: f64,
    pub monitor_cpu_seconds: f64,
}

#[derive(Debug, Serialize, Default)]
pub struct Totals {
    pub guest_instructions: u64,
    /// Of those, iterations of `rep` string instructions beyond the first.
    pub rep_extra_iterations: u64,
    pub block_executions: u64,
    pub translated_blocks: u64,
    /// Block executions by how the block ended.
    pub exits: BTreeMap<&'static str, u64>,
}

#[derive(Debug, Serialize)]
pub struct BlockRecord {
    pub addr: u64,
    pub module: String,
    pub offset: u64,
    pub symbol: Option<String>,
    pub size: u32,
    pub instructions: u32,
    pub count: u64,
    pub exit: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallthrough: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct Edge {
    pub from: u64,
    pub to: u64,
    pub count: u64,
}

#[derive(Debug, Serialize)]
pub struct SyscallRecord {
    pub nr: u64,
    pub name: String,
    pub count: u64,
    pub errors: u64,
    pub seconds: f64,
}

#[derive(Debug, Serialize)]
pub struct RingStats {
    pub capacity_entries: u64,
    pub entries: u64,
    pub waits: u64,
    pub wait_seconds: f64,
    pub peak_lag_entries: u64,
}

/// The whole profile document (schema in docs/PROFILE.md).
#[derive(Debug, Serialize)]
pub struct Profile {
    pub schema_version: u32,
    pub tool: String,
    pub binary: Binary,
    pub command_line: Vec<String>,
    pub options: serde_json::Value,
    /// "ring" (the monitor) or "inline" (`--count-inline`).
    pub counting: &'static str,
    pub monitor: MonitorInfo,
    pub ending: Ending,
    pub times: Times,
    pub totals: Totals,
    pub blocks: Vec<BlockRecord>,
    pub indirect_edges: Vec<Edge>,
    pub call_edges: Vec<Edge>,
    pub returns: u64,
    pub unmatched_returns: u64,
    pub max_call_depth: usize,
    pub syscalls: Vec<SyscallRecord>,
    /// Every syscall in order as [number, result] (the first 2^20).
    pub syscall_log: Vec<(u64, i64)>,
    pub ring: Option<RingStats>,
    pub code_cache_flushes: u64,
}

/// What `Profile::build` needs.
#[derive(Debug)]
pub struct Inputs<'a> {
    pub tables: &'a Tables,
    pub blocks: &'a [BlockMeta],
    pub binary: Binary,
    pub symbols: &'a Symbols,
    pub module: String,
    pub command_line: Vec<String>,
    pub options: serde_json::Value,
    pub counting: &'static str,
    pub monitor: MonitorInfo,
    pub ending: Ending,
    pub times: Times,
    pub ring_capacity: u64,
    pub flushes: u64,
}

pub fn exit_name(k: ExitKind) -> &'static str {
    match k {
        ExitKind::Jump => "jump",
        ExitKind::Branch => "branch",
        ExitKind::Call => "call",
        ExitKind::IndirectJump => "indirect_jump",
        ExitKind::IndirectCall => "indirect_call",
        ExitKind::Return => "return",
        ExitKind::Syscall => "syscall",
        ExitKind::Trap => "trap",
        ExitKind::Fallthrough => "fallthrough",
    }
}

impl Profile {
    pub fn build(inp: Inputs<'_>) -> Profile {
        let t = inp.tables;
        let mut totals = Totals {
            translated_blocks: inp.blocks.len() as u64,
            ..Totals::default()
        };
        // I1: aggregate every translation of one guest address.
        totals.guest_instructions = t.rep_extra;
        totals.rep_extra_iterations = t.rep_extra;
        let mut by_addr: BTreeMap<u64, BlockRecord> = BTreeMap::new();
        for (id, m) in inp.blocks.iter().enumerate() {
            let count = t.counts.get(id).copied().unwrap_or(0);
            totals.guest_instructions += count * m.insns as u64;
            totals.block_executions += count;
            *totals.exits.entry(exit_name(m.exit)).or_insert(0) += count;
            let branch = m.exit == ExitKind::Branch;
            let r = by_addr.entry(m.guest).or_insert_with(|| BlockRecord {
                addr: m.guest,
                module: inp.module.clone(),
                offset: m.guest.wrapping_sub(inp.symbols.base),
                symbol: inp.symbols.name(m.guest),
                size: m.guest_len,
                instructions: m.insns,
                count: 0,
                exit: exit_name(m.exit),
                taken: branch.then_some(0),
                fallthrough: branch.then_some(0),
            });
            r.count += count;
            if branch {
                *r.taken.get_or_insert(0) += t.taken.get(id).copied().unwrap_or(0);
                *r.fallthrough.get_or_insert(0) += t.fallthrough.get(id).copied().unwrap_or(0);
            }
        }
        let mut indirect: BTreeMap<(u64, u64), u64> = BTreeMap::new();
        for (&(src, to), &c) in &t.indirect {
            *indirect
                .entry((inp.blocks[src as usize].guest, to))
                .or_insert(0) += c;
        }
        let edges = |m: BTreeMap<(u64, u64), u64>| -> Vec<Edge> {
            m.into_iter()
                .map(|((from, to), count)| Edge { from, to, count })
                .collect()
        };
        let calls: BTreeMap<(u64, u64), u64> = t.calls.iter().map(|(&k, &v)| (k, v)).collect();
        let syscalls = t
            .syscalls
            .iter()
            .map(|(&nr, s): (&u64, &SyscallStat)| SyscallRecord {
                nr,
                name: strace::syscall_name(nr)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("syscall_{nr}")),
                count: s.count,
                errors: s.errors,
                seconds: s.nanos as f64 * 1e-9,
            })
            .collect();
        let ring = (inp.counting == "ring").then_some(RingStats {
            capacity_entries: inp.ring_capacity,
            entries: t.entries,
            waits: t.waits,
            wait_seconds: t.wait_ns as f64 * 1e-9,
            peak_lag_entries: t.max_lag,
        });
        Profile {
            schema_version: SCHEMA_VERSION,
            tool: format!("hotlift {}", env!("CARGO_PKG_VERSION")),
            binary: inp.binary,
            command_line: inp.command_line,
            options: inp.options,
            counting: inp.counting,
            monitor: inp.monitor,
            ending: inp.ending,
            times: inp.times,
            totals,
            blocks: by_addr.into_values().collect(),
            indirect_edges: edges(indirect),
            call_edges: edges(calls),
            returns: t.returns,
            unmatched_returns: t.unmatched_returns,
            max_call_depth: t.max_shadow_depth,
            syscalls,
            syscall_log: t.syscall_log.clone(),
            ring,
            code_cache_flushes: inp.flushes,
        }
    }

    /// Write the JSON document to `path` (atomically: a temp file renamed).
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("tmp-hotlift");
        {
            let f = std::fs::File::create(&tmp)?;
            let mut w = std::io::BufWriter::new(f);
            serde_json::to_writer(&mut w, self).map_err(std::io::Error::other)?;
            w.write_all(b"\n")?;
            w.flush()?;
        }
        std::fs::rename(&tmp, path)
    }

    /// A short human summary (for `hotlift profile`).
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let tot = &self.totals;
        s.push_str(&format!(
            "hotlift profile: {} guest instructions in {} block executions ({} blocks translated)\n",
            tot.guest_instructions, tot.block_executions, tot.translated_blocks
        ));
        s.push_str("exits:");
        for (k, v) in &tot.exits {
            s.push_str(&format!(" {k}={v}"));
        }
        s.push('\n');
        let mut top: Vec<&BlockRecord> = self.blocks.iter().collect();
        top.sort_by_key(|b| std::cmp::Reverse(b.count * b.instructions as u64));
        s.push_str("top blocks by instructions executed:\n");
        for b in top.iter().take(10) {
            let sym = b.symbol.as_deref().unwrap_or("?");
            s.push_str(&format!(
                "  {:#14x} {:>12} insns {:>10} runs  {}\n",
                b.addr,
                b.count * b.instructions as u64,
                b.count,
                sym
            ));
        }
        if !self.syscalls.is_empty() {
            s.push_str("syscalls:\n");
            for c in &self.syscalls {
                s.push_str(&format!(
                    "  {:<18} {:>8} calls {:>6} errors {:>10.6} s\n",
                    c.name, c.count, c.errors, c.seconds
                ));
            }
        }
        if let Some(r) = &self.ring {
            s.push_str(&format!(
                "ring: {} entries, {} waits ({:.6} s), peak lag {} entries; monitor {} ({:.3} s CPU)\n",
                r.entries,
                r.waits,
                r.wait_seconds,
                r.peak_lag_entries,
                if self.monitor.pinned { "pinned" } else { "unpinned" },
                self.times.monitor_cpu_seconds
            ));
        }
        s
    }
}
