//! The profile store (design S5): merge semantics, many runs merging at
//! once into SQLite and into PostgreSQL, stale and foreign entries
//! ignored, a corrupt store that never breaks a run, warm runs that stay
//! exact, and `hotlift store`.
//!
//! Invariants checked:
//! - T1. A merge counts each distinct trace of a run once: new → 1, known
//!   → +1, and bumps the program's version by one (nothing at all for a
//!   run without traces).
//! - T2. Concurrent runs never lose a count: after N runs merge at once,
//!   the version is N and every trace's count is the number of runs whose
//!   profile has that superblock path.
//! - T3. A warm run prints exactly what a cold run prints and counts every
//!   block exactly as a cold run does (the superblocks change, the counts
//!   must not); its stored superblocks are built before counting would
//!   have asked for them.
//! - T4. A trace of a module build the run does not have, or with a member
//!   whose block is not the stored one, is never built; another binary of
//!   the same name reads nothing.
//! - T5. A corrupt store file is a one-line warning: the guest's output,
//!   status and profile are those of a run without a store, and the file
//!   is left as it was. `hotlift store` exits 2 with one line.
//!
//! PostgreSQL: the test starts a server from Debian's `postgresql` package
//! (initdb and pg_ctl into a temporary directory, a Unix socket only) and
//! stops it at the end. Without those binaries it prints a note and
//! passes, except under CI (`CI` set), where they must be there.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod guest;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use guest::postgres::Postgres;
use guest::{Dirs, Launch, Outcome, RunResult};
use hotlift::store::{Open, ProgramKey, Store, TracePath};

const ENV: &[(&str, &str)] = &[("PATH", "/usr/bin:/bin"), ("LC_ALL", "C")];
const TOOL: &str = env!("CARGO_BIN_EXE_hotlift");
/// The guest's argument: ten times the short form's hot phases, so the
/// store's reader thread is done long before the hot phases end, even on a
/// loaded machine.
const ARGS: &[&str] = &["10"];

/// One test at a time runs guests: twelve runs at once are the point of
/// T2, and timing of the others should not depend on them.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn built() -> Dirs {
    static BUILT: std::sync::Once = std::sync::Once::new();
    let dirs = Dirs::new();
    BUILT.call_once(|| guest::build_guests(&dirs.guest));
    dirs
}

