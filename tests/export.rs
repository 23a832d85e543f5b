//! `hotlift export` on guest tests and real programs (Debian's
//! busybox-static): drcov files parse back with every executed block,
//! `callgrind_annotate` (Debian's valgrind) totals equal hotlift's count,
//! names come from debug files of stripped programs, folded stacks, flame
//! graphs and perf maps follow the profile's call tree and translations.
//!
//! Needs (CI installs them, `.ci/run`): gcc, binutils (objcopy, strip),
//! busybox-static, valgrind, python3, lcov (genhtml), pycobertura (under
//! `target/pydeps`) and linux-perf. A missing tool fails the test.

mod guest;

#[path = "export/coverage.rs"]
mod coverage;
#[path = "export/lines.rs"]
mod lines;
#[path = "export/names.rs"]
mod names;
#[path = "export/perf.rs"]
mod perf;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hotlift::profile::export::drcov;

const HOTLIFT: &str = env!("CARGO_BIN_EXE_hotlift");
const BUSYBOX: &str = "/bin/busybox";

fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-export-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn busybox() -> &'static str {
    assert!(
        Path::new(BUSYBOX).exists(),
        "{BUSYBOX} missing: install busybox-static"
    );
    BUSYBOX
}

fn show(o: &Output) -> String {
    format!("{:?}: {}", o.status, String::from_utf8_lossy(&o.stderr))
}

/// Profile `argv` in `dir` into `out`.
fn profile(dir: &Path, out: &Path, argv: &[&str]) -> serde_json::Value {
    let o = Command::new(HOTLIFT)
        .args(["run", "--profile"])
        .arg(out)
        .arg("--")
        .args(argv)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.exists(), "no profile for {argv:?}: {}", show(&o));
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

fn export(profile: &Path, format: &str, out: &Path) -> Output {
    export_all(&[profile.to_path_buf()], format, out)
}

/// `hotlift export PROFILES... --format FORMAT -o OUT`, checked.
fn export_all(profiles: &[PathBuf], format: &str, out: &Path) -> Output {
    let o = Command::new(HOTLIFT)
        .arg("export")
        .args(profiles)
        .args(["--format", format, "-o"])
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "export {format}: {}", show(&o));
    o
}

/// The programs every format is checked on: two real programs, a static
/// guest test and a static-PIE one (a different base each run).
fn programs(dir: &Path) -> Vec<Vec<String>> {
    let bb = busybox().to_string();
    std::fs::write(dir.join("in.txt"), "pear\napple\nfig\napple\n").unwrap();
    vec![
        vec![bb.clone(), "sort".into(), "in.txt".into()],
        vec![bb, "md5sum".into(), "in.txt".into()],
        vec!["/usr/bin/sort".into(), "in.txt".into()],
        vec!["/usr/bin/gzip".into(), "-c".into(), "in.txt".into()],
        vec![guest::build_one("c-recursion").display().to_string()],
        vec![guest::build_one("cpie-qsort").display().to_string()],
    ]
}

#[test]
fn drcov_holds_every_executed_block() {
    let dir = workdir("drcov");
    for (i, argv) in programs(&dir).iter().enumerate() {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let (p, out) = (
            dir.join(format!("p{i}.json")),
            dir.join(format!("p{i}.drcov")),
        );
        let prof = profile(&dir, &p, &argv);
        export(&p, "drcov", &out);
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.starts_with(b"DRCOV VERSION: 3\nDRCOV FLAVOR: drcov-64\n"));
        let d = drcov::parse(&bytes).expect("drcov parses back");
        let main = d
            .modules
            .iter()
            .find(|m| m.path == prof["binary"]["path"].as_str().unwrap())
            .expect("the program is in the module table");
        let table: std::collections::HashSet<(u16, u32, u16)> = d
            .blocks
            .iter()
            .map(|b| (b.module, b.start, b.size))
            .collect();
        let mut executed = 0;
        for b in prof["blocks"].as_array().unwrap() {
            if b["count"].as_u64().unwrap() == 0 {
                continue;
            }
            executed += 1;
            let addr = b["addr"].as_u64().unwrap();
            let module = d
                .modules
                .iter()
                .find(|m| addr >= m.start && addr < m.end)
                .unwrap_or_else(|| panic!("{argv:?}: block {addr:#x} in no module"));
            let key = (
                module.id,
                (addr - module.start) as u32,
                b["size"].as_u64().unwrap() as u16,
            );
            assert!(
                table.contains(&key),
                "{argv:?}: block {addr:#x} missing from the BB table"
            );
        }
        assert_eq!(
            d.blocks.len(),
            executed,
            "{argv:?}: one entry per executed block"
        );
        assert!(main.entry >= main.start && main.entry < main.end);
    }
}

