//! `hotlift dump` and `hotlift run --dump-superblocks`: what a user sees
//! of the superblocks a run built, in every format, and clear errors for
//! bad input. The dot output is rendered by Graphviz's `dot`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-dump-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn hotlift() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hotlift"))
}

/// `tests/profile/NAME.c` built into `dir` with gcc's `flags`.
fn gcc(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/profile/{name}.c"));
    let exe = dir.join(name);
    let st = Command::new("gcc")
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("gcc");
    assert!(st.success());
    exe
}

/// The profile workload, run long enough to build superblocks.
fn profiled_run(dir: &Path) -> (PathBuf, PathBuf) {
    let exe = gcc(dir, "workload", &["-O1", "-g", "-static"]);
    let (profile, dumps) = (dir.join("p.json"), dir.join("dumps"));
    std::fs::create_dir_all(&dumps).unwrap();
    let o = hotlift()
        .args(["run", "--profile"])
        .arg(&profile)
        .arg("--dump-superblocks")
        .arg(&dumps)
        .arg("--")
        .arg(&exe)
        .args(["exit", "3000000"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    (profile, dumps)
}

fn dump(args: &[&str], profile: &Path) -> std::process::Output {
    hotlift()
        .arg("dump")
        .arg(profile)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn dumps_show_what_was_built_in_every_format() {
    let dir = workdir();
    let (profile, dumps) = profiled_run(&dir);
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    let sbs = p["superblocks"].as_array().unwrap();
    assert!(!sbs.is_empty(), "superblocks were built");

    // Text: every part, symbols, guest and host (capstone) code.
    let o = dump(&[], &profile);
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8(o.stdout).unwrap();
    for want in [
        "superblock 0",
        "trigger:",
        "built:",
        "members (",
        "exits:",
        "IR:",
        "host code at",
        "<main",
        // module+offset beside the symbol (stripped code has only it)
        ", workload+0x",
        // and the source line, from the program's DWARF
        " at workload.c:",
        "mov qword ptr gs:[",
    ] {
        assert!(text.contains(want), "text dump lacks {want:?}:\n{text}");
    }
    // Every member of the program's own code (built with -g) carries its
    // source line, a line of workload.c.
    let lines = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/profile/workload.c"),
    )
    .unwrap()
    .lines()
    .count() as u64;
    let members: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" insns, ") && l.contains(", workload+0x"))
        .collect();
    assert!(!members.is_empty(), "no member in the program:\n{text}");
    for m in members {
        let line = m
            .split(" at workload.c:")
            .nth(1)
            .map(|r| r.split(|c: char| !c.is_ascii_digit()).next().unwrap())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("a member without its source line: {m}"));
        assert!((1..=lines).contains(&line), "{m}");
    }
    // Counts in the dump agree with the profile's block counts: a member
    // runs at most as often as its block.
    let counts: std::collections::HashMap<u64, u64> = p["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["addr"].as_u64().unwrap(), b["count"].as_u64().unwrap()))
        .collect();
    let o = dump(&["--format", "json"], &profile);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json dump");
    let mut busiest = (0, 0);
    for s in j.as_array().unwrap() {
        let runs = s["member_runs"].as_array().unwrap();
        for (m, r) in s["members"].as_array().unwrap().iter().zip(runs) {
            let addr = m["addr"].as_u64().unwrap();
            assert!(r.as_u64().unwrap() <= counts[&addr], "member {addr:#x}");
        }
        let passes = s["entries"].as_u64().unwrap() + s["loops"].as_u64().unwrap();
        if passes > busiest.1 {
            busiest = (s["id"].as_u64().unwrap(), passes);
        }
    }
    assert!(busiest.1 > 1000, "a superblock ran");

    // Dot, rendered by Graphviz.
    let id = busiest.0.to_string();
    let o = dump(&["--superblock", &id, "--format", "dot"], &profile);
    assert!(o.status.success(), "{o:?}");
    let dot_file = dir.join("sb.dot");
    std::fs::write(&dot_file, &o.stdout).unwrap();
    let svg = Command::new("dot")
        .arg("-Tsvg")
        .arg(&dot_file)
        .output()
        .expect("Graphviz `dot` (Debian package graphviz)");
    assert!(svg.status.success(), "dot failed: {svg:?}");
    assert!(String::from_utf8_lossy(&svg.stdout).contains("<svg"));
    // The three hottest in one graph, a cluster each.
    let o = dump(&["--top", "3", "--format", "dot"], &profile);
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.matches("subgraph cluster_").count(), 3.min(sbs.len()));
    assert!(
        text.contains(&format!("cluster_{id} ")),
        "the busiest is among the hottest three"
    );
    std::fs::write(&dot_file, &o.stdout).unwrap();
    let svg = Command::new("dot")
        .arg("-Tsvg")
        .arg(&dot_file)
        .output()
        .unwrap();
    assert!(svg.status.success(), "dot failed: {svg:?}");

    // One as-built dump per superblock (flushed ones included).
    let files = std::fs::read_dir(&dumps).unwrap().count();
    assert_eq!(files, sbs.len(), "--dump-superblocks wrote one file each");
    let first = std::fs::read_to_string(dumps.join("superblock-0.txt")).unwrap();
    assert!(first.starts_with("superblock 0"), "{first}");
}

