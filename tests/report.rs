//! `hotlift report` on profiles of `c-phases` (three phases, each in its
//! own function): each phase's function leads the windows where its
//! samples are, in the program's order; window answers equal a
//! brute-force count over the profile's raw samples at
//! `--tree-coverage 100` and stay within the loss bound below it; entry
//! sampling takes the same samples in every run and samples every thread
//! on its own entries; the timeline SVG parses
//! as XML and names the phases; bad input is a one-line error, status 2.

mod guest;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

const HOTLIFT: &str = env!("CARGO_BIN_EXE_hotlift");
const WORKERS: [&str; 3] = ["mix_integers", "hash_bytes", "float_steps"];

fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-report-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn show(o: &Output) -> String {
    format!(
        "{:?}\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Profile `c-phases UNITS` with `opts` into `out`; the profile as JSON.
fn profile(out: &Path, opts: &[&str], units: &str) -> Value {
    let o = Command::new(HOTLIFT)
        .args(["run", "--profile"])
        .arg(out)
        .args(opts)
        .arg("--")
        .arg(guest::build_one("c-phases"))
        .arg(units)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// One profile with many samples and a deep exact tree, shared by tests.
fn exact_profile() -> &'static (PathBuf, Value) {
    static P: OnceLock<(PathBuf, Value)> = OnceLock::new();
    P.get_or_init(|| {
        let path = workdir("exact").join("p.json");
        let v = profile(
            &path,
            &[
                "--sample-us",
                "50",
                "--tree-coverage",
                "100",
                "--tree-leaf",
                "8",
            ],
            "300",
        );
        (path, v)
    })
}

fn report(profile: &Path, args: &[&str]) -> Output {
    Command::new(HOTLIFT)
        .arg("report")
        .arg(profile)
        .args(args)
        .output()
        .unwrap()
}

fn report_json(profile: &Path, args: &[&str]) -> Value {
    let o = report(
        profile,
        &[&["--format", "json", "--top", "100000"], args].concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Where the calls through each PLT stub went, by the profile's symbols:
/// `strcmp@plt` -> `__strcmp_avx2` when every indirect jump of the stub's
/// block went to one block outside the PLT (the report names such a
/// context after it: export/images.rs I6).
fn through_stubs(p: &Value) -> HashMap<String, String> {
    let blocks = p["blocks"].as_array().unwrap();
    let sym = |a: u64| {
        blocks
            .iter()
            .find(|b| b["addr"] == a)
            .and_then(|b| b["symbol"].as_str())
    };
    let mut to: HashMap<u64, Vec<u64>> = HashMap::new();
    for e in p["indirect_edges"].as_array().unwrap() {
        let (from, t) = (e["from"].as_u64().unwrap(), e["to"].as_u64().unwrap());
        let stub = sym(from).is_some_and(|s| s.ends_with("@plt"));
        if stub && !sym(t).is_some_and(|s| s.contains("@plt")) {
            let v = to.entry(from).or_default();
            if !v.contains(&t) {
                v.push(t);
            }
        }
    }
    to.into_iter()
        .filter(|(_, t)| t.len() == 1)
        .filter_map(|(from, t)| {
            let target = sym(t[0])?.split("+0x").next()?.to_string();
            Some((sym(from)?.to_string(), target))
        })
        .collect()
}

/// The raw samples of a profile: (time, "frame;frame;..." of its stack).
fn raw_samples(p: &Value) -> Vec<(u64, String)> {
    let tt = &p["time_tree"];
    let through = through_stubs(p);
    let functions: Vec<&str> = tt["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .map(|f| through.get(f).map_or(f, String::as_str))
        .collect();
    let stacks: Vec<String> = tt["stack_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let frames: Vec<&str> = s["frames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| functions[f.as_u64().unwrap() as usize])
                .collect();
            frames.join(";")
        })
        .collect();
    let times = tt["tree"]["times"].as_array().unwrap();
    let ids = tt["tree"]["stacks"].as_array().unwrap();
    times
        .iter()
        .zip(ids)
        .map(|(t, s)| {
            (
                t.as_u64().unwrap(),
                stacks[s.as_u64().unwrap() as usize].clone(),
            )
        })
        .collect()
}

/// The report's stack rows as "frame;frame" → samples.
fn stack_rows(r: &Value) -> HashMap<String, u64> {
    r["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let frames: Vec<&str> = s["frames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect();
            (frames.join(";"), s["samples"].as_u64().unwrap())
        })
        .collect()
}

fn brute(samples: &[(u64, String)], from: u64, to: u64) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for (t, s) in samples.iter().filter(|(t, _)| from <= *t && *t <= to) {
        let _ = t;
        *m.entry(s.clone()).or_insert(0) += 1;
    }
    m
}

/// Windows from the samples' own times (edges on samples, between them,
/// and around the run).
fn windows(samples: &[(u64, String)]) -> Vec<(u64, u64)> {
    let n = samples.len();
    let t = |i: usize| samples[i.min(n - 1)].0;
    let mut v = vec![(0, u64::MAX), (0, t(0)), (t(n - 1), t(n - 1) + 5)];
    for k in 0..24usize {
        let (a, b) = ((k * 7919) % n, (k * 104_729 + n / 3) % n);
        let (a, b) = (a.min(b), a.max(b));
        v.push((t(a), t(b)));
        v.push((t(a) + 1, t(b).saturating_sub(1).max(t(a) + 1)));
    }
    v
}

#[test]
fn phases_lead_their_own_windows_in_order() {
    let (path, p) = exact_profile();
    let samples = raw_samples(p);
    assert!(samples.len() > 2000, "{} samples", samples.len());
    let mut spans = Vec::new();
    for w in WORKERS {
        // The middle 80 % of the worker's samples (by time).
        let mut ts: Vec<u64> = samples
            .iter()
            .filter(|(_, s)| s.ends_with(&format!(";{w}")))
            .map(|(t, _)| *t)
            .collect();
        ts.sort_unstable();
        assert!(ts.len() > 200, "{w}: {} samples", ts.len());
        let (a, b) = (ts[ts.len() / 10], ts[ts.len() * 9 / 10]);
        let r = report_json(
            path,
            &["--from", &format!("{a}ns"), "--to", &format!("{b}ns")],
        );
        let top = &r["functions"][0];
        let share =
            top["self_samples"].as_u64().unwrap() as f64 / r["samples"].as_u64().unwrap() as f64;
        assert_eq!(top["name"], w, "window of {w}: {r}");
        assert!(share > 0.9, "{w} has {share} of its window");
        spans.push((a, b));
    }
    assert!(
        spans[0].1 < spans[1].0 && spans[1].1 < spans[2].0,
        "phases out of order: {spans:?}"
    );
    // The text report shows the same, and --verbose the query's cost.
    let (a, b) = spans[1];
    let o = report(
        path,
        &[
            "--from",
            &format!("{}", a as f64 * 1e-9),
            "--to",
            &format!("{}ms", b as f64 * 1e-6),
            "-v",
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let first_row = text
        .lines()
        .skip_while(|l| !l.contains("inclusive"))
        .nth(1)
        .unwrap_or_default();
    assert!(first_row.trim_start().starts_with("hash_bytes"), "{text}");
    assert!(text.contains("query: visited"), "{text}");
}

#[test]
fn exact_tree_answers_equal_brute_force() {
    let (path, p) = exact_profile();
    let samples = raw_samples(p);
    for (from, to) in windows(&samples) {
        let r = report_json(
            path,
            &["--from", &format!("{from}ns"), "--to", &format!("{to}ns")],
        );
        let want = brute(&samples, from, to);
        assert_eq!(r["unattributed"], 0);
        assert_eq!(
            r["samples"].as_u64().unwrap(),
            want.values().sum::<u64>(),
            "[{from}, {to}]"
        );
        assert_eq!(stack_rows(&r), want, "[{from}, {to}]");
        // Logarithmic cost: the tree is deep (leaves of < 8 samples), a
        // query touches few nodes and samples.
        let nodes = r["cost"]["nodes"].as_u64().unwrap();
        let all = r["tree_nodes"].as_u64().unwrap();
        assert!(nodes * 10 < all, "visited {nodes} of {all} nodes");
        assert!(r["cost"]["samples"].as_u64().unwrap() <= 4 * 2 * 8);
    }
}

#[test]
fn coverage_below_100_stays_within_the_loss_bound() {
    let path = workdir("lossy").join("p.json");
    let p = profile(
        &path,
        &[
            "--sample-us",
            "50",
            "--tree-coverage",
            "60",
            "--tree-leaf",
            "16",
            "--tree-fanout",
            "3",
        ],
        "150",
    );
    let samples = raw_samples(&p);
    let mut lossy = 0;
    for (from, to) in windows(&samples) {
        let r = report_json(
            &path,
            &["--from", &format!("{from}ns"), "--to", &format!("{to}ns")],
        );
        let want = brute(&samples, from, to);
        let total: u64 = want.values().sum();
        assert_eq!(r["samples"].as_u64().unwrap(), total);
        let got = stack_rows(&r);
        let mut lost = 0;
        for (s, &c) in &want {
            let g = got.get(s).copied().unwrap_or(0);
            assert!(g <= c, "{s}: {g} > {c}");
            lost += c - g;
        }
        assert!(got.keys().all(|s| want.contains_key(s)));
        assert_eq!(lost, r["unattributed"].as_u64().unwrap());
        assert!(
            lost as f64 <= 0.4 * total as f64 + 1e-9,
            "lost {lost} of {total}"
        );
        lossy += u64::from(lost > 0);
    }
    assert!(
        lossy > 0,
        "no window lost anything: the bound was not exercised"
    );
}

#[test]
fn entry_sampling_takes_the_same_samples_every_run() {
    let dir = workdir("entries");
    let k = 20_000u64;
    let opts = ["--sample-entries", "20000", "--no-superblocks"];
    let runs: Vec<(PathBuf, Value)> = (0..2)
        .map(|i| {
            let path = dir.join(format!("p{i}.json"));
            let v = profile(&path, &opts, "20");
            (path, v)
        })
        .collect();
    let counts: Vec<HashMap<String, u64>> = runs
        .iter()
        .map(|(path, p)| {
            let entries = p["threads"][0]["ring_entries"].as_u64().unwrap();
            let r = report_json(path, &[]);
            assert_eq!(
                r["samples"].as_u64().unwrap(),
                entries / k,
                "a sample every {k} entries"
            );
            stack_rows(&r)
        })
        .collect();
    assert_eq!(counts[0], counts[1]);
    assert_eq!(runs[0].1["time_tree"]["period"]["entries"], k);
}

#[test]
fn every_thread_is_sampled_on_its_own_entries() {
    let path = workdir("threads").join("p.json");
    let o = Command::new(HOTLIFT)
        .args([
            "run",
            "--sample-entries",
            "2000",
            "--tree-coverage",
            "100",
            "--profile",
        ])
        .arg(&path)
        .arg("--")
        .arg(guest::build_one("c-threads"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let threads = p["threads"].as_array().unwrap();
    assert!(threads.len() > 2, "{} threads", threads.len());
    let mut want: HashMap<i64, u64> = HashMap::new();
    for t in threads {
        let n = t["ring_entries"].as_u64().unwrap() / 2000;
        if n > 0 {
            want.insert(t["tid"].as_i64().unwrap(), n);
        }
    }
    let r = report_json(&path, &[]);
    assert_eq!(r["samples"].as_u64().unwrap(), want.values().sum::<u64>());
    let got: HashMap<i64, u64> = r["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["tid"].as_i64().unwrap(), t["samples"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn timeline_is_an_svg_naming_the_phases() {
    let (path, _) = exact_profile();
    let svg = workdir("timeline").join("t.svg");
    let o = report(
        path,
        &[
            "--timeline",
            svg.to_str().unwrap(),
            "--slices",
            "80",
            "--format",
            "folded",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    // Folded output: one line per stack, counts add up to the samples.
    let folded = String::from_utf8_lossy(&o.stdout);
    let sum: u64 = folded
        .lines()
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, raw_samples(&exact_profile().1).len() as u64);
    let text = std::fs::read_to_string(&svg).unwrap();
    let mut reader = quick_xml::Reader::from_str(&text);
    let (mut rects, mut texts, mut depth) = (0, String::new(), 0i32);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(quick_xml::events::Event::Start(e)) => {
                depth += 1;
                if e.name().as_ref() == b"rect" {
                    rects += 1;
                }
            }
            Ok(quick_xml::events::Event::End(_)) => depth -= 1,
            Ok(quick_xml::events::Event::Empty(e)) => {
                if e.name().as_ref() == b"rect" {
                    rects += 1;
                }
            }
            Ok(quick_xml::events::Event::Text(t)) => texts.push_str(&String::from_utf8_lossy(&t)),
            Ok(_) => {}
            Err(e) => panic!("timeline is not XML at {}: {e}", reader.buffer_position()),
        }
    }
    assert_eq!(depth, 0, "unbalanced elements");
    assert!(rects > 80, "{rects} rects");
    for w in WORKERS {
        assert!(texts.contains(w), "the legend lacks {w}");
    }
    assert!(texts.contains("time (s"), "no axis label");
}

#[test]
fn functions_show_where_they_are_in_the_source() {
    // c-phases is built with -g: each worker's row names phases.c and a
    // line of its own body (its entry's line: the definition, or with
    // -O2 its first statement, before the next function begins).
    let (path, _) = exact_profile();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest-tests/c/phases.c");
    let text = std::fs::read_to_string(&src).unwrap();
    let defined = |f: &str| {
        text.lines()
            .position(|l| l.contains(&format!(" {f}(")) && l.ends_with('{'))
            .unwrap_or_else(|| panic!("{f} is not defined in phases.c")) as u64
            + 1
    };
    let body = |w: usize| {
        let next = WORKERS.get(w + 1).map_or(u64::MAX, |n| defined(n));
        defined(WORKERS[w])..next
    };
    let r = report_json(path, &[]);
    let rows = r["functions"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no row for {name}: {r}"))
    };
    for (w, name) in WORKERS.iter().enumerate() {
        let f = row(name);
        let file = f["file"].as_str().unwrap_or_else(|| panic!("{name}: {f}"));
        assert_eq!(Path::new(file), src, "{name}: {f}");
        let line = f["line"].as_u64().unwrap();
        assert!(body(w).contains(&line), "{name} at line {line}: {f}");
    }
    // The static libc has no line tables: its rows are as before.
    let libc = row("__libc_start_main");
    assert!(
        libc.get("file").is_none() && libc.get("line").is_none(),
        "{libc}"
    );

    // The text table: a source column, file:line as the summary shows it.
    let o = report(path, &["--top", "100"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let header = out.lines().find(|l| l.contains("inclusive")).unwrap();
    assert!(header.ends_with("  source"), "{out}");
    for (w, name) in WORKERS.iter().enumerate() {
        let line = row(name)["line"].as_u64().unwrap();
        assert!(body(w).contains(&line));
        let shown = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} row:\n{out}"));
        assert!(shown.ends_with(&format!("  phases.c:{line}")), "{shown}");
    }
    let libc = out
        .lines()
        .find(|l| l.trim_start().starts_with("__libc_start_main "))
        .unwrap();
    assert!(!libc.contains(".c:"), "{libc}");
}

#[test]
fn bad_input_is_a_one_line_error_with_status_2() {
    let dir = workdir("errors");
    let none = dir.join("no-tree.json");
    profile(&none, &["--no-sampling"], "1");
    let (exact, _) = exact_profile();
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, "{\"schema_version\": 2, \"oops\"").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![none.display().to_string()], "no time_tree"),
        (
            vec![dir.join("missing.json").display().to_string()],
            "cannot read",
        ),
        (vec![garbage.display().to_string()], "garbage.json"),
        (
            vec![
                exact.display().to_string(),
                "--from".into(),
                "2s".into(),
                "--to".into(),
                "1s".into(),
            ],
            "after --to",
        ),
        (
            vec![exact.display().to_string(), "--from".into(), "soon".into()],
            "not a time",
        ),
        (
            vec![exact.display().to_string(), "--format".into(), "xml".into()],
            "xml",
        ),
        (
            vec![
                exact.display().to_string(),
                "--from".into(),
                "1000s".into(),
                "--timeline".into(),
                dir.join("t.svg").display().to_string(),
            ],
            "no samples",
        ),
    ];
    for (args, want) in cases {
        let o = Command::new(HOTLIFT)
            .arg("report")
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

// The summaries: `hotlift profile`'s at the end of a run, and `hotlift
// summary` of saved profiles (a process tree's too).

fn summary_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-summary-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// tests/profile/workload.c, static (fib, setjmp/longjmp, exits by arg).
fn summary_workload(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/profile/workload.c");
    let exe = dir.join("summary-exec");
    guest::gcc(&src, &exe, &["-static"]);
    exe
}

/// `hotlift profile -o OUT -- EXE`.
fn profile_command(out: &Path, exe: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["profile", "-o"])
        .arg(out)
        .arg("--")
        .arg(exe)
        .output()
        .unwrap()
}

#[test]
fn profile_subcommand_prints_a_summary_and_names_symbols() {
    let dir = summary_dir();
    let exe = summary_workload(&dir);
    let out = dir.join("sub.json");
    let o = profile_command(&out, &exe);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("guest instructions") && err.contains("top blocks"),
        "{err}"
    );
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(p["schema_version"], 3);
    assert_eq!(p["binary"]["sha256"].as_str().unwrap().len(), 64);
    // The monitor's cost, in the profile and the summary (issue 17 goal 4).
    let ring = &p["ring"];
    let words = ring["entries"].as_u64().unwrap();
    let blocks = p["totals"]["block_executions"].as_u64().unwrap();
    let per_block = ring["words_per_block"].as_f64().unwrap();
    assert!((per_block - words as f64 / blocks as f64).abs() < 1e-9);
    let cpu = p["times"]["monitor_cpu_seconds"].as_f64().unwrap();
    let ns = ring["monitor_ns_per_word"].as_f64().unwrap();
    assert!((ns - cpu * 1e9 / words as f64).abs() < 1e-6 * ns.max(1.0));
    let line = err
        .lines()
        .find(|l| l.starts_with("monitor: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&format!("{words} ring words"))
            && line.contains(&format!("{per_block:.3} per block run"))
            && line.contains("ns per word")
            && line.contains("guest waited"),
        "{line}"
    );
    // Start-up figures (issue 18): set-up before the first guest
    // instruction and translation time, both within the run's wall time,
    // on the summary's start-up line.
    let t = &p["times"];
    let (setup, tr, wall) = (
        t["setup_seconds"].as_f64().unwrap(),
        t["translation_seconds"].as_f64().unwrap(),
        t["wall_seconds"].as_f64().unwrap(),
    );
    assert!(setup > 0.0 && tr > 0.0 && tr < wall, "{t}");
    // Its steps, in order, within it; the CPU hotlift used before main.
    let u = &t["startup"];
    let steps: Vec<f64> = [
        "loading_seconds",
        "code_cache_seconds",
        "monitor_seconds",
        "first_thread_seconds",
    ]
    .iter()
    .map(|k| u[*k].as_f64().unwrap())
    .collect();
    assert!(steps.iter().all(|&x| x > 0.0), "{u}");
    assert!(steps.iter().sum::<f64>() <= setup, "{u} within {setup}");
    let before = u["before_main_cpu_seconds"].as_f64().unwrap();
    assert!(before > 0.0 && before < wall, "{u}");
    let translated = p["totals"]["translated_blocks"].as_u64().unwrap();
    let line = err
        .lines()
        .find(|l| l.starts_with("start-up and translation: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&format!("{:.1} ms of hotlift set-up", setup * 1e3))
            && line.contains(&format!("options and loading {:.1}", steps[0] * 1e3))
            && line.contains("of CPU before hotlift's main")
            && line.contains(&format!(
                "{translated} blocks translated in {:.1} ms",
                tr * 1e3
            )),
        "{line}"
    );
    let syms: Vec<&str> = p["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["symbol"].as_str())
        .collect();
    assert!(syms.contains(&"fib"), "fib is named");
    let calls = p["call_edges"].as_array().unwrap();
    assert!(!calls.is_empty());
    // Five longjmps back to one setjmp: the first leaves its frames until
    // main returns (an unmatched return), the four after it unwind them
    // (monitor tables/landing.rs).
    assert_eq!(p["unwinding_jumps"], 4, "longjmps that unwound");
    assert_eq!(p["unmatched_returns"], 1, "main's return past the first");
    // The deepest stack: the first longjmp's frames under the last
    // recursion (33), not all five jumps' frames on top of each other (78).
    let depth = p["max_call_depth"].as_u64().unwrap();
    assert!(depth < 40, "max_call_depth {depth}");
}

#[test]
fn summary_prints_the_exit_summary_again_with_exact_function_costs() {
    // Issue 20 goal 5: `hotlift summary` from the saved profile prints what
    // `profile` printed at the end, with a per-function table from the
    // calling-context tree.
    let dir = summary_dir();
    let exe = guest::build_one("c-recursion");
    let out = dir.join("rec-summary.json");
    let o = profile_command(&out, &exe);
    assert!(o.status.success(), "{o:?}");
    let at_exit = String::from_utf8_lossy(&o.stderr).into_owned();
    let again = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("summary")
        .arg(&out)
        .output()
        .unwrap();
    assert!(again.status.success(), "{again:?}");
    let again = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(
        at_exit.contains(&again),
        "the same summary:\n{again}\n--- at exit:\n{at_exit}"
    );
    // `deep` recursed 100,000 times below main: 100,001 calls, one
    // inclusive cost (its nested contexts counted once) equal to its own.
    let row = |name: &str| -> Vec<String> {
        again
            .lines()
            .find(|l| l.split_whitespace().last() == Some(name))
            .unwrap_or_else(|| panic!("no {name} row:\n{again}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // The top blocks carry their source lines (the guest tests are -g).
    assert!(
        again.contains(" deep at recursion.c:"),
        "file:line of deep's blocks:\n{again}"
    );
    let deep = row("deep");
    let (inclusive, own, calls) = (&deep[0], &deep[2], &deep[4]);
    assert_eq!(calls, "100001", "{deep:?}");
    assert_eq!(inclusive, own, "deep calls nothing else: {deep:?}");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let total = p["totals"]["guest_instructions"].as_u64().unwrap();
    let main = row("main");
    let main_incl: u64 = main[0].parse().unwrap();
    assert!(main_incl > own.parse::<u64>().unwrap() && main_incl < total);
    // --top, and a bad profile.
    let top = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["summary", "--top", "2"])
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&top.stdout);
    assert!(
        text.contains("functions by inclusive instructions (2 of "),
        "{text}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["summary", "/nonexistent/p.json"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
