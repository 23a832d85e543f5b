//! The profile document's types: one set, which the run fills and writes
//! (`Profile::build`, json.rs) and `read.rs` reads back, so a field is
//! declared once for both (docs/PROFILE.md describes every one).
//!
//! I1: `Serialize` writes exactly the document json.rs writes (json.rs I1):
//!     field order is key order, and a field that is written only when set
//!     says so with `skip_serializing_if`.
//! I2: reading is as tolerant as PROFILE.md ("Reading profiles") says:
//!     a field carries `#[serde(default)]` where a readable profile may
//!     lack it: written before the field was (schema 2, earlier schema 3
//!     documents; its comment gives the date), made by hand with what the
//!     exports need (a document needs only `schema_version`, `binary`'s
//!     `path` and `sha256`, `ending`, `totals.guest_instructions` and
//!     `blocks`), or a whole section the reader skipped before it shared
//!     these types (`options`, `monitor`, `threads`, `superblock_stats`…:
//!     absent, it reads as empty). The other fields, which every profile
//!     hotlift has written has, are required. Unknown fields are ignored
//!     (additions within one schema version are additive).
//! I3: where the writer's type is narrower than a hand-made document's
//!     (a call-tree node's `offset`, a translation's `guest`, `pid`), a
//!     `null` reads as 0, as an absent field does.
//! I4: strings the run names from a fixed set (`counting`, exit kinds,
//!     flush causes, `store.read`) are `Cow<'static, str>`: borrowed when
//!     written, owned when read.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize};

use super::count_check::CountCheck;
use super::retired::{RepIterations, Unretired};
use super::{sampling, Module, ProcessInfo};
use crate::monitor::MonitorInfo;
use crate::superblock::build::BuildStats;
use crate::superblock::pisat::PisatStats;
use crate::superblock::record::SbRecord;

/// A `null` read as the type's default, as an absent field is (I3).
fn null_as_default<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Binary {
    pub path: String,
    pub sha256: String,
    #[serde(default)]
    pub build_id: Option<String>,
    #[serde(default)]
    pub size: u64,
}

/// How the guest ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// Each 0 where a profile lacks it: all but the first three came within
/// schema 3 (`setup_seconds` and `translation_seconds` on 2026-11-27,
/// `drain_seconds` and `profile_seconds` on 2026-11-28, `startup` on
/// 2026-12-01).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Times {
    pub wall_seconds: f64,
    pub process_cpu_seconds: f64,
    pub monitor_cpu_seconds: f64,
    /// From hotlift's `main` to the guest's first instruction (0 in a
    /// forked child).
    pub setup_seconds: f64,
    /// Where the start-up went (all 0 in a forked child; absent before
    /// 2026-12-01).
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
#[derive(Debug, Serialize, Deserialize, Default, Clone, Copy, PartialEq)]
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

#[derive(Debug, Serialize, Deserialize, Default)]
pub struct Totals {
    pub guest_instructions: u64,
    /// Of those, iterations of `rep` string instructions beyond the first.
    #[serde(default)]
    pub rep_extra_iterations: u64,
    /// Instructions of entered blocks that did not retire (the block
    /// stopped early at a fault, a trap that does not retire, or a store
    /// into translated code); left out of `guest_instructions`.
    #[serde(default)]
    pub unretired_instructions: u64,
    /// Frames built for the guest's signal handlers (absent before
    /// 2026-11-24).
    #[serde(default)]
    pub signals_delivered: u64,
    #[serde(default)]
    pub block_executions: u64,
    #[serde(default)]
    pub translated_blocks: u64,
    /// Of those, blocks placed from translations kept by an earlier run
    /// (dispatch/kept/), not lifted and emitted again (absent before
    /// 2026-12-01).
    #[serde(default)]
    pub kept_blocks: u64,
    /// Of those, blocks placed together with their module's plan, which
    /// lists what an earlier run of the program used (dispatch/kept/ K6):
    /// some may never run here (absent before 2026-12-05).
    #[serde(default)]
    pub planned_blocks: u64,
    /// Of those, blocks made before a fork because an earlier forked
    /// child made them (its path after the fork, dispatch/forkpath.rs),
    /// run here only if this process ran them itself (absent before
    /// 2026-12-05).
    #[serde(default)]
    pub fork_prepared_blocks: u64,
    /// Block executions by how the block ended (`exit_name`).
    #[serde(default)]
    pub exits: BTreeMap<Cow<'static, str>, u64>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct BlockRecord {
    pub addr: u64,
    /// One string shared by the module's blocks (in a profile read back,
    /// one each).
    pub module: Arc<str>,
    pub offset: u64,
    #[serde(default)]
    pub symbol: Option<String>,
    pub size: u32,
    pub instructions: u32,
    pub count: u64,
    /// `exit_name` of how the block ends.
    pub exit: Cow<'static, str>,
    /// A branch's sides (only a branch has them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallthrough: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct SyscallRecord {
    pub nr: u64,
    pub name: String,
    pub count: u64,
    #[serde(default)]
    pub errors: u64,
    #[serde(default)]
    pub seconds: f64,
}

