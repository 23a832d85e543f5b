//! The profile: the monitor's exact tables turned into the versioned JSON
//! document `hotlift profile` and `hotlift run --profile` write.
//!
//! I1: counts are exact: a block's `count` is the number of times the guest
//!     entered it, summed over every translation of that guest address.
//!     Every block the process translated is listed, run or not; a forked
//!     child lists the blocks it inherited from its parent only where it
//!     ran them (and `translated_blocks` counts its own translations;
//!     `totals.exits` the exit kinds of the blocks it lists).
//! I2: `schema_version` changes whenever a field changes meaning or goes
//!     away; docs/PROFILE.md describes every field.
//!
//! Usage: `Profile::build(&inputs)`, then `write_json(path)` / `summary()`.

pub mod count_check;
pub mod diff;
pub mod dump;
pub mod export;
mod json;
mod modules;
pub mod names;
mod process;
pub mod read;
mod retired;
pub mod sampling;
pub mod summary;
mod symbols;
pub mod timeline;
pub mod window;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::monitor::{BlockMeta, ExitKind, MonitorInfo, Snapshot, SyscallStat};
use crate::strace;
use crate::superblock::build::BuildStats;
use crate::superblock::record::SbRecord;
pub use modules::{file_sha256, Module, Modules, ANON};
pub use process::ProcessInfo;
pub use symbols::{read_for_symbols, Symbols};

pub const SCHEMA_VERSION: u32 = 3;
/// The oldest schema the reader takes: 2 differs from 3 only in what
/// `edges` leaves out (docs/PROFILE.md) and has no `unresolved_exits`.
pub const OLDEST_READABLE: u32 = 2;

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
    Exit {
        code: i32,
    },
    Signal {
        signal: i32,
    },
    /// The image was replaced by an `execve` (`process` says by what).
    Exec,
}

#[derive(Debug, Serialize)]
pub struct Times {
    pub wall_seconds: f64,
    pub process_cpu_seconds: f64,
    pub monitor_cpu_seconds: f64,
    /// From hotlift's `main` to the guest's first instruction (0 in a
    /// forked child).
    pub setup_seconds: f64,
    /// Where the start-up went (all 0 in a forked child).
    pub startup: Startup,
    /// Spent by guest threads translating blocks (not superblocks, which
    /// the monitor builds).
    pub translation_seconds: f64,
    /// At the end, waiting for the monitor to take in what was left in
    /// the rings.
    pub drain_seconds: f64,
    /// At the end, reading the modules' symbols and building this
    /// profile (writing it comes after).
    pub profile_seconds: f64,
}

/// A process's start-up (`times.startup`), in seconds: the first
/// before `main`, the others the steps from `main` to the guest's first
/// instruction, in order (what follows the last is `setup_seconds` less
/// their sum: the guest's signal state, the first dispatch).
#[derive(Debug, Serialize, serde::Deserialize, Default, Clone, Copy, PartialEq)]
pub struct Startup {
    /// CPU time of hotlift's thread when `main` began: the `execve`, the
    /// dynamic loader, the runtime's start (0 in an image an `execve`
    /// began, whose thread's clock holds the image before's run too).
    pub before_main_cpu_seconds: f64,
    /// Reading the options, loading the program and its interpreter,
    /// building its stack.
    pub loading_seconds: f64,
    /// Code memory, its shared stubs and index.
    pub code_cache_seconds: f64,
    /// Profiling set up, the monitor thread started.
    pub monitor_seconds: f64,
    /// The first guest thread's context, ring and lookup table.
    pub first_thread_seconds: f64,
}

impl Startup {
    /// This process's, from the marks it passed (crate::clock).
    pub fn measured() -> Startup {
        let [loaded, cache, monitor, thread] = crate::clock::phases();
        let step = |a: f64, b: f64| if a > 0.0 && b >= a { b - a } else { 0.0 };
        Startup {
            before_main_cpu_seconds: crate::clock::cpu_before_main(),
            loading_seconds: loaded,
            code_cache_seconds: step(loaded, cache),
            monitor_seconds: step(cache, monitor),
            first_thread_seconds: step(monitor, thread),
        }
    }
}

