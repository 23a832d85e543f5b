//! The profile document's JSON, written by hand where it is large.
//!
//! A profile is mostly five arrays of small records (blocks, edges,
//! calling contexts, translations): 17 MB for `python3 -c pass`, which
//! serde_json took about 55 ms to write (every key escaped on the way, a
//! visitor call per field), a sixth of that run's time under hotlift. The
//! records are written here with their keys as constants and their numbers
//! through `itoa`; everything else goes through serde as before.
//!
//! I1: the output is the JSON serde's derived `Serialize` gives for the
//!     same [`Profile`] (the same keys in the same order, the same
//!     values): the tests compare the two. Every struct written here is
//!     destructured without `..`, so a field added to one does not compile
//!     until it is written here too.
//! I2: a string is escaped exactly as serde_json escapes it: copied as it
//!     is when it holds no `"`, `\` or control character, else written by
//!     serde_json itself.

use std::io::{self, Write};

use super::{BlockRecord, ContextRecord, Edge, Profile, Translation};

/// Bytes gathered before they go to the writer.
const CHUNK: usize = 1 << 16;

/// Write `p` as one JSON object (I1).
pub(super) fn write_profile(p: &Profile, w: &mut impl Write) -> io::Result<()> {
    let sbs = SbChunks::new(&p.superblocks);
    let core = p.monitor.monitor_core;
    std::thread::scope(|s| {
        // The superblocks' IR listings and code (formatted now, about
        // half of the writing's time): rendered a few at a time on a
        // thread of their own while the sections before them are
        // written, and here too once those are (no thread: here alone).
        // python3 -c pass's 18 MB profile: 61 -> 50 ms with the thread
        // rendering all of them (medians of 10, AMD EPYC), then 39 -> 15
        // ms with both threads taking them (Intel Xeon model 207).
        let helper = (!p.superblocks.is_empty())
            .then(|| {
                std::thread::Builder::new()
                    .name("hotlift-write".into())
                    .spawn_scoped(s, || {
                        // Born pinned to the guest's core, which writes
                        // the rest: on the monitor's, which is done.
                        if let Some(id) = core {
                            core_affinity::set_for_current(core_affinity::CoreId { id });
                        }
                        sbs.render();
                    })
                    .ok()
            })
            .flatten();
        write_members(p, w, &sbs, helper)
    })
}

/// Superblocks rendered [`SB_CHUNK`] at a time by whichever thread takes
/// the next chunk ([`write_profile`]).
struct SbChunks<'a> {
    sbs: &'a [super::SuperblockEntry],
    next: std::sync::atomic::AtomicUsize,
    /// Each chunk's JSON array, once rendered.
    done: std::sync::Mutex<Vec<Option<serde_json::Result<Vec<u8>>>>>,
}

/// Superblocks a chunk holds.
const SB_CHUNK: usize = 4;

impl<'a> SbChunks<'a> {
    fn new(sbs: &'a [super::SuperblockEntry]) -> Self {
        let n = sbs.len().div_ceil(SB_CHUNK);
        SbChunks {
            sbs,
            next: std::sync::atomic::AtomicUsize::new(0),
            done: std::sync::Mutex::new((0..n).map(|_| None).collect()),
        }
    }

    /// Render chunks until none is left to take.
    fn render(&self) {
        loop {
            let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(part) = self.sbs.chunks(SB_CHUNK).nth(i) else {
                return;
            };
            let r = serde_json::to_vec(part);
            self.done.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
        }
    }

    /// The whole array, from the rendered chunks (every chunk taken and
    /// its thread joined).
    fn joined(&self) -> serde_json::Result<Vec<u8>> {
        let done = std::mem::take(&mut *self.done.lock().unwrap_or_else(|e| e.into_inner()));
        let mut out =
            Vec::with_capacity(done.iter().flatten().flatten().map(Vec::len).sum::<usize>() + 2);
        out.push(b'[');
        for (i, chunk) in done.into_iter().enumerate() {
            let part = match chunk {
                Some(r) => r?,
                // A chunk its thread took and never finished (it panicked).
                None => serde_json::to_vec(&self.sbs.chunks(SB_CHUNK).nth(i).unwrap_or(&[]))?,
            };
            // Each chunk is `[...]` of at least one superblock.
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&part[1..part.len() - 1]);
        }
        out.push(b']');
        Ok(out)
    }
}

