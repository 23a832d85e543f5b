//! Profiles are exact and never lost: the monitor's block counts equal the
//! inline counters' (`--count-inline`), with chaining on and off, and a
//! profile is written however the guest ends.

mod guest;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn workdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-profile-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn build(dir: &Path, pie: bool, test: &str) -> PathBuf {
    build_src(dir, pie, test, "workload.c")
}

fn build_src(dir: &Path, pie: bool, test: &str, file: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/profile")
        .join(file);
    let exe = dir.join(format!("{test}-{}", if pie { "pie" } else { "exec" }));
    guest::gcc(&src, &exe, &[if pie { "-static-pie" } else { "-static" }]);
    exe
}

fn profile(
    exe: &Path,
    out: &Path,
    extra: &[&str],
    arg: &str,
) -> (std::process::Output, serde_json::Value) {
    let _ = std::fs::remove_file(out);
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("run")
        .args(extra)
        .arg("--profile")
        .arg(out)
        .arg("--")
        .arg(exe)
        .arg(arg)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(out)
        .unwrap_or_else(|e| panic!("no profile for {arg} {extra:?}: {e}; {o:?}"));
    (o, serde_json::from_str(&text).expect("profile is JSON"))
}

/// (module offset, count) of every executed block: offsets, because a
/// static-PIE lands at a different base each run.
fn counts(p: &serde_json::Value) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = p["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["offset"].as_u64().unwrap(), b["count"].as_u64().unwrap()))
        .filter(|&(_, c)| c > 0)
        .collect();
    v.sort();
    v
}

/// The sum of `field` over the profile's array `array`.
fn sum_of(p: &serde_json::Value, array: &str, field: &str) -> u64 {
    p[array]
        .as_array()
        .unwrap_or_else(|| panic!("no array {array}"))
        .iter()
        .map(|e| e[field].as_u64().unwrap())
        .sum()
}

#[test]
fn monitor_counts_equal_inline_counts() {
    let dir = workdir();
    for pie in [false, true] {
        let exe = build(&dir, pie, "equal");
        let out = dir.join(format!("p-{pie}.json"));
        for chain in [&[][..], &["--no-chain"][..]] {
            let (_, ring) = profile(&exe, &out, chain, "exit");
            let mut inline_args = chain.to_vec();
            inline_args.push("--count-inline");
            let (_, inline) = profile(&exe, &out, &inline_args, "exit");
            assert_eq!(ring["counting"], "ring");
            assert_eq!(inline["counting"], "inline");
            let (a, b) = (counts(&ring), counts(&inline));
            assert!(a.len() > 100, "too few blocks: {}", a.len());
            let first = a.iter().zip(&b).find(|(x, y)| x != y);
            assert!(a == b, "monitor and inline counts differ (pie={pie}, {chain:?}): {} vs {} blocks, first {first:?}", a.len(), b.len());
            // Inline counting counts blocks only; the ring also reports rep
            // iterations, which come on top.
            let total = |p: &serde_json::Value, k: &str| p["totals"][k].as_u64().unwrap();
            assert_eq!(
                total(&ring, "guest_instructions") - total(&ring, "rep_extra_iterations"),
                total(&inline, "guest_instructions")
            );
            // Without superblocks every block execution is a ring entry.
            if ring["superblocks"].as_array().unwrap().is_empty() {
                assert!(
                    ring["ring"]["entries"].as_u64().unwrap()
                        >= ring["totals"]["block_executions"].as_u64().unwrap()
                );
            }
        }
    }
}

#[test]
fn small_ring_waits_but_loses_nothing() {
    let dir = workdir();
    let exe = build(&dir, false, "small");
    let out = dir.join("small.json");
    let (_, small) = profile(&exe, &out, &["--ring-entries", "2048"], "exit");
    let (_, inline) = profile(&exe, &out, &["--count-inline"], "exit");
    assert!(
        counts(&small) == counts(&inline),
        "counts differ with a small ring"
    );
    let entries = small["ring"]["entries"].as_u64().unwrap();
    assert!(
        entries > 10 * 2048,
        "the ring wrapped many times ({entries} entries)"
    );
}

