//! The profile: the monitor's exact tables turned into the versioned JSON
//! document `hotlift profile` and `hotlift run --profile` write.
//!
//! I1: counts are exact: a block's `count` is the number of times the guest
//!     entered it, summed over every translation of that guest address.
//!     Every block the process translated is listed, run or not; a forked
//!     child lists the blocks it inherited from its parent only where it
//!     ran them (and `translated_blocks` counts its own translations;
//!     `totals.exits` the exit kinds of the blocks it lists), and so does
//!     a process the blocks it placed with a plan (dispatch/kept/ K6),
//!     those of its current id epoch.
//! I2: `schema_version` changes whenever a field changes meaning or goes
//!     away; docs/PROFILE.md describes every field. One set of types
//!     (schema.rs) is both what the run writes and what `read` gives back.
//! I3: a built profile is already what `read` makes of a document (read
//!     I3, I4): its blocks are in address order (merged from keys sorted
//!     by address) and every block's module is in `modules` (each record
//!     names the module `Modules::index` listed, `ANON` included), so the
//!     run's own profile is read in place at its end (summary.rs
//!     `at_exit`).
//!
//! Usage: `Profile::build(inputs)`, then `write_json(path)`;
//! `read::read_file(path)` gives a written one back.

pub mod count_check;
pub mod diff;
pub mod dump;
pub mod export;
mod ids;
mod json;
mod modules;
pub mod names;
mod process;
pub mod read;
mod retired;
pub mod sampling;
mod schema;
pub mod summary;
mod symbols;
pub mod timeline;
pub mod window;

use std::io::Write as _;
use std::path::Path;

use crate::monitor::{ExitKind, MonitorInfo, Snapshot, SyscallStat};
use crate::types::BlockId;

use crate::cache::{BlockMeta, BlockTable};
use crate::strace;
pub use modules::{file_sha256, Module, Modules, ANON};
pub use process::ProcessInfo;
pub use schema::{
    Binary, BlockRecord, ContextRecord, Dispatcher, Edge, Ending, Profile, RingStats, Startup,
    StoreMode, StoreReport, SuperblockEntry, SuperblockStats, SyscallRecord, ThreadRecord, Times,
    Totals, Translation,
};
pub use symbols::{read_for_symbols, Symbols};

