//! Real dynamically linked programs from Debian, which nobody here wrote,
//! run natively and under hotlift: `sqlite3` running an SQL script
//! (`tests/real/script.sql`, a database file in the working directory),
//! `lua5.4` running a script (`tests/real/script.lua`), `gzip` round trips,
//! and coreutils (`ls -l` on a fixed tree, `sort`, `sha256sum`), plus
//! `sort` started through ld.so itself. Each is a dynamic PIE that ld.so
//! loads with its libraries (libc, libsqlite3, libreadline, libz, libm,
//! libselinux, libpcre2 …).
//!
//! Invariants:
//! - R1. Every case runs natively, under `hotlift run`, `--no-chain` and
//!   with superblocks nearly everywhere (`sb-all`), with the same argv,
//!   environment (`LC_ALL=C`, `TZ=UTC`, `PATH`, `HOME`/`TMPDIR` at the
//!   run's fresh working directory), stdin and inputs; stdout, stderr and
//!   the wait status must be equal byte for byte (the `D` rules of
//!   `tests/guest/mod.rs` apply).
//! - R2. The `hotlift` run writes a profile, and it must name library
//!   code: the program and ld.so as modules with executed blocks, blocks
//!   in `libc.so.6` (a module the guest mapped itself) with libc symbols
//!   (malloc or memcpy family), the case's own library and symbol where it
//!   has one (`libsqlite3`/`sqlite3…`), and call-tree contexts in libc.
//! - R3. Inputs are generated deterministically into a directory of their
//!   own (read-only for the runs, named by absolute path), with fixed
//!   modification times; nothing a run writes goes there.
//! - R4. Process trees run under hotlift as a whole (fork, execve of
//!   scripts and programs, pipes): `gunzip`/`zcat` (shell scripts that
//!   exec `gzip`), `dash` and `bash` pipelines; the profile checked is the
//!   first process's (the shell). GNU `sort` sorts the large input once
//!   with one thread and once with two (`sort-threads`).
//!
//! Knobs: `HOTLIFT_REAL_FILTER=substr` (case names), `CI` set makes a
//! missing program a failure instead of a skip (`.ci/run` installs them).
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod guest;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use guest::{diff_summary, tail_text, Launch, RunResult, SB_EVERYWHERE};

const LD_SO: &str = "/lib64/ld-linux-x86-64.so.2";

/// The hotlift modes of R1 (option groups, joined).
const MODES: &[(&str, &[&[&str]])] = &[
    ("hotlift", &[&["run"]]),
    ("no-chain", &[&["run", "--no-chain"]]),
    ("sb-all", &[&["run"], SB_EVERYWHERE]),
];

const ENV: &[(&str, &str)] = &[("PATH", "/usr/bin:/bin"), ("LC_ALL", "C"), ("TZ", "UTC")];

/// One program run.
struct Case {
    name: String,
    /// argv; argv[0] is the program's path.
    argv: Vec<String>,
    stdin: Option<PathBuf>,
    /// (module name prefix, symbol prefix) the profile must show with
    /// executed blocks, besides libc's (R2).
    expect: Vec<(&'static str, &'static str)>,
    /// The program module, where argv[0] is a `#!` script: its
    /// interpreter's file name.
    program: Option<&'static str>,
}

impl Case {
    fn new(name: &str, argv: &[&str]) -> Case {
        Case {
            name: name.to_string(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            stdin: None,
            expect: Vec::new(),
            program: None,
        }
    }
    fn interpreter(mut self, module: &'static str) -> Case {
        self.program = Some(module);
        self
    }
    fn stdin(mut self, path: &Path) -> Case {
        self.stdin = Some(path.to_path_buf());
        self
    }
    fn expect(mut self, module: &'static str, symbol: &'static str) -> Case {
        self.expect.push((module, symbol));
        self
    }
}

/// Inputs the same on every run (R3).
use guest::rng::Seeded as Rng;

const WORDS: &[&str] = &[
    "translator",
    "block",
    "chain",
    "monitor",
    "ring",
    "profile",
    "superblock",
    "module",
    "library",
    "loader",
    "interpreter",
    "symbol",
    "offset",
    "guest",
    "host",
    "cache",
    "syscall",
    "signal",
    "Zeta",
    "alpha",
    "Beta",
    "gamma",
    "10",
    "9",
    "-3",
    "2.5",
    "",
];

/// A fixed time for every input file: 2021-03-04 05:06:07 UTC.
const MTIME: i64 = 1_614_834_367;

fn set_mtime(path: &Path, follow: bool) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let t = libc::timespec {
        tv_sec: MTIME,
        tv_nsec: 0,
    };
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    // SAFETY: a valid C path and two valid timespecs.
    let rc = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), [t, t].as_ptr(), flags) };
    assert_eq!(rc, 0, "utimensat {}", path.display());
}

