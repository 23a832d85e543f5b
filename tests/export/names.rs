//! Issue 20 goal 1: one naming function for every output that names code.
//! Real programs (a dynamically linked PIE with its debug information in a
//! `.gnu_debuglink` file, the same PIE stripped bare, a static glibc
//! program, a C++ program) run under `hotlift profile`; then the summary
//! it prints, `hotlift summary`, `report` (functions and stacks, JSON and
//! folded), `dump`, `diff` and every export that names functions
//! (callgrind, folded, svg, perfmap, lcov, cobertura) must name each
//! function as the callgrind export does: PLT stubs `name@plt` (a static
//! program's ifunc stubs too) and calls through them by the function
//! they went to, unnamed code `module+0xOFFSET`, C++
//! demangled, and never by an address ASLR moves.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// Sorts `N` numbers `R` times with qsort (through `qsort@plt`, whose
/// merge sort calls `memcpy`), and calls `strlen` and `strchr` (ifuncs:
/// a static program calls them through its `.plt`).
const SORTS_C: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}
__attribute__((noinline)) long work(char *s, long *v, int n, int rounds) {
  long t = 0;
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < n; i++) v[i] = (i * 7919L + r) % 1000;
    qsort(v, n, sizeof *v, cmp);
    t += v[n / 2] + (long)strlen(s) + (strchr(s, 'q') != 0);
  }
  return t;
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), rounds = atoi(argv[2]);
  long *v = malloc(n * sizeof *v);
  char *s = malloc(64);
  strcpy(s, "the quick brown fox");
  printf("%ld\n", work(s, v, n, rounds));
  free(v);
  free(s);
  return 0;
}
"#;

/// Frames that stand for no code.
const MARKERS: [&str; 6] = [
    "[root]",
    "[...]",
    "[before any call]",
    "[deeper]",
    "[rep string iterations]",
    "[unattributed]",
];

