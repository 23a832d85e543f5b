//! The Pisat selector (`--selector pisat`, design S2) on the nested-branch
//! guest programs, with its default settings: the output equals the
//! native run's, superblocks are built from mined patterns only (and one
//! of them runs the program's hot nest), the profile's block counts equal
//! those of translated code counting itself (`--count-inline`), and the
//! mining statistics are in the profile, within their bounds.
//!
//! (tests/guest_diff.rs and tests/exact.rs run every guest test
//! with an eager Pisat setting too.) Filter: `HOTLIFT_PISAT_FILTER=substr`.

mod guest;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use guest::{Dirs, Launch, RunResult};

const ENV: &[(&str, &str)] = &[("PATH", "/usr/bin:/bin"), ("LC_ALL", "C")];

fn launch(
    dirs: &Dirs,
    pre: Option<&[OsString]>,
    prog: &str,
    args: &[String],
    tag: &str,
) -> RunResult {
    let dir = std::env::temp_dir().join(format!("hotlift-pisat-{}-{tag}", std::process::id()));
    let hotlift = Path::new(env!("CARGO_BIN_EXE_hotlift"));
    let r = guest::run(&Launch {
        launcher: pre.map(|p| (hotlift, p)),
        program: &dirs.build.join(prog),
        args,
        dir: &dir,
        env: ENV,
        stdin: None,
        timeout: Duration::from_secs(120),
        cpu: None,
        no_randomize: true,
    });
    let _ = std::fs::remove_dir_all(&dir);
    r
}

fn profile_of(
    dirs: &Dirs,
    opts: &[&str],
    prog: &str,
    args: &[String],
    tag: &str,
) -> (RunResult, serde_json::Value) {
    let out = std::env::temp_dir().join(format!("hotlift-pisat-{}-{tag}.json", std::process::id()));
    let mut pre: Vec<OsString> = opts.iter().map(OsString::from).collect();
    pre.extend(["--profile".into(), out.clone().into(), "--".into()]);
    let r = launch(dirs, Some(&pre), prog, args, tag);
    let text = std::fs::read_to_string(&out)
        .unwrap_or_else(|e| panic!("{prog} {args:?} {opts:?}: no profile: {e}"));
    if opts.contains(&"pisat") && !opts.contains(&"--count-check") {
        // `hotlift dump` tells what was mined.
        let dump = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .arg("dump")
            .arg(&out)
            .output()
            .expect("hotlift dump");
        let text = String::from_utf8_lossy(&dump.stdout);
        assert!(
            dump.status.success() && text.contains("trigger: mined pattern of "),
            "{prog} {args:?}: dump says\n{}",
            text.lines().take(5).collect::<Vec<_>>().join("\n")
        );
    }
    let _ = std::fs::remove_file(&out);
    (r, serde_json::from_str(&text).expect("profile JSON"))
}