#[test]
fn profile_is_written_however_the_guest_ends() {
    let dir = workdir();
    let exe = build(&dir, false, "endings");
    let cases: [(&str, Option<i32>, Option<i32>); 5] = [
        ("exit", Some(3), None),
        ("exit_group", Some(7), None),
        ("segv", None, Some(libc::SIGSEGV)),
        ("abort", None, Some(libc::SIGABRT)),
        ("trap", None, Some(libc::SIGTRAP)),
    ];
    for (how, code, sig) in cases {
        let native = Command::new(&exe).arg(how).output().unwrap();
        assert_eq!(
            (native.status.code(), native.status.signal()),
            (code, sig),
            "native {how}"
        );
        let out = dir.join(format!("{how}.json"));
        let (o, p) = profile(&exe, &out, &[], how);
        assert_eq!(
            (o.status.code(), o.status.signal()),
            (code, sig),
            "hotlift {how}"
        );
        assert_eq!(o.stdout, native.stdout, "{how}: output");
        let ending = &p["ending"];
        match sig {
            Some(s) => assert_eq!(ending["signal"].as_i64(), Some(s as i64), "{how}: {ending}"),
            None => assert_eq!(
                ending["code"].as_i64(),
                code.map(|c| c as i64),
                "{how}: {ending}"
            ),
        }
        assert!(
            p["totals"]["block_executions"].as_u64().unwrap() > 1000,
            "{how}: profile is complete"
        );
        let names: Vec<&str> = p["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"write") && names.contains(&"getpid"),
            "{how}: {names:?}"
        );
    }
}

#[test]
fn edges_and_call_tree_account_for_every_execution() {
    let dir = workdir();
    for pie in [false, true] {
        let exe = build(&dir, pie, "edges");
        let out = dir.join(format!("edges-{pie}.json"));
        let (_, p) = profile(&exe, &out, &[], "exit");
        let total = p["totals"]["guest_instructions"].as_u64().unwrap();
        let tree = p["call_tree"].as_array().unwrap();
        let charged = sum_of(&p, "call_tree", "self_instructions");
        assert_eq!(charged, total, "the call tree holds every instruction");
        let fib = tree
            .iter()
            .filter(|n| n["symbol"] == "fib")
            .map(|n| n["calls"].as_u64().unwrap())
            .sum::<u64>();
        // fib(15) makes 1973 calls.
        assert_eq!(fib, 1973, "calls of fib over all its contexts");
        // Every block execution but the very last leads somewhere (I1).
        let mut out_edges: std::collections::HashMap<u64, u64> = Default::default();
        for e in p["edges"].as_array().unwrap() {
            *out_edges.entry(e["from"].as_u64().unwrap()).or_default() +=
                e["count"].as_u64().unwrap();
        }
        let mut short = 0;
        let modules = p["modules"].as_array().unwrap();
        for b in p["blocks"].as_array().unwrap() {
            let (addr, count) = (b["addr"].as_u64().unwrap(), b["count"].as_u64().unwrap());
            let out = out_edges.get(&addr).copied().unwrap_or(0);
            assert!(
                out == count || out + 1 == count,
                "block {addr:#x}: {count} runs, {out} out"
            );
            short += count - out;
            let m = modules
                .iter()
                .find(|m| m["name"] == b["module"])
                .expect("module listed");
            assert_eq!(
                addr - m["base"].as_u64().unwrap(),
                b["offset"].as_u64().unwrap()
            );
            if b["exit"] == "branch" {
                let (t, f) = (
                    b["taken"].as_u64().unwrap(),
                    b["fallthrough"].as_u64().unwrap(),
                );
                assert_eq!(t + f, out, "block {addr:#x}: taken + fallthrough");
            }
        }
        assert_eq!(short, 1, "only the exit block has no successor");
        assert!(!p["translations"].as_array().unwrap().is_empty());
        assert!(p["pid"].as_u64().is_some());
    }
}