fn write(path: &Path, data: &[u8], mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::write(path, data).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    set_mtime(path, true);
}

/// Generates the inputs (R3) into `dir`.
fn make_inputs(dir: &Path) {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).unwrap();
    let mut rng = Rng::new(2024);
    let mut text = String::new();
    for i in 0..3000 {
        let n = 1 + rng.next() % 8;
        for j in 0..n {
            if j > 0 {
                text.push(' ');
            }
            text.push_str(WORDS[(rng.next() % WORDS.len() as u64) as usize]);
        }
        if i % 7 == 0 {
            text.push_str(&format!(" {}", rng.next() % 100_000));
        }
        text.push('\n');
    }
    write(&dir.join("words.txt"), text.as_bytes(), 0o644);
    let mut csv = String::new();
    for i in 0..1500 {
        let w = WORDS[(rng.next() % WORDS.len() as u64) as usize];
        csv.push_str(&format!("{w},{},{i}\n", rng.next() % 1000));
    }
    write(&dir.join("data.csv"), csv.as_bytes(), 0o644);
    // Large enough that GNU sort would sort it with two threads (R4).
    let big: String = (0..200_000)
        .map(|_| format!("{}\n", rng.next() % 1_000_000))
        .collect();
    write(&dir.join("big.txt"), big.as_bytes(), 0o644);
    let binary: Vec<u8> = (0..100_000).map(|_| (rng.next() % 7) as u8 * 37).collect();
    write(&dir.join("binary.dat"), &binary, 0o600);

    // A fixed tree for ls -l.
    let tree = dir.join("tree");
    fs::create_dir_all(tree.join("sub/deeper")).unwrap();
    fs::create_dir_all(tree.join("empty")).unwrap();
    write(&tree.join("README"), b"a fixed tree\n", 0o644);
    write(&tree.join("run.sh"), b"#!/bin/sh\necho hi\n", 0o755);
    write(&tree.join("sub/notes.txt"), &text.as_bytes()[..5000], 0o640);
    write(&tree.join("sub/deeper/.hidden"), b"", 0o600);
    write(&tree.join("sub/deeper/data.bin"), &binary[..1234], 0o644);
    std::os::unix::fs::symlink("README", tree.join("link")).unwrap();
    set_mtime(&tree.join("link"), false);
    for d in ["sub/deeper", "sub", "empty", ""] {
        set_mtime(&tree.join(d), true);
    }
}