#[derive(Debug, Serialize, Default)]
pub struct Totals {
    pub guest_instructions: u64,
    /// Of those, iterations of `rep` string instructions beyond the first.
    pub rep_extra_iterations: u64,
    /// Instructions of entered blocks that did not retire (the block
    /// stopped early at a fault, a trap that does not retire, or a store
    /// into translated code); left out of `guest_instructions`.
    pub unretired_instructions: u64,
    /// Frames built for the guest's signal handlers.
    pub signals_delivered: u64,
    pub block_executions: u64,
    pub translated_blocks: u64,
    /// Of those, blocks placed from translations kept by an earlier run
    /// (dispatch/kept/), not lifted and emitted again.
    pub kept_blocks: u64,
    /// Block executions by how the block ended.
    pub exits: BTreeMap<&'static str, u64>,
}

#[derive(Debug, Serialize)]
pub struct BlockRecord {
    pub addr: u64,
    /// One string shared by the module's blocks.
    pub module: std::sync::Arc<str>,
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
pub struct SyscallRecord {
    pub nr: u64,
    pub name: String,
    pub count: u64,
    pub errors: u64,
    pub seconds: f64,
}

/// Why guest threads left translated code for the dispatcher (each one
/// a round trip through hotlift): the counts a cold start pays per new
/// block and a steady run should keep near zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Dispatcher {
    /// Every return to the dispatcher, whatever the reason.
    pub entries: u64,
    /// Direct exits not yet linked to their target (the next translated
    /// block, or its translation).
    pub direct_exits: u64,
    /// Of those, exits then linked (jumping straight to their target from
    /// then on; not with `--no-chain`).
    pub links: u64,
    /// Direct exits linked as their block was translated, their target
    /// translated already: never a round trip (not with `--no-chain`, nor
    /// under `hotlift paths`).
    #[serde(default)]
    pub prelinks: u64,
    /// Indirect jumps, calls and returns whose target the inline lookup
    /// did not find.
    pub indirect_misses: u64,
    /// Guest syscalls.
    pub syscalls: u64,
    /// Stores into translated code (dispatch/smc.rs).
    pub code_writes: u64,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct RingStats {
    pub capacity_entries: u64,
    pub entries: u64,
    pub waits: u64,
    pub wait_seconds: f64,
    pub peak_lag_entries: u64,
    /// `entries` over `totals.block_executions`: what the profile cost the
    /// guest in ring words per block it ran (superblocks and counted loops
    /// bring it below 1).
    pub words_per_block: f64,
    /// The monitor's CPU time (all of it: tables, the calling-context
    /// tree, sampling, building superblocks) over `entries`, in ns.
    pub monitor_ns_per_word: f64,
}

/// A block-to-block transition, or an indirect/call edge, by guest address.
#[derive(Debug, Serialize)]
pub struct Edge {
    pub from: u64,
    pub to: u64,
    pub count: u64,
}

/// One calling context (monitor/calltree.rs).
#[derive(Debug, Serialize)]
pub struct ContextRecord {
    pub id: u32,
    pub parent: Option<u32>,
    pub function: u64,
    pub module: Option<String>,
    pub offset: u64,
    pub symbol: Option<String>,
    pub calls: u64,
    pub self_instructions: u64,
}

/// A superblock as the profile records it: what was built, and how it ran.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SuperblockEntry {
    #[serde(flatten)]
    pub record: SbRecord,
    pub head_symbol: Option<String>,
    /// Dropped by a code-cache flush before the end of the run.
    pub flushed: bool,
    /// Entries from outside the superblock.
    pub entries: u64,
    /// Passes that ran to the end and looped back to the start.
    pub loops: u64,
    /// Passes that ran each member.
    pub member_runs: Vec<u64>,
    pub exit_counts: Vec<u64>,
    /// Passes that stopped inside (a fault, a store into code, a signal).
    pub partial_exits: u64,
    /// Names of guest addresses, for dumps (not stored): one map shared
    /// by every superblock of a profile (a copy each was 3.7 s of
    /// python's 482-superblock dump).
    #[serde(skip)]
    pub names: std::sync::Arc<std::collections::HashMap<u64, String>>,
}

