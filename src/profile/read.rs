//! The reading side of the profile: a tolerant model of the JSON document
//! that `diff` and `export` load, independent of the writer's types.
//!
//! I1: `read_bytes` never panics, whatever the bytes (fuzzed by
//!     `fuzz/fuzz_targets/profile_read.rs`); every failure is a `ReadError`
//!     whose `Display` is one line.
//! I2: a document is accepted only with `schema_version` from
//!     `super::OLDEST_READABLE` to `super::SCHEMA_VERSION`; unknown fields are ignored (additions within
//!     one schema version are additive, docs/PROFILE.md), and fields added
//!     after the first version of schema 1 (`pid`, `modules`, `edges`,
//!     `call_tree`, `translations`) are optional.
//! I3: after `read_*`, every block's module is in `modules` (a profile
//!     without a module table gets one built from `binary` and the blocks'
//!     `addr - offset`), so exporters never look a module up and miss.
//! I4: `blocks` are sorted by address, so `block_at` is a binary search.
//!
//! Usage: `let p = hotlift::profile::read::read_file(path)?;`

use std::path::Path;

use serde::Deserialize;
use thiserror::Error;

use super::SCHEMA_VERSION;

/// Why a profile could not be read.
#[derive(Debug, Error)]
pub enum ReadError {
    /// (Not a `source`: the message says it already, and error chains
    /// would say it twice.)
    #[error("{path}: cannot read: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: truncated profile (JSON ends early at line {line}, column {column})")]
    Truncated {
        path: String,
        line: usize,
        column: usize,
    },
    #[error("{path}: not a hotlift profile: {reason}")]
    NotAProfile { path: String, reason: String },
    #[error("{path}: profile schema_version {found}, this hotlift reads version {v}", v = SCHEMA_VERSION)]
    WrongVersion { path: String, found: u64 },
}

/// The binary the profile was taken of.
#[derive(Debug, Clone, Deserialize, Default)]
pub struct Binary {
    pub path: String,
    pub sha256: String,
    #[serde(default)]
    pub build_id: Option<String>,
    #[serde(default)]
    pub size: u64,
}

/// How the guest ended.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    Exit { code: i32 },
    Signal { signal: i32 },
    Exec,
}

#[derive(Debug, Clone, Deserialize, Default)]
pub struct Times {
    #[serde(default)]
    pub wall_seconds: f64,
    #[serde(default)]
    pub process_cpu_seconds: f64,
    #[serde(default)]
    pub setup_seconds: f64,
    /// Absent before 2026-12-01: all 0.
    #[serde(default)]
    pub startup: super::Startup,
    #[serde(default)]
    pub translation_seconds: f64,
    #[serde(default)]
    pub monitor_cpu_seconds: f64,
    #[serde(default)]
    pub drain_seconds: f64,
    #[serde(default)]
    pub profile_seconds: f64,
}

#[derive(Debug, Clone, Deserialize, Default)]
pub struct Totals {
    pub guest_instructions: u64,
    #[serde(default)]
    pub rep_extra_iterations: u64,
    /// Instructions of entered blocks that did not retire (newer profiles).
    #[serde(default)]
    pub unretired_instructions: u64,
    #[serde(default)]
    pub block_executions: u64,
    #[serde(default)]
    pub translated_blocks: u64,
    /// Block executions by exit kind.
    #[serde(default)]
    pub exits: std::collections::BTreeMap<String, u64>,
}