/// Executed blocks' counts by (module, offset).
fn counts(p: &serde_json::Value) -> BTreeMap<(String, u64), u64> {
    p["blocks"]
        .as_array()
        .expect("blocks")
        .iter()
        .filter(|b| b["count"].as_u64() != Some(0))
        .map(|b| {
            (
                (
                    b["module"].as_str().unwrap_or("").to_string(),
                    b["offset"].as_u64().unwrap(),
                ),
                b["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `hotlift run` with Pisat from the start (no superblock warm-up),
/// counting both ways (`--count-check`).
const PISAT_COUNT_CHECK: &[&str] = &[
    "run",
    "--sb-warmup",
    "0",
    "--selector",
    "pisat",
    "--count-check",
];

#[test]
fn pisat_builds_exact_superblocks_from_mined_patterns() {
    let dirs = Dirs::new();
    guest::build_guests(&dirs.guest);
    let filter = std::env::var("HOTLIFT_PISAT_FILTER").unwrap_or_default();
    let mut problems = Vec::new();
    for (depth, threads) in [(1, 1), (2, 1), (3, 1), (4, 1), (4, 4)] {
        for prog in ["c-nest", "cdyn-nest"] {
            let line = format!("{prog} {depth} {threads}");
            if !line.contains(&filter) {
                continue;
            }
            // Long enough (a few million block entries) for several
            // windows to be mined while the guest runs, even on a busy
            // machine.
            let args = vec![depth.to_string(), threads.to_string(), "1000".to_string()];
            let tag = format!("{prog}-{depth}-{threads}");
            let native = launch(&dirs, None, prog, &args, &tag);
            let run = ["run", "--sb-warmup", "0", "--selector", "pisat"];
            let (r, p) = profile_of(&dirs, &run, prog, &args, &tag);
            if r.outcome != native.outcome || r.stdout != native.stdout {
                problems.push(format!("{line}: differs from native: {}", r.outcome));
                continue;
            }
            let sbs = p["superblocks"].as_array().expect("superblocks");
            let kinds: Vec<&str> = sbs
                .iter()
                .map(|s| s["trigger"]["kind"].as_str().unwrap_or("?"))
                .collect();
            if kinds.is_empty() || kinds.iter().any(|&k| k != "mined") {
                problems.push(format!("{line}: superblock triggers {kinds:?}"));
            }
            let nest = format!("nest{depth}");
            let hot = sbs.iter().any(|s| {
                s["head_symbol"]
                    .as_str()
                    .is_some_and(|h| h.starts_with(&nest))
                    && s["entries"].as_u64().unwrap_or(0) + s["loops"].as_u64().unwrap_or(0) > 0
            });
            if !hot {
                problems.push(format!("{line}: no mined superblock ran in {nest}"));
            }
            let st = &p["pisat"];
            let mined = st["windows_mined"].as_u64().unwrap_or(0);
            let peak = st["peak_tree_nodes"].as_u64().unwrap_or(u64::MAX);
            if mined == 0 || peak > 65536 || st["requests"].as_u64().unwrap_or(0) == 0 {
                problems.push(format!("{line}: pisat statistics {st}"));
            }
            if p["superblock_stats"]["record_errors"] != 0 {
                problems.push(format!("{line}: superblock record errors"));
            }
            if threads == 1 {
                let (_, inline) = profile_of(&dirs, &["run", "--count-inline"], prog, &args, &tag);
                if counts(&inline) != counts(&p) {
                    problems.push(format!("{line}: block counts differ from --count-inline"));
                }
            } else {
                // Threads: both ways of counting in one run.
                let (_, c) = profile_of(&dirs, PISAT_COUNT_CHECK, prog, &args, &tag);
                let cc = &c["count_check"];
                if cc["block_mismatch_total"] != 0 || cc["thread_mismatches"] != 0 {
                    problems.push(format!("{line}: --count-check {cc}"));
                }
            }
            println!("{line}: {} mined superblocks, pisat {st}", sbs.len());
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn pisat_options_are_checked() {
    let hotlift = env!("CARGO_BIN_EXE_hotlift");
    for bad in [
        ["--pisat-support1", "1.5"],
        ["--pisat-support1", "x"],
        ["--selector", "mining"],
        ["--pisat-window", "2"],
    ] {
        let out = std::process::Command::new(hotlift)
            .arg("run")
            .args(bad)
            .args(["--", "/bin/true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(125), "{bad:?}: a usage error");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(bad[0]) || err.contains(bad[1]),
            "{bad:?}: {err}"
        );
    }
}

/// Pisat across id epochs (monitor/tables/epoch.rs I5): a guest rewriting
/// a function between the passes of a hot loop gives block ids again many
/// times; the windows and the miner forget the old ids, mining goes on in
/// every epoch, the output is native and the monitor's counts agree with
/// the inline counters on every block of every epoch.
#[test]
fn pisat_mines_again_across_id_epochs() {
    let (dir, exe) = guest::rewrite_guest("pisat-epochs");
    let args = ["3000", "2000"];
    let native = std::process::Command::new(&exe)
        .args(args)
        .output()
        .unwrap();
    let out = dir.join("p.json");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(PISAT_COUNT_CHECK)
        .args(["--id-epoch", "512"])
        .arg("--profile")
        .arg(&out)
        .arg("--")
        .arg(&exe)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(o.stdout, native.stdout);
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let epochs = p["code_cache_flushes_by_cause"]["id_epoch"]
        .as_u64()
        .unwrap();
    assert!(epochs >= 3, "{epochs}");
    let cc = &p["count_check"];
    assert_eq!(cc["block_mismatch_total"], 0, "{cc}");
    assert_eq!(cc["thread_mismatches"], 0, "{cc}");
    let st = &p["pisat"];
    assert!(st["windows_mined"].as_u64().unwrap() > 0, "{st}");
    assert!(st["requests"].as_u64().unwrap() > 0, "{st}");
    assert_eq!(p["superblock_stats"]["record_errors"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}
