//! The reading side of the profile: the JSON document read back into the
//! writer's own [`Profile`] (schema.rs), for `diff`, `export`, `summary`
//! and `report`.
//!
//! I1: `read_bytes` never panics, whatever the bytes (fuzzed by
//!     `fuzz/fuzz_targets/profile_read.rs`); every failure is a `ReadError`
//!     whose `Display` is one line.
//! I2: a document is accepted only with `schema_version` from
//!     `super::OLDEST_READABLE` to `super::SCHEMA_VERSION`; unknown fields
//!     are ignored (additions within one schema version are additive,
//!     docs/PROFILE.md), and fields a readable profile may lack (added
//!     later, or left out of a hand-made one: `pid`, `modules`, `edges`,
//!     `call_tree`, `translations`…) read as empty (schema.rs I2).
//! I3: after `read_*`, every block's module is in `modules` (a profile
//!     without a module table gets one built from `binary` and the blocks'
//!     `addr - offset`), so exporters never look a module up and miss.
//! I4: `blocks` are sorted by address, so `block_at` is a binary search.
//!
//! A profile the run built holds I3 and I4 already (profile I3): the
//! methods below serve it as they serve one read back.
//!
//! Usage: `let p = hotlift::profile::read::read_file(path)?;`

use std::path::Path;

use serde::Deserialize;
use thiserror::Error;

use super::{BlockRecord, Module, Profile, SCHEMA_VERSION};

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

/// Only the version, read first so a future document that no longer fits
/// the model still gets the version error (I2).
#[derive(Deserialize)]
struct VersionOnly {
    schema_version: Option<u64>,
}

/// Read and check the profile at `path` (I1, I2, I3).
pub fn read_file(path: &Path) -> Result<Profile, ReadError> {
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
    crate::loader::script::read_untrusted(
        path,
        true,
        || {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file or a pipe",
            )
        },
        // A JSON document.
        |b| b == b'{',
    )
}

/// Parse a profile from memory; `path` only names it in errors.
pub fn read_bytes(bytes: &[u8], path: &str) -> Result<Profile, ReadError> {
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
    let mut doc: Profile =
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

impl Profile {
    /// I3: make sure every block's module is in the module table.
    fn complete_modules(&mut self) {
        for b in &self.blocks {
            if self.modules.iter().any(|m| *m.name == *b.module) {
                continue;
            }
            let base = b.addr.wrapping_sub(b.offset);
            let main = self.binary.path.rsplit('/').next() == Some(&*b.module);
            self.modules.push(Module {
                name: b.module.to_string(),
                path: if main {
                    self.binary.path.clone()
                } else {
                    b.module.to_string()
                },
                kind: String::new(),
                base,
                end: base,
                build_id: if main {
                    self.binary.build_id.clone()
                } else {
                    None
                },
                unmapped: false,
                symbols: Default::default(),
                first_block: 0,
                end_block: None,
            });
        }
        // A synthesised module ends after its last block.
        for m in &mut self.modules {
            let last = self
                .blocks
                .iter()
                .filter(|b| *b.module == *m.name)
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
    pub fn block_at(&self, addr: u64) -> Option<&BlockRecord> {
        let i = self.blocks.binary_search_by_key(&addr, |b| b.addr).ok()?;
        Some(&self.blocks[i])
    }

    /// The block whose code holds `addr` (an instruction's address): of
    /// those starting at or below it, the nearest (a block is at most a
    /// few KB).
    pub fn block_holding(&self, addr: u64) -> Option<&BlockRecord> {
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

    /// The calling-context tree's shape: each node's parent (by index in
    /// `call_tree`) and its subtree's instructions (its own and everything
    /// below it), children summed before parents by decreasing id (a
    /// parent's id is smaller than its children's, docs/PROFILE.md): a
    /// malformed tree gets incomplete sums, never a loop.
    pub fn call_tree_sums(&self) -> (Vec<Option<usize>>, Vec<u64>) {
        let tree = &self.call_tree;
        let index: std::collections::HashMap<u32, usize> =
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

    /// What the reader took before it shared the writer's types still
    /// reads (schema.rs I2, I3): `null` where the writer has a number,
    /// a translation naming a superblock, a module with only its range,
    /// sections from before fields were added to them.
    #[test]
    fn older_and_hand_made_shapes_read() {
        let doc = r#"{"schema_version": 2, "pid": null,
            "binary": {"path": "/x/prog", "sha256": "ab", "build_id": null},
            "ending": {"kind": "signal", "signal": 11},
            "times": {"wall_seconds": 0.5},
            "totals": {"guest_instructions": 9, "exits": {"jump": 3}},
            "modules": [{"name": "prog", "base": 4096, "end": 8192}],
            "blocks": [{"addr": 5000, "module": "prog", "offset": 904, "symbol": null,
                "size": 4, "instructions": 3, "count": 3, "exit": "branch", "taken": 2}],
            "call_tree": [{"id": 0, "parent": null, "function": 0, "offset": null,
                "self_instructions": 9}],
            "translations": [{"host": 1, "host_size": 2, "superblock": 0},
                {"host": 3, "host_size": 4, "guest": null}],
            "ring": {"capacity_entries": 1, "entries": 2, "waits": 0,
                "wait_seconds": 0.0, "peak_lag_entries": 0},
            "superblock_stats": {"requests": 1, "built": 1, "single_member": 0,
                "stale": 0, "lift_mismatch": 0, "emit_errors": 0, "arena_full": 0,
                "registry_full": 0, "exits_linked": 0, "build_seconds": 0.0,
                "record_errors": 0}}"#;
        let p = read_bytes(doc.as_bytes(), "p.json").unwrap();
        assert_eq!(
            (p.pid, p.call_tree[0].offset, p.call_tree[0].calls),
            (0, 0, 0)
        );
        assert_eq!(p.ending, super::super::Ending::Signal { signal: 11 });
        assert_eq!(p.totals.exits["jump"], 3);
        assert_eq!(p.times.wall_seconds, 0.5);
        let t = &p.translations;
        assert_eq!((t[0].guest, t[0].superblock.as_ref()), (0, Some(&0.into())));
        assert_eq!((t[1].guest, t[1].superblock.as_ref()), (0, None));
        assert_eq!(p.module("prog").map(|m| m.path.as_str()), Some(""));
        let b = p.block_at(5000).unwrap();
        assert_eq!(
            (&*b.exit, b.taken, b.fallthrough),
            ("branch", Some(2), None)
        );
        assert_eq!(p.ring.map(|r| r.words_per_block), Some(0.0));
        assert_eq!(p.superblock_stats.build.retired, 0);
        assert!(p.threads.is_empty() && p.monitor.note.is_empty());
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