#[test]
fn bad_input_is_a_one_line_error() {
    let dir = workdir();
    let junk = dir.join("junk.json");
    std::fs::write(&junk, b"not json").unwrap();
    let old = dir.join("old.json");
    std::fs::write(&old, br#"{"schema_version": 0}"#).unwrap();
    let empty = dir.join("empty.json");
    std::fs::write(
        &empty,
        br#"{"schema_version": 2, "blocks": [], "superblocks": []}"#,
    )
    .unwrap();
    let cases: [(&Path, &[&str], &str); 5] = [
        (Path::new("/nonexistent/p.json"), &[], "cannot read"),
        (&junk, &[], "not a JSON profile"),
        (&old, &[], "schema version 0"),
        (&empty, &["--superblock", "3"], "no superblock 3"),
        (&empty, &["--format", "dot"], "no superblocks to draw"),
    ];
    for (file, args, want) in cases {
        let o = dump(args, file);
        assert_eq!(o.status.code(), Some(2), "{file:?} {args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{file:?} {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
}

/// Code inlined two deep: the summary's top blocks and `dump`'s members
/// give the whole chain, innermost first, as `addr2line -i` does.
#[test]
fn inlined_code_shows_where_it_was_inlined() {
    let dir = workdir();
    let exe = gcc(&dir, "inline", &["-O2", "-g", "-static"]);
    let profile = dir.join("inline.json");
    // Its loop is short: superblocks from the start (--sb-warmup).
    let o = hotlift()
        .args(["profile", "--sb-warmup", "0", "-o"])
        .arg(&profile)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let summary = String::from_utf8_lossy(&o.stderr);
    // The loop's body: mix's code, inlined into twice, inlined into main
    // at the loop's line.
    let chain = "inline.c:6 in mix, inlined into twice at inline.c:10, \
                 inlined into main at inline.c:16";
    assert!(summary.contains(chain), "{summary}");
    let o = dump(&[], &profile);
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(chain), "{text}");
}

/// `--sb-warmup` (superblock/tier.rs `warm`): a run shorter than the
/// warm-up builds none of the superblocks it asked for and says how many
/// (`superblock_stats.deferred`); the same run without a warm-up builds
/// them; a longer one builds them once past it. The counts are the same
/// every way. A run of one hot loop ends its warm-up long before
/// `--sb-warmup` words, by its words a block.
#[test]
fn superblocks_wait_for_the_warm_up() {
    let dir = workdir();
    let exe = gcc(&dir, "calls", &["-O2"]);
    let out = dir.join("warmup.json");
    let run_n = |n: &str, warmup: Option<&str>| -> serde_json::Value {
        let mut c = hotlift();
        c.arg("run");
        if let Some(w) = warmup {
            c.args(["--sb-warmup", w]);
        }
        let o = c
            .arg("--profile")
            .arg(&out)
            .arg("--")
            .arg(&exe)
            .arg(n)
            .output()
            .unwrap();
        assert!(o.status.success(), "{warmup:?}: {o:?}");
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
    };
    let stats = |p: &serde_json::Value, k: &str| p["superblock_stats"][k].as_u64().unwrap();
    let counts = |p: &serde_json::Value| {
        // By module and offset: libraries load elsewhere each run.
        let mut v: Vec<(String, u64, u64)> = p["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                let at = b["offset"].as_u64().unwrap();
                (b["module"].to_string(), at, b["count"].as_u64().unwrap())
            })
            .collect();
        v.sort_unstable();
        v
    };
    // The default warm-up is longer than this run (~1.6 M ring words,
    // about 600 a block).
    let run = |warmup| run_n("200000", warmup);
    let short = run(None);
    assert!(short["ring"]["entries"].as_u64().unwrap() < hotlift::options::SB_WARMUP);
    assert_eq!(stats(&short, "built"), 0, "{}", short["superblock_stats"]);
    assert!(
        stats(&short, "deferred") > 0,
        "{}",
        short["superblock_stats"]
    );
    assert!(short["superblocks"].as_array().unwrap().is_empty());
    let eager = run(Some("0"));
    assert!(stats(&eager, "built") > 0, "{}", eager["superblock_stats"]);
    assert_eq!(stats(&eager, "deferred"), 0);
    let later = run(Some("100000"));
    assert!(stats(&later, "built") > 0, "{}", later["superblock_stats"]);
    for s in later["superblocks"].as_array().unwrap() {
        let at = s["built_after_entries"].as_u64().unwrap();
        assert!(at >= 100_000, "built after {at} ring words");
    }
    assert!(counts(&short) == counts(&eager) && counts(&eager) == counts(&later));
    // Mostly one loop: past 1000 words a block well before the default.
    let hot = run_n("20000000", None);
    assert!(stats(&hot, "built") > 0, "{}", hot["superblock_stats"]);
    for s in hot["superblocks"].as_array().unwrap() {
        let at = s["built_after_entries"].as_u64().unwrap();
        assert!(
            at < hotlift::options::SB_WARMUP,
            "built after {at} ring words"
        );
    }
}