/// A loaded module (the main program, `[vdso]`, later libraries).
#[derive(Debug, Clone, Deserialize)]
pub struct Module {
    pub name: String,
    #[serde(default)]
    pub path: String,
    pub base: u64,
    pub end: u64,
    #[serde(default)]
    pub build_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Block {
    pub addr: u64,
    pub module: String,
    pub offset: u64,
    #[serde(default)]
    pub symbol: Option<String>,
    pub size: u32,
    pub instructions: u32,
    pub count: u64,
    pub exit: String,
    #[serde(default)]
    pub taken: Option<u64>,
    #[serde(default)]
    pub fallthrough: Option<u64>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Edge {
    pub from: u64,
    pub to: u64,
    pub count: u64,
}

/// A `rep` string instruction's iterations beyond its first, and those of
/// its iterations that did not retire.
#[derive(Debug, Clone, Deserialize)]
pub struct RepIterations {
    pub addr: u64,
    pub extra: u64,
    #[serde(default)]
    pub unretired: u64,
}

/// The last `instructions` of a translation of the block at `block`
/// holding `block_instructions` did not retire, `times` times.
#[derive(Debug, Clone, Deserialize)]
pub struct Unretired {
    pub block: u64,
    pub block_instructions: u32,
    pub instructions: u32,
    pub times: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Syscall {
    pub nr: u64,
    pub name: String,
    pub count: u64,
    #[serde(default)]
    pub errors: u64,
    #[serde(default)]
    pub seconds: f64,
}

/// One node of the calling-context tree (docs/PROFILE.md).
#[derive(Debug, Clone, Deserialize)]
pub struct CallNode {
    pub id: u64,
    pub parent: Option<u64>,
    pub function: u64,
    #[serde(default)]
    pub module: Option<String>,
    #[serde(default)]
    pub offset: Option<u64>,
    #[serde(default)]
    pub symbol: Option<String>,
    #[serde(default)]
    pub calls: u64,
    pub self_instructions: u64,
}

/// One piece of translated host code: a block (`guest`) or a superblock.
#[derive(Debug, Clone, Deserialize)]
pub struct Translation {
    pub host: u64,
    pub host_size: u64,
    #[serde(default)]
    pub guest: Option<u64>,
    #[serde(default)]
    pub superblock: Option<serde_json::Value>,
}

/// Where a superblock's code is (`superblocks[]`; what exports use of it).
#[derive(Debug, Clone, Deserialize)]
pub struct SuperblockCode {
    pub id: u64,
    pub head: u64,
    #[serde(default)]
    pub host: u64,
    #[serde(default)]
    pub host_size: u64,
}

/// A profile as read back (schema in docs/PROFILE.md).
#[derive(Debug, Clone, Deserialize)]
pub struct ProfileDoc {
    pub schema_version: u64,
    #[serde(default)]
    pub tool: String,
    pub binary: Binary,
    #[serde(default)]
    pub command_line: Vec<String>,
    #[serde(default)]
    pub pid: Option<u64>,
    pub ending: Ending,
    #[serde(default)]
    pub times: Times,
    pub totals: Totals,
    #[serde(default)]
    pub modules: Vec<Module>,
    pub blocks: Vec<Block>,
    /// Every block-to-block transition (newer profiles).
    #[serde(default)]
    pub edges: Vec<Edge>,
    #[serde(default)]
    pub indirect_edges: Vec<Edge>,
    #[serde(default)]
    pub call_edges: Vec<Edge>,
    /// Per instruction (profiles since 2026-12-01; older ones have only
    /// the total).
    #[serde(default)]
    pub rep_iterations: Vec<RepIterations>,
    /// Where `totals.unretired_instructions` were (since 2026-12-01).
    #[serde(default)]
    pub unretired: Vec<Unretired>,
    #[serde(default)]
    pub syscalls: Vec<Syscall>,
    #[serde(default)]
    pub syscall_log: Vec<(u64, i64)>,
    #[serde(default)]
    pub call_tree: Vec<CallNode>,
    #[serde(default)]
    pub translations: Vec<Translation>,
    #[serde(default)]
    pub superblocks: Vec<SuperblockCode>,
    #[serde(default)]
    pub ring: Option<super::RingStats>,
    /// Zeros in profiles written before it was.
    #[serde(default)]
    pub dispatcher: super::Dispatcher,
    #[serde(default)]
    pub process: Option<super::process::ProcessInfo>,
    /// Timed call-stack samples and their time tree (newer profiles;
    /// validated on reading: sampling.rs I3).
    #[serde(default)]
    pub time_tree: Option<super::sampling::TimeTreeSection>,
}

/// Only the version, read first so a future document that no longer fits
/// the model still gets the version error (I2).
#[derive(Deserialize)]
struct VersionOnly {
    schema_version: Option<u64>,
}

/// Read and check the profile at `path` (I1, I2, I3).
pub fn read_file(path: &Path) -> Result<ProfileDoc, ReadError> {
    let shown = path.display().to_string();
    let bytes = read_input(path).map_err(|error| ReadError::Io {
        path: shown.clone(),
        error,
    })?;
    read_bytes(&bytes, &shown)
}

/// The bytes of an input file: a regular file, or a pipe or fifo
/// (`hotlift report <(zcat p.json.gz)`), read to its end; anything else
/// refused unread (`loader::script::read_untrusted`).
pub fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::loader::script::read_untrusted(path, true, || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file or a pipe",
        )
    })
}