/// Why guest threads left translated code for the dispatcher (each one
/// a round trip through hotlift): the counts a cold start pays per new
/// block and a steady run should keep near zero. All 0 in profiles
/// written before 2026-11-30, which have none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// under `hotlift paths`; absent before 2026-12-01).
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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RingStats {
    pub capacity_entries: u64,
    pub entries: u64,
    pub waits: u64,
    pub wait_seconds: f64,
    pub peak_lag_entries: u64,
    /// `entries` over `totals.block_executions`: what the profile cost the
    /// guest in ring words per block it ran (superblocks and counted loops
    /// bring it below 1). Absent in schema 2.
    #[serde(default)]
    pub words_per_block: f64,
    /// The monitor's CPU time (all of it: tables, the calling-context
    /// tree, sampling, building superblocks) over `entries`, in ns.
    /// Absent in schema 2.
    #[serde(default)]
    pub monitor_ns_per_word: f64,
}

/// A block-to-block transition, or an indirect/call edge, by guest address.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Edge {
    pub from: u64,
    pub to: u64,
    pub count: u64,
}

/// One calling context (monitor/calltree.rs).
#[derive(Debug, Serialize, Deserialize)]
pub struct ContextRecord {
    pub id: u32,
    /// None for the root (id 0).
    pub parent: Option<u32>,
    pub function: u64,
    #[serde(default)]
    pub module: Option<String>,
    /// 0 for the root (I3: a hand-made root's `null` too).
    #[serde(default, deserialize_with = "null_as_default")]
    pub offset: u64,
    #[serde(default)]
    pub symbol: Option<String>,
    #[serde(default)]
    pub calls: u64,
    pub self_instructions: u64,
}

/// A superblock as the profile records it: what was built, and how it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    pub names: Arc<std::collections::HashMap<u64, String>>,
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
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SuperblockStats {
    #[serde(flatten)]
    pub build: BuildStats,
    /// Superblock records that did not fit the protocol (0 unless hotlift
    /// has a bug).
    pub record_errors: u64,
}

/// What one guest thread executed.
#[derive(Debug, Serialize, Deserialize)]
pub struct ThreadRecord {
    pub tid: i32,
    pub guest_instructions: u64,
    pub block_executions: u64,
    pub ring_entries: u64,
}

/// A piece of host code in the code cache and the guest block it runs.
#[derive(Debug, Serialize, Deserialize)]
pub struct Translation {
    pub host: u64,
    pub host_size: u32,
    /// 0 where a hand-made profile has none (I3).
    #[serde(default, deserialize_with = "null_as_default")]
    pub guest: u64,
    /// Never written by hotlift (its superblocks' code is in
    /// `superblocks[]`): a hand-made profile may name a superblock's code
    /// here instead of a `guest`, and the perf map shows it by this
    /// (export/perfmap.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superblock: Option<serde_json::Value>,
}

