//! `hotlift compare` on guest tests and real programs (Debian's
//! busybox-static): equivalent runs pass, a planted difference is caught,
//! the JSON and JUnit outputs are well formed, bad input is a one-line
//! error with status 2.
//!
//! Needs (CI installs them, `.ci/run`): gcc, busybox-static, python3 (the
//! JUnit XML is checked with Python's XML parser). A missing tool fails the
//! test.

mod guest;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const HOTLIFT: &str = env!("CARGO_BIN_EXE_hotlift");
const BUSYBOX: &str = "/bin/busybox";

fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "hotlift-compare-test-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn busybox() -> &'static str {
    assert!(
        Path::new(BUSYBOX).exists(),
        "{BUSYBOX} missing: install busybox-static (.ci/run does)"
    );
    BUSYBOX
}

/// `hotlift compare ARGS` in `dir` with /dev/null as stdin.
fn compare(dir: &Path, args: &[&str]) -> Output {
    Command::new(HOTLIFT)
        .arg("compare")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn outcome(j: &serde_json::Value, check: &str) -> String {
    j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == check)
        .map(|c| c["outcome"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("no check {check} in {j}"))
}

/// Parse `path` with Python's XML parser and return (tests, failures,
/// skipped, test case names).
fn junit(path: &Path) -> (u64, u64, u64, Vec<String>) {
    let script = "import sys, xml.dom.minidom as m\n\
        d = m.parse(sys.argv[1])\n\
        s = d.getElementsByTagName('testsuite')[0]\n\
        print(s.getAttribute('tests'), s.getAttribute('failures'), s.getAttribute('skipped'))\n\
        for c in d.getElementsByTagName('testcase'): print(c.getAttribute('name'))\n";
    let o = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("python3 (install python3: .ci/run does)");
    assert!(
        o.status.success(),
        "JUnit XML does not parse: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(o.stdout).unwrap();
    let mut lines = out.lines();
    let n: Vec<u64> = lines
        .next()
        .unwrap()
        .split(' ')
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    (n[0], n[1], n[2], lines.map(str::to_string).collect())
}

const CHECKS: [&str; 6] = [
    "exit status",
    "stdout",
    "stderr",
    "syscalls",
    "instructions",
    "time",
];

#[test]
fn real_programs_are_equivalent_with_json_and_junit() {
    let bb = busybox();
    let dir = workdir("real");
    std::fs::write(dir.join("in.txt"), "pear\napple\nfig\napple\n").unwrap();
    // busybox applets, and Debian's own dynamically linked programs.
    let cases: [&[&str]; 6] = [
        &[bb, "sort", "in.txt"],
        &[bb, "md5sum", "in.txt"],
        &[bb, "wc", "-l", "in.txt"],
        &["/usr/bin/sort", "-r", "in.txt"],
        &["/usr/bin/gzip", "-c", "in.txt"],
        &[
            "/usr/bin/sqlite3",
            ":memory:",
            "create table t(a); insert into t values (3), (1); select a * 7 from t order by a;",
        ],
    ];
    for (i, prog) in cases.iter().enumerate() {
        let (j, x) = (
            dir.join(format!("r{i}.json")),
            dir.join(format!("r{i}.xml")),
        );
        let mut args = vec![
            "--json",
            j.to_str().unwrap(),
            "--junit",
            x.to_str().unwrap(),
            "--",
        ];
        args.extend_from_slice(prog);
        let o = compare(&dir, &args);
        assert_eq!(o.status.code(), Some(0), "{prog:?}: {}", text(&o));
        let report = String::from_utf8_lossy(&o.stdout);
        assert!(report.contains("result: equivalent"), "{report}");
        let doc = json(&j);
        assert_eq!(doc["equivalent"], true);
        assert_eq!(outcome(&doc, "syscalls"), "pass");
        assert!(doc["native"]["syscalls"].as_u64().unwrap() > 5);
        assert!(doc["hotlift"]["instructions"].as_u64().unwrap() > 1000);
        assert!(doc["wall_ratio"].as_f64().unwrap() > 0.0);
        let (tests, failures, skipped, names) = junit(&x);
        assert_eq!((tests, failures, skipped), (6, 0, 1), "{names:?}");
        assert_eq!(names, CHECKS);
    }
}

#[test]
fn guest_tests_exit_codes_signals_and_native_counts() {
    let dir = workdir("guest");
    // Exit status 3, and a death by SIGABRT (its fatal tgkill: N5).
    for (name, status) in [("c-atexit", "exit 3"), ("c-abort", "killed by SIGABRT")] {
        let exe = guest::build_one(name);
        let o = compare(&dir, &["--", exe.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
        let report = String::from_utf8_lossy(&o.stdout);
        assert!(
            report.contains(&format!("{status} in both runs")),
            "{report}"
        );
    }
    // An exact native count by single-stepping.
    let exe = guest::build_one("asm-loops");
    let j = dir.join("loops.json");
    let o = compare(
        &dir,
        &[
            "--count-native",
            "--count-method",
            "step",
            "--json",
            j.to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let doc = json(&j);
    assert_eq!(outcome(&doc, "instructions"), "pass");
    assert_eq!(
        doc["native"]["instructions"],
        doc["hotlift"]["instructions"]
    );
}

#[test]
fn native_counts_of_real_programs_are_exact() {
    // --count-native runs everything on one CPU, without ASLR and with
    // glibc's rseq off on both sides: the counts are then equal.
    let bb = busybox();
    let dir = workdir("count");
    std::fs::write(dir.join("in.txt"), "pear\napple\nfig\napple\n").unwrap();
    let j = dir.join("count.json");
    let cases: [&[&str]; 3] = [
        &[bb, "echo", "hi"],
        &[bb, "sort", "in.txt"],
        &[bb, "md5sum", "in.txt"],
    ];
    for prog in cases {
        let mut args = vec![
            "--count-native",
            "--count-method",
            "step",
            "--max-steps",
            "2000000",
            "--json",
            j.to_str().unwrap(),
            "--",
        ];
        args.extend_from_slice(prog);
        let o = compare(&dir, &args);
        assert_eq!(o.status.code(), Some(0), "{prog:?}: {}", text(&o));
        let doc = json(&j);
        let (n, h) = (
            doc["native"]["instructions"].as_u64().unwrap(),
            doc["hotlift"]["instructions"].as_u64().unwrap(),
        );
        assert!(n > 10_000 && n == h, "{prog:?}: {n} native vs {h} hotlift");
        assert_eq!(doc["count_method"], "single-step");
    }
}

/// tests/compare/tasks.c built in `dir`: its output depends on how many
/// threads the process has, which differs under hotlift (its monitor).
fn tasks_program(dir: &Path) -> PathBuf {
    let exe = dir.join("tasks");
    let st = Command::new("gcc")
        .args(["-O1", "-static", "-o"])
        .arg(&exe)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/compare/tasks.c"
        ))
        .status()
        .expect("gcc");
    assert!(st.success());
    exe
}

#[test]
fn planted_difference_is_caught() {
    let dir = workdir("planted");
    let exe = tasks_program(&dir);
    let (j, x) = (dir.join("m.json"), dir.join("m.xml"));
    let o = compare(
        &dir,
        &[
            "--json",
            j.to_str().unwrap(),
            "--junit",
            x.to_str().unwrap(),
            "--",
            exe.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains("FAIL  stdout") && report.contains("result: MISMATCH"),
        "{report}"
    );
    assert!(
        report.contains("-/proc/self/stat counts"),
        "the diff shows the line: {report}"
    );
    let doc = json(&j);
    assert_eq!(doc["equivalent"], false);
    assert_eq!(outcome(&doc, "stdout"), "fail");
    assert_eq!(outcome(&doc, "exit status"), "pass");
    let (tests, failures, _, _) = junit(&x);
    assert_eq!(tests, 6);
    assert!(failures >= 1);
    // Filtering the line away leaves the syscalls (a `sched_yield` per
    // thread) ...
    let o = compare(
        &dir,
        &[
            "--filter-stdout",
            "^/proc/self/stat counts",
            "--",
            exe.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("FAIL  syscalls"));
    // ... and without them the runs are equivalent.
    let o = compare(
        &dir,
        &[
            "--filter-stdout",
            "^/proc/self/stat counts",
            "--no-syscalls",
            "--",
            exe.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn threads_times_and_the_options_that_shape_a_comparison() {
    let dir = workdir("options");
    let j = dir.join("o.json");
    let js = j.to_str().unwrap();
    // Eight threads: the initial thread's syscalls are compared (the
    // native trace follows it only), the others' are left out and said so.
    let exe = guest::build_one("c-threads");
    let o = compare(&dir, &["--json", js, "--", exe.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("syscalls of other threads and processes not compared"),
        "{}",
        text(&o)
    );
    // Wall time counts from before the fork: a one-thread program's is at
    // least its CPU time, however short the run (hotlift's has a monitor
    // thread).
    let bb = busybox();
    let o = compare(&dir, &["--json", js, "--", bb, "echo", "hi"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let doc = json(&j);
    let (wall, cpu) = (
        doc["native"]["wall_seconds"].as_f64().unwrap(),
        doc["native"]["cpu_seconds"].as_f64().unwrap(),
    );
    assert!(wall + 1e-4 >= cpu, "native: wall {wall} s, CPU {cpu} s");
    // --max-slowdown.
    let o = compare(&dir, &["--max-slowdown", "1e-6", "--", bb, "echo", "hi"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("over --max-slowdown"), "{}", text(&o));
    let o = compare(&dir, &["--max-slowdown", "1e9", "--", bb, "echo", "hi"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // --stdin and --cwd reach both runs.
    std::fs::create_dir_all(dir.join("tree/sub")).unwrap();
    std::fs::write(dir.join("tree/a.txt"), "x").unwrap();
    std::fs::write(dir.join("in.txt"), "one\ntwo\nthree\n").unwrap();
    let o = compare(&dir, &["--json", js, "--stdin", "in.txt", "--", bb, "cat"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(json(&j)["native"]["stdout_bytes"], 14);
    let o = compare(&dir, &["--json", js, "--cwd", "tree", "--", bb, "ls"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(json(&j)["hotlift"]["stdout_bytes"], "a.txt\nsub\n".len());

    // A different exit status is a mismatch.
    let tasks = tasks_program(&dir);
    let m = tasks.to_str().unwrap();
    let o = compare(&dir, &["--json", js, "--no-syscalls", "--", m, "status"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(outcome(&json(&j), "exit status"), "fail");
    assert!(text(&o).contains("FAIL  exit status"), "{}", text(&o));
    // A difference on stderr: caught, then ignored or filtered away; the
    // syscalls then differ only in what the status file's `read`s
    // returned, the `sched_yield`s and the line written, which
    // --ignore-syscall and --syscall-mask take out.
    let same_calls = [
        "--ignore-syscall",
        "read",
        "--ignore-syscall",
        "sched_yield",
        "--syscall-mask",
        r"counts \d+",
    ];
    let with = |extra: &[&str]| {
        let mut a = vec!["--json", js];
        a.extend_from_slice(extra);
        a.extend_from_slice(&same_calls);
        a.extend_from_slice(&["--", m, "stderr"]);
        compare(&dir, &a)
    };
    let o = with(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let doc = json(&j);
    assert_eq!(outcome(&doc, "stderr"), "fail");
    assert_eq!(outcome(&doc, "syscalls"), "pass", "{}", text(&o));
    let o = with(&["--ignore-stderr"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(outcome(&json(&j), "stderr"), "skip");
    let o = with(&["--filter-stderr", "^/proc/self/stat counts"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(outcome(&json(&j), "stderr"), "pass");
    // --ignore-stdout, and --context: more context, longer diff.
    let o = compare(&dir, &["--ignore-stdout", "--no-syscalls", "--", m]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let diff_lines = |ctx: &str| {
        let o = compare(
            &dir,
            &["--context", ctx, "--ignore-syscall", "sched_yield", "--", m],
        );
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("         "))
            .count()
    };
    let (narrow, wide) = (diff_lines("0"), diff_lines("5"));
    assert!(
        narrow < wide,
        "context 0: {narrow} lines, context 5: {wide}"
    );
}

#[test]
fn timeouts_are_mismatches() {
    let bb = busybox();
    let dir = workdir("timeout");
    let o = compare(
        &dir,
        &["--timeout", "1", "--no-syscalls", "--", bb, "sleep", "3"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("timed out"));
}

#[test]
fn bad_input_is_a_one_line_error_with_status_2() {
    let dir = workdir("bad");
    // The program runs natively, but hotlift cannot start (status 125).
    // An unwritable report path fails before anything runs (stdout stays
    // empty: no report of runs).
    let cases: [&[&str]; 8] = [
        &[
            "--junit",
            "/nonexistent/dir/x.xml",
            "--",
            "/bin/busybox",
            "sleep",
            "5",
        ],
        &[
            "--json",
            "/nonexistent/dir/x.json",
            "--",
            "/bin/busybox",
            "true",
        ],
        &["--", "/nonexistent/program"],
        &["--", concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")],
        &[
            "--ignore-stdout",
            "--filter-stdout",
            "x",
            "--",
            "/bin/busybox",
        ],
        &["--max-steps", "10", "--", "/bin/busybox"],
        &["--filter-stderr", "(", "--", "/bin/busybox"],
        &[
            "--run-option=--no-such-option",
            "--",
            "/bin/busybox",
            "true",
        ],
    ];
    for args in cases {
        let o = compare(&dir, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // A good report path beside a bad one is left as it was (the check
    // neither creates nor empties it).
    let kept = dir.join("kept.json");
    std::fs::write(&kept, "earlier report\n").unwrap();
    let o = compare(
        &dir,
        &[
            "--json",
            kept.to_str().unwrap(),
            "--junit",
            "/nonexistent/dir/x.xml",
            "--",
            "/bin/busybox",
            "true",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "earlier report\n");
}

#[test]
fn hardware_counter_where_the_kernel_offers_one() {
    let bb = busybox();
    let dir = workdir("perf");
    let j = dir.join("perf.json");
    let o = compare(
        &dir,
        &[
            "--count-native",
            "--count-method",
            "perf",
            "--count-tolerance",
            "1",
            "--json",
            j.to_str().unwrap(),
            "--",
            bb,
            "echo",
            "hi",
        ],
    );
    match hotlift::compare::hwcount::unavailable() {
        // This project's VMs: no counters, a clear error.
        Some(_) => {
            assert_eq!(o.status.code(), Some(2), "{}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("no hardware instruction counter") && err.lines().count() == 1,
                "{err}"
            );
            // auto falls back to single-stepping.
            let o = compare(
                &dir,
                &[
                    "--count-native",
                    "--count-tolerance",
                    "1",
                    "--json",
                    j.to_str().unwrap(),
                    "--",
                    bb,
                    "echo",
                    "hi",
                ],
            );
            assert_eq!(o.status.code(), Some(0), "{}", text(&o));
            assert_eq!(json(&j)["count_method"], "single-step");
        }
        None => {
            assert_eq!(o.status.code(), Some(0), "{}", text(&o));
            let doc = json(&j);
            assert_eq!(doc["count_method"], "hardware counter");
            assert!(doc["native"]["instructions"].as_u64().unwrap() > 10_000);
        }
    }
}

/// The pids of processes whose command line is exactly `argv`.
fn processes_running(argv: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .collect()
}

#[test]
fn an_interrupted_compare_stops_its_runs_and_writes_what_it_has() {
    // Issue 20 goal 6: SIGINT to compare used to leave its child running
    // (in a process group of its own) and write no report.
    let dir = workdir("interrupt");
    let argv = ["/bin/sleep", "6.173"];
    let j = dir.join("i.json");
    let x = dir.join("i.xml");
    let mut child = Command::new(HOTLIFT)
        .arg("compare")
        .arg("--json")
        .arg(&j)
        .arg("--junit")
        .arg(&x)
        .arg("--")
        .args(argv)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while processes_running(&argv).is_empty() {
        assert!(t0.elapsed().as_secs() < 20, "the native run never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sent = std::time::Instant::now();
    // SAFETY: kill of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let st = child.wait().unwrap();
    assert!(sent.elapsed().as_secs() < 4, "compare ended at once");
    assert_eq!(st.code(), Some(130), "128 + SIGINT");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        processes_running(&argv).is_empty(),
        "the run was interrupted too"
    );
    let r = json(&j);
    assert_eq!(outcome(&r, "interrupted"), "fail", "{r}");
    let text = r.to_string();
    assert!(
        text.contains("interrupted by SIGINT during the native run"),
        "{text}"
    );
    // The hotlift run never started: not run, not killed by the signal.
    assert_eq!(r["hotlift"]["status"]["kind"], "not_run", "{r}");
    assert_eq!(r["native"]["status"]["kind"], "signal", "{r}");
    let (tests, failures, _, _) = junit(&x);
    assert!(tests >= 1 && failures >= 1, "the JUnit report says so too");
}