/// Parse a profile from memory; `path` only names it in errors.
pub fn read_bytes(bytes: &[u8], path: &str) -> Result<ProfileDoc, ReadError> {
    let path = path.to_string();
    let json_error = |e: serde_json::Error, path: String| {
        if e.is_eof() {
            ReadError::Truncated {
                path,
                line: e.line(),
                column: e.column(),
            }
        } else {
            ReadError::NotAProfile {
                path,
                reason: e.to_string(),
            }
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ReadError::NotAProfile {
            path,
            reason: "the file is empty".into(),
        });
    }
    let version: VersionOnly =
        serde_json::from_slice(bytes).map_err(|e| json_error(e, path.clone()))?;
    match version.schema_version {
        None => {
            return Err(ReadError::NotAProfile {
                path,
                reason: "no schema_version field".into(),
            })
        }
        Some(v) if !(super::OLDEST_READABLE as u64..=SCHEMA_VERSION as u64).contains(&v) => {
            return Err(ReadError::WrongVersion { path, found: v })
        }
        Some(_) => {}
    }
    let mut doc: ProfileDoc =
        serde_json::from_slice(bytes).map_err(|e| json_error(e, path.clone()))?;
    if let Some(t) = &doc.time_tree {
        t.validate().map_err(|e| ReadError::NotAProfile {
            path: path.clone(),
            reason: format!("time_tree: {e}"),
        })?;
    }
    doc.complete_modules();
    // I4 (hotlift writes them sorted; a hand-made file need not be).
    doc.blocks.sort_by_key(|b| b.addr);
    Ok(doc)
}

impl ProfileDoc {
    /// I3: make sure every block's module is in the module table.
    fn complete_modules(&mut self) {
        for b in &self.blocks {
            if self.modules.iter().any(|m| m.name == b.module) {
                continue;
            }
            let base = b.addr.wrapping_sub(b.offset);
            let main = self.binary.path.rsplit('/').next() == Some(b.module.as_str());
            self.modules.push(Module {
                name: b.module.clone(),
                path: if main {
                    self.binary.path.clone()
                } else {
                    b.module.clone()
                },
                base,
                end: base,
                build_id: if main {
                    self.binary.build_id.clone()
                } else {
                    None
                },
            });
        }
        // A synthesised module ends after its last block.
        for m in &mut self.modules {
            let last = self
                .blocks
                .iter()
                .filter(|b| b.module == m.name)
                .map(|b| b.addr.saturating_add(b.size as u64))
                .max()
                .unwrap_or(m.end);
            if m.end < last {
                m.end = last;
            }
        }
    }

    /// The module named `name` (I3 guarantees one for every block's).
    pub fn module(&self, name: &str) -> Option<&Module> {
        self.modules.iter().find(|m| m.name == name)
    }

    /// The block starting at guest address `addr`, if any (I4).
    pub fn block_at(&self, addr: u64) -> Option<&Block> {
        let i = self.blocks.binary_search_by_key(&addr, |b| b.addr).ok()?;
        Some(&self.blocks[i])
    }

    /// The block whose code holds `addr` (an instruction's address): of
    /// those starting at or below it, the nearest (a block is at most a
    /// few KB).
    pub fn block_holding(&self, addr: u64) -> Option<&Block> {
        let i = self.blocks.partition_point(|b| b.addr <= addr);
        self.blocks[..i]
            .iter()
            .rev()
            .take_while(|b| addr - b.addr < 1 << 16)
            .find(|b| addr < b.addr + u64::from(b.size))
    }

    /// Each block's `rep` iterations beyond the first (the profile's
    /// `rep_iterations` at the block holding each instruction), by block
    /// address.
    pub fn rep_by_block(&self) -> std::collections::HashMap<u64, u64> {
        let mut m = std::collections::HashMap::new();
        for r in &self.rep_iterations {
            if let Some(b) = self.block_holding(r.addr) {
                *m.entry(b.addr).or_insert(0) += r.extra;
            }
        }
        m
    }
}