/// `callgrind_annotate FILE`'s PROGRAM TOTALS line, as a number.
fn annotate_total(file: &Path) -> (u64, String) {
    let o = Command::new("callgrind_annotate")
        .args(["--threshold=100"])
        .arg(file)
        .output()
        .expect("callgrind_annotate (install valgrind: .ci/run does)");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "callgrind_annotate: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = out
        .lines()
        .find(|l| l.contains("PROGRAM TOTALS"))
        .unwrap_or_else(|| panic!("no totals in {out}"));
    let n = line.split_whitespace().next().unwrap().replace(',', "");
    (n.parse().unwrap(), out)
}

#[test]
fn callgrind_annotate_totals_match_hotlift() {
    let dir = workdir("callgrind");
    for (i, argv) in programs(&dir).iter().enumerate() {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let (p, out) = (
            dir.join(format!("p{i}.json")),
            dir.join(format!("p{i}.callgrind")),
        );
        let prof = profile(&dir, &p, &argv);
        export(&p, "callgrind", &out);
        let total = prof["totals"]["guest_instructions"].as_u64().unwrap();
        let (t, report) = annotate_total(&out);
        assert_eq!(t, total, "{argv:?}: summary line");
        // Without the summary line callgrind_annotate adds up the cost
        // lines itself: they must give the same total.
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            text.contains("\ncalls=") && text.contains("\njcnd=") && text.contains("\njump="),
            "{argv:?}: call and jump edges"
        );
        let bare: String = text
            .lines()
            .filter(|l| !l.starts_with("summary:"))
            .map(|l| format!("{l}\n"))
            .collect();
        let bare_file = dir.join(format!("p{i}.bare.callgrind"));
        std::fs::write(&bare_file, bare).unwrap();
        let (t2, report2) = annotate_total(&bare_file);
        assert!(report2.contains("(calculated)"), "{report2}");
        assert_eq!(t2, total, "{argv:?}: Σ cost lines");
        if argv[0].contains("c-recursion") {
            assert!(report.contains(":main "), "functions are named: {report}");
        }
    }
}

#[test]
fn callgrind_totals_of_programs_that_fault_trap_or_rewrite_their_code() {
    // Instructions that did not retire (totals.unretired_instructions) are
    // not in the costs either (callgrind I1).
    let dir = workdir("callgrind-unretired");
    for name in [
        "asm-trap-ud2",
        "asm-fault-null",
        "asm-fault-rep",
        "asm-smc-rwx",
    ] {
        let exe = guest::build_one(name);
        let (p, out) = (
            dir.join(format!("{name}.json")),
            dir.join(format!("{name}.cg")),
        );
        let prof = profile(&dir, &p, &[exe.to_str().unwrap()]);
        export(&p, "callgrind", &out);
        let bare: String = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("summary:"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&out, bare).unwrap();
        let (t, _) = annotate_total(&out);
        assert_eq!(
            t,
            prof["totals"]["guest_instructions"].as_u64().unwrap(),
            "{name}"
        );
    }
}