/// Run `hotlift ARGS`: its stdout; `ok` lists the exit codes accepted.
fn hotlift(args: &[&str], ok: &[i32]) -> String {
    let o = Command::new(HOTLIFT).args(args).output().unwrap();
    assert!(
        o.status.code().is_some_and(|c| ok.contains(&c)),
        "hotlift {args:?}: {}",
        show(&o)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The names in the table of functions a summary prints (after five
/// columns of numbers), and the functions of its top blocks (`0xADDR
/// module+0xOFF NAME[ at FILE:LINE]: …`).
fn summary_names(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut funcs, mut blocks) = (Vec::new(), Vec::new());
    let mut section = "";
    for l in text.lines() {
        if !l.starts_with("  ") {
            section = l;
            continue;
        }
        if section.starts_with("functions by") && !l.trim_end().ends_with("function") {
            funcs.push(l.split_whitespace().skip(5).collect::<Vec<_>>().join(" "));
        } else if section.starts_with("top blocks") && !l.starts_with("      ") {
            let rest = l.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
            let name = rest.split_once(": ").map_or(rest.as_str(), |(n, _)| n);
            blocks.push(name.split(" at ").next().unwrap().to_string());
        }
    }
    (funcs, blocks)
}

/// The names `dump`'s text gives code: `<NAME, module+0xOFF…>` and
/// `; NAME, module+0xOFF` (or the place alone, for unnamed code).
fn dump_names(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    for l in text.lines() {
        let inner = l
            .split_once(" <")
            .and_then(|(_, r)| r.split_once('>'))
            .map(|(n, _)| n)
            .or_else(|| l.split_once("  ; ").map(|(_, r)| r))
            .filter(|n| n.contains("+0x"));
        if let Some(n) = inner {
            let n = n.split(" at ").next().unwrap();
            v.push(n.rsplit_once(", ").map_or(n, |(name, _)| name).to_string());
        }
    }
    v
}

/// Function names (first) and block names (name or name+0xOFF) of
/// `diff`'s report.
fn diff_names(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut funcs, mut blocks) = (Vec::new(), Vec::new());
    let mut section = "";
    for l in text.lines() {
        if !l.starts_with("    ") {
            section = l.trim_start();
            continue;
        }
        let cols: Vec<&str> = l.split_whitespace().collect();
        if section.starts_with("functions") {
            funcs.push(cols[5..].join(" "));
        } else if section.starts_with("blocks") && cols.len() > 6 {
            blocks.push(cols[6..].join(" "));
        }
    }
    (funcs, blocks)
}

/// The names of every output that names code, by output, for profile
/// `p` (and `q`, another run of the same program, for `diff`) and the
/// summary `profile` printed, `at_exit`.
fn every_output(dir: &Path, p: &Path, q: &Path, at_exit: &str) -> BTreeMap<String, Vec<String>> {
    let (ps, qs) = (p.to_str().unwrap(), q.to_str().unwrap());
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (f, b) = summary_names(at_exit);
    out.insert("profile's summary".into(), f);
    out.insert("profile's top blocks (code)".into(), b);
    let (f, b) = summary_names(&hotlift(&["summary", "--top", "100000", ps], &[0]));
    out.insert("summary".into(), f);
    out.insert("summary's top blocks (code)".into(), b);
    let json = hotlift(&["report", ps, "--format", "json", "--top", "100000"], &[0]);
    let rep: serde_json::Value = serde_json::from_str(&json).unwrap();
    let names = |v: &serde_json::Value| v.as_str().unwrap().to_string();
    let funcs = rep["functions"].as_array().unwrap();
    out.insert(
        "report's functions".into(),
        funcs.iter().map(|f| names(&f["name"])).collect(),
    );
    let stacks = rep["stacks"].as_array().unwrap();
    out.insert(
        "report's stacks".into(),
        stacks
            .iter()
            .flat_map(|s| s["frames"].as_array().unwrap().iter().map(names))
            .collect(),
    );
    let folded = hotlift(&["report", ps, "--format", "folded"], &[0]);
    out.insert("report's folded stacks".into(), frames(&folded));
    out.insert(
        "dump (code)".into(),
        dump_names(&hotlift(&["dump", ps], &[0])),
    );
    let (f, b) = diff_names(&hotlift(&["diff", ps, qs, "--top", "100000"], &[0, 1]));
    out.insert("diff's functions".into(), f);
    out.insert("diff's blocks (code)".into(), b);
    let file = |format: &str| {
        let path = dir.join(format!("out.{format}"));
        export(p, format, &path);
        std::fs::read_to_string(path).unwrap()
    };
    out.insert(
        "callgrind".into(),
        file("callgrind")
            .lines()
            .filter(|l| ["fn=(", "cfn=(", "jfn=("].iter().any(|k| l.starts_with(k)))
            .filter_map(|l| l.split_once(") ").map(|(_, n)| n.to_string()))
            .collect(),
    );
    out.insert("folded".into(), frames(&file("folded")));
    out.insert(
        "svg".into(),
        file("svg")
            .split("<title>")
            .skip(1)
            .filter_map(|t| t.split_once(" (").map(|(n, _)| unescape(n)))
            .filter(|n| !n.starts_with("hotlift: ") && n != "all")
            .collect(),
    );
    out.insert(
        "perfmap (code)".into(),
        file("perfmap")
            .lines()
            .filter_map(|l| l.split_once(" hotlift:"))
            // `NAME [0xGUEST]`, and ` superblock ID` for a superblock.
            .map(|(_, n)| {
                let n = n.split("] superblock ").next().unwrap();
                n.rsplit_once(" [").map_or(n, |(name, _)| name).to_string()
            })
            .collect(),
    );
    // Coverage names the functions whose entries ran (FNDA > 0) and the
    // others; only those that ran are in the callgrind export. A program
    // without line tables has none when libc has none either (no
    // libc6-dbg).
    let lcov_path = dir.join("out.lcov");
    let o = Command::new(HOTLIFT)
        .args(["export", ps, "--format", "lcov", "-o"])
        .arg(&lcov_path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(2)
        && (err.contains("no source lines") || err.contains("no source file left"))
    {
        return out;
    }
    assert!(o.status.success(), "export lcov: {}", show(&o));
    let lcov = std::fs::read_to_string(&lcov_path).unwrap();
    out.insert(
        "lcov".into(),
        lcov.lines()
            .filter_map(|l| l.strip_prefix("FNDA:"))
            .filter_map(|l| l.split_once(','))
            .filter(|(n, _)| *n != "0")
            .map(|(_, name)| name.to_string())
            .collect(),
    );
    let all_lcov: BTreeSet<String> = lcov
        .lines()
        .filter_map(|l| l.strip_prefix("FN:"))
        .filter_map(|l| l.split_once(',').map(|(_, n)| n.to_string()))
        .collect();
    let cobertura: BTreeSet<String> = file("cobertura")
        .split("<method name=\"")
        .skip(1)
        .filter_map(|m| m.split_once('"').map(|(n, _)| unescape(n)))
        .collect();
    assert_eq!(
        cobertura, all_lcov,
        "cobertura's methods are lcov's functions"
    );
    out
}

/// The frames of folded stacks.
fn frames(folded: &str) -> Vec<String> {
    folded
        .lines()
        .filter_map(|l| l.rsplit_once(' ').map(|(s, _)| s))
        .flat_map(|s| s.split(';'))
        .map(str::to_string)
        .collect()
}

/// XML text as written.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// `name` without a trailing `+0xOFFSET` when that leaves a function of
/// `known` (code inside a function), else `name`.
fn function_of<'a>(name: &'a str, known: &BTreeSet<String>) -> &'a str {
    match name.rsplit_once("+0x") {
        Some((f, off))
            if !known.contains(name)
                && known.contains(f)
                && u64::from_str_radix(off, 16).is_ok() =>
        {
            f
        }
        _ => name,
    }
}

