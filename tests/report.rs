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