/// Build guest test recursion.c as `dir/rec` (`-O1 -g -static` and
/// `extra`), its debug information moved to `dir/rec.debug` and named by
/// a `.gnu_debuglink`.
fn stripped_with_debuglink(dir: &Path, extra: &[&str]) {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/guest-tests/c/recursion.c");
    let inc = concat!(env!("CARGO_MANIFEST_DIR"), "/guest-tests/c");
    let run = |cmd: &str, args: &[&str]| {
        let st = Command::new(cmd)
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap_or_else(|e| panic!("{cmd}: {e}"));
        assert!(st.success(), "{cmd} {args:?}");
    };
    let mut gcc = vec!["-O1", "-g", "-static"];
    gcc.extend_from_slice(extra);
    gcc.extend_from_slice(&["-I", inc, "-o", "rec", src]);
    run("gcc", &gcc);
    run("objcopy", &["--only-keep-debug", "rec", "rec.debug"]);
    run("strip", &["--strip-all", "rec"]);
    run("objcopy", &["--add-gnu-debuglink=rec.debug", "rec"]);
}

#[test]
fn names_come_from_a_debug_file_of_a_stripped_program() {
    let dir = workdir("debuglink");
    let exe = dir.join("rec");
    stripped_with_debuglink(&dir, &[]);
    let p = dir.join("rec.json");
    let prof = profile(&dir, &p, &[exe.to_str().unwrap()]);
    assert!(
        prof["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["symbol"].is_null()),
        "the program is stripped"
    );
    let out = dir.join("rec.callgrind");
    let o = export(&p, "callgrind", &out);
    assert!(o.stderr.is_empty(), "no warning: {}", show(&o));
    let (_, report) = annotate_total(&out);
    assert!(
        report.contains(":main "),
        "main named from rec.debug: {report}"
    );
    let lines = |out: &Path| {
        std::fs::read_to_string(out)
            .unwrap()
            .contains("/recursion.c\n")
    };
    assert!(lines(&out), "source lines from rec.debug (debuglink)");
    // Processed after the link was made (one more byte: another CRC-32),
    // its build id still the program's: used, with a warning.
    let mut bytes = std::fs::read(dir.join("rec.debug")).unwrap();
    bytes.push(0);
    std::fs::write(dir.join("rec.debug"), bytes).unwrap();
    let o = export(&p, "callgrind", &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rec.debug does not have the CRC-32") && err.lines().count() == 1,
        "{err}"
    );
    assert!(
        lines(&out),
        "source lines from rec.debug, its build id matching"
    );
    // The same debug file found by build id under HOTLIFT_DEBUG_DIR.
    let id = prof["binary"]["build_id"]
        .as_str()
        .expect("gcc wrote a build id");
    let by_id = dir.join("dbg/.build-id").join(&id[..2]);
    std::fs::create_dir_all(&by_id).unwrap();
    let moved = by_id.join(format!("{}.debug", &id[2..]));
    std::fs::rename(dir.join("rec.debug"), &moved).unwrap();
    let o = Command::new(HOTLIFT)
        .arg("export")
        .arg(&p)
        .args(["--format", "callgrind", "-o"])
        .arg(&out)
        .env("HOTLIFT_DEBUG_DIR", dir.join("dbg"))
        .output()
        .unwrap();
    assert!(o.status.success() && o.stderr.is_empty(), "{}", show(&o));
    let (_, report) = annotate_total(&out);
    assert!(
        report.contains(":main "),
        "main named by build id: {report}"
    );
    assert!(
        lines(&out),
        "source lines from the debug file found by build id"
    );
    // Without a debug file: addresses, and a warning.
    std::fs::remove_file(&moved).unwrap();
    let o = export(&p, "callgrind", &out);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no symbols"),
        "{}",
        show(&o)
    );
}

