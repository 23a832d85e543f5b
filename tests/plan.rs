//! A program's plan (dispatch/kept/ K6): the run that writes a program's
//! kept translations writes which of their blocks it used, the next run
//! places them together, a plan follows what the program ran last, and a
//! warm run's profile still counts what a cold run's does.

mod guest;
mod kept;

use kept::*;
use std::path::Path;

/// kept/mod.rs K6: the run that writes a program's entries writes its
/// plan too (which of their blocks it used, in order); the next run
/// places them together, through the dispatcher far fewer times, and
/// counts what a cold run counts. A damaged plan is a one-line warning
/// and a run that places block by block.
#[test]
fn a_programs_plan_places_its_blocks_together() {
    let dir = workdir("plan");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let (_, cold) = run(&exe, &dir.join("cold.json"), &arg, &[]);
    assert!(kind_entries(&cache, "placements").is_empty(), "marks only");
    let (_, second) = run(&exe, &dir.join("second.json"), &arg, &[]);
    assert_eq!(planned(&second), 0);
    let plans = kind_entries(&cache, "placements");
    assert_eq!(plans.len(), 1, "the program's plan: {plans:?}");
    let (o, warm) = run(&exe, &dir.join("warm.json"), &arg, &[]);
    assert_eq!(stderr(&o), "");
    assert!(
        planned(&warm) * 10 >= kept_blocks(&warm) * 9 && planned(&warm) > 0,
        "{} of {} kept blocks planned",
        planned(&warm),
        kept_blocks(&warm)
    );
    same_counts(&warm, &cold);
    let entries = |p: &serde_json::Value| p["dispatcher"]["entries"].as_u64().unwrap();
    assert!(
        entries(&warm) * 2 < entries(&second),
        "dispatcher entries: {} planned, {} block by block",
        entries(&warm),
        entries(&second)
    );
    let mut b = std::fs::read(&plans[0]).unwrap();
    b.truncate(b.len() / 2);
    std::fs::write(&plans[0], b).unwrap();
    let (o, damaged) = run(&exe, &dir.join("damaged.json"), &arg, &[]);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is damaged"), "{err}");
    assert_eq!(planned(&damaged), 0);
    assert_eq!(kept_blocks(&damaged), kept_blocks(&warm));
    same_counts(&damaged, &cold);
    let (o, again) = run(&exe, &dir.join("again.json"), &arg, &[]);
    assert_eq!(stderr(&o), "", "written again whole");
    assert_eq!(planned(&again), planned(&warm));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Id epochs (dispatch/epoch.rs) end in a run that placed a plan, whose
/// blocks the monitor makes ahead of their words (monitor/tables/ahead.rs
/// A2, fenced at each fold): a batch stops at the ids an epoch allows and
/// the counts stay a cold run's (a JIT-like guest rewriting code).
#[test]
fn planned_blocks_across_id_epochs_count_what_a_cold_run_counts() {
    let (dir, exe) = guest::rewrite_guest("plan-epochs");
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap(), "--id-epoch", "512"];
    let with = |args: &[&str], out: &str| {
        let _ = std::fs::remove_file(dir.join(out));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .arg("run")
            .args(args)
            .arg("--profile")
            .arg(dir.join(out))
            .arg("--")
            .arg(&exe)
            .arg("20000")
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        let p: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(out)).unwrap()).unwrap();
        (o, p)
    };
    let (_, cold) = with(&["--no-cache", "--id-epoch", "512"], "cold.json");
    with(&arg, "a.json");
    with(&arg, "b.json");
    let (o, warm) = with(&arg, "warm.json");
    assert_eq!(stderr(&o), "");
    let ended = warm["code_cache_flushes_by_cause"]["id_epoch"]
        .as_u64()
        .unwrap();
    assert!(ended >= 2, "{ended} id epochs");
    assert!(planned(&warm) > 0);
    // The rewritten page's blocks are named by their address, which
    // moves from run to run.
    let fixed = |p: &serde_json::Value| -> Vec<String> {
        counts(p)
            .into_iter()
            .filter(|l| !l.contains("[anon]"))
            .collect()
    };
    assert_eq!(fixed(&warm), fixed(&cold));
    let _ = std::fs::remove_dir_all(&dir);
}

/// K6: a run whose monitor took in every block that ran (its profile
/// written) leaves out of the plan the planned blocks it never ran, so an
/// interpreter's plan follows its latest use instead of growing with
/// every script.
#[test]
fn a_plan_follows_what_the_program_ran_last() {
    let dir = workdir("plan-follows");
    let exe = build(&dir, "variants", &variants_of(400));
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let v = |k: &'static str| [("VARIANT", Path::new(k))];
    run(&exe, &dir.join("a.json"), &arg, &v("400"));
    run(&exe, &dir.join("b.json"), &arg, &v("400"));
    let (_, all) = run(&exe, &dir.join("c.json"), &arg, &v("0"));
    let (_, cold) = run(&exe, &dir.join("d.json"), &["--no-cache"], &v("0"));
    let listed = |p: &serde_json::Value| p["blocks"].as_array().unwrap().len() as u64;
    assert!(
        planned(&all) >= listed(&cold) + 400,
        "the 400 functions' blocks planned: {} against {} run",
        planned(&all),
        listed(&cold)
    );
    same_counts(&all, &cold);
    let (_, used) = run(&exe, &dir.join("e.json"), &arg, &v("0"));
    assert!(
        planned(&used) + 400 <= planned(&all) && planned(&used) >= listed(&cold) - 64,
        "planned {} after a run of fewer, {} before ({} run)",
        planned(&used),
        planned(&all),
        listed(&cold)
    );
    same_counts(&used, &cold);
    let _ = std::fs::remove_dir_all(&dir);
}