/// Start `cmd`, wait until it prints "ready", send `signals` in turn
/// (100 ms apart), and return its wait status and output.
fn kill_when_ready(cmd: &mut Command, signals: &[i32]) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    // SAFETY: signal(2) is async-signal-safe. The signals start at their
    // default action whatever this test inherited: a test run started in
    // the background by a non-interactive shell ignores SIGINT, and so did
    // the native "read" case, which then ended at EOF instead.
    unsafe {
        cmd.pre_exec(|| {
            for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b"ready\n") {
        assert_eq!(out.read(&mut byte).unwrap(), 1, "child ended before ready");
        seen.push(byte[0]);
    }
    for &s in signals {
        std::thread::sleep(std::time::Duration::from_millis(100));
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as i32, s) };
    }
    let st = child.wait().unwrap();
    out.read_to_end(&mut seen).unwrap();
    drop(child.stdin.take());
    (st, String::from_utf8_lossy(&seen).into_owned())
}

#[test]
fn profile_is_written_when_hotlift_is_killed() {
    let dir = workdir();
    let exe = build_src(&dir, false, "killed", "killed.c");
    let (term, int) = (libc::SIGTERM, libc::SIGINT);
    let cases: [(&str, &[i32], i32); 6] = [
        ("spin", &[term], term),
        ("read", &[int], int),
        ("sleep", &[term], term),
        ("pause", &[libc::SIGHUP], libc::SIGHUP),
        ("ignore", &[term, int], int),
        ("blocked", &[term], term),
    ];
    for (how, signals, dies_of) in cases {
        let (native, native_out) = kill_when_ready(Command::new(&exe).arg(how), signals);
        assert_eq!(native.signal(), Some(dies_of), "native {how}");
        let out = dir.join(format!("killed-{how}.json"));
        let _ = std::fs::remove_file(&out);
        let (st, text) = kill_when_ready(
            Command::new(env!("CARGO_BIN_EXE_hotlift"))
                .args(["run", "--profile"])
                .arg(&out)
                .arg("--")
                .arg(&exe)
                .arg(how),
            signals,
        );
        assert_eq!(st.signal(), Some(dies_of), "hotlift {how}: {text}");
        assert_eq!(text, native_out, "{how}: output");
        let p: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{how}: no profile: {e}")),
        )
        .unwrap();
        assert_eq!(
            p["ending"]["signal"].as_i64(),
            Some(dies_of as i64),
            "{how}"
        );
        assert!(
            p["totals"]["block_executions"].as_u64().unwrap() > 1000,
            "{how}"
        );
        let charged = sum_of(&p, "call_tree", "self_instructions");
        assert_eq!(
            charged,
            p["totals"]["guest_instructions"].as_u64().unwrap(),
            "{how}"
        );
    }
}

/// What must not depend on how code was translated: every block's count
/// and branch sides, every edge, the call tree by stack, the totals.
fn exact_view(p: &serde_json::Value) -> Vec<String> {
    let mut v = vec![format!("totals {}", p["totals"]["guest_instructions"])];
    for b in p["blocks"].as_array().unwrap() {
        v.push(format!(
            "block {} {} {} {}",
            b["offset"], b["count"], b["taken"], b["fallthrough"]
        ));
    }
    let base = p["modules"][0]["base"].as_u64().unwrap();
    for e in p["edges"].as_array().unwrap() {
        let off = |k: &str| e[k].as_u64().unwrap().wrapping_sub(base);
        v.push(format!("edge {} {} {}", off("from"), off("to"), e["count"]));
    }
    let tree = p["call_tree"].as_array().unwrap();
    let path = |mut i: usize| {
        let mut s = String::new();
        while let Some(parent) = tree[i]["parent"].as_u64() {
            s = format!("{}/{s}", tree[i]["offset"]);
            i = parent as usize;
        }
        s
    };
    for (i, n) in tree.iter().enumerate() {
        v.push(format!(
            "ctx {} {} {}",
            path(i),
            n["calls"],
            n["self_instructions"]
        ));
    }
    v.sort();
    v
}