/// [`write_profile`]'s members; `helper` is rendering superblocks
/// chunks of `sbs` too, when there is one.
fn write_members<'s>(
    p: &Profile,
    w: &mut impl Write,
    sbs: &SbChunks<'_>,
    helper: Option<std::thread::ScopedJoinHandle<'s, ()>>,
) -> io::Result<()> {
    let Profile {
        schema_version,
        tool,
        pid,
        binary,
        command_line,
        options,
        counting,
        monitor,
        ending,
        times,
        totals,
        modules,
        blocks,
        edges,
        indirect_edges,
        call_edges,
        returns,
        unmatched_returns,
        unwinding_jumps,
        unresolved_exits,
        rep_iterations,
        unretired,
        max_call_depth,
        call_tree,
        call_tree_truncated_calls,
        syscalls,
        syscall_log,
        ring,
        code_cache_flushes,
        code_cache_flushes_by_cause,
        dispatcher,
        translations,
        superblocks,
        superblock_stats,
        threads,
        count_check,
        process,
        time_tree,
        pisat,
        store,
    } = p;
    let mut o = Object::new(w);
    o.serde("schema_version", schema_version)?;
    o.serde("tool", tool)?;
    o.serde("pid", pid)?;
    o.serde("binary", binary)?;
    o.serde("command_line", command_line)?;
    o.serde("options", options)?;
    o.serde("counting", counting)?;
    o.serde("monitor", monitor)?;
    o.serde("ending", ending)?;
    o.serde("times", times)?;
    o.serde("totals", totals)?;
    o.serde("modules", modules)?;
    o.array("blocks", blocks, block)?;
    o.array("edges", edges, edge)?;
    o.array("indirect_edges", indirect_edges, edge)?;
    o.array("call_edges", call_edges, edge)?;
    o.serde("returns", returns)?;
    o.serde("unmatched_returns", unmatched_returns)?;
    o.serde("unwinding_jumps", unwinding_jumps)?;
    o.serde("unresolved_exits", unresolved_exits)?;
    o.serde("rep_iterations", rep_iterations)?;
    o.serde("unretired", unretired)?;
    o.serde("max_call_depth", max_call_depth)?;
    o.array("call_tree", call_tree, context)?;
    o.serde("call_tree_truncated_calls", call_tree_truncated_calls)?;
    o.serde("syscalls", syscalls)?;
    o.serde("syscall_log", syscall_log)?;
    o.serde("ring", ring)?;
    o.serde("code_cache_flushes", code_cache_flushes)?;
    o.serde("code_cache_flushes_by_cause", code_cache_flushes_by_cause)?;
    o.serde("dispatcher", dispatcher)?;
    o.array("translations", translations, translation)?;
    sbs.render();
    let _ = helper.map(|h| h.join());
    match sbs.joined() {
        Ok(r) => o.raw("superblocks", &r)?,
        Err(_) => o.serde("superblocks", superblocks)?,
    }
    o.serde("superblock_stats", superblock_stats)?;
    o.serde("threads", threads)?;
    // `skip_serializing_if = "Option::is_none"` in the derive.
    if let Some(v) = count_check {
        o.serde("count_check", v)?;
    }
    if let Some(v) = process {
        o.serde("process", v)?;
    }
    if let Some(v) = time_tree {
        o.serde("time_tree", v)?;
    }
    if let Some(v) = pisat {
        o.serde("pisat", v)?;
    }
    if let Some(v) = store {
        o.serde("store", v)?;
    }
    o.end()
}

/// A JSON object being written: its members, comma-separated.
struct Object<'w, W: Write> {
    w: &'w mut W,
    buf: Vec<u8>,
    /// No member written yet.
    first: bool,
}

impl<'w, W: Write> Object<'w, W> {
    fn new(w: &'w mut W) -> Self {
        let mut buf = Vec::with_capacity(2 * CHUNK);
        buf.push(b'{');
        Object {
            w,
            buf,
            first: true,
        }
    }

