//! `hotlift diff` on guest tests and real programs (Debian's
//! busybox-static): two runs of a deterministic program do not differ
//! (also for a static-PIE loaded at another base each run), a bigger input
//! shows up as the largest changes and fails past the threshold, profiles
//! of different binaries and bad files are clear errors with status 2.

mod guest;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const HOTLIFT: &str = env!("CARGO_BIN_EXE_hotlift");
const BUSYBOX: &str = "/bin/busybox";

fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-diff-test-{}-{name}", std::process::id()));
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

fn profile(dir: &Path, out: &Path, argv: &[&str]) {
    let o = Command::new(HOTLIFT)
        .args(["run", "--profile"])
        .arg(out)
        .arg("--")
        .args(argv)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.exists(), "no profile for {argv:?}: {o:?}");
}

fn diff(args: &[&Path], extra: &[&str]) -> Output {
    Command::new(HOTLIFT)
        .arg("diff")
        .args(args)
        .args(extra)
        .output()
        .unwrap()
}

fn show(o: &Output) -> String {
    format!(
        "{:?}\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn repeated_runs_do_not_differ() {
    let dir = workdir("same");
    std::fs::write(dir.join("in.txt"), "b\na\nc\n").unwrap();
    let qsort = guest::build_one("cpie-qsort");
    let rec = guest::build_one("c-recursion");
    let bb = busybox();
    let cases: [Vec<&str>; 6] = [
        vec![qsort.to_str().unwrap()],
        vec![rec.to_str().unwrap()],
        vec![bb, "sort", "in.txt"],
        vec![bb, "md5sum", "in.txt"],
        // Debian's dynamically linked programs: libraries move with ASLR,
        // blocks match by module and offset.
        vec!["/usr/bin/sort", "in.txt"],
        vec!["/usr/bin/gzip", "-c", "in.txt"],
    ];
    for argv in cases {
        let (a, b) = (dir.join("a.json"), dir.join("b.json"));
        profile(&dir, &a, &argv);
        profile(&dir, &b, &argv);
        let o = diff(&[&a, &b], &[]);
        assert_eq!(o.status.code(), Some(0), "{argv:?}: {}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("no differences"),
            "{argv:?}: {}",
            show(&o)
        );
    }
}

#[test]
fn a_bigger_input_is_reported_and_fails_past_the_threshold() {
    let dir = workdir("bigger");
    let bb = busybox();
    std::fs::write(dir.join("small.txt"), "b\na\n").unwrap();
    let big: String = (0..300)
        .map(|i| format!("line {}\n", (i * 7919) % 300))
        .collect();
    std::fs::write(dir.join("big.txt"), big).unwrap();
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    profile(&dir, &a, &[bb, "sort", "small.txt"]);
    profile(&dir, &b, &[bb, "sort", "big.txt"]);
    let o = diff(&[&a, &b], &["--threshold", "5", "--top", "3"]);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for section in [
        "guest instructions",
        "functions (instructions)",
        "blocks (executions)",
        "edges (count)",
        "syscalls (count)",
        "past the threshold",
    ] {
        assert!(out.contains(section), "{section}: {out}");
    }
    // A threshold above the change passes.
    let o = diff(&[&a, &b], &["--threshold", "100000"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
}

#[test]
fn different_binaries_and_bad_files_are_errors() {
    let dir = workdir("bad");
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    profile(
        &dir,
        &a,
        &[guest::build_one("c-recursion").to_str().unwrap()],
    );
    profile(&dir, &b, &[busybox(), "true"]);
    let o = diff(&[&a, &b], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("different binaries") && err.lines().count() == 1,
        "{err}"
    );
    let text = std::fs::read_to_string(&a).unwrap();
    let truncated = dir.join("t.json");
    std::fs::write(&truncated, &text[..text.len() - 10]).unwrap();
    let wrong = dir.join("w.json");
    std::fs::write(
        &wrong,
        text.replacen("\"schema_version\":3", "\"schema_version\":4", 1),
    )
    .unwrap();
    let missing = dir.join("missing.json");
    for (bad, want) in [
        (&truncated, "truncated"),
        (&wrong, "schema_version 4"),
        (&missing, "cannot read"),
    ] {
        let o = diff(&[&a, bad], &[]);
        assert_eq!(o.status.code(), Some(2), "{}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(want) && err.lines().count() == 1,
            "{want}: {err}"
        );
    }
    let o = diff(&[&a, &a], &["--threshold", "-1"]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    let o = diff(&[&a], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
}