#[test]
fn profiles_are_identical_with_superblocks_on_and_off() {
    let dir = workdir();
    for pie in [false, true] {
        let exe = build(&dir, pie, "sb");
        let out = dir.join(format!("sb-{pie}.json"));
        let run = |extra: &[&str]| {
            let _ = std::fs::remove_file(&out);
            let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
                .arg("run")
                .args(extra)
                .arg("--profile")
                .arg(&out)
                .arg("--")
                .arg(&exe)
                .args(["exit", "3000000"])
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(3), "{extra:?}: {o:?}");
            let p: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            (o.stdout, p)
        };
        let (out_off, off) = run(&["--no-superblocks"]);
        assert!(off["superblocks"].as_array().unwrap().is_empty());
        let reference = exact_view(&off);
        for extra in [
            &[][..],
            guest::SB_EVERYWHERE,
            &[
                "--sb-threshold",
                "50",
                "--sb-max-blocks",
                "3",
                "--sb-min-yield",
                "0",
                "--sb-warmup",
                "0",
                "--no-chain",
            ][..],
        ] {
            let (o, on) = run(extra);
            assert_eq!(o, out_off, "{extra:?}: output");
            let entries = sum_of(&on, "superblocks", "entries");
            assert!(
                entries > 10_000,
                "{extra:?}: superblocks ran ({entries} entries)"
            );
            assert_eq!(on["superblock_stats"]["record_errors"], 0, "{extra:?}");
            let view = exact_view(&on);
            let first = view.iter().zip(&reference).find(|(a, b)| a != b);
            assert!(
                view == reference,
                "pie={pie} {extra:?}: profiles differ, first {first:?} ({} vs {} lines)",
                view.len(),
                reference.len()
            );
        }
    }
}

/// Run `exe arg` without superblocks, then with them, `--count-check` and
/// `extra`: the same output, inline counts that agree, no record errors
/// and the same exact profile. The profile with superblocks.
fn exact_with_superblocks(exe: &Path, out: &Path, arg: &str, extra: &[&str]) -> serde_json::Value {
    let run = |extra: &[&str]| {
        let (o, p) = profile(exe, out, extra, arg);
        assert!(o.status.success(), "{extra:?}: {o:?}");
        (o.stdout, p)
    };
    let (out_off, off) = run(&["--no-superblocks"]);
    let with: Vec<&str> = ["--count-check", "--sb-warmup", "0"]
        .iter()
        .chain(extra)
        .copied()
        .collect();
    let (out_on, on) = run(&with);
    assert_eq!(out_on, out_off, "output");
    assert_eq!(
        on["count_check"]["block_mismatch_total"], 0,
        "{}",
        on["count_check"]
    );
    assert_eq!(on["superblock_stats"]["record_errors"], 0);
    let (view, reference) = (exact_view(&on), exact_view(&off));
    let first = view.iter().zip(&reference).find(|(a, b)| a != b);
    assert!(view == reference, "profiles differ, first {first:?}");
    on
}