/// Every case (R1, R4).
fn cases(inp: &Path, real: &Path) -> Vec<Case> {
    let p = |name: &str| inp.join(name).display().to_string();
    let words = inp.join("words.txt");
    let sql = real.join("script.sql");
    let lua = real.join("script.lua").display().to_string();
    vec![
        Case::new("sqlite3-script", &["/usr/bin/sqlite3", "-batch", "t.db"])
            .stdin(&sql)
            .expect("libsqlite3.so", "sqlite3"),
        Case::new(
            "sqlite3-memory",
            &[
                "/usr/bin/sqlite3",
                ":memory:",
                "create table t(a, b); insert into t values (1, 'x'), (2, 'y');",
                "select b, a * 1000000007 % 97 from t order by a desc;",
            ],
        )
        .expect("libsqlite3.so", "sqlite3"),
        Case::new("lua-script", &["/usr/bin/lua5.4", &lua]).expect("lua5.4", "lua"),
        Case::new(
            "lua-e",
            &[
                "/usr/bin/lua5.4",
                "-e",
                "local t = {} for i = 1, 5000 do t[i] = (i * 7919) % 1009 end \
                 table.sort(t) print(t[1], t[2500], t[5000], #t)",
            ],
        ),
        Case::new(
            "gzip-compress",
            &["/usr/bin/gzip", "-9", "-c", &p("words.txt")],
        ),
        Case::new("gzip-stdin", &["/usr/bin/gzip", "-c"]).stdin(&inp.join("binary.dat")),
        Case::new("gzip-decompress", &["/usr/bin/gzip", "-d", "-c"])
            .stdin(&inp.join("words.txt.gz")),
        Case::new(
            "gzip-test",
            &["/usr/bin/gzip", "-t", "-v", &p("words.txt.gz")],
        ),
        Case::new("ls-l", &["/usr/bin/ls", "-l", &p("tree")]),
        Case::new(
            "ls-laR",
            &["/usr/bin/ls", "-laR", "--full-time", &p("tree")],
        ),
        Case::new("sort", &["/usr/bin/sort", &p("words.txt")]),
        Case::new(
            "sort-keys",
            &["/usr/bin/sort", "-t,", "-k2,2n", "-k1,1r", &p("data.csv")],
        ),
        Case::new("sort-unique", &["/usr/bin/sort", "-u", "-f"]).stdin(&words),
        Case::new(
            "sort-big",
            &["/usr/bin/sort", "-n", "--parallel=1", &p("big.txt")],
        ),
        Case::new(
            "sort-threads",
            &["/usr/bin/sort", "-n", "--parallel=2", &p("big.txt")],
        ),
        Case::new(
            "sha256sum",
            &[
                "/usr/bin/sha256sum",
                &p("words.txt"),
                &p("binary.dat"),
                &p("big.txt"),
            ],
        ),
        Case::new("sha256sum-stdin", &["/usr/bin/sha256sum", "-"]).stdin(&words),
        // Process trees (fork, execve, pipes): `gunzip` and `zcat` are
        // `#!/bin/sh` scripts that exec `gzip`; shells run pipelines,
        // subshells and command substitutions of coreutils programs.
        Case::new("gunzip-script", &["/usr/bin/gunzip", "-c", &p("words.txt.gz")])
            .interpreter("sh"),
        Case::new("zcat-script", &["/usr/bin/zcat", &p("words.txt.gz")]).interpreter("sh"),
        Case::new(
            "dash-pipeline",
            &[
                "/bin/sh",
                "-c",
                &format!(
                    "sort {w} | uniq -c | sort -rn | head -5; echo files: $(ls {t} | wc -l); \
                     (cd {t} && ls -d */) | sort",
                    w = p("words.txt"),
                    t = p("tree")
                ),
            ],
        ),
        Case::new(
            "bash-script",
            &[
                "/bin/bash",
                "-c",
                &format!(
                    "f() {{ sha256sum \"$1\" | cut -c1-16; }}; for x in {w} {c}; do f \"$x\"; done; \
                     n=$(gzip -c {w} | gzip -d | wc -c); echo roundtrip $n; \
                     paste <(seq 3) <(seq 4 6) | tr '\\t' ,",
                    w = p("words.txt"),
                    c = p("data.csv")
                ),
            ],
        ),
        // ld.so run as the program: it maps sort itself (R2: as a module).
        Case::new(
            "ld.so-sort",
            &[LD_SO, "/usr/bin/sort", "-r", &p("data.csv")],
        )
        .expect("sort", "")
        .expect("ld-linux-x86-64.so.2", "_dl_start"),
    ]
}