impl SuperblockEntry {
    /// An entry for a superblock that has not run yet (dumps as built).
    pub fn unrun(record: SbRecord) -> SuperblockEntry {
        SuperblockEntry {
            head_symbol: None,
            flushed: false,
            entries: 0,
            loops: 0,
            member_runs: vec![0; record.members.len()],
            exit_counts: vec![0; record.exits.len()],
            partial_exits: 0,
            names: Default::default(),
            record,
        }
    }
}

/// What building superblocks came to.
#[derive(Debug, Serialize)]
pub struct SuperblockStats {
    #[serde(flatten)]
    pub build: BuildStats,
    /// Superblock records that did not fit the protocol (0 unless hotlift
    /// has a bug).
    pub record_errors: u64,
}

/// What one guest thread executed.
#[derive(Debug, Serialize)]
pub struct ThreadRecord {
    pub tid: i32,
    pub guest_instructions: u64,
    pub block_executions: u64,
    pub ring_entries: u64,
}

/// A piece of host code in the code cache and the guest block it runs.
#[derive(Debug, Serialize)]
pub struct Translation {
    pub host: u64,
    pub host_size: u32,
    pub guest: u64,
}

/// The whole profile document (schema in docs/PROFILE.md).
#[derive(Debug, Serialize)]
pub struct Profile {
    pub schema_version: u32,
    pub tool: String,
    pub pid: u32,
    pub binary: Binary,
    pub command_line: Vec<String>,
    pub options: serde_json::Value,
    /// "ring" (the monitor) or "inline" (`--count-inline`).
    pub counting: &'static str,
    pub monitor: MonitorInfo,
    pub ending: Ending,
    pub times: Times,
    pub totals: Totals,
    pub modules: Vec<Module>,
    pub blocks: Vec<BlockRecord>,
    pub edges: Vec<Edge>,
    pub indirect_edges: Vec<Edge>,
    pub call_edges: Vec<Edge>,
    pub returns: u64,
    pub unmatched_returns: u64,
    /// Indirect jumps into a landing site that unwound the shadow stack
    /// (longjmp; monitor tables/landing.rs).
    pub unwinding_jumps: u64,
    /// Indirect exits whose target never came (monitor tables I1).
    pub unresolved_exits: u64,
    /// Σ extra = `totals.rep_extra_iterations`.
    pub rep_iterations: Vec<retired::RepIterations>,
    /// Σ instructions × times + Σ `rep_iterations[].unretired` =
    /// `totals.unretired_instructions`.
    pub unretired: Vec<retired::Unretired>,
    pub max_call_depth: usize,
    pub call_tree: Vec<ContextRecord>,
    pub call_tree_truncated_calls: u64,
    pub syscalls: Vec<SyscallRecord>,
    /// Every syscall in order as [number, result] (the first 2^20).
    pub syscall_log: Vec<(u64, i64)>,
    pub ring: Option<RingStats>,
    pub code_cache_flushes: u64,
    /// The flushes by why they happened (`dispatch::process::FlushCause`;
    /// every cause listed, zeros too).
    pub code_cache_flushes_by_cause: std::collections::BTreeMap<&'static str, u64>,
    pub dispatcher: Dispatcher,
    pub translations: Vec<Translation>,
    pub superblocks: Vec<SuperblockEntry>,
    pub superblock_stats: SuperblockStats,
    /// Per guest thread, in the order they started (ring counting only).
    pub threads: Vec<ThreadRecord>,
    /// `--count-check`: the monitor's counts against inline counting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_check: Option<count_check::CountCheck>,
    /// Which process and image of a process tree (process.rs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessInfo>,
    /// Timed call-stack samples and their time tree (sampling.rs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_tree: Option<sampling::TimeTreeSection>,
    /// `--selector pisat`: what mining cost and found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pisat: Option<crate::superblock::pisat::PisatStats>,
    /// `--store`: what the run read from the profile store and pre-built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<StoreReport>,
}