/// A loop calling through a function pointer that rotates among three
/// functions (tests/profile/vcall.c) runs in one superblock whose
/// indirect call tests every target (ir/superblock.rs I2): each
/// alternate path runs, and the profile is the same as without
/// superblocks and as inline counting (`--count-check`).
#[test]
fn indirect_calls_with_several_targets_run_inside_one_superblock_exactly() {
    let dir = workdir();
    let exe = build_src(&dir, false, "vcall", "vcall.c");
    let out = dir.join("alternates.json");
    // The loop's head, not the callees (reached by indirect calls only),
    // becomes a superblock's.
    let on = exact_with_superblocks(
        &exe,
        &out,
        "1000000",
        &["--sb-edge-threshold", "1000000000"],
    );
    // Every alternate of some superblock's indirect call ran.
    let ran_alternates = on["superblocks"].as_array().unwrap().iter().any(|s| {
        let runs = s["member_runs"].as_array().unwrap();
        let ran = |m: usize| runs.get(m).and_then(|r| r.as_u64()).unwrap_or(0) > 0;
        s["ir"].as_str().unwrap().lines().any(|l| {
            l.split_once("other targets -> ").is_some_and(|(_, alts)| {
                let alts: Vec<usize> = alts
                    .split(", ")
                    .filter_map(|a| a.strip_prefix("member ")?.parse().ok())
                    .collect();
                alts.len() == 2 && alts.iter().all(|&m| ran(m))
            })
        })
    });
    assert!(
        ran_alternates,
        "no superblock ran both other targets of an indirect call"
    );
}

/// A loop that calls a function on every iteration (tests/profile/calls.c,
/// the shape of `wc` around getc) runs in a superblock whose passes call
/// and return and end where they started: they are counted, not pushed
/// (contract I2, `SbAccount::loop_keeps_context`), so the ring carries far
/// fewer words than iterations, and the profile (calling contexts
/// included) is the same as without superblocks and as inline counting.
#[test]
fn loops_that_call_and_return_are_counted_exactly() {
    let dir = workdir();
    let exe = build_src(&dir, false, "calls", "calls.c");
    let out = dir.join("calls.json");
    let n = 4_000_000u64;
    // A small ring: the guest waits for a monitor that lags (a loaded
    // machine's full test run), so the superblock is built within 64 k
    // words of its trigger, not after the loop (a monitor 3.7 M words
    // behind once built it when the run was nearly over).
    let on = exact_with_superblocks(&exe, &out, &n.to_string(), &["--ring-entries", "65536"]);
    // The reading loop's superblock (headed in `next`, the getc-like
    // callee) counts its passes: it loops back to its head nearly every
    // time it is entered, and those passes push no word of their own.
    let sbs = on["superblocks"].as_array().unwrap();
    let sb = sbs
        .iter()
        .find(|s| s["head_symbol"] == "next")
        .unwrap_or_else(|| panic!("no superblock headed in next: {sbs:?}"));
    let (entries, loops) = (
        sb["entries"].as_u64().unwrap(),
        sb["loops"].as_u64().unwrap(),
    );
    assert!(
        loops > 10_000 && loops > 100 * entries,
        "{entries} entries, {loops} loops"
    );
    // Pushed (`--sb-no-loop-counters`), 3.3 M words; counted, what is left
    // is mostly the run before the superblock was built, which depends on
    // when the monitor got to it (with 2 M iterations: 315 k words alone,
    // 654 k in a loaded machine's full test run).
    let words = on["ring"]["entries"].as_u64().unwrap();
    assert!(words < n / 2, "{words} ring words for {n} iterations");
}

/// The profile's `dispatcher` counts: every guest syscall went through
/// the dispatcher once; with chaining each direct exit that came back
/// was linked, so it came back once, and one to a block translated
/// already never came; without, none was and they keep coming back.
#[test]
fn dispatcher_counts_account_for_syscalls_and_links() {
    let dir = workdir();
    let exe = build(&dir, false, "dispatcher");
    let out = dir.join("dispatcher.json");
    let d = |p: &serde_json::Value, k: &str| p["dispatcher"][k].as_u64().unwrap();
    let (_, chained) = profile(&exe, &out, &[], "exit");
    let (_, unchained) = profile(&exe, &out, &["--no-chain"], "exit");
    for p in [&chained, &unchained] {
        let syscalls = sum_of(p, "syscalls", "count");
        assert_eq!(d(p, "syscalls"), syscalls, "{}", p["dispatcher"]);
        let reasons = d(p, "direct_exits") + d(p, "indirect_misses") + d(p, "syscalls");
        assert!(d(p, "entries") >= reasons, "{}", p["dispatcher"]);
    }
    let translated = chained["totals"]["translated_blocks"].as_u64().unwrap();
    assert_eq!(d(&chained, "links"), d(&chained, "direct_exits"));
    assert!(
        d(&chained, "direct_exits") <= 2 * translated,
        "{}",
        chained["dispatcher"]
    );
    // A direct exit to a block translated already is linked with its
    // block (dispatch I2): never a round trip.
    assert!(d(&chained, "prelinks") > 0, "{}", chained["dispatcher"]);
    assert_eq!(d(&unchained, "links"), 0);
    assert_eq!(d(&unchained, "prelinks"), 0);
    assert!(
        d(&unchained, "direct_exits") > 4 * d(&chained, "direct_exits"),
        "{} vs {}",
        unchained["dispatcher"],
        chained["dispatcher"]
    );
}