/// The whole profile document (schema in docs/PROFILE.md), as the run
/// writes it and `read.rs` reads it (I2 says which fields may be absent).
#[derive(Debug, Serialize, Deserialize)]
pub struct Profile {
    pub schema_version: u32,
    #[serde(default)]
    pub tool: String,
    /// 0: not recorded (I3).
    #[serde(default, deserialize_with = "null_as_default")]
    pub pid: u32,
    pub binary: Binary,
    #[serde(default)]
    pub command_line: Vec<String>,
    #[serde(default)]
    pub options: serde_json::Value,
    /// "ring" (the monitor) or "inline" (`--count-inline`).
    #[serde(default)]
    pub counting: Cow<'static, str>,
    #[serde(default)]
    pub monitor: MonitorInfo,
    pub ending: Ending,
    #[serde(default)]
    pub times: Times,
    pub totals: Totals,
    /// Without them, `read.rs` makes one per block `module` name.
    #[serde(default)]
    pub modules: Vec<Module>,
    pub blocks: Vec<BlockRecord>,
    #[serde(default)]
    pub edges: Vec<Edge>,
    #[serde(default)]
    pub indirect_edges: Vec<Edge>,
    #[serde(default)]
    pub call_edges: Vec<Edge>,
    #[serde(default)]
    pub returns: u64,
    #[serde(default)]
    pub unmatched_returns: u64,
    /// Indirect jumps into a landing site that unwound the shadow stack
    /// (longjmp; monitor tables/landing.rs). Absent before 2026-11-30.
    #[serde(default)]
    pub unwinding_jumps: u64,
    /// Indirect exits whose target never came (monitor tables I1).
    /// Absent in schema 2.
    #[serde(default)]
    pub unresolved_exits: u64,
    /// Σ extra = `totals.rep_extra_iterations` (absent before 2026-12-01:
    /// only the total).
    #[serde(default)]
    pub rep_iterations: Vec<RepIterations>,
    /// Σ instructions × times + Σ `rep_iterations[].unretired` =
    /// `totals.unretired_instructions` (absent before 2026-12-01).
    #[serde(default)]
    pub unretired: Vec<Unretired>,
    #[serde(default)]
    pub max_call_depth: usize,
    #[serde(default)]
    pub call_tree: Vec<ContextRecord>,
    #[serde(default)]
    pub call_tree_truncated_calls: u64,
    #[serde(default)]
    pub syscalls: Vec<SyscallRecord>,
    /// Every syscall in order as [number, result] (the first 2^20).
    #[serde(default)]
    pub syscall_log: Vec<(u64, i64)>,
    #[serde(default)]
    pub ring: Option<RingStats>,
    #[serde(default)]
    pub code_cache_flushes: u64,
    /// The flushes by why they happened (`dispatch::process::FlushCause`;
    /// every cause listed, zeros too). Absent before 2026-11-27.
    #[serde(default)]
    pub code_cache_flushes_by_cause: BTreeMap<Cow<'static, str>, u64>,
    #[serde(default)]
    pub dispatcher: Dispatcher,
    #[serde(default)]
    pub translations: Vec<Translation>,
    #[serde(default)]
    pub superblocks: Vec<SuperblockEntry>,
    #[serde(default)]
    pub superblock_stats: SuperblockStats,
    /// Per guest thread, in the order they started (ring counting only;
    /// absent before 2026-11-24).
    #[serde(default)]
    pub threads: Vec<ThreadRecord>,
    /// `--count-check`: the monitor's counts against inline counting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_check: Option<CountCheck>,
    /// Which process and image of a process tree (process.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessInfo>,
    /// Timed call-stack samples and their time tree (sampling.rs;
    /// validated on reading: sampling.rs I3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_tree: Option<sampling::TimeTreeSection>,
    /// `--selector pisat`: what mining cost and found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pisat: Option<PisatStats>,
    /// `--store`: what the run read from the profile store and pre-built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<StoreReport>,
}

/// The `store` section of the profile (store/run.rs fills it).
#[derive(Debug, Serialize, Deserialize)]
pub struct StoreReport {
    /// The URL without its password.
    pub url: String,
    pub mode: StoreMode,
    /// The program's identity (null when it could not be computed).
    pub identity: Option<String>,
    /// `loaded`, `nothing` (the store does not know this program),
    /// `pending` (the reader had not finished when the guest ended),
    /// `failed`, or `off` (the run does not read the store).
    pub read: Cow<'static, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize, Deserialize)]
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