/// Profile `argv` twice (the second with `again`'s arguments), check every
/// output names functions as the callgrind export does (the one naming
/// function), and return the names by output with the callgrind set.
fn check(
    dir: &Path,
    exe: &Path,
    args: &[&str],
    again: &[&str],
) -> (BTreeMap<String, Vec<String>>, BTreeSet<String>) {
    let name = exe.file_name().unwrap().to_str().unwrap();
    let (p, q) = (
        dir.join(format!("{name}.json")),
        dir.join(format!("{name}-2.json")),
    );
    let run = |profile: &Path, args: &[&str]| {
        // Samples every 500 ring words: dozens of stacks in a short run.
        let o = Command::new(HOTLIFT)
            .args(["profile", "--sample-entries", "500", "-o"])
            .arg(profile)
            .arg("--")
            .arg(exe)
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", show(&o));
        String::from_utf8(o.stderr).unwrap()
    };
    let at_exit = run(&p, args);
    run(&q, again);
    let out = every_output(dir, &p, &q, &at_exit);
    let canon: BTreeSet<String> = out["callgrind"].iter().cloned().collect();
    assert!(canon.len() > 20, "{name}: callgrind names {canon:?}");
    // Where modules are: no name may hold an address in one that moves
    // with ASLR (everything but a static program's image).
    let prof: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let moving: Vec<(u64, u64)> = prof["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["base"].as_u64().unwrap(), m["end"].as_u64().unwrap()))
        .filter(|&(base, _)| base >= 0x1000_0000)
        .collect();
    for (output, names) in &out {
        assert!(
            !names.is_empty() || output.starts_with("diff") || output.starts_with("dump"),
            "{name}: {output} names nothing"
        );
        for n in names {
            if MARKERS.contains(&n.as_str()) {
                continue;
            }
            // Folded stacks keep frames free of spaces and semicolons.
            let known = if output.contains("folded") || output == "svg" {
                canon.iter().map(|c| c.replace([' ', ';'], "_")).collect()
            } else {
                canon.clone()
            };
            let f = if output.ends_with("(code)") {
                function_of(n, &known)
            } else {
                n
            };
            assert!(
                known.contains(f),
                "{name}: {output} names {n:?}, which callgrind does not"
            );
            for hex in n.split("0x").skip(1) {
                let digits: String = hex.chars().take_while(char::is_ascii_hexdigit).collect();
                let v = u64::from_str_radix(&digits, 16).unwrap_or(0);
                assert!(
                    !moving.iter().any(|&(lo, hi)| (lo..hi).contains(&v)),
                    "{name}: {output} names {n:?}, an address ASLR moves"
                );
            }
        }
    }
    (out, canon)
}

/// `want` is a name in each of `outputs`.
fn named_in(out: &BTreeMap<String, Vec<String>>, outputs: &[&str], want: &str, what: &str) {
    for o in outputs {
        assert!(
            out[*o].iter().any(|n| n == want),
            "{what}: {o} does not name {want}: {:?}",
            out[*o]
        );
    }
}

/// `want` is a name in none of `outputs`.
fn not_named_in(out: &BTreeMap<String, Vec<String>>, outputs: &[&str], want: &str, what: &str) {
    for o in outputs {
        assert!(
            !out[*o].iter().any(|n| n == want),
            "{what}: {o} names {want}: {:?}",
            out[*o]
        );
    }
}

/// The outputs that list every function that ran (with `--top` large;
/// the flame graph leaves out frames too narrow to draw).
const COMPLETE: [&str; 4] = ["summary", "callgrind", "folded", "diff's functions"];
/// Those of them that name code by its address (a PLT stub's own code is
/// the stub), and those that name calling contexts (images.rs I6).
const BY_ADDRESS: [&str; 2] = ["callgrind", "diff's functions"];
const BY_CONTEXT: [&str; 3] = ["summary", "folded", "profile's summary"];

#[test]
fn every_output_names_code_with_the_one_naming_function() {
    let dir = workdir("one-name");
    std::fs::write(dir.join("sorts.c"), SORTS_C).unwrap();
    let sh = |cmd: &str, args: &[&str]| {
        let o = Command::new(cmd)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap_or_else(|e| panic!("{cmd}: {e}"));
        assert!(o.status.success(), "{cmd} {args:?}: {}", show(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    // A PIE whose names and lines are in sorts-dbg.debug (a debuglink),
    // the same PIE stripped bare, and a static program.
    sh("gcc", &["-O1", "-g", "-o", "sorts-dbg", "sorts.c"]);
    sh(
        "objcopy",
        &["--only-keep-debug", "sorts-dbg", "sorts-dbg.debug"],
    );
    sh("cp", &["sorts-dbg", "sorts-bare"]);
    sh("strip", &["--strip-all", "sorts-dbg", "sorts-bare"]);
    sh(
        "objcopy",
        &["--add-gnu-debuglink=sorts-dbg.debug", "sorts-dbg"],
    );
    sh(
        "gcc",
        &["-O1", "-g", "-static", "-o", "sorts-static", "sorts.c"],
    );
    let (args, again) = (["2000", "60"], ["2000", "40"]);

    let (out, _) = check(&dir, &dir.join("sorts-dbg"), &args, &again);
    let mut all: Vec<&str> = COMPLETE.to_vec();
    all.extend(["svg", "report's stacks", "report's folded stacks", "lcov"]);
    named_in(&out, &all, "work", "sorts-dbg");
    named_in(&out, &["summary", "callgrind", "lcov"], "main", "sorts-dbg");
    // The stub's own code is `qsort@plt` where code is named by address;
    // a call through it enters libc's `qsort` wherever calling contexts
    // are named (images.rs I6), never the stub.
    named_in(&out, &BY_ADDRESS, "qsort@plt", "sorts-dbg");
    let mut through: Vec<&str> = BY_CONTEXT.to_vec();
    through.extend(["svg", "report's stacks"]);
    named_in(&out, &through, "qsort", "sorts-dbg");
    not_named_in(&out, &through, "qsort@plt", "sorts-dbg");
    // printf is called once, bound lazily: its stub went only into the
    // binder, and the context is named after the function the stub's
    // relocation names (libc's printf, under the name libc's symbols
    // give its address).
    not_named_in(&out, &BY_CONTEXT, "printf@plt", "sorts-dbg");

    // Stripped bare: its functions by place, the same place everywhere.
    let (out, _) = check(&dir, &dir.join("sorts-bare"), &args, &again);
    let syms = sh("nm", &["sorts-dbg.debug"]);
    let at = |f: &str| {
        let l = syms
            .lines()
            .find(|l| l.ends_with(&format!(" {f}")))
            .unwrap_or_else(|| panic!("nm: no {f}"));
        u64::from_str_radix(l.split_whitespace().next().unwrap(), 16).unwrap()
    };
    let work = format!("sorts-bare+{:#x}", at("work"));
    let mut all: Vec<&str> = COMPLETE.to_vec();
    all.extend([
        "report's stacks",
        "report's folded stacks",
        "profile's summary",
    ]);
    named_in(&out, &all, &work, "sorts-bare");
    named_in(&out, &BY_ADDRESS, "qsort@plt", "sorts-bare");
    named_in(&out, &BY_CONTEXT, "qsort", "sorts-bare");

    // Static: the stubs of its ifuncs (objdump leaves them unnamed).
    let (out, canon) = check(&dir, &dir.join("sorts-static"), &args, &again);
    named_in(&out, &BY_ADDRESS, "strlen@plt", "sorts-static");
    named_in(&out, &BY_ADDRESS, "strchr@plt", "sorts-static");
    // The variant the ifunc chose depends on the CPU (`__strlen_avx2`,
    // `__strlen_evex`): a context is named after it, not the stub.
    for (stub, f) in [("strlen@plt", "__strlen_"), ("strchr@plt", "__strchr_")] {
        not_named_in(&out, &BY_CONTEXT, stub, "sorts-static");
        assert!(
            out["summary"].iter().any(|n| n.starts_with(f)),
            "sorts-static: no {f}* in the summary: {:?}",
            out["summary"]
        );
    }
    let unnamed: Vec<&String> = canon
        .iter()
        .filter(|n| n.starts_with("sorts-static+0x"))
        .collect();
    assert!(
        unnamed.is_empty(),
        "sorts-static: unnamed stubs {unnamed:?}"
    );

    // C++: demangled everywhere, report included.
    let exe = dir.join("names");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/names/names.cpp");
    sh("g++", &["-O2", "-g", "-o", "names", src.to_str().unwrap()]);
    let (out, _) = check(&dir, &exe, &[], &[]);
    let sum = "work::sum(std::vector<long, std::allocator<long> > const&)";
    named_in(
        &out,
        &[
            "profile's summary",
            "summary",
            "callgrind",
            "report's functions",
            "report's stacks",
        ],
        sum,
        "names",
    );
}