/// A profile with the documented `call_tree` and `translations`.
fn synthetic_profile(dir: &Path) -> PathBuf {
    let doc = serde_json::json!({
        "schema_version": 2,
        "binary": {"path": "/nonexistent/prog", "sha256": "00", "build_id": null, "size": 0},
        "command_line": ["/nonexistent/prog"],
        "pid": 4242,
        "ending": {"kind": "exit", "code": 0},
        "totals": {"guest_instructions": 100, "rep_extra_iterations": 0, "block_executions": 9},
        "modules": [{"name": "prog", "path": "/nonexistent/prog", "base": 4194304, "end": 4259840, "build_id": null}],
        "blocks": [
            {"addr": 4198400, "module": "prog", "offset": 4096, "symbol": "_start", "size": 10, "instructions": 10, "count": 1, "exit": "call"},
            {"addr": 4198656, "module": "prog", "offset": 4352, "symbol": "main", "size": 20, "instructions": 5, "count": 6, "exit": "call"},
            {"addr": 4198912, "module": "prog", "offset": 4608, "symbol": "work", "size": 20, "instructions": 30, "count": 2, "exit": "return"}
        ],
        "call_edges": [{"from": 4198400, "to": 4198656, "count": 1}, {"from": 4198656, "to": 4198912, "count": 2}],
        "call_tree": [
            {"id": 0, "parent": null, "function": 0, "module": null, "offset": null, "symbol": null, "calls": 1, "self_instructions": 10},
            {"id": 1, "parent": 0, "function": 4198656, "module": "prog", "offset": 4352, "symbol": "main", "calls": 1, "self_instructions": 30},
            {"id": 2, "parent": 1, "function": 4198912, "module": "prog", "offset": 4608, "symbol": "work", "calls": 2, "self_instructions": 60}
        ],
        "translations": [
            {"host": 140000000000u64, "host_size": 64, "guest": 4198400},
            {"host": 140000000064u64, "host_size": 48, "guest": 4198656},
            {"host": 140000000112u64, "host_size": 200, "superblock": 0}
        ],
        "a_future_field": {"ignored": true}
    });
    let p = dir.join("synthetic.json");
    std::fs::write(&p, doc.to_string()).unwrap();
    p
}

#[test]
fn folded_svg_and_perfmap_follow_the_call_tree_and_translations() {
    let dir = workdir("stacks");
    let p = synthetic_profile(&dir);
    let folded = dir.join("f.txt");
    export(&p, "folded", &folded);
    let text = std::fs::read_to_string(&folded).unwrap();
    assert_eq!(text, "[root] 10\n[root];main 30\n[root];main;work 60\n");
    let svg = dir.join("f.svg");
    export(&p, "svg", &svg);
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg_text.contains("<svg") && svg_text.contains("work"),
        "a flame graph"
    );
    let o = Command::new("python3")
        .args([
            "-c",
            "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])",
        ])
        .arg(&svg)
        .status()
        .expect("python3");
    assert!(o.success(), "the SVG is XML");
    let map = dir.join("perf.map");
    export(&p, "perfmap", &map);
    let lines: Vec<String> = std::fs::read_to_string(&map)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        lines,
        [
            "2098a67800 40 hotlift:_start [0x401000]",
            "2098a67840 30 hotlift:main [0x401100]",
            "2098a67870 c8 hotlift:superblock 0",
        ]
    );
    // Callgrind takes inclusive call costs from the tree: main → work is 60
    // (line 0: the program's file is gone).
    let cg = dir.join("s.callgrind");
    export(&p, "callgrind", &cg);
    let cg_text = std::fs::read_to_string(&cg).unwrap();
    assert!(
        cg_text.contains("calls=2 0x401200 0\n0x401100 0 60\n"),
        "{cg_text}"
    );
}