fn scratch(what: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("hotlift-store-{what}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `program` under `hotlift run ARGS --profile PROFILE --`.
fn run(program: &Path, args: &[&str], hotlift: &[&str], profile: &Path) -> RunResult {
    // The working directory is HOME and TMPDIR, whose lengths move the
    // guest's stack strings: one length for every run.
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = profile.with_file_name(format!("run-{n:06}"));
    let mut pre: Vec<OsString> = vec!["run".into()];
    pre.extend(hotlift.iter().map(OsString::from));
    pre.extend([
        "--profile".into(),
        profile.as_os_str().to_owned(),
        "--".into(),
    ]);
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let r = guest::run(&Launch {
        launcher: Some((Path::new(TOOL), pre.as_slice())),
        program,
        args: &args,
        dir: &dir,
        env: ENV,
        stdin: None,
        timeout: Duration::from_secs(120),
        cpu: None,
        // Stack and mmap placement as in every other run: string functions
        // take alignment-dependent paths, and counts must compare equal.
        no_randomize: true,
    });
    let _ = std::fs::remove_dir_all(&dir);
    r
}

fn ok(r: &RunResult, what: &str) {
    assert_eq!(
        r.outcome,
        Outcome::Status(0),
        "{what}: {}\n--- stderr ---\n{}",
        r.outcome,
        String::from_utf8_lossy(&r.stderr)
    );
}

fn profile(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no profile {}: {e}", path.display()));
    serde_json::from_str(&text).expect("profile is JSON")
}

/// `hotlift ARGS` (a tool command): status, stdout, stderr.
fn tool(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(TOOL).args(args).output().expect("run hotlift");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// (module name, offset) → count of every executed block.
fn block_counts(p: &serde_json::Value) -> BTreeMap<(String, u64), u64> {
    let mut m = BTreeMap::new();
    for b in p["blocks"].as_array().unwrap() {
        let c = b["count"].as_u64().unwrap();
        if c > 0 {
            *m.entry((
                b["module"].as_str().unwrap().to_string(),
                b["offset"].as_u64().unwrap(),
            ))
            .or_insert(0) += c;
        }
    }
    m
}

/// Every block counted the same in both profiles (differences listed).
fn same_counts(a: &serde_json::Value, b: &serde_json::Value, what: &str) {
    let (a, b) = (block_counts(a), block_counts(b));
    let diff: Vec<String> = a
        .keys()
        .chain(b.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .take(20)
        .map(|k| format!("{}+{:#x}: {:?} vs {:?}", k.0, k.1, a.get(k), b.get(k)))
        .collect();
    assert!(
        diff.is_empty(),
        "{what}: block counts differ:\n{}",
        diff.join("\n")
    );
}

fn stored_superblocks(p: &serde_json::Value) -> Vec<&serde_json::Value> {
    p["superblocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["trigger"]["kind"] == "stored")
        .collect()
}

/// The distinct superblock paths of a run, as (module, offset) lists up to
/// the first repeated member (what the run merges: store/run.rs).
fn run_paths(p: &serde_json::Value) -> std::collections::BTreeSet<Vec<(String, u64)>> {
    let modules = p["modules"].as_array().unwrap();
    let locate = |addr: u64| {
        let m = modules
            .iter()
            .rev()
            .find(|m| {
                m["base"].as_u64().unwrap() <= addr
                    && addr < m["end"].as_u64().unwrap()
                    && m["kind"] != "anon"
            })
            .expect("member in a module");
        (
            m["name"].as_str().unwrap().to_string(),
            addr - m["base"].as_u64().unwrap(),
        )
    };
    p["superblocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let mut seen = std::collections::HashSet::new();
            // A tree's first path: the trace it grew from.
            let members = s["members"].as_array().unwrap();
            let spine = s["spine"].as_u64().map_or(members.len(), |n| n as usize);
            members[..spine]
                .iter()
                .map(|m| m["addr"].as_u64().unwrap())
                .take_while(|&a| seen.insert(a))
                .map(locate)
                .collect()
        })
        .collect()
}

/// Trace paths in the store as (module name, offset) lists → count.
fn store_paths(url: &str, program: &str) -> (u64, BTreeMap<Vec<(String, u64)>, u64>) {
    let mut s = Store::open(url, Open::Existing).expect("open the store");
    let p = s.find_program(program).expect("program in the store");
    let mut out = BTreeMap::new();
    for t in s.traces(&p.identity).unwrap() {
        let path = t.path.expect("readable path");
        let key = path
            .members
            .iter()
            .map(|m| (path.modules[m.module as usize].name.clone(), m.offset))
            .collect();
        assert!(out.insert(key, t.count).is_none(), "one row per path");
    }
    (p.version, out)
}

// ---- T1: merge semantics, on any backend ---------------------------------

fn path(module: &str, offsets: &[u64]) -> TracePath {
    TracePath {
        modules: vec![hotlift::store::ModuleRef {
            identity: format!("build-id:{module}"),
            name: module.into(),
        }],
        members: offsets
            .iter()
            .map(|&o| hotlift::store::PathMember {
                module: 0,
                offset: o,
                size: 4,
                insns: 1,
                code: hotlift::store::code_hash(&o.to_le_bytes()),
                symbol: None,
            })
            .collect(),
    }
}

fn check_merge_semantics(url: &str) {
    let mut s = Store::open(url, Open::Create).unwrap_or_else(|e| panic!("{url}: {e}"));
    let prog = ProgramKey {
        identity: "build-id:0123abcd".into(),
        name: "prog".into(),
    };
    let (a, b, c) = (
        path("aa", &[0x10, 0x20]),
        path("aa", &[0x30]),
        path("bb", &[0x10]),
    );
    // Nothing to merge: no program, no version.
    assert_eq!(s.merge(&prog, &[]).unwrap().version, 0);
    assert!(s.load(&prog.identity, 0, 1).unwrap().is_none());
    let m = s.merge(&prog, &[a.clone(), b.clone(), a.clone()]).unwrap();
    assert_eq!(
        (m.version, m.new_traces, m.known_traces),
        (1, 2, 0),
        "a path twice in one run counts once"
    );
    let m = s.merge(&prog, &[a.clone(), c.clone()]).unwrap();
    assert_eq!((m.version, m.new_traces, m.known_traces), (2, 1, 1));
    let l = s.load(&prog.identity, 0, 1).unwrap().expect("newer than 0");
    assert_eq!(l.version, 2);
    let counts: Vec<(String, u64)> = l.traces.iter().map(|t| (t.path.key(), t.count)).collect();
    assert_eq!(counts[0], (a.key(), 2), "most-built first");
    assert_eq!(counts.len(), 3);
    assert!(counts.contains(&(b.key(), 1)) && counts.contains(&(c.key(), 1)));
    assert!(s.load(&prog.identity, 2, 1).unwrap().is_none(), "not newer");
    let l = s.load(&prog.identity, 1, 2).unwrap().unwrap();
    assert_eq!(l.traces.len(), 1, "--store-min-runs 2");
    // Pruning bumps the version of the programs that lost traces.
    let out = s
        .prune(&hotlift::store::Prune {
            program: None,
            below: Some(2),
            before: None,
        })
        .unwrap();
    assert_eq!(out.traces, 2);
    let rows = s.programs().unwrap();
    let row = rows.iter().find(|p| p.identity == prog.identity).unwrap();
    assert_eq!((row.version, row.traces), (3, 1));
    let out = s
        .prune(&hotlift::store::Prune {
            program: Some(prog.identity.clone()),
            below: None,
            before: None,
        })
        .unwrap();
    assert_eq!((out.traces, out.programs), (1, 1));
    assert!(s.load(&prog.identity, 0, 1).unwrap().is_none());
}

#[test]
fn merge_semantics_sqlite() {
    let d = scratch("merge");
    check_merge_semantics(d.join("sub/dir/store.db").to_str().unwrap());
    let _ = std::fs::remove_dir_all(&d);
}

// ---- T2: many runs at once ------------------------------------------------

/// Runs `n` copies of `program` at once, merging into `url`; checks T2.
/// The store's version after the runs: one per run that merged.
fn check_concurrent_runs(url: &str, program: &Path, n: usize, d: &Path) -> u64 {
    let runs: Vec<_> = (0..n)
        .map(|i| {
            let (url, program, prof) = (
                url.to_string(),
                program.to_path_buf(),
                d.join(format!("c{i}.json")),
            );
            std::thread::spawn(move || {
                let r = run(
                    &program,
                    ARGS,
                    &["--store", &url, "--store-mode", "write"],
                    &prof,
                );
                ok(&r, "concurrent run");
                assert!(
                    r.stderr.is_empty(),
                    "no store warning: {}",
                    String::from_utf8_lossy(&r.stderr)
                );
                run_paths(&profile(&prof))
            })
        })
        .collect();
    let mut want: BTreeMap<Vec<(String, u64)>, u64> = BTreeMap::new();
    let mut merging = 0;
    for h in runs {
        let paths = h.join().expect("run thread");
        // A run that built no superblock (a starved monitor) merges
        // nothing.
        merging += u64::from(!paths.is_empty());
        for p in paths {
            *want.entry(p).or_insert(0) += 1;
        }
    }
    assert!(merging > n as u64 / 2, "most runs built superblocks");
    let name = program.file_name().unwrap().to_str().unwrap();
    let (version, got) = store_paths(url, name);
    assert_eq!(version, merging, "one version per merging run");
    assert_eq!(got, want, "every trace counted once per run that built it");
    version
}

#[test]
fn concurrent_runs_sqlite() {
    let _serial = serial();
    let dirs = built();
    let d = scratch("concurrent");
    let db = d.join("store.db");
    check_concurrent_runs(db.to_str().unwrap(), &dirs.build.join("c-latehot"), 12, &d);
    let _ = std::fs::remove_dir_all(&d);
}

// ---- T3: warm runs --------------------------------------------------------

/// A cold run writing the store, then a warm one reading it: same output,
/// same counts, stored superblocks built.
fn check_warm(url: &str, program: &Path, d: &Path) -> serde_json::Value {
    let (cold_p, warm_p) = (d.join("cold.json"), d.join("warm.json"));
    let cold = run(program, ARGS, &["--store", url], &cold_p);
    ok(&cold, "cold run");
    let warm = run(
        program,
        ARGS,
        &["--store", url, "--store-mode", "read"],
        &warm_p,
    );
    ok(&warm, "warm run");
    assert_eq!(cold.stdout, warm.stdout, "same output");
    let (cold_p, warm_p) = (profile(&cold_p), profile(&warm_p));
    same_counts(&cold_p, &warm_p, "same counts");
    let st = &warm_p["store"];
    assert_eq!(st["read"], "loaded", "{st}");
    assert_eq!(st["version"], 1);
    assert!(st["traces_read"].as_u64().unwrap() > 0);
    assert_eq!(st["traces_resolved"], st["traces_read"], "{st}");
    assert_eq!(st["traces_stale"], 0);
    let stored = stored_superblocks(&warm_p);
    assert!(!stored.is_empty(), "stored superblocks built: {st}");
    assert_eq!(
        st["superblocks_built"].as_u64().unwrap(),
        stored.len() as u64
    );
    warm_p
}

#[test]
fn warm_runs_are_exact() {
    let _serial = serial();
    let dirs = built();
    for name in ["c-latehot", "cdyn-latehot"] {
        let d = scratch("warm");
        let db = d.join("store.db");
        let url = db.to_str().unwrap();
        // How much sooner stored superblocks are built is measured by
        // tools/store-bench, not asserted here.
        let warm = check_warm(url, &dirs.build.join(name), &d);
        let stored = stored_superblocks(&warm);
        if name.starts_with("cdyn") {
            // Traces in libc (or ld.so) are found when the library is
            // mapped, at its address in this run.
            let in_lib = stored.iter().any(|s| {
                s["head_symbol"].is_string()
                    && warm["modules"].as_array().unwrap().iter().any(|m| {
                        m["kind"] == "mapped"
                            && m["base"].as_u64().unwrap() <= s["head"].as_u64().unwrap()
                            && s["head"].as_u64().unwrap() < m["end"].as_u64().unwrap()
                    })
            });
            assert!(in_lib, "{name}: a stored superblock in a library");
        }
        // The exactness check of one run: ring counts = inline counts.
        let check = d.join("check.json");
        let r = run(
            &dirs.build.join(name),
            ARGS,
            &["--store", url, "--store-mode", "read", "--count-check"],
            &check,
        );
        ok(&r, "warm --count-check");
        let p = profile(&check);
        assert_eq!(p["count_check"]["block_mismatch_total"], 0, "{name}");
        assert!(!stored_superblocks(&p).is_empty());
        // The dump names the trigger.
        let (code, out, err) = tool(&["dump", check.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("trigger: stored trace built by 1 earlier run(s)"),
            "{out}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}

// ---- T4: stale and foreign entries ----------------------------------------

#[test]
fn stale_and_foreign_traces_are_ignored() {
    let _serial = serial();
    let dirs = built();
    let d = scratch("stale");
    let db = d.join("store.db");
    let url = db.to_str().unwrap().to_string();
    let program = dirs.build.join("c-latehot");
    let cold_p = d.join("cold.json");
    let cold = run(
        &program,
        ARGS,
        &["--store", &url, "--store-mode", "write"],
        &cold_p,
    );
    ok(&cold, "cold run");
    // Craft three bad traces from a good one: another build of its module,
    // a member whose code differs, a member of another size.
    let mut s = Store::open(&url, Open::Existing).unwrap();
    let prog = s.find_program("c-latehot").unwrap();
    let good: Vec<TracePath> = s
        .traces(&prog.identity)
        .unwrap()
        .into_iter()
        .map(|t| t.path.unwrap())
        .collect();
    let n = good.len();
    assert!(n >= 2);
    let long = good.iter().max_by_key(|p| p.members.len()).unwrap().clone();
    let mut foreign = long.clone();
    foreign.modules[0].identity = "build-id:00000000".into();
    let mut changed = long.clone();
    let last = changed.members.len() - 1;
    changed.members[last].code = hotlift::store::code_hash(b"not this code");
    let mut resized = long.clone();
    resized.members[0].size += 1;
    let key = ProgramKey {
        identity: prog.identity.clone(),
        name: prog.name.clone(),
    };
    s.merge(&key, &[foreign, changed, resized]).unwrap();
    drop(s);
    let warm_p = d.join("warm.json");
    let warm = run(
        &program,
        ARGS,
        &["--store", &url, "--store-mode", "read"],
        &warm_p,
    );
    ok(&warm, "warm run");
    assert_eq!(cold.stdout, warm.stdout);
    let (cold_p, warm_p) = (profile(&cold_p), profile(&warm_p));
    same_counts(&cold_p, &warm_p, "same counts");
    let st = &warm_p["store"];
    assert_eq!(st["traces_read"].as_u64().unwrap(), n as u64 + 3, "{st}");
    assert_eq!(
        st["traces_resolved"].as_u64().unwrap(),
        n as u64 + 2,
        "{st}"
    );
    assert_eq!(st["traces_stale"], 2, "{st}");
    // Every stored superblock is one of the good paths (as far as it got).
    let good_heads: Vec<u64> = good.iter().map(|p| p.members[0].offset).collect();
    let base = warm_p["modules"][0]["base"].as_u64().unwrap();
    for sb in stored_superblocks(&warm_p) {
        let head = sb["head"].as_u64().unwrap() - base;
        assert!(good_heads.contains(&head), "{head:#x} from a good trace");
    }
    // Another program of the same name reads nothing.
    let other_dir = d.join("other");
    std::fs::create_dir_all(&other_dir).unwrap();
    let other = other_dir.join("c-latehot");
    std::fs::copy(dirs.build.join("cpie-latehot"), &other).unwrap();
    let op = d.join("other.json");
    let r = run(
        &other,
        ARGS,
        &["--store", &url, "--store-mode", "read"],
        &op,
    );
    ok(&r, "same name, other build");
    let p = profile(&op);
    assert_eq!(p["store"]["read"], "nothing", "{}", p["store"]);
    assert!(stored_superblocks(&p).is_empty());
    let _ = std::fs::remove_dir_all(&d);
}

// ---- T5: a corrupt store ---------------------------------------------------

#[test]
fn corrupt_store_never_breaks_a_run() {
    let _serial = serial();
    let dirs = built();
    let d = scratch("corrupt");
    let program = dirs.build.join("c-latehot");
    let plain_p = d.join("plain.json");
    let plain = run(&program, ARGS, &[], &plain_p);
    ok(&plain, "run without a store");
    let plain_p = profile(&plain_p);
    let bad = d.join("bad.db");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    for (what, bytes) in [
        ("garbage", garbage.clone()),
        ("truncated header", b"SQLite format 3\0\x10\0".to_vec()),
    ] {
        std::fs::write(&bad, &bytes).unwrap();
        let p = d.join("corrupt.json");
        let r = run(&program, ARGS, &["--store", bad.to_str().unwrap()], &p);
        ok(&r, what);
        assert_eq!(r.stdout, plain.stdout, "{what}: guest output unchanged");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(
            err.lines()
                .all(|l| l.starts_with("hotlift: store: cannot ")),
            "{what}: one-line store warnings only: {err}"
        );
        assert!(err.contains("not a usable hotlift store"), "{what}: {err}");
        let p = profile(&p);
        assert_eq!(p["store"]["read"], "failed");
        same_counts(&p, &plain_p, what);
        assert_eq!(
            std::fs::read(&bad).unwrap(),
            bytes,
            "{what}: file untouched"
        );
        let (code, out, err) = tool(&["store", "list", bad.to_str().unwrap()]);
        assert_eq!(code, 2, "{what}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("hotlift store: "), "{err}");
    }
    // An SQLite database of something else is not written to either.
    let other = d.join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    let before = std::fs::read(&other).unwrap();
    let p = d.join("foreign.json");
    let r = run(&program, ARGS, &["--store", other.to_str().unwrap()], &p);
    ok(&r, "foreign database");
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("an SQLite database with other tables"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&other).unwrap(),
        before,
        "foreign database untouched"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A server that accepts the connection and never answers (pg.rs I3): a
/// run still ends when its guest does, with a one-line warning, and a
/// command gives up with status 2, both within the URL's connect_timeout.
#[test]
fn a_silent_postgres_server_never_hangs_a_run() {
    let _serial = serial();
    let dirs = built();
    let d = scratch("silent");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming() {
            held.push(c);
        }
    });
    let url = format!("postgres://u@127.0.0.1:{port}/db?connect_timeout=1");
    let t0 = std::time::Instant::now();
    let (code, out, err) = tool(&["store", "list", &url]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("no answer from the server within 1 s"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let program = dirs.build.join("c-latehot");
    let p = d.join("w.json");
    let r = run(
        &program,
        ARGS,
        &["--store", &url, "--store-mode", "write"],
        &p,
    );
    ok(&r, "a write to a silent server");
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.lines()
            .all(|l| l.starts_with("hotlift: store: cannot "))
            && err.contains("no answer from the server"),
        "{err}"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(60),
        "gave up in time: {:?}",
        t0.elapsed()
    );
    let _ = std::fs::remove_dir_all(&d);
}

// ---- hotlift store --------------------------------------------------------

#[test]
fn store_commands() {
    let _serial = serial();
    let dirs = built();
    let d = scratch("cli");
    let db = d.join("store.db");
    let url = db.to_str().unwrap();
    let program = dirs.build.join("c-latehot");
    for i in 0..2 {
        let r = run(
            &program,
            ARGS,
            &["--store", url],
            &d.join(format!("r{i}.json")),
        );
        ok(&r, "run");
    }
    let (code, out, err) = tool(&["store", "list", url]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("c-latehot") && out.contains("version 2"),
        "{out}"
    );
    let (code, out, _) = tool(&["store", "list", url, "--json"]);
    assert_eq!(code, 0);
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list[0]["name"], "c-latehot");
    let identity = list[0]["identity"].as_str().unwrap().to_string();
    for pattern in ["c-latehot", identity.as_str(), &identity[9..20]] {
        let (code, out, err) = tool(&["store", "show", url, pattern]);
        assert_eq!(code, 0, "{pattern}: {err}");
        assert!(out.contains("c-latehot+0x"), "{out}");
        assert!(out.contains("count "), "{out}");
    }
    let (code, out, _) = tool(&["store", "export", url]);
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let traces = doc["programs"][0]["traces"].as_array().unwrap().len();
    assert!(traces > 0);
    let file = d.join("export.json");
    let (code, _, _) = tool(&[
        "store",
        "export",
        url,
        "--program",
        "c-latehot",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(again, doc, "one program is the whole store here");
    // Bad input: exit 2, one line.
    for args in [
        vec!["store", "show", url, "no-such-program"],
        vec!["store", "list", "/nonexistent/store.db"],
        vec!["store", "prune", url],
        vec!["store", "list", "mysql://x/y"],
        vec![
            "store",
            "list",
            "postgres://nobody@127.0.0.1:1/x?connect_timeout=2",
        ],
        vec!["store", "frobnicate", url],
    ] {
        let (code, out, err) = tool(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // Prune: nothing is older than a day; every trace was built by both
    // runs (fewer than 3), then the program itself.
    let (code, out, _) = tool(&["store", "prune", url, "--older-than", "1"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("removed 0 traces"), "{out}");
    let (code, out, _) = tool(&["store", "prune", url, "--below", "3"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with(&format!("removed {traces} traces")),
        "{out}"
    );
    let (code, out, _) = tool(&["store", "prune", url, "--program", "c-latehot"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "removed 0 traces and 1 programs");
    let (_, out, _) = tool(&["store", "list", url]);
    assert_eq!(out.trim(), "(no programs)");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn postgres_store() {
    let _serial = serial();
    let Some(pg) = Postgres::start() else {
        return;
    };
    let dirs = built();
    // T1 on its own database.
    pg.create_db("semantics");
    check_merge_semantics(&pg.url("semantics"));
    // T2: many runs at once into one shared database.
    pg.create_db("shared");
    let d = scratch("pg");
    let url = pg.url("shared");
    let version = check_concurrent_runs(&url, &dirs.build.join("c-latehot"), 12, &d);
    // T3: a warm run reading the shared store.
    pg.create_db("warm");
    check_warm(&pg.url("warm"), &dirs.build.join("cdyn-latehot"), &d);
    // hotlift store on PostgreSQL.
    let (code, out, err) = tool(&["store", "list", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("c-latehot") && out.contains(&format!("version {version}")),
        "{out}"
    );
    let (code, _, err) = tool(&["store", "list", &pg.url("postgres")]);
    assert_eq!(code, 2, "a database without the tables");
    assert!(err.contains("no hotlift tables"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