/// Runs `case` natively (`mode` None) or in a hotlift mode, writing the
/// profile to `profile` (R1).
fn run_case(case: &Case, mode: Option<&[&str]>, profile: Option<&Path>, n: usize) -> RunResult {
    let dir = std::env::temp_dir().join(format!("hotlift-real-{}-{n}", std::process::id()));
    let hotlift = Path::new(env!("CARGO_BIN_EXE_hotlift"));
    let mut pre: Vec<OsString> = mode
        .unwrap_or_default()
        .iter()
        .map(OsString::from)
        .collect();
    if let Some(p) = profile {
        pre.extend(["--profile".into(), p.into()]);
    }
    pre.push("--".into());
    let r = guest::run(&Launch {
        launcher: mode.map(|_| (hotlift, pre.as_slice())),
        program: Path::new(&case.argv[0]),
        args: &case.argv[1..],
        dir: &dir,
        env: ENV,
        stdin: case.stdin.as_deref(),
        timeout: Duration::from_secs(120),
        cpu: None,
        no_randomize: false,
    });
    let _ = fs::remove_dir_all(&dir);
    r
}

/// The profile checks of R2; returns what is wrong.
fn check_profile(case: &Case, path: &Path) -> Result<(), String> {
    let text = fs::read_to_string(path).map_err(|e| format!("no profile: {e}"))?;
    let p: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let modules = p["modules"].as_array().ok_or("no modules")?;
    let kind_of = |name: &str| {
        modules
            .iter()
            .find(|m| m["name"] == name)
            .and_then(|m| m["kind"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let blocks = p["blocks"].as_array().ok_or("no blocks")?;
    let ran = |module: &str, symbol: &str| {
        blocks.iter().any(|b| {
            b["count"].as_u64().unwrap_or(0) > 0
                && b["module"].as_str().is_some_and(|m| m.starts_with(module))
                && (symbol.is_empty()
                    || b["symbol"].as_str().is_some_and(|s| s.starts_with(symbol)))
        })
    };
    let program = match case.program {
        Some(m) => m.into(),
        None => Path::new(&case.argv[0])
            .file_name()
            .unwrap()
            .to_string_lossy(),
    };
    if kind_of(&program) != "program" || !ran(&program, "") {
        return Err(format!(
            "no executed blocks in the program module {program}"
        ));
    }
    if kind_of("ld-linux-x86-64.so.2") != "interpreter" && case.argv[0] != LD_SO {
        return Err("ld.so is not listed as the interpreter".into());
    }
    if kind_of("libc.so.6") != "mapped" {
        return Err("libc.so.6 is not listed as a mapped module".into());
    }
    let libc_named = [
        "malloc",
        "__libc_malloc",
        "_int_malloc",
        "__memcpy",
        "__memmove",
    ]
    .iter()
    .any(|s| ran("libc.so.6", s));
    if !libc_named {
        return Err("no executed libc.so.6 block named malloc or memcpy".into());
    }
    for (module, symbol) in &case.expect {
        if !ran(module, symbol) {
            return Err(format!("no executed block in {module}* named {symbol}*"));
        }
    }
    for b in blocks {
        let m = modules
            .iter()
            .find(|m| m["name"] == b["module"])
            .ok_or_else(|| format!("block module {} not listed", b["module"]))?;
        let (addr, base) = (b["addr"].as_u64().unwrap(), m["base"].as_u64().unwrap());
        if addr.wrapping_sub(base) != b["offset"].as_u64().unwrap() {
            return Err(format!("block {addr:#x}: offset is not addr - base"));
        }
    }
    let tree = p["call_tree"].as_array().ok_or("no call tree")?;
    if !tree.iter().any(|n| n["module"] == "libc.so.6") {
        return Err("no call-tree context in libc.so.6".into());
    }
    Ok(())
}

/// Is every program the cases need installed? (A skip outside CI.)
fn installed(cases: &[Case]) -> bool {
    let missing: Vec<&str> = cases
        .iter()
        .map(|c| c.argv[0].as_str())
        .filter(|p| !Path::new(p).exists())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let msg = format!(
        "missing {missing:?}: install the Debian packages sqlite3, lua5.4, gzip (.ci/run does)"
    );
    assert!(std::env::var_os("CI").is_none(), "{msg}");
    println!("skipped: {msg}");
    false
}

#[test]
fn real_programs_match_native_and_profiles_name_libraries() {
    let real = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/real");
    let inp = std::env::temp_dir().join(format!("hotlift-real-in-{}", std::process::id()));
    make_inputs(&inp);
    let mut all = cases(&inp, &real);
    if !installed(&all) {
        return;
    }
    if let Ok(f) = std::env::var("HOTLIFT_REAL_FILTER") {
        all.retain(|c| c.name.contains(&f));
        assert!(!all.is_empty(), "HOTLIFT_REAL_FILTER={f:?} matches no case");
    }
    // The gzip input for decompression: compressed natively (R3).
    let gz = std::process::Command::new("/usr/bin/gzip")
        .args(["-9", "-c"])
        .arg(inp.join("words.txt"))
        .output()
        .unwrap();
    assert!(gz.status.success());
    write(&inp.join("words.txt.gz"), &gz.stdout, 0o644);

    let cases = Arc::new(all);
    let jobs: Vec<(usize, Option<usize>)> = (0..cases.len())
        .flat_map(|c| {
            [None]
                .into_iter()
                .chain((0..MODES.len()).map(Some))
                .map(move |m| (c, m))
        })
        .collect();
    let queue = Arc::new(Mutex::new(jobs));
    let results = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let (queue, results, cases) = (queue.clone(), results.clone(), cases.clone());
            let inp = inp.clone();
            thread::spawn(move || {
                let mut n = 0;
                // The lock released before the job runs (guest::next_job).
                loop {
                    let next = queue.lock().unwrap().pop();
                    let Some((c, m)) = next else { break };
                    let case = &cases[c];
                    let profile = (m == Some(0)).then(|| inp.with_extension(format!("{c}.json")));
                    n += 1;
                    let r = run_case(
                        case,
                        m.map(|m| MODES[m].1.concat()).as_deref(),
                        profile.as_deref(),
                        w * 1000 + n,
                    );
                    let checked = profile.map(|p| {
                        let ok = check_profile(case, &p);
                        guest::remove_profiles(&p);
                        ok
                    });
                    let mode = m.map_or("native", |m| MODES[m].0);
                    println!(
                        "[{mode:<8}] {:<16} {} ({:.2} s)",
                        case.name,
                        r.outcome,
                        r.elapsed.as_secs_f64()
                    );
                    results.lock().unwrap().push((c, m, r, checked));
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker panicked");
    }

    let results = results.lock().unwrap();
    let mut report = String::new();
    for (c, case) in cases.iter().enumerate() {
        let native = results
            .iter()
            .find(|r| r.0 == c && r.1.is_none())
            .map(|r| &r.2)
            .expect("native run");
        if !guest::outcome_matches(&native.outcome, guest::Expect::Exit(0)) {
            report.push_str(&format!(
                "FAIL ({}, native): {}\n{}",
                case.name,
                native.outcome,
                tail_text(&native.stderr, 5)
            ));
        }
        for (_, m, r, checked) in results.iter().filter(|r| r.0 == c && r.1.is_some()) {
            let mode = MODES[m.unwrap()].0;
            let mut why = String::new();
            if r.outcome != native.outcome {
                why.push_str(&format!(
                    "    status: native {}, {mode} {}\n",
                    native.outcome, r.outcome
                ));
            }
            why.extend(diff_summary("stdout", &native.stdout, &r.stdout));
            why.extend(diff_summary("stderr", &native.stderr, &r.stderr));
            if let Some(Err(e)) = checked {
                why.push_str(&format!("    profile: {e}\n"));
            }
            if !why.is_empty() {
                report.push_str(&format!(
                    "FAIL ({}, {mode}):\n{why}{}",
                    case.name,
                    tail_text(&r.stderr, 3)
                ));
            }
        }
    }
    // R1 for gzip: what hotlift compressed decompresses to the input.
    if let Some(r) = results
        .iter()
        .find(|r| cases[r.0].name == "gzip-compress" && r.1 == Some(0))
    {
        let back = std::process::Command::new("/usr/bin/gzip")
            .arg("-dc")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(&r.2.stdout)?;
                child.wait_with_output()
            })
            .unwrap();
        if back.stdout != fs::read(inp.join("words.txt")).unwrap() {
            report.push_str(
                "FAIL (gzip round trip): hotlift's output does not decompress to the input\n",
            );
        }
    }
    let _ = fs::remove_dir_all(&inp);
    assert!(report.is_empty(), "\n{report}");
}
