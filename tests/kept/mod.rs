//! What the tests of the cache directory share (tests/cache.rs,
//! tests/plan.rs): a guest built with gcc, runs with a profile, and what a
//! profile counts independent of where things were loaded.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn workdir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-cache-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A dynamically linked guest with functions of its own (libc's names
/// come from libc and, when installed, its debug file).
pub fn build(dir: &Path, name: &str, src: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let exe = dir.join(name);
    crate::guest::gcc(&c, &exe, &["-fno-inline"]);
    exe
}

pub const PROGRAM: &str = "#include <stdio.h>\n#include <stdlib.h>\n\
    __attribute__((noinline)) long work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i % 7; return s; }\n\
    int main(int argc, char **argv) { printf(\"%ld\\n\", work(argc > 1 ? atol(argv[1]) : 1000)); return 0; }\n";

/// `hotlift run ARGS --profile OUT -- EXE` with `env` set.
pub fn run(
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

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What a profile counts, independent of where things were loaded: each
/// block's (module, offset, instructions, count, exit), each calling
/// context's (module, offset, calls, instructions) and the totals.
pub fn counts(p: &serde_json::Value) -> Vec<String> {
    let list = |k: &str, f: &dyn Fn(&serde_json::Value) -> String| -> Vec<String> {
        let mut v: Vec<String> = p[k].as_array().unwrap().iter().map(f).collect();
        v.sort();
        v
    };
    let mut out = list("blocks", &|b| {
        format!(
            "b {} {} {} {} {}",
            b["module"], b["offset"], b["instructions"], b["count"], b["exit"]
        )
    });
    out.extend(list("call_tree", &|c| {
        format!(
            "c {} {} {} {}",
            c["module"], c["offset"], c["calls"], c["self_instructions"]
        )
    }));
    let t = &p["totals"];
    out.push(format!(
        "t {} {}",
        t["guest_instructions"], t["block_executions"]
    ));
    out
}

/// `a` counts what `b` counts, and translated each block once as `b` did:
/// the same number of translations, or where `a` placed a plan (kept/mod.rs
/// K6, blocks an earlier run used, which this one may not all run), at
/// least those it ran and at most those and the plan's.
pub fn same_counts(a: &serde_json::Value, b: &serde_json::Value) {
    assert_eq!(counts(a), counts(b));
    let made = |p: &serde_json::Value| p["totals"]["translated_blocks"].as_u64().unwrap();
    let (made_a, made_b, plan) = (made(a), made(b), planned(a));
    assert!(
        made_b <= made_a && made_a <= made_b + plan && (plan > 0 || made_a == made_b),
        "translated {made_a} (planned {plan}) against {made_b}"
    );
}

pub fn kept_blocks(p: &serde_json::Value) -> u64 {
    p["totals"]["kept_blocks"].as_u64().unwrap()
}

pub fn translation_entries(dir: &Path) -> Vec<PathBuf> {
    kind_entries(dir, "translations")
}

pub fn kind_entries(dir: &Path, kind: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join(kind))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

/// A program that calls the first `VARIANT` of 80 small functions of its
/// own: each variant runs a few blocks the others do not.
pub fn variants_program() -> String {
    variants_of(80)
}

/// [`variants_program`] with `n` functions.
pub fn variants_of(n: usize) -> String {
    let mut s = String::from("#include <stdio.h>\n#include <stdlib.h>\n");
    for n in 1..=n {
        s += &format!(
            "__attribute__((noinline)) long f{n}(long x) {{ return x > {n} ? x * {n} - (x >> 3) : x + {n}; }}\n"
        );
    }
    s += "long (*const fs[])(long) = {";
    s += &(1..=n)
        .map(|n| format!("f{n}"))
        .collect::<Vec<_>>()
        .join(", ");
    s += "};\nint main(void) {\n  const char *v = getenv(\"VARIANT\");\n  int k = v ? atoi(v) : 0;\n";
    s += &format!("  long s = 0;\n  for (int i = 0; i < k && i < {n}; i++) s += fs[i](i * 3);\n");
    s += "  printf(\"%ld\\n\", s);\n  return 0;\n}\n";
    s
}

/// Blocks translated but not placed from kept translations.
pub fn unkept(p: &serde_json::Value) -> u64 {
    p["totals"]["translated_blocks"].as_u64().unwrap() - kept_blocks(p)
}

/// Blocks placed with a plan (kept/mod.rs K6).
pub fn planned(p: &serde_json::Value) -> u64 {
    p["totals"]["planned_blocks"].as_u64().unwrap()
}