#[test]
fn folded_svg_and_perfmap_of_real_programs() {
    let dir = workdir("real-stacks");
    for (i, argv) in programs(&dir).iter().enumerate() {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let p = dir.join(format!("p{i}.json"));
        let prof = profile(&dir, &p, &argv);
        let total = prof["totals"]["guest_instructions"].as_u64().unwrap();
        let folded = dir.join(format!("p{i}.folded"));
        export(&p, "folded", &folded);
        let text = std::fs::read_to_string(&folded).unwrap();
        let sum: u64 = text
            .lines()
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, total, "{argv:?}: folded stacks add up to the total");
        assert!(
            text.lines().any(|l| l.contains(';')),
            "{argv:?}: stacks have callers"
        );
        if argv[0].contains("c-recursion") {
            assert!(text.contains(";main;"), "{argv:?}: named frames");
            // 100,000-deep recursion is cut at MAX_FRAMES (stacks I3).
            assert!(text.contains(";[deeper] "), "{argv:?}");
        }
        let svg = dir.join(format!("p{i}.svg"));
        export(&p, "svg", &svg);
        let st = Command::new("python3")
            .args([
                "-c",
                "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])",
            ])
            .arg(&svg)
            .status()
            .expect("python3");
        assert!(st.success(), "{argv:?}: the SVG is XML");
        let map = dir.join(format!("p{i}.map"));
        export(&p, "perfmap", &map);
        let lines = std::fs::read_to_string(&map).unwrap();
        let translations = prof["translations"].as_array().unwrap();
        let superblocks = prof["superblocks"].as_array().unwrap();
        let sized = |v: &Vec<serde_json::Value>| {
            v.iter()
                .filter(|t| t["host_size"].as_u64() != Some(0))
                .count()
        };
        assert_eq!(
            lines.lines().count(),
            sized(translations) + sized(superblocks),
            "{argv:?}: one line per block and superblock translation"
        );
        assert_eq!(
            lines.matches(" superblock ").count(),
            sized(superblocks),
            "{argv:?}"
        );
        let first = &translations[0];
        let want = format!(
            "{:x} {:x} hotlift:",
            first["host"].as_u64().unwrap(),
            first["host_size"].as_u64().unwrap()
        );
        assert!(
            lines.starts_with(&want),
            "{argv:?}: {want} vs {}",
            lines.lines().next().unwrap_or("")
        );
    }
}

#[test]
fn profiles_without_a_call_tree_or_translations_say_so() {
    // Profiles written before call_tree and translations existed.
    let dir = workdir("missing");
    let full = synthetic_profile(&dir);
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&full).unwrap()).unwrap();
    doc.as_object_mut().unwrap().remove("call_tree");
    doc.as_object_mut().unwrap().remove("translations");
    let p = dir.join("old.json");
    std::fs::write(&p, doc.to_string()).unwrap();
    for (format, field) in [
        ("folded", "call_tree"),
        ("svg", "call_tree"),
        ("perfmap", "translations"),
    ] {
        let o = Command::new(HOTLIFT)
            .arg("export")
            .arg(&p)
            .args(["--format", format])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(field) && err.lines().count() == 1, "{err}");
    }
    // drcov and callgrind work without them.
    export(&p, "drcov", &dir.join("old.drcov"));
    export(&p, "callgrind", &dir.join("old.callgrind"));
}