/// The `store` section of the profile (store/run.rs fills it).
#[derive(Debug, serde::Serialize)]
pub struct StoreReport {
    /// The URL without its password.
    pub url: String,
    pub mode: StoreMode,
    /// The program's identity (null when it could not be computed).
    pub identity: Option<String>,
    /// `loaded`, `nothing` (the store does not know this program),
    /// `pending` (the reader had not finished when the guest ended),
    /// `failed`, or `off` (the run does not read the store).
    pub read: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_error: Option<String>,
    /// The store's version for the program when read (0: nothing).
    pub version: u64,
    pub traces_read: u64,
    pub traces_unreadable: u64,
    /// Traces whose modules were all mapped in this run.
    pub traces_resolved: u64,
    /// Traces with a member that no longer matches (store/feed.rs I1).
    pub traces_stale: u64,
    pub requests: u64,
    /// Superblocks built from stored traces.
    pub superblocks_built: u64,
}

/// What a run does with its `--store` (`--store-mode`: options.rs; the
/// profile records it, so it is declared here, below both).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum StoreMode {
    #[default]
    Both,
    Read,
    Write,
}

impl StoreMode {
    pub fn reads(self) -> bool {
        self != StoreMode::Write
    }
    pub fn writes(self) -> bool {
        self != StoreMode::Read
    }
}

/// What `Profile::build` needs.
#[derive(Debug)]
pub struct Inputs<'a> {
    /// What the monitor counted (or `--count-inline`'s counts).
    pub snapshot: &'a Snapshot,
    /// What the second tier made (superblocks, their builder's and
    /// Pisat's statistics); None without one.
    pub tier: Option<&'a crate::superblock::Outcome>,
    pub blocks: &'a [BlockMeta],
    pub binary: Binary,
    pub modules: Modules,
    pub command_line: Vec<String>,
    pub options: serde_json::Value,
    pub counting: &'static str,
    pub monitor: MonitorInfo,
    pub ending: Ending,
    pub times: Times,
    pub ring_capacity: u64,
    pub flushes: u64,
    pub translations: &'a [(u64, u32, u64)],
    /// A forked child's blocks from before the fork (ids below this): left
    /// out where the child never ran them (I1).
    pub inherited_blocks: usize,
    /// Blocks placed from kept translations (`Totals::kept_blocks`).
    pub kept_blocks: u64,
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

/// Edges in (from, to) order, each pair's counts summed: collected as they
/// come, sorted once (a python start-up's 54,000 edges cost 50 ms in
/// B-trees, and 9 ms in hash maps).
fn edge_list(mut v: Vec<((u64, u64), u64)>) -> Vec<Edge> {
    v.sort_unstable_by_key(|&(k, _)| k);
    let mut out: Vec<Edge> = Vec::with_capacity(v.len());
    for ((from, to), count) in v {
        match out.last_mut() {
            Some(e) if (e.from, e.to) == (from, to) => e.count += count,
            _ => out.push(Edge { from, to, count }),
        }
    }
    out
}

