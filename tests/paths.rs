//! `hotlift paths`: every method's counts for the paths of interest equal
//! a brute-force reference computed from the full block stream (the
//! monitor's trace, independent of the probes), nothing is misattributed
//! (no path is recorded more often than the reference saw it), on
//! functions of every shape in `guest-tests/c/paths.c`, in static,
//! static-PIE and dynamically linked builds, with superblocks everywhere
//! and with chaining off; ids of long loops do not overflow; bad input
//! gets a one-line error.

mod guest;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The guest program, built once (make is incremental).
fn guest(build: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let st = Command::new("make")
            .arg("-C")
            .arg(root().join("guest-tests"))
            .args([
                "build/c-paths",
                "build/cpie-paths",
                "build/cdyn-paths",
                "build/asm-paths-flags",
                "build/dyn-dlopen",
            ])
            .status()
            .expect("make");
        assert!(st.success(), "building the guest test failed");
    });
    root()
        .join("guest-tests/build")
        .join(format!("{build}-paths"))
}

fn asm_flags() -> PathBuf {
    guest("c");
    root().join("guest-tests/build/asm-paths-flags")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-paths-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Run `hotlift paths` with the reference and return the JSON report.
fn paths(
    prog: &Path,
    func: &str,
    args: &[&str],
    method: &str,
    interest: Option<&Path>,
    extra: &[&str],
) -> Value {
    let out = tmp(&format!("{func}-{method}-{}.json", extra.join("")));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hotlift"));
    cmd.args([
        "paths",
        "--function",
        func,
        "--reference",
        "--format",
        "json",
    ])
    .args(["--method", method, "-o"])
    .arg(&out)
    .args(extra);
    if let Some(i) = interest {
        cmd.arg("--interest").arg(i);
    }
    let o = cmd.arg("--").arg(prog).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "hotlift paths {func} {method} {extra:?}: {o:?}"
    );
    let native = Command::new(prog).args(args).output().unwrap();
    assert_eq!(
        o.stdout, native.stdout,
        "the guest's output is the native one"
    );
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The reference agrees (report I1), checked field by field.
fn assert_agrees(r: &Value, what: &str) {
    let x = &r["reference"];
    assert_eq!(
        u(&x["misattributed"]),
        0,
        "{what}: misattributed paths: {x}"
    );
    assert!(x["interest_exact"].as_bool().unwrap(), "{what}: {x}");
    assert_eq!(u(&r["totals"]["bad_records"]), 0, "{what}");
    assert!(x["agrees"].as_bool().unwrap(), "{what}: {x}");
    assert!(!x["incomplete"].as_bool().unwrap(), "{what}");
    for p in r["paths"].as_array().unwrap() {
        assert!(u(&p["count"]) <= u(&p["reference_count"]), "{what}: {p}");
    }
}

/// A paths-of-interest file with these paths (their block addresses).
fn interest_file(name: &str, picks: &[&Value]) -> PathBuf {
    let f = tmp(name);
    let text: String = picks
        .iter()
        .map(|p| {
            let blocks: Vec<&str> = p["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b["addr"].as_str().unwrap())
                .collect();
            blocks.join(" ") + "\n"
        })
        .collect();
    std::fs::write(&f, text).unwrap();
    f
}

const SHAPES: &[(&str, &str)] = &[
    ("few", "few"),
    ("many", "many"),
    ("nested", "nested"),
    ("loop", "loop"),
    ("sw", "switch"),
    ("rec", "rec"),
    ("calls", "calls"),
    ("tail", "tail"),
    ("sigf", "signal"),
    ("jumper", "jump"),
    ("jumper2", "jump"),
];

#[test]
fn every_method_matches_the_reference_on_every_shape() {
    let prog = guest("c");
    for &(func, shape) in SHAPES {
        let args = [shape, "300", "25"];
        let all = paths(&prog, func, &args, "none", None, &[]);
        assert_agrees(&all, func);
        // Without paths of interest every path is recorded, except the
        // invocations that met an indirect target not learned yet, and
        // those that never finished or were broken (a longjmp past the
        // function or into it): the reference saw the same.
        let t = &all["totals"];
        let x = &all["reference"];
        let missed: u64 = all["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| u(&p["reference_count"]) - u(&p["count"]))
            .sum();
        let open = u(&x["unfinished"]) + u(&x["broken"]);
        assert_eq!(missed + open, u(&t["unprofiled"]), "{func}: {t} {x}");
        assert_eq!(u(&x["invocations"]), u(&t["invocations"]), "{func}");
        // Paths of interest: the most and the least frequent, and one
        // in between.
        let mut ran: Vec<&Value> = all["paths"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| u(&p["reference_count"]) > 0)
            .collect();
        ran.sort_by_key(|p| std::cmp::Reverse(u(&p["reference_count"])));
        let mut picks = vec![ran[0]];
        if ran.len() > 1 {
            picks.push(ran[ran.len() - 1]);
        }
        if ran.len() > 2 {
            picks.push(ran[ran.len() / 2]);
        }
        let pi = interest_file(&format!("{func}.pi"), &picks);
        for method in ["none", "psp0", "psp1", "psp2", "psp3"] {
            let r = paths(&prog, func, &args, method, Some(&pi), &[]);
            let what = format!("{func} {method}");
            assert_agrees(&r, &what);
            let interest: Vec<&Value> = r["paths"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["interest"].as_bool().unwrap())
                .collect();
            assert_eq!(interest.len(), picks.len(), "{what}");
            for p in interest {
                assert!(u(&p["count"]) > 0, "{what}: {p}");
                assert_eq!(p["count"], p["reference_count"], "{what}: {p}");
            }
            let t = &r["totals"];
            assert_eq!(
                u(&t["recorded"]) + u(&t["terminated_early"]) + u(&t["unprofiled"]),
                u(&t["invocations"]),
                "{what}"
            );
        }
    }
}

#[test]
fn probes_keep_the_flags_where_they_are_live() {
    // asm-paths-flags checks its own results and flags: flags live across
    // branch edges, a call, a loop's back edge, a jump table and the
    // return. Its output must stay the native one under every method
    // (`paths` compares it) and its paths must agree with the reference.
    let prog = asm_flags();
    let all = paths(&prog, "flagfn", &[], "none", None, &[]);
    assert_agrees(&all, "flagfn");
    let mut ran: Vec<&Value> = all["paths"].as_array().unwrap().iter().collect();
    ran.sort_by_key(|p| std::cmp::Reverse(u(&p["reference_count"])));
    let pi = interest_file("flagfn.pi", &[ran[0], ran[ran.len() - 1]]);
    for method in ["none", "psp0", "psp1", "psp2", "psp3"] {
        let r = paths(&prog, "flagfn", &[], method, Some(&pi), &[]);
        assert_agrees(&r, &format!("flagfn {method}"));
    }
}

#[test]
fn psp_methods_end_profiling_of_paths_not_of_interest() {
    let prog = guest("c");
    let args = ["many", "400"];
    let all = paths(&prog, "many", &args, "none", None, &[]);
    let mut ran: Vec<&Value> = all["paths"].as_array().unwrap().iter().collect();
    ran.sort_by_key(|p| std::cmp::Reverse(u(&p["reference_count"])));
    let pi = interest_file("many-two.pi", &ran[..2]);
    let of_interest: u64 = ran[..2].iter().map(|p| u(&p["reference_count"])).sum();
    for method in ["psp0", "psp1", "psp2", "psp3"] {
        let r = paths(&prog, "many", &args, method, Some(&pi), &[]);
        let t = &r["totals"];
        assert_agrees(&r, method);
        // 256 paths, 2 of interest: most invocations end early.
        assert!(
            u(&t["terminated_early"]) * 10 >= (u(&t["invocations"]) - of_interest) * 8,
            "{method}: {t}"
        );
        // A recorded path not of interest is still exactly one the
        // reference saw (never a confused id).
        for p in r["paths"].as_array().unwrap() {
            if !p["interest"].as_bool().unwrap() && u(&p["count"]) > 0 {
                assert!(u(&p["count"]) <= u(&p["reference_count"]), "{method}: {p}");
            }
        }
    }
}

#[test]
fn threads_have_their_own_activations() {
    // Four threads run rec and few at once: each has its own running id,
    // activation stack and serials.
    let prog = guest("c");
    for func in ["rec", "few"] {
        let args = ["threads", "150"];
        let all = paths(&prog, func, &args, "none", None, &[]);
        assert_agrees(&all, func);
        assert_eq!(all["totals"]["recorded"], all["totals"]["invocations"]);
        let mut ran: Vec<&Value> = all["paths"].as_array().unwrap().iter().collect();
        ran.sort_by_key(|p| std::cmp::Reverse(u(&p["reference_count"])));
        let pi = interest_file(&format!("{func}-threads.pi"), &ran[..1]);
        for method in ["psp0", "psp1", "psp2", "psp3"] {
            let r = paths(&prog, func, &args, method, Some(&pi), &[]);
            assert_agrees(&r, &format!("{func} threads {method}"));
        }
    }
}

#[test]
fn long_loops_are_one_exact_path() {
    // One call running 3 million iterations: far more segments than one
    // 64-bit id holds (chunks), counted once and exactly.
    let prog = guest("c");
    let r = paths(&prog, "loop", &["loop", "1", "3000000"], "none", None, &[]);
    assert_agrees(&r, "loop");
    let ps = r["paths"].as_array().unwrap();
    assert_eq!(ps.len(), 1, "one path");
    let p = &ps[0];
    assert_eq!(u(&p["count"]), 1);
    assert_eq!(u(&p["reference_count"]), 1);
    let segs: u64 = p["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| u(&s["repeat"]))
        .sum();
    assert!(segs > 3_000_000 / 2, "a segment per iteration: {segs}");
    assert!(u(&p["length"]) > 6_000_000, "{}", p["length"]);
    assert!(
        p["blocks"].as_array().unwrap().is_empty(),
        "long paths by segments"
    );
}

#[test]
fn builds_superblocks_and_chaining_do_not_change_the_paths() {
    for build in ["cpie", "cdyn"] {
        let prog = guest(build);
        for &(func, shape) in &[
            ("rec", "rec"),
            ("sw", "switch"),
            ("tail", "tail"),
            ("calls", "calls"),
        ] {
            let r = paths(&prog, func, &[shape, "200", "20"], "none", None, &[]);
            assert_agrees(&r, &format!("{build} {func}"));
        }
    }
    let prog = guest("c");
    let base = paths(&prog, "rec", &["rec", "200"], "none", None, &[]);
    for extra in [
        &["--no-chain"][..],
        guest::SB_EVERYWHERE,
        &["--no-superblocks"][..],
    ] {
        let r = paths(&prog, "rec", &["rec", "200"], "none", None, extra);
        assert_agrees(&r, &format!("rec {extra:?}"));
        assert_eq!(r["paths"], base["paths"], "{extra:?}");
    }
}

#[test]
fn a_library_function_is_found_when_its_library_is_loaded() {
    // printf is in libc.so.6, mapped by ld.so after the start.
    let r = paths(&guest("cdyn"), "printf", &["few", "10"], "none", None, &[]);
    assert_agrees(&r, "printf");
    assert_eq!(u(&r["totals"]["invocations"]), 1);
    assert_eq!(u(&r["totals"]["recorded"]), 1);
}

#[test]
fn the_text_report_names_blocks_and_marks_interest() {
    let prog = guest("c");
    let pi = tmp("few-text.pi");
    // The entry, its fall-through, the second branch's fall-through.
    let all = paths(&prog, "few", &["few", "50"], "none", None, &[]);
    let p = all["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| u(&p["count"]) > 0)
        .unwrap();
    let line: Vec<String> = p["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["symbol"].as_str().unwrap().to_string())
        .collect();
    std::fs::write(&pi, line.join(" -> ") + "  # by symbol\n").unwrap();
    let out = tmp("few.txt");
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args([
            "paths",
            "--function",
            "few",
            "--method",
            "psp2",
            "--interest",
        ])
        .arg(&pi)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&prog)
        .args(["few", "50"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("hotlift paths: few at 0x"), "{text}");
    assert!(text.contains("method psp2"), "{text}");
    let row = text
        .lines()
        .find(|l| l.contains(" yes "))
        .unwrap_or_else(|| panic!("no path of interest in\n{text}"));
    assert!(row.contains(&line.join(" ")), "{row}");
    assert_eq!(
        row.split_whitespace().next().unwrap(),
        p["count"].to_string(),
        "{row}"
    );
}

#[test]
fn bad_input_gets_a_one_line_error() {
    let prog = guest("c");
    let run = |args: &[&str], pi: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hotlift"));
        cmd.arg("paths").args(args);
        if let Some(text) = pi {
            let f = tmp(&format!("bad-{}.pi", text.len()));
            std::fs::write(&f, text).unwrap();
            cmd.arg("--interest").arg(f);
        }
        let o = cmd
            .arg("--")
            .arg(&prog)
            .args(["few", "5"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("hotlift")).collect();
        (o.status.code(), lines.join("\n"))
    };
    let (code, err) = run(&["--function", "few", "--method", "psp1"], None);
    assert_eq!(code, Some(125));
    assert!(err.contains("needs paths of interest"), "{err}");
    let (code, err) = run(&["--function", "few"], Some("few main+0x4\n"));
    assert_eq!(code, Some(125));
    assert!(err.contains(":1: `main+0x4`"), "{err}");
    // Not starting at the entry; not an edge (found when the function is
    // first entered: the run stops there).
    let (code, err) = run(&["--function", "few"], Some("few+0x6 few+0x13\n"));
    assert_eq!(code, Some(125), "{err}");
    assert!(
        err.contains("line 1") && err.contains("not at the function's entry"),
        "{err}"
    );
    let (code, err) = run(&["--function", "few"], Some("few few+0x2d\n"));
    assert_eq!(code, Some(125), "{err}");
    assert!(err.contains("cannot be followed by"), "{err}");
    let (code, err) = run(&["--function", "few", "--no-monitor"], None);
    assert_eq!(code, Some(125));
    assert!(err.contains("needs the monitor"), "{err}");
    // An unknown function of a static program: said before anything
    // runs, named, with the functions it is close to.
    let (code, err) = run(&["--function", "fewe"], None);
    assert_eq!(code, Some(125), "{err}");
    assert!(
        err.contains("no function `fewe`") && err.contains("close matches: few"),
        "{err}"
    );
    assert!(!err.contains("invocations"), "nothing ran: {err}");
    // So is a report that cannot be written.
    let (code, err) = run(&["--function", "few", "-o", "/nonexistent/r.txt"], None);
    assert_eq!(code, Some(125), "{err}");
    assert!(err.contains("cannot write the report"), "{err}");
    // Nor in a dynamic program or the libraries it links: an error
    // before anything runs, which says how to look in what it dlopens.
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["paths", "--function", "fewe", "--"])
        .arg(guest("cdyn"))
        .args(["few", "5"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(
        err.contains("no function `fewe` in ")
            && err.contains("close matches: few")
            && err.contains("add --dlopened"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "nothing ran: {err}");
    // With --dlopened the run looks in what it loads; one it never
    // loads: the report names what it did not find, and so does a
    // one-line error, status 125, as for a static program.
    let out = tmp("nothing.txt");
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args([
            "paths",
            "--dlopened",
            "--function",
            "no_such_function",
            "-o",
        ])
        .arg(&out)
        .arg("--")
        .arg(guest("cdyn"))
        .args(["few", "5"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(!o.stdout.is_empty(), "the program ran: {err}");
    let never = "no function `no_such_function` in any module the program loaded";
    assert_eq!(
        err.lines().last(),
        Some(format!("hotlift paths: {never}").as_str()),
        "{err}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains(never), "{text}");
}

#[test]
fn a_function_a_dlopened_library_has_is_found_and_a_typo_of_it_named() {
    let prog = root().join("guest-tests/build/dyn-dlopen");
    guest("c");
    let run = |func: &str, dlopened: bool| {
        Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .arg("paths")
            .args(dlopened.then_some("--dlopened"))
            .args(["--function", func, "--format", "json", "--"])
            .arg(&prog)
            .output()
            .unwrap()
    };
    // In libhlplugin.so, which the program dlopens: not looked for
    // unless asked; then found when mapped.
    let o = run("hl_plugin_run", false);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(
        err.contains("add --dlopened") && o.stdout.is_empty(),
        "{err}"
    );
    let o = run("hl_plugin_run", true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let json = &err[err.find('{').expect("a JSON report")..];
    let r: Value = serde_json::from_str(json).unwrap();
    assert!(u(&r["totals"]["invocations"]) > 0, "{r}");
    // A typo of it: never found, one line naming the close match only
    // the loaded library has, after the JSON report; status 125.
    let o = run("hl_plugin_rnu", true);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    let never = "no function `hl_plugin_rnu` in any module the program loaded \
                 (close matches: hl_plugin_run)";
    assert_eq!(
        err.lines().last(),
        Some(format!("hotlift paths: {never}").as_str()),
        "{err}"
    );
    assert!(err.contains(&format!("\"error\": \"{never}\"")), "{err}");
    // Its native output came first: the program ran to its end.
    assert!(!o.stdout.is_empty());
}