#[test]
fn bad_profiles_are_one_line_errors() {
    let dir = workdir("bad");
    let good = synthetic_profile(&dir);
    let text = std::fs::read_to_string(&good).unwrap();
    let truncated = dir.join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let wrong = dir.join("wrong.json");
    std::fs::write(
        &wrong,
        text.replace("\"schema_version\":2", "\"schema_version\":99"),
    )
    .unwrap();
    let not_json = dir.join("not.json");
    std::fs::write(&not_json, b"\x7fELF\x02\x01").unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["export", "/nonexistent.json", "--format", "drcov"],
            "cannot read",
        ),
        (
            &["export", truncated.to_str().unwrap(), "--format", "drcov"],
            "truncated",
        ),
        (
            &["export", wrong.to_str().unwrap(), "--format", "drcov"],
            "schema_version 99",
        ),
        (
            &["export", not_json.to_str().unwrap(), "--format", "drcov"],
            "not a hotlift profile",
        ),
        (
            &["export", good.to_str().unwrap(), "--format", "pdf"],
            "pdf",
        ),
        (&["export", good.to_str().unwrap()], "--format"),
        // The output is checked before the profile is read.
        (
            &[
                "export",
                "/nonexistent/p.json",
                "--format",
                "lcov",
                "-o",
                "/nonexistent/dir/x.info",
            ],
            "/nonexistent/dir is not a directory",
        ),
    ];
    for (args, want) in cases {
        let o = Command::new(HOTLIFT).args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// Issue 20, names: C++ symbols demangled in the summary and every export
/// (one naming function, profile/names.rs); `--no-demangle` keeps them as
/// the symbol table spells them, and the profile always does (I1).
#[test]
fn cpp_names_are_demangled_in_every_output_and_raw_on_request() {
    let dir = workdir("names");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/names/names.cpp");
    let exe = dir.join("names");
    let o = Command::new("g++")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("g++ (Debian g++) is needed");
    assert!(o.status.success(), "g++: {}", show(&o));
    let p = dir.join("p.json");
    let o = Command::new(HOTLIFT)
        .args(["profile", "-o"])
        .arg(&p)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let (raw, nice) = (
        "_ZN4work3sumERKSt6vectorIlSaIlEE",
        "work::sum(std::vector<long, std::allocator<long> > const&)",
    );
    // The summary `profile` prints at the end (on stderr).
    let summary = String::from_utf8_lossy(&o.stderr);
    assert!(summary.contains(&format!("{nice}+0x")), "{summary}");
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(
        text.contains(raw) && !text.contains(nice),
        "the profile keeps raw names"
    );
    for (flag, want, not) in [(None, nice, raw), (Some("--no-demangle"), raw, nice)] {
        for format in ["callgrind", "folded"] {
            let out = dir.join(format!("out.{format}"));
            let mut c = Command::new(HOTLIFT);
            c.args(flag);
            let o = c
                .arg("export")
                .arg(&p)
                .args(["--format", format, "-o"])
                .arg(&out)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", show(&o));
            let got = std::fs::read_to_string(&out).unwrap();
            // Folded stacks keep a frame free of spaces.
            let want = if format == "folded" {
                want.replace(' ', "_")
            } else {
                want.to_string()
            };
            let not = if format == "folded" {
                not.replace(' ', "_")
            } else {
                not.to_string()
            };
            assert!(got.contains(&want), "{flag:?} {format}: no {want}");
            assert!(!got.contains(&not), "{flag:?} {format}: {not}");
            // PLT stubs and unnamed code by name or module+offset, never
            // by an address ASLR moves.
            let names: Vec<&str> = match format {
                "callgrind" => got
                    .lines()
                    .filter(|l| l.starts_with("fn=") || l.starts_with("cfn="))
                    .filter_map(|l| l.split_once(") ").map(|(_, n)| n))
                    .collect(),
                _ => got
                    .lines()
                    .filter_map(|l| l.rsplit_once(' ').map(|(s, _)| s))
                    .flat_map(|s| s.split(';'))
                    .collect(),
            };
            let bad: Vec<&&str> = names
                .iter()
                .filter(|n| n.starts_with("0x") || n.starts_with("@plt"))
                .collect();
            assert!(bad.is_empty(), "{format}: {bad:?}");
            if flag.is_none() {
                // The stub's code by its function (callgrind), a call
                // through it by libstdc++'s function (folded stacks name
                // contexts: images.rs I6).
                let stub = match format {
                    "folded" => "operator_new(unsigned_long)",
                    _ => "operator new(unsigned long)@plt",
                };
                assert!(
                    names.contains(&stub),
                    "{format}: a PLT stub named after its function: {names:?}"
                );
                if format == "callgrind" {
                    // Calls go past the stubs to the functions they
                    // reached, as callgrind's own --skip-plt counts them.
                    let mut by_id = std::collections::HashMap::new();
                    let mut callees = Vec::new();
                    for l in got.lines() {
                        let Some((key, rest)) = l.split_once("=(") else {
                            continue;
                        };
                        let (id, name) = rest.split_once(')').unwrap();
                        let name = name.trim();
                        if !name.is_empty() {
                            by_id.insert(id.to_string(), name.to_string());
                        }
                        if key == "cfn" {
                            callees.push(id.to_string());
                        }
                    }
                    let stubs: Vec<&String> = callees
                        .iter()
                        .map(|id| &by_id[id])
                        .filter(|n| n.ends_with("@plt"))
                        .collect();
                    assert!(stubs.is_empty(), "calls of PLT stubs: {stubs:?}");
                }
            }
        }
    }
}
