//! The cache directory (src/persist.rs): a warm run's profile names what a
//! cold run's names; a damaged entry, a changed file, concurrent runs and
//! a directory others may write to each give a cold read, at most a
//! one-line warning, never other names; `--no-cache`, `--cache-dir` and
//! `hotlift cache show|clear` do what they say.

mod guest;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workdir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-cache-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A dynamically linked guest with functions of its own (libc's names
/// come from libc and, when installed, its debug file).
fn build(dir: &Path, name: &str, src: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = dir.join(name);
    guest::gcc(&c, &exe, &["-fno-inline"]);
    exe
}

const PROGRAM: &str = "#include <stdio.h>\n#include <stdlib.h>\n\
    __attribute__((noinline)) long work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i % 7; return s; }\n\
    int main(int argc, char **argv) { printf(\"%ld\\n\", work(argc > 1 ? atol(argv[1]) : 1000)); return 0; }\n";

/// `hotlift run ARGS --profile OUT -- EXE` with `env` set.
fn run(
    exe: &Path,
    out: &Path,
    args: &[&str],
    env: &[(&str, &Path)],
) -> (Output, serde_json::Value) {
    let _ = std::fs::remove_file(out);
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("run")
        .args(args)
        .arg("--profile")
        .arg(out)
        .arg("--")
        .arg(exe)
        .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let text = std::fs::read_to_string(out).unwrap_or_else(|e| panic!("no profile: {e}; {o:?}"));
    (o, serde_json::from_str(&text).expect("profile is JSON"))
}

/// What a profile says of names: each module's name, path, build id and
/// program hash, and each block's (module, offset, symbol, count).
fn names(p: &serde_json::Value) -> (Vec<String>, Vec<String>) {
    let modules = p["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{} {} {}", m["name"], m["path"], m["build_id"]))
        .chain([format!("{} {}", p["binary"]["sha256"], p["binary"]["size"])])
        .collect();
    let blocks = p["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            format!(
                "{} {} {} {}",
                b["module"], b["offset"], b["symbol"], b["count"]
            )
        })
        .collect();
    (modules, blocks)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("facts"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_warm_run_names_what_a_cold_run_names() {
    let dir = workdir("warm");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let (o, cold) = run(&exe, &dir.join("cold.json"), &arg, &[]);
    assert_eq!(stderr(&o), "");
    // The program, ld.so and libc (not the vDSO, read from memory).
    assert!(entries(&cache).len() >= 3, "{:?}", entries(&cache));
    let (o, warm) = run(&exe, &dir.join("warm.json"), &arg, &[]);
    assert_eq!(stderr(&o), "");
    let (_, none) = run(&exe, &dir.join("none.json"), &["--no-cache"], &[]);
    assert_eq!(names(&warm), names(&cold));
    assert_eq!(names(&none), names(&cold));
    assert!(
        names(&warm).1.iter().any(|b| b.contains("\"work\"")),
        "the program's own function is named"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_entries_are_read_cold_with_a_warning_and_written_again() {
    let dir = workdir("damaged");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let (_, cold) = run(&exe, &dir.join("cold.json"), &arg, &[]);
    let kept = entries(&cache);
    // One entry with a byte changed, one cut short, one emptied.
    for (i, e) in kept.iter().enumerate() {
        let mut b = std::fs::read(e).unwrap();
        match i % 3 {
            0 => {
                let mid = b.len() / 2;
                b[mid] ^= 1;
            }
            1 => b.truncate(b.len() - 7),
            _ => b.clear(),
        }
        std::fs::write(e, b).unwrap();
    }
    let (o, damaged) = run(&exe, &dir.join("damaged.json"), &arg, &[]);
    let err = stderr(&o);
    let warnings: Vec<&str> = err.lines().collect();
    assert_eq!(
        warnings.len(),
        kept.len(),
        "one line per damaged entry: {warnings:?}"
    );
    assert!(
        warnings.iter().all(|w| w.contains("is damaged")),
        "{warnings:?}"
    );
    assert_eq!(names(&damaged), names(&cold));
    let (o, again) = run(&exe, &dir.join("again.json"), &arg, &[]);
    assert_eq!(stderr(&o), "", "written again whole");
    assert_eq!(names(&again), names(&cold));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_changed_program_is_read_again() {
    let dir = workdir("changed");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let (_, before) = run(&exe, &dir.join("before.json"), &arg, &[]);
    // The same path, another program: its function has another name.
    build(&dir, "prog", &PROGRAM.replace("work", "toil"));
    let (_, after) = run(&exe, &dir.join("after.json"), &arg, &[]);
    let has =
        |p: &serde_json::Value, f: &str| names(p).1.iter().any(|b| b.contains(&format!("\"{f}\"")));
    assert!(has(&before, "work") && !has(&before, "toil"));
    assert!(
        has(&after, "toil") && !has(&after, "work"),
        "{:?}",
        names(&after).1
    );
    assert_ne!(names(&after).0, names(&before).0, "another hash");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_runs_share_one_cache() {
    let dir = workdir("concurrent");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let runs: Vec<_> = (0..6)
        .map(|i| {
            let (exe, cache, out) = (exe.clone(), cache.clone(), dir.join(format!("p{i}.json")));
            std::thread::spawn(move || {
                run(&exe, &out, &["--cache-dir", cache.to_str().unwrap()], &[])
            })
        })
        .collect();
    let results: Vec<_> = runs.into_iter().map(|t| t.join().unwrap()).collect();
    for (o, p) in &results {
        assert_eq!(stderr(o), "");
        assert_eq!(names(p), names(&results[0].1));
    }
    // No temporary file left behind, no entry twice.
    let kept = entries(&cache);
    assert!(
        kept.iter()
            .all(|e| !e.file_name().unwrap().to_str().unwrap().starts_with('.')),
        "{kept:?}"
    );
    let (o, warm) = run(
        &exe,
        &dir.join("warm.json"),
        &["--cache-dir", cache.to_str().unwrap()],
        &[],
    );
    assert_eq!(stderr(&o), "");
    assert_eq!(names(&warm), names(&results[0].1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_default_directory_and_the_cache_subcommand() {
    let dir = workdir("default");
    let exe = build(&dir, "prog", PROGRAM);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = [("HOME", home.as_path()), ("XDG_CACHE_HOME", Path::new(""))];
    // --no-cache makes nothing.
    run(&exe, &dir.join("a.json"), &["--no-cache"], &env);
    assert!(!home.join(".cache").exists());
    run(&exe, &dir.join("b.json"), &[], &env);
    let cache = home.join(".cache/hotlift");
    assert!(entries(&cache).len() >= 3, "{cache:?}");
    let cli = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {o:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let show = cli(&["cache", "show"]);
    assert!(
        show.starts_with(&format!("{}\n", cache.display())),
        "{show}"
    );
    assert!(show.contains("facts") && show.contains("entries"), "{show}");
    let n = entries(&cache).len();
    assert_eq!(
        cli(&["cache", "clear"]),
        format!("{}: {n} entries removed\n", cache.display())
    );
    assert!(entries(&cache).is_empty());
    assert!(cli(&["cache", "show"]).contains("empty"));
    // XDG_CACHE_HOME wins over HOME.
    let xdg = dir.join("xdg");
    let env = [("HOME", home.as_path()), ("XDG_CACHE_HOME", xdg.as_path())];
    run(&exe, &dir.join("c.json"), &[], &env);
    assert!(entries(&xdg.join("hotlift")).len() >= 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_others_may_write_to_is_not_used() {
    let dir = workdir("shared");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (o, p) = run(
        &exe,
        &dir.join("p.json"),
        &["--cache-dir", cache.to_str().unwrap()],
        &[],
    );
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("others may write to it") && err.contains("running without it"),
        "{err}"
    );
    assert!(entries(&cache).is_empty());
    assert!(names(&p).1.iter().any(|b| b.contains("\"work\"")));
    let _ = std::fs::remove_dir_all(&dir);
}