impl ProfileDoc {
    /// The calling-context tree's shape: each node's parent (by index in
    /// `call_tree`) and its subtree's instructions (its own and everything
    /// below it), children summed before parents by decreasing id (a
    /// parent's id is smaller than its children's, docs/PROFILE.md): a
    /// malformed tree gets incomplete sums, never a loop.
    pub fn call_tree_sums(&self) -> (Vec<Option<usize>>, Vec<u64>) {
        let tree = &self.call_tree;
        let index: std::collections::HashMap<u64, usize> =
            tree.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        let parent: Vec<Option<usize>> = tree
            .iter()
            .map(|n| n.parent.and_then(|p| index.get(&p).copied()))
            .map(|p| p.filter(|&p| p < tree.len()))
            .collect();
        let mut order: Vec<usize> = (0..tree.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(tree[i].id));
        let mut sums: Vec<u64> = tree.iter().map(|n| n.self_instructions).collect();
        for &i in &order {
            if let Some(p) = parent[i].filter(|&p| tree[p].id < tree[i].id) {
                sums[p] = sums[p].saturating_add(sums[i]);
            }
        }
        (parent, sums)
    }

    /// What the summary and the perf map read of a profile still in
    /// memory (the run's own, at its end): the same fields [`read_bytes`]
    /// would give them from the written document, without writing and
    /// parsing megabytes of JSON (python's start-up profile: 17 MB,
    /// 0.15 s). Sections neither reads are left empty.
    pub fn at_exit(p: &super::Profile) -> ProfileDoc {
        ProfileDoc {
            schema_version: u64::from(p.schema_version),
            tool: p.tool.clone(),
            binary: Binary {
                path: p.binary.path.clone(),
                sha256: p.binary.sha256.clone(),
                build_id: p.binary.build_id.clone(),
                size: p.binary.size,
            },
            command_line: p.command_line.clone(),
            pid: Some(u64::from(p.pid)),
            ending: match p.ending {
                super::Ending::Exit { code } => Ending::Exit { code },
                super::Ending::Signal { signal } => Ending::Signal { signal },
                super::Ending::Exec => Ending::Exec,
            },
            times: Times {
                wall_seconds: p.times.wall_seconds,
                process_cpu_seconds: p.times.process_cpu_seconds,
                setup_seconds: p.times.setup_seconds,
                startup: p.times.startup,
                translation_seconds: p.times.translation_seconds,
                monitor_cpu_seconds: p.times.monitor_cpu_seconds,
                drain_seconds: p.times.drain_seconds,
                profile_seconds: p.times.profile_seconds,
            },
            totals: Totals {
                guest_instructions: p.totals.guest_instructions,
                rep_extra_iterations: p.totals.rep_extra_iterations,
                unretired_instructions: p.totals.unretired_instructions,
                block_executions: p.totals.block_executions,
                translated_blocks: p.totals.translated_blocks,
                exits: p
                    .totals
                    .exits
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect(),
            },
            modules: p
                .modules
                .iter()
                .map(|m| Module {
                    name: m.name.clone(),
                    path: m.path.clone(),
                    base: m.base,
                    end: m.end,
                    build_id: m.build_id.clone(),
                })
                .collect(),
            blocks: p
                .blocks
                .iter()
                .map(|b| Block {
                    addr: b.addr,
                    module: b.module.to_string(),
                    offset: b.offset,
                    symbol: b.symbol.clone(),
                    size: b.size,
                    instructions: b.instructions,
                    count: b.count,
                    exit: b.exit.to_string(),
                    taken: b.taken,
                    fallthrough: b.fallthrough,
                })
                .collect(),
            edges: Vec::new(),
            // Where PLT stubs went: the summary names calls through them
            // by it (export/images.rs I6).
            indirect_edges: p
                .indirect_edges
                .iter()
                .map(|e| Edge {
                    from: e.from,
                    to: e.to,
                    count: e.count,
                })
                .collect(),
            call_edges: Vec::new(),
            rep_iterations: p
                .rep_iterations
                .iter()
                .map(|r| RepIterations {
                    addr: r.addr,
                    extra: r.extra,
                    unretired: r.unretired,
                })
                .collect(),
            unretired: p
                .unretired
                .iter()
                .map(|u| Unretired {
                    block: u.block,
                    block_instructions: u.block_instructions,
                    instructions: u.instructions,
                    times: u.times,
                })
                .collect(),
            syscalls: p
                .syscalls
                .iter()
                .map(|c| Syscall {
                    nr: c.nr,
                    name: c.name.clone(),
                    count: c.count,
                    errors: c.errors,
                    seconds: c.seconds,
                })
                .collect(),
            syscall_log: Vec::new(),
            call_tree: p
                .call_tree
                .iter()
                .map(|c| CallNode {
                    id: u64::from(c.id),
                    parent: c.parent.map(u64::from),
                    function: c.function,
                    module: c.module.clone(),
                    offset: Some(c.offset),
                    symbol: c.symbol.clone(),
                    calls: c.calls,
                    self_instructions: c.self_instructions,
                })
                .collect(),
            translations: p
                .translations
                .iter()
                .map(|t| Translation {
                    host: t.host,
                    host_size: u64::from(t.host_size),
                    guest: Some(t.guest),
                    superblock: None,
                })
                .collect(),
            superblocks: p
                .superblocks
                .iter()
                .map(|s| SuperblockCode {
                    id: u64::from(s.record.id),
                    head: s.record.head,
                    host: s.record.host,
                    host_size: u64::from(s.record.host_size),
                })
                .collect(),
            ring: p.ring.clone(),
            dispatcher: p.dispatcher,
            process: p.process.clone(),
            time_tree: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal(version: u64) -> String {
        format!(
            r#"{{"schema_version":{version},"binary":{{"path":"/x/prog","sha256":"ab"}},
            "ending":{{"kind":"exit","code":0}},"totals":{{"guest_instructions":7}},
            "blocks":[{{"addr":4198400,"module":"prog","offset":4096,"size":3,
            "instructions":2,"count":3,"exit":"jump","future_field":1}}],"new_thing":[1]}}"#
        )
    }

