//! Id epochs (dispatch/epoch.rs) with `--store`: the store's pre-builder
//! follows the block table's epoch (store/feed.rs I5), and the superblock
//! builder uses an id only while it still names the block at its address
//! (superblock/build.rs `id_at`); `hotlift paths` names its reference's
//! blocks by what they were (paths/collect.rs I3). The other parts' epoch
//! tests sit with their parts (tests/hostile.rs, tests/pisat.rs,
//! tests/profile.rs).

mod guest;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// `hotlift run OPTS --profile OUT -- exe ARGS`: its stdout and profile.
fn run(exe: &Path, args: &[&str], opts: &[&str], out: &Path) -> (Vec<u8>, serde_json::Value) {
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("run")
        .args(opts)
        .arg("--profile")
        .arg(out)
        .arg("--")
        .arg(exe)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{opts:?}: {o:?}");
    let p = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    (o.stdout, p)
}

/// Executed blocks by (module, offset), the anonymous ones (the rewritten
/// function's page, mapped elsewhere in each run) summed.
fn counts(p: &serde_json::Value) -> (BTreeMap<(String, u64), u64>, u64) {
    let (mut m, mut anon) = (BTreeMap::new(), 0);
    for b in p["blocks"].as_array().unwrap() {
        let c = b["count"].as_u64().unwrap();
        let module = b["module"].as_str().unwrap_or("").to_string();
        if module == "[anon]" {
            anon += c;
        } else if c > 0 {
            *m.entry((module, b["offset"].as_u64().unwrap()))
                .or_insert(0) += c;
        }
    }
    (m, anon)
}

/// A guest rewriting a function between the passes of a hot loop gives
/// block ids again many times; a run reading the store pre-builds its
/// traces again after each epoch (and each flush), gives the native
/// output, and counts every block as the run that stored them. Before, a
/// builder round between the monitor's fold and the table's new epoch
/// kept old ids (the pre-builder indexed past the new epoch's blocks: a
/// panic).
#[test]
fn stored_traces_are_built_again_across_id_epochs() {
    let (dir, exe) = guest::rewrite_guest("epochs");
    let db = dir.join("store.db");
    let url = db.to_str().unwrap();
    let args = ["3000", "2000"];
    let native = Command::new(&exe).args(args).output().unwrap();
    let cold = run(
        &exe,
        &args,
        &["--store", url, "--id-epoch", "512"],
        &dir.join("c.json"),
    );
    let read = ["--store", url, "--store-mode", "read", "--id-epoch", "512"];
    let warm = run(&exe, &args, &read, &dir.join("w.json"));
    for (out, p) in [&cold, &warm] {
        assert_eq!(*out, native.stdout, "native output");
        let epochs = &p["code_cache_flushes_by_cause"]["id_epoch"];
        assert!(epochs.as_u64().unwrap() >= 3, "{epochs}");
    }
    let (c, w) = (counts(&cold.1), counts(&warm.1));
    assert!(!c.0.is_empty());
    assert_eq!(c, w, "cold and warm counts");
    let st = &warm.1["store"];
    assert_eq!(st["read"], "loaded", "{st}");
    assert_eq!(st["traces_stale"], 0, "{st}");
    let traces = st["traces_read"].as_u64().unwrap();
    assert!(traces > 0, "{st}");
    assert!(
        st["superblocks_built"].as_u64().unwrap() > traces,
        "built again after epochs and flushes: {st}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `hotlift paths` across id epochs: its function (static code, called
/// between the rewrites) is profiled in every epoch, and its paths, their
/// counts and the reference's (by block, across epochs) are those of a
/// run without epochs. Before, a site read after an epoch ended named its
/// block by an old id (a panic), and path runs kept one epoch.
#[test]
fn paths_are_profiled_across_id_epochs() {
    let (dir, exe) = guest::rewrite_guest("paths-epochs");
    let args = ["3000", "20"];
    let native = Command::new(&exe).args(args).output().unwrap();
    let paths = |epoch: &str| -> (serde_json::Value, u64) {
        let (out, prof) = (dir.join("paths.json"), dir.join("p.json"));
        let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .args(["paths", "--function", "step", "--reference"])
            .args(["--format", "json", "--id-epoch", epoch])
            .arg("-o")
            .arg(&out)
            .arg("--profile")
            .arg(&prof)
            .arg("--")
            .arg(&exe)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "--id-epoch {epoch}: {o:?}");
        assert_eq!(o.stdout, native.stdout, "native output");
        let read = |f| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap()
        };
        let p = read(&prof);
        let epochs = p["code_cache_flushes_by_cause"]["id_epoch"]
            .as_u64()
            .unwrap();
        (read(&out), epochs)
    };
    let (r, epochs) = paths("512");
    assert!(epochs >= 10, "{epochs} id epochs");
    let x = &r["reference"];
    assert_eq!(x["agrees"], true, "{x}");
    assert_eq!(x["misattributed"], 0, "{x}");
    assert_eq!(x["invocations"], 60000, "{x}");
    assert_eq!(r["totals"]["invocations"], 60000, "{r}");
    let (plain, none) = paths("0");
    assert_eq!(none, 0);
    assert_eq!(r["paths"], plain["paths"], "the paths without epochs");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A superblock built again after flushes and epochs keeps one record
/// (superblock/record.rs I1): the profile's list is bounded by the
/// distinct superblocks, not the builds, and its builds add up to what
/// the builder built. Before, every build had a record (a guest rewriting
/// code between hot loops grew its profile and hotlift's memory by one
/// record, IR and host code each time).
#[test]
fn superblocks_built_again_keep_one_record() {
    let (dir, exe) = guest::rewrite_guest("sb-records");
    let args = ["20000", "2000"];
    let native = Command::new(&exe).args(args).output().unwrap();
    let (out, p) = run(&exe, &args, &["--id-epoch", "512"], &dir.join("p.json"));
    assert_eq!(out, native.stdout, "native output");
    let sbs = p["superblocks"].as_array().unwrap();
    let builds: u64 = sbs.iter().map(|s| s["builds"].as_u64().unwrap()).sum();
    assert_eq!(
        builds, p["superblock_stats"]["built"],
        "every build counted"
    );
    assert!(
        sbs.iter().any(|s| s["builds"].as_u64() > Some(1)),
        "rebuilt"
    );
    let mut seen = std::collections::BTreeSet::new();
    for s in sbs {
        let shape = (
            s["head"].to_string(),
            s["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (m["addr"].to_string(), m["code"].to_string()))
                .collect::<Vec<_>>(),
            s["parents"].to_string(),
            s["exits"].to_string(),
        );
        assert!(
            seen.insert(shape),
            "one record per superblock: {}",
            s["head"]
        );
        let (n, runs) = (&s["entries"], &s["member_runs"][0]);
        assert!(
            runs.as_u64() >= n.as_u64(),
            "the head ran on every entry: {s}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