impl Profile {
    pub fn build(inp: Inputs<'_>) -> Profile {
        let t = inp.snapshot;
        let mut modules = inp.modules;
        let mut totals = Totals {
            translated_blocks: inp.blocks.len().saturating_sub(inp.inherited_blocks) as u64,
            kept_blocks: inp.kept_blocks,
            ..Totals::default()
        };
        // I1: aggregate every translation of one guest address.
        totals.guest_instructions = t.rep_extra;
        totals.rep_extra_iterations = t.rep_extra;
        totals.unretired_instructions = t.unretired;
        totals.signals_delivered = t.signals;
        // Keyed by address and module: one address may have held two
        // images at different times (modules.rs I1). Block ids sorted by
        // that key, then merged: a hash map of records and a sort of them
        // cost 30 ms of python's start-up.
        let n = inp.blocks.len();
        // Executions by exit kind, a slot per kind value.
        let mut exits: [(u64, Option<ExitKind>); 9] = [(0, None); 9];
        let mut keyed: Vec<(u64, usize, u32, u64)> = Vec::new();
        // A forked child's inherited blocks only where its monitor met
        // them (the rest never ran here: 38,000 of a python child's
        // parent, read one by one, were half of building its profile).
        for id in t.listed_blocks(n, inp.inherited_blocks) {
            let m = &inp.blocks[id];
            let count = t.count(id);
            totals.guest_instructions += count * m.insns as u64;
            totals.block_executions += count;
            let e = &mut exits[m.exit as usize];
            *e = (e.0 + count, Some(m.exit));
            if count == 0 && id < inp.inherited_blocks {
                // A block of the parent's the child never ran: a forked
                // python would otherwise list all 30,000 of them.
                continue;
            }
            let module = modules.index(m.guest, Some(id as u32));
            keyed.push((m.guest, module, id as u32, count));
        }
        for (c, kind) in exits {
            if let Some(k) = kind {
                totals.exits.insert(exit_name(k), c);
            }
        }
        keyed.sort_unstable();
        // The record of each block id (u32::MAX: none, an unrun
        // inherited block), and the module names shared by records.
        let mut record_of = vec![u32::MAX; n];
        let mut blocks: Vec<BlockRecord> = Vec::with_capacity(keyed.len());
        let mut names: Vec<Option<std::sync::Arc<str>>> = Vec::new();
        let mut last = None;
        for &(addr, module, id, count) in &keyed {
            if last != Some((addr, module)) {
                last = Some((addr, module));
                let m = &inp.blocks[id as usize];
                let (name, offset, symbol) = modules.describe(module, addr);
                if names.len() <= module {
                    names.resize(module + 1, None);
                }
                let name = names[module].get_or_insert_with(|| name.into()).clone();
                let branch = m.exit == ExitKind::Branch;
                blocks.push(BlockRecord {
                    addr,
                    module: name,
                    offset,
                    symbol,
                    size: m.guest_len,
                    instructions: m.insns,
                    count: 0,
                    exit: exit_name(m.exit),
                    taken: branch.then_some(0),
                    fallthrough: branch.then_some(0),
                });
            }
            let r = blocks.len() - 1;
            blocks[r].count += count;
            record_of[id as usize] = r as u32;
        }
        drop(keyed);
        let (mut all, mut indirect, mut calls) = (Vec::new(), Vec::new(), Vec::new());
        for (&(src, to), &c) in &t.edges {
            let m = &inp.blocks[src as usize];
            all.push(((m.guest, to), c));
            match m.exit {
                ExitKind::Branch => {
                    // Every block that left by an edge ran: it has a record.
                    if let Some(r) = blocks.get_mut(record_of[src as usize] as usize) {
                        let side = if to == m.target {
                            &mut r.taken
                        } else {
                            &mut r.fallthrough
                        };
                        *side.get_or_insert(0) += c;
                    }
                }
                ExitKind::IndirectJump | ExitKind::Return => indirect.push(((m.guest, to), c)),
                ExitKind::IndirectCall => {
                    indirect.push(((m.guest, to), c));
                    calls.push(((m.guest, to), c));
                }
                ExitKind::Call => calls.push(((m.guest, to), c)),
                _ => {}
            }
        }
        // Every unretired instruction was counted with its block above.
        totals.guest_instructions = totals.guest_instructions.saturating_sub(t.unretired);
        let call_tree = t
            .tree
            .nodes
            .iter()
            .enumerate()
            .map(|(id, n)| {
                let (module, offset, symbol) = if id == 0 {
                    (None, 0, None)
                } else {
                    let (m, o, s) = modules.locate(n.func, None);
                    (Some(m), o, s)
                };
                ContextRecord {
                    id: id as u32,
                    parent: (id != 0).then_some(n.parent),
                    function: n.func,
                    module,
                    offset,
                    symbol,
                    calls: n.calls,
                    self_instructions: n.self_insns,
                }
            })
            .collect();
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
            words_per_block: t.entries as f64 / totals.block_executions.max(1) as f64,
            monitor_ns_per_word: inp.times.monitor_cpu_seconds * 1e9 / t.entries.max(1) as f64,
        });
        // One per block id, in order (dispatch commit_block); a forked
        // child's inherited ones only where it ran them (I1).
        let translations = t
            .listed_blocks(inp.translations.len(), inp.inherited_blocks)
            .filter(|&id| id >= inp.inherited_blocks || t.count(id) > 0)
            .map(|id| inp.translations[id])
            .map(|(host, host_size, guest)| Translation {
                host,
                host_size,
                guest,
            })
            .collect();
        let superblocks = inp
            .tier
            .map_or(&[][..], |o| &o.records[..])
            .iter()
            .map(|r| {
                let mut e = SuperblockEntry::unrun(r.clone());
                e.head_symbol = modules.locate(r.head, None).2;
                e.flushed = r.generation != inp.flushes;
                if let Some(s) = t.sb_summary(r.id) {
                    e.entries = s.entries;
                    e.loops = s.loops;
                    e.member_runs = s.member_runs.clone();
                    e.exit_counts = s.exit_counts.clone();
                    e.partial_exits = s.partial_exits;
                }
                e
            })
            .collect();
        let time_tree = sampling::TimeTreeSection::build(t, &mut modules);
        Profile {
            schema_version: SCHEMA_VERSION,
            tool: format!("hotlift {}", env!("CARGO_PKG_VERSION")),
            pid: std::process::id(),
            binary: inp.binary,
            command_line: inp.command_line,
            options: inp.options,
            counting: inp.counting,
            monitor: inp.monitor,
            ending: inp.ending,
            times: inp.times,
            totals,
            modules: std::mem::take(&mut modules).into_list(),
            blocks,
            edges: edge_list(all),
            indirect_edges: edge_list(indirect),
            call_edges: edge_list(calls),
            returns: t.returns,
            unmatched_returns: t.unmatched_returns,
            unwinding_jumps: t.unwinding_jumps,
            unresolved_exits: t.unresolved_exits,
            rep_iterations: retired::rep_list(t, inp.blocks),
            unretired: retired::unretired_list(t, inp.blocks),
            max_call_depth: t.max_call_depth,
            call_tree,
            call_tree_truncated_calls: t.tree.truncated,
            syscalls,
            syscall_log: t.syscall_log.clone(),
            ring,
            code_cache_flushes: inp.flushes,
            code_cache_flushes_by_cause: Default::default(),
            dispatcher: Dispatcher::default(),
            translations,
            superblocks,
            count_check: None,
            process: None,
            time_tree,
            pisat: inp.tier.and_then(|o| o.pisat.clone()),
            store: None,
            threads: t
                .threads
                .iter()
                .zip(&t.thread_tids)
                .map(|(&(i, b, e), &tid)| ThreadRecord {
                    tid,
                    guest_instructions: i,
                    block_executions: b,
                    ring_entries: e,
                })
                .collect(),
            superblock_stats: SuperblockStats {
                build: inp.tier.map(|o| o.stats).unwrap_or_default(),
                record_errors: t.sb_record_errors,
            },
        }
    }

    /// Write the JSON document to `path` (atomically: a temp file renamed).
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let write = |f: std::fs::File| -> std::io::Result<()> {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            json::write_profile(self, &mut w)?;
            w.write_all(b"\n")?;
            w.flush()
        };
        if std::fs::metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
            // A device, a fifo, a socket: written to as it is. Renamed
            // over, `--profile /dev/full` run as root replaced the device
            // with a regular file.
            return write(std::fs::OpenOptions::new().write(true).open(path)?);
        }
        // Beside the profile, named by this process: the processes of one
        // tree write their profiles at the same time (process.rs I1).
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".{}.tmp-hotlift", std::process::id()));
        let tmp = std::path::PathBuf::from(tmp);
        let written = std::fs::File::create(&tmp)
            .and_then(write)
            .and_then(|()| std::fs::rename(&tmp, path));
        if written.is_err() {
            // Not left beside the profile (a full disk left p.json.PID.tmp-hotlift).
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Edge lists sum repeated pairs, in order.
    #[test]
    fn edges_merged() {
        let e = edge_list(vec![((5, 1), 2), ((1, 9), 1), ((5, 1), 3), ((1, 2), 4)]);
        let got: Vec<(u64, u64, u64)> = e.iter().map(|e| (e.from, e.to, e.count)).collect();
        assert_eq!(got, [(1, 2, 4), (1, 9, 1), (5, 1, 5)]);
    }
}