/// `hotlift run OPTS --profile` of `exe ARG` with a monitor record asked
/// for: the profile, the record's path and its events.
fn recorded(
    dir: &Path,
    exe: &Path,
    opts: &[&str],
    arg: &str,
) -> (
    serde_json::Value,
    PathBuf,
    Vec<hotlift::monitor::trace::Event>,
) {
    let name = exe.file_name().unwrap().to_str().unwrap();
    let out = dir.join(format!("{name}.json"));
    let rec = dir.join(format!("{name}-record"));
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .env(hotlift::monitor::trace::ENV, &rec)
        .arg("run")
        .args(opts)
        .arg("--profile")
        .arg(&out)
        .arg("--")
        .arg(exe)
        .arg(arg)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let path = dir.join(format!("{name}-record.{}", p["pid"].as_u64().unwrap()));
    let events = hotlift::monitor::trace::read(&path).expect("a record");
    (p, path, events)
}

/// A monitor record (`HOTLIFT_MONITOR_TRACE`, src/monitor/trace.rs)
/// replays into tables whose totals are the monitor's, and holds every
/// ring word the profile counted: superblocks (a counted loop that calls)
/// are added between the batches as they were.
#[test]
fn a_monitor_record_replays_to_the_monitors_totals() {
    let dir = workdir();
    let exe = build_src(&dir, false, "record", "calls.c");
    let (p, path, events) = recorded(&dir, &exe, &["--sb-warmup", "0"], "300000");
    let r = hotlift::monitor::trace::replay(&events).expect("the monitor's totals");
    assert_eq!(r.words, p["ring"]["entries"].as_u64().unwrap());
    assert!(
        p["superblock_stats"]["built"].as_u64().unwrap() > 0,
        "{}",
        p["superblock_stats"]
    );
    let added = events
        .iter()
        .filter(|e| matches!(e, hotlift::monitor::trace::Event::Superblock(..)))
        .count();
    assert!(added > 0);
    assert_eq!(r.snapshot.returns, p["returns"].as_u64().unwrap());
    // A truncated record is refused, not replayed.
    let data = std::fs::read(&path).unwrap();
    std::fs::write(&path, &data[..data.len() - 5]).unwrap();
    assert!(hotlift::monitor::trace::read(&path).is_err());
}

/// trace.rs I3: a record goes on across id epochs, and its replay folds
/// where the monitor did (a guest rewriting its code, ids used again many
/// times over).
#[test]
fn a_monitor_record_replays_across_id_epochs() {
    let dir = workdir();
    let exe = build_src(&dir, false, "rewrite", "../hostile/rewrite.c");
    let (p, _, events) = recorded(&dir, &exe, &["--id-epoch", "512"], "5000");
    let epochs = p["code_cache_flushes_by_cause"]["id_epoch"]
        .as_u64()
        .unwrap_or(0);
    assert!(epochs >= 3, "{}", p["code_cache_flushes_by_cause"]);
    let ends = events
        .iter()
        .filter(|e| matches!(e, hotlift::monitor::trace::Event::Epoch(..)))
        .count();
    assert_eq!(ends as u64, epochs);
    let r = hotlift::monitor::trace::replay(&events).expect("the monitor's totals");
    assert_eq!(r.words, p["ring"]["entries"].as_u64().unwrap());
    assert_eq!(r.snapshot.returns, p["returns"].as_u64().unwrap());
}