    fn key(&mut self, k: &str) {
        if !std::mem::take(&mut self.first) {
            self.buf.push(b',');
        }
        self.buf.push(b'"');
        self.buf.extend_from_slice(k.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// A member whose JSON text is `v` (written as it is when large).
    fn raw(&mut self, k: &str, v: &[u8]) -> io::Result<()> {
        self.key(k);
        if v.len() >= CHUNK {
            self.flush()?;
            return self.w.write_all(v);
        }
        self.buf.extend_from_slice(v);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// A member written by serde_json.
    fn serde(&mut self, k: &str, v: &impl serde::Serialize) -> io::Result<()> {
        self.key(k);
        serde_json::to_writer(&mut self.buf, v).map_err(io::Error::other)?;
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// An array member written record by record by `one`.
    fn array<T>(&mut self, k: &str, v: &[T], one: fn(&mut Vec<u8>, &T)) -> io::Result<()> {
        self.key(k);
        self.buf.push(b'[');
        for (i, r) in v.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            one(&mut self.buf, r);
            if self.buf.len() >= CHUNK {
                self.flush()?;
            }
        }
        self.buf.push(b']');
        Ok(())
    }

    fn end(mut self) -> io::Result<()> {
        self.buf.push(b'}');
        self.flush()
    }
}

fn num(o: &mut Vec<u8>, n: impl itoa::Integer) {
    o.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// A JSON string as serde_json writes it (I2).
fn string(o: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        o.push(b'"');
        o.extend_from_slice(s.as_bytes());
        o.push(b'"');
    } else {
        serde_json::to_writer(&mut *o, s).expect("a string serializes into memory");
    }
}

fn opt_string(o: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(o, s),
        None => o.extend_from_slice(b"null"),
    }
}

fn block(o: &mut Vec<u8>, b: &BlockRecord) {
    let BlockRecord {
        addr,
        module,
        offset,
        symbol,
        size,
        instructions,
        count,
        exit,
        taken,
        fallthrough,
    } = b;
    o.extend_from_slice(b"{\"addr\":");
    num(o, *addr);
    o.extend_from_slice(b",\"module\":");
    string(o, module);
    o.extend_from_slice(b",\"offset\":");
    num(o, *offset);
    o.extend_from_slice(b",\"symbol\":");
    opt_string(o, symbol.as_deref());
    o.extend_from_slice(b",\"size\":");
    num(o, *size);
    o.extend_from_slice(b",\"instructions\":");
    num(o, *instructions);
    o.extend_from_slice(b",\"count\":");
    num(o, *count);
    o.extend_from_slice(b",\"exit\":");
    string(o, exit);
    if let Some(n) = taken {
        o.extend_from_slice(b",\"taken\":");
        num(o, *n);
    }
    if let Some(n) = fallthrough {
        o.extend_from_slice(b",\"fallthrough\":");
        num(o, *n);
    }
    o.push(b'}');
}

fn edge(o: &mut Vec<u8>, e: &Edge) {
    let Edge { from, to, count } = e;
    o.extend_from_slice(b"{\"from\":");
    num(o, *from);
    o.extend_from_slice(b",\"to\":");
    num(o, *to);
    o.extend_from_slice(b",\"count\":");
    num(o, *count);
    o.push(b'}');
}

fn context(o: &mut Vec<u8>, c: &ContextRecord) {
    let ContextRecord {
        id,
        parent,
        function,
        module,
        offset,
        symbol,
        calls,
        self_instructions,
    } = c;
    o.extend_from_slice(b"{\"id\":");
    num(o, *id);
    o.extend_from_slice(b",\"parent\":");
    match parent {
        Some(p) => num(o, *p),
        None => o.extend_from_slice(b"null"),
    }
    o.extend_from_slice(b",\"function\":");
    num(o, *function);
    o.extend_from_slice(b",\"module\":");
    opt_string(o, module.as_deref());
    o.extend_from_slice(b",\"offset\":");
    num(o, *offset);
    o.extend_from_slice(b",\"symbol\":");
    opt_string(o, symbol.as_deref());
    o.extend_from_slice(b",\"calls\":");
    num(o, *calls);
    o.extend_from_slice(b",\"self_instructions\":");
    num(o, *self_instructions);
    o.push(b'}');
}

fn translation(o: &mut Vec<u8>, t: &Translation) {
    let Translation {
        host,
        host_size,
        guest,
        superblock,
    } = t;
    o.extend_from_slice(b"{\"host\":");
    num(o, *host);
    o.extend_from_slice(b",\"host_size\":");
    num(o, *host_size);
    o.extend_from_slice(b",\"guest\":");
    num(o, *guest);
    // Only in a hand-made profile read back (`skip_serializing_if`).
    if let Some(v) = superblock {
        o.extend_from_slice(b",\"superblock\":");
        serde_json::to_writer(&mut *o, v).expect("a value serializes into memory");
    }
    o.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::monitor::Snapshot;

    /// A profile of nothing, then records of every shape: strings that
    /// need escaping, absent and present optional fields.
    fn sample() -> Profile {
        let snapshot = Snapshot::default();
        // One translation.
        let table = crate::cache::BlockTable::new(1).unwrap();
        table.reserve(crate::cache::BlockMeta {
            guest: 0x40_1000,
            ..Default::default()
        });
        table.commit(crate::cache::BlockCode {
            host: crate::types::HostAddr(0x4000_0000),
            host_len: 112,
            pc_map: Box::new([]),
            counted: true,
            rep_ring: Box::new([]),
        });
        let mut p = Profile::build(Inputs {
            snapshot: &snapshot,
            tier: None,
            blocks: &[],
            binary: Binary {
                path: "/p\\q".into(),
                sha256: "ab".into(),
                build_id: None,
                size: 1,
            },
            modules: Modules::default(),
            command_line: vec!["prog".into(), "a \"quoted\"\targ\u{1}".into()],
            options: serde_json::json!({"x": 1}),
            counting: "ring",
            monitor: MonitorInfo::default(),
            ending: Ending::Exit { code: 3 },
            times: Times {
                wall_seconds: 0.25,
                process_cpu_seconds: 1e-9,
                monitor_cpu_seconds: 0.0,
                setup_seconds: 1.5,
                startup: Startup {
                    before_main_cpu_seconds: 0.5,
                    loading_seconds: 0.25,
                    code_cache_seconds: 0.125,
                    monitor_seconds: 0.0625,
                    first_thread_seconds: 0.03125,
                },
                translation_seconds: 2.0,
                drain_seconds: 0.125,
                profile_seconds: 3.0,
            },
            ring_capacity: 4096,
            flushes: 2,
            translations: Some(&table),
            inherited_blocks: 0,
            translated: 0,
            block_base: 0,
            kept_blocks: 0,
            planned_blocks: 0,
            fork_prepared_blocks: 0,
        });
        let module: std::sync::Arc<str> = "lib\\odd\".so".into();
        for (i, (symbol, taken)) in [(None, None), (Some("f\u{7f}ü\n"), Some(7))]
            .into_iter()
            .enumerate()
        {
            p.blocks.push(BlockRecord {
                addr: u64::MAX - i as u64,
                module: module.clone(),
                offset: i as u64,
                symbol: symbol.map(String::from),
                size: 16,
                instructions: u32::MAX,
                count: 1 << 40,
                exit: "branch".into(),
                taken,
                fallthrough: taken.map(|n| n + 1),
            });
        }
        for v in [&mut p.edges, &mut p.indirect_edges, &mut p.call_edges] {
            v.push(Edge {
                from: 1,
                to: u64::MAX,
                count: 0,
            });
            v.push(Edge {
                from: 2,
                to: 3,
                count: 4,
            });
        }
        p.call_tree.push(ContextRecord {
            id: 1,
            parent: Some(0),
            function: 0x40_1000,
            module: Some("m\\".into()),
            offset: 16,
            symbol: Some("main".into()),
            calls: 9,
            self_instructions: 99,
        });
        p.translations.push(Translation {
            host: 1,
            host_size: 0,
            guest: u64::MAX,
            superblock: Some(serde_json::json!({"id": "x\""})),
        });
        p.process = Some(
            serde_json::from_value(serde_json::json!({
                "pid": 5, "parent_pid": 4, "root_pid": 4, "began": "fork",
                "image": 0, "parent_profile": null, "tree_base": "x"
            }))
            .expect("a process record"),
        );
        p.pisat = Some(Default::default());
        p
    }

    fn both(p: &Profile) -> (Vec<u8>, Vec<u8>) {
        let mut fast = Vec::new();
        super::write_profile(p, &mut fast).expect("written to memory");
        (fast, serde_json::to_vec(p).expect("serialized"))
    }

    /// I1, I2: byte for byte what serde's derive writes, with and without
    /// the optional sections.
    #[test]
    fn the_same_bytes_as_serde() {
        let mut p = sample();
        assert!(p.call_tree.len() > 1 && p.translations.len() > 1);
        let (fast, serde) = both(&p);
        assert_eq!(
            String::from_utf8_lossy(&fast),
            String::from_utf8_lossy(&serde)
        );
        p.process = None;
        p.pisat = None;
        p.blocks.clear();
        let (fast, serde) = both(&p);
        assert_eq!(fast, serde);
        // Large enough to be written in several chunks.
        let b = sample().blocks.pop().expect("a block");
        p.blocks = (0..5000)
            .map(|i| BlockRecord {
                addr: i,
                module: b.module.clone(),
                symbol: b.symbol.clone(),
                exit: b.exit.clone(),
                ..b
            })
            .collect();
        let (fast, serde) = both(&p);
        assert!(fast.len() > 4 * super::CHUNK);
        assert_eq!(fast, serde);
        // Superblocks rendered in chunks by two threads: none, part of a
        // chunk, whole chunks and a part.
        for n in [0, 1, super::SB_CHUNK, 2 * super::SB_CHUNK + 1] {
            p.superblocks = (0..n as u32).map(superblock).collect();
            let (fast, serde) = both(&p);
            assert_eq!(
                String::from_utf8_lossy(&fast),
                String::from_utf8_lossy(&serde),
                "{n} superblocks"
            );
        }
    }

    /// Superblock `id` as a profile holds it (with text that needs
    /// escaping).
    fn superblock(id: u32) -> SuperblockEntry {
        serde_json::from_value(serde_json::json!({
            "id": id, "generation": 1, "head": 4096,
            "trigger": {"kind": "block", "count": 50, "threshold": 50},
            "built_at_seconds": 0.5, "built_after_entries": 9,
            "members": [{"block": 1, "addr": 4096, "size": 2, "instructions": 1, "code": "90c3"}],
            "parents": [65535], "spine": 1,
            "exits": [{"index": 0, "member": 0, "to": {"kind": "indirect"}}],
            "host": 8192, "host_size": 1, "host_code": "c3", "ir": format!("sb {id}\n\t\"x\""),
            "guest_instructions": 1, "retired_after_entries": null,
            "head_symbol": "f", "flushed": false, "entries": 4, "loops": 0,
            "member_runs": [4], "exit_counts": [4], "partial_exits": 0
        }))
        .expect("a superblock")
    }

    /// One set of types (schema.rs): a written profile, every section
    /// set, reads back as itself, written again byte for byte.
    #[test]
    fn reads_back_as_written() {
        let mut p = sample();
        // What the reader makes of every document (read I3, I4), which a
        // built profile is already (profile I3).
        p.blocks.sort_by_key(|b| b.addr);
        p.modules.push(Module {
            name: p.blocks[0].module.to_string(),
            path: "/lib/odd.so".into(),
            kind: "mapped".into(),
            base: 0,
            end: u64::MAX,
            build_id: Some("0a".into()),
            unmapped: true,
            symbols: Default::default(),
            first_block: 0,
            end_block: None,
        });
        p.rep_iterations.push(retired::RepIterations {
            addr: 5,
            extra: 6,
            unretired: 1,
        });
        p.unretired.push(retired::Unretired {
            block: 5,
            block_instructions: 3,
            instructions: 2,
            times: 1,
        });
        p.syscalls.push(SyscallRecord {
            nr: 1,
            name: "write".into(),
            count: 2,
            errors: 1,
            seconds: 0.5,
        });
        p.syscall_log.push((1, -9));
        p.code_cache_flushes_by_cause.insert("full".into(), 2);
        p.threads.push(ThreadRecord {
            tid: 7,
            guest_instructions: 1,
            block_executions: 2,
            ring_entries: 3,
        });
        p.count_check = Some(count_check::CountCheck {
            blocks_compared: 1,
            block_mismatches: vec![(0, 1, 2)],
            block_mismatch_total: 1,
            threads: vec![(1, 2)],
            thread_mismatches: 1,
        });
        p.superblocks.push(superblock(3));
        p.store = Some(StoreReport {
            url: "sqlite:/s.db".into(),
            mode: StoreMode::Read,
            identity: None,
            read: "failed".into(),
            read_error: Some("no \"table\"".into()),
            version: 0,
            traces_read: 0,
            traces_unreadable: 0,
            traces_resolved: 0,
            traces_stale: 0,
            requests: 0,
            superblocks_built: 0,
        });
        let mut written = Vec::new();
        super::write_profile(&p, &mut written).expect("written to memory");
        let back = super::super::read::read_bytes(&written, "p.json").expect("read back");
        assert_eq!(
            String::from_utf8_lossy(&serde_json::to_vec(&back).expect("serialized")),
            String::from_utf8_lossy(&written)
        );
    }
}