    #[test]
    fn unknown_fields_are_ignored_and_modules_synthesised() {
        let p = read_bytes(minimal(SCHEMA_VERSION as u64).as_bytes(), "p.json").unwrap();
        assert_eq!(p.totals.guest_instructions, 7);
        let m = p.module("prog").unwrap();
        assert_eq!((m.base, m.end), (4198400 - 4096, 4198403));
        assert_eq!(m.path, "/x/prog");
    }

    #[test]
    fn errors_are_one_line_and_specific() {
        let full = minimal(SCHEMA_VERSION as u64);
        let wrong = format!("schema_version {}", SCHEMA_VERSION + 1);
        let cases = [
            (
                minimal(SCHEMA_VERSION as u64 + 1).into_bytes(),
                wrong.as_str(),
            ),
            (full.as_bytes()[..full.len() / 2].to_vec(), "truncated"),
            (b"{\"a\": 1}".to_vec(), "no schema_version"),
            (b"\x7fELF".to_vec(), "not a hotlift profile"),
            (b" \n".to_vec(), "the file is empty"),
            (
                format!("{{\"schema_version\": {SCHEMA_VERSION}}}").into_bytes(),
                "missing field",
            ),
        ];
        for (bytes, want) in cases {
            let e = read_bytes(&bytes, "p.json").unwrap_err().to_string();
            assert!(e.contains(want) && e.starts_with("p.json: "), "{want}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    /// Inputs are regular files or pipes; a fifo nobody writes to reads
    /// as empty at once, and devices and directories are refused unread.
    #[test]
    fn inputs_are_files_or_pipes() {
        let dir = std::env::temp_dir().join(format!("hotlift-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("p.json");
        std::fs::write(&file, b"{}").unwrap();
        assert_eq!(read_input(&file).unwrap(), b"{}");
        let fifo = dir.join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(read_input(&fifo).unwrap(), b"");
        for refused in [
            Path::new("/dev/zero"),
            Path::new("/dev/null"),
            dir.as_path(),
        ] {
            let e = read_input(refused).unwrap_err();
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::InvalidInput,
                "{}",
                refused.display()
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