#[test]
fn threads_are_profiled_each_and_together() {
    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest-tests/build/cdyn-threads");
    let st = Command::new("make")
        .args([
            "-C",
            concat!(env!("CARGO_MANIFEST_DIR"), "/guest-tests"),
            "-j2",
        ])
        .output()
        .unwrap();
    assert!(st.status.success(), "make: {st:?}");
    let dir = workdir();
    let out = dir.join("threads.json");
    for extra in [
        &["--count-check"][..],
        &[
            "--count-check",
            "--sb-threshold",
            "1",
            "--sb-min-yield",
            "0",
            "--sb-warmup",
            "0",
        ][..],
    ] {
        let (o, p) = profile(&exe, &out, extra, "");
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {o:?}");
        let threads = p["threads"].as_array().unwrap();
        // main, 8 workers and the spinner (the sleeper may not have begun).
        assert!(threads.len() >= 10, "{extra:?}: {} threads", threads.len());
        let sum = |k: &str| threads.iter().map(|t| t[k].as_u64().unwrap()).sum::<u64>();
        let total = |k: &str| p["totals"][k].as_u64().unwrap();
        assert_eq!(
            sum("guest_instructions"),
            total("guest_instructions"),
            "{extra:?}"
        );
        assert_eq!(
            sum("block_executions"),
            total("block_executions"),
            "{extra:?}"
        );
        let charged = sum_of(&p, "call_tree", "self_instructions");
        assert_eq!(charged, total("guest_instructions"), "{extra:?}");
        let c = &p["count_check"];
        assert_eq!(c["block_mismatch_total"], 0, "{extra:?}: {c}");
        assert_eq!(c["thread_mismatches"], 0, "{extra:?}: {c}");
    }
}

/// Run guest test `test` with a profile: its code-cache flushes by cause,
/// checked to add up to the total.
fn flushes_by_cause(dir: &Path, test: &str) -> serde_json::Map<String, serde_json::Value> {
    let exe = guest::build_one(test);
    let out = dir.join(format!("{test}.json"));
    let _ = std::fs::remove_file(&out);
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("run")
        .arg("--profile")
        .arg(&out)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{test}: {o:?}");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let by = p["code_cache_flushes_by_cause"]
        .as_object()
        .expect("causes")
        .clone();
    let sum: u64 = by.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(
        sum,
        p["code_cache_flushes"].as_u64().unwrap(),
        "{test}: {by:?}"
    );
    by
}

/// Code that changes is counted by cause: stores into translated code
/// (`asm-smc-rwx` rewrites its code 1000 times) and code re-protected
/// under its translation (`asm-jit-mprotect` makes new code 100 times).
#[test]
fn invalidations_are_counted_by_cause() {
    let dir = workdir();
    for (test, cause, at_least) in [
        ("asm-smc-rwx", "code_written", 1000),
        ("asm-jit-mprotect", "code_changed", 100),
    ] {
        let by = flushes_by_cause(&dir, test);
        assert!(
            by[cause].as_u64().unwrap() >= at_least,
            "{test}: {cause} in {by:?}"
        );
    }
}

#[test]
fn data_growing_below_code_flushes_nothing() {
    // mremap(MAYMOVE) of a mapping just below translated code moves it
    // (glibc's malloc growing an mmap'd chunk below a library's text):
    // only the old range changes, not [old, old + new_len), which covered
    // the code above and flushed the whole cache (sqlite3: once, then two
    // seconds without superblocks).
    let dir = workdir();
    for test in ["c-mremap-near-code", "cdyn-mremap-near-code"] {
        let by = flushes_by_cause(&dir, test);
        assert!(by.values().all(|v| v.as_u64() == Some(0)), "{test}: {by:?}");
    }
}