pub const SCHEMA_VERSION: u32 = 3;
/// The oldest schema the reader takes: 2 differs from 3 only in what
/// `edges` leaves out (docs/PROFILE.md) and has no `unresolved_exits`.
pub const OLDEST_READABLE: u32 = 2;

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
    /// The block table whose code records list the translations (None:
    /// none listed).
    pub translations: Option<&'a BlockTable>,
    /// A forked child's blocks from before the fork (ids below this): left
    /// out where the child never ran them (I1).
    pub inherited_blocks: usize,
    /// Blocks placed from kept translations (`Totals::kept_blocks`).
    pub kept_blocks: u64,
    /// Of those, placed with their module's plan (`Totals::planned_blocks`).
    pub planned_blocks: u64,
    /// Blocks made for forked children's paths
    /// (`Totals::fork_prepared_blocks`).
    pub fork_prepared_blocks: u64,
    /// Translations this process made, in every id epoch
    /// (`Totals::translated_blocks`).
    pub translated: u64,
    /// The sequence number of block 0 (images.rs I2: the ids the ended id
    /// epochs used).
    pub block_base: u64,
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
            translated_blocks: inp.translated,
            kept_blocks: inp.kept_blocks,
            planned_blocks: inp.planned_blocks,
            fork_prepared_blocks: inp.fork_prepared_blocks,
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
        // This epoch's blocks, then the ended epochs' (ids.rs I1).
        let ids = ids::Ids::new(inp.blocks, t, inp.block_base);
        let n = ids.metas.len();
        // Executions by exit kind, a slot per kind value.
        let mut exits: [(u64, Option<ExitKind>); 9] = [(0, None); 9];
        let mut keyed: Vec<(u64, usize, u32, u64)> = Vec::new();
        // A forked child's inherited blocks only where its monitor met
        // them (the rest never ran here: 38,000 of a python child's
        // parent, read one by one, were half of building its profile).
        // Blocks placed with a plan, of this epoch (the block table's bits;
        // those of ended epochs are listed run or not).
        let planned =
            |id: usize| id < ids.live && inp.translations.is_some_and(|b| b.planned(id as u32));
        for id in ids.listed(inp.inherited_blocks) {
            let m = &ids.metas[id];
            let count = ids.count(id);
            totals.guest_instructions += count * m.insns as u64;
            totals.block_executions += count;
            let e = &mut exits[m.exit as usize];
            *e = (e.0 + count, Some(m.exit));
            if count == 0 && (id < inp.inherited_blocks || planned(id)) {
                // A block of the parent's the child never ran: a forked
                // python would otherwise list all 30,000 of them. Or one
                // placed with its module's plan (an earlier run used it).
                continue;
            }
            let module = ids.module(&mut modules, id);
            keyed.push((m.guest, module, id as u32, count));
        }
        for (c, kind) in exits {
            if let Some(k) = kind {
                totals.exits.insert(exit_name(k).into(), c);
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
                let m = &ids.metas[id as usize];
                let (offset, symbol) = modules.place(module, addr);
                if names.len() <= module {
                    names.resize(module + 1, None);
                }
                let name = names[module]
                    .get_or_insert_with(|| modules.name(module).into())
                    .clone();
                let branch = m.exit == ExitKind::Branch;
                blocks.push(BlockRecord {
                    addr,
                    module: name,
                    offset,
                    symbol,
                    size: m.guest_len,
                    instructions: m.insns,
                    count: 0,
                    exit: exit_name(m.exit).into(),
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
        for (src, to, c) in ids.edges() {
            let m = &ids.metas[src];
            all.push(((m.guest, to), c));
            match m.exit {
                ExitKind::Branch => {
                    // Every block that left by an edge ran: it has a record.
                    if let Some(r) = blocks.get_mut(record_of[src] as usize) {
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
        let coded = inp.translations.map_or(0, |b| b.coded() as usize);
        let translations = t
            .listed_blocks(coded, inp.inherited_blocks)
            .filter(|&id| id >= inp.inherited_blocks || t.count(id) > 0)
            .filter_map(|id| inp.translations?.translation(BlockId(id as u32)))
            .map(|(host, host_size, guest)| Translation {
                host,
                host_size,
                guest,
                superblock: None,
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
                if let Some(s) = t.sb_summary_of(r.ids()) {
                    e.entries = s.entries;
                    e.loops = s.loops;
                    e.member_runs = s.member_runs;
                    e.exit_counts = s.exit_counts;
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
            counting: inp.counting.into(),
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
            rep_iterations: retired::rep_list(&ids),
            unretired: retired::unretired_list(&ids),
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

    /// The permissions a new profile file gets: the `umask` hotlift
    /// started with, not the one its guest set since (a guest's 0777
    /// made the profile `----------`). [`remember_umask`] sets it.
    fn file_mode() -> u32 {
        0o666 & !START_UMASK.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The profile as JSON into `f`, replacing what it held (a file
    /// opened before the guest could drop its privileges).
    pub fn write_json_into(&self, f: &std::fs::File) -> std::io::Result<()> {
        use std::io::Seek;
        f.set_len(0)?;
        let mut f = f;
        f.seek(std::io::SeekFrom::Start(0))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        json::write_profile(self, &mut w)?;
        w.write_all(b"\n")?;
        w.flush()
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
            // with a regular file. Opened without waiting: a fifo nobody
            // reads is an error (ENXIO), not a wait for ever at the end.
            use std::os::unix::fs::OpenOptionsExt;
            let f = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
                .map_err(|e| match e.raw_os_error() {
                    Some(libc::ENXIO) => {
                        std::io::Error::new(e.kind(), "a fifo (or socket) with no reader (ENXIO)")
                    }
                    _ => e,
                })?;
            nix::fcntl::fcntl(
                &f,
                nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
            )?;
            return write(f);
        }
        // Beside the profile, named by this process: the processes of one
        // tree write their profiles at the same time (process.rs I1).
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".{}.tmp-hotlift", std::process::id()));
        let tmp = std::path::PathBuf::from(tmp);
        let written = std::fs::File::create(&tmp)
            .and_then(|f| {
                use std::os::unix::fs::PermissionsExt;
                f.set_permissions(std::fs::Permissions::from_mode(Self::file_mode()))?;
                Ok(f)
            })
            .and_then(write)
            .and_then(|()| std::fs::rename(&tmp, path));
        if written.is_err() {
            // Not left beside the profile (a full disk left p.json.PID.tmp-hotlift).
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// The `umask` hotlift started with ([`remember_umask`]).
static START_UMASK: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0o022);

/// Remember the `umask` hotlift starts with, for its profiles' files
/// (call once at start, before any other thread runs).
pub fn remember_umask() {
    use nix::sys::stat::{umask, Mode};
    let old = umask(Mode::from_bits_truncate(0o022));
    umask(old);
    START_UMASK.store(old.bits(), std::sync::atomic::Ordering::Relaxed);
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
