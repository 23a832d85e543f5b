//! Process trees under hotlift (dispatch/fork.rs, dispatch/exec.rs): every
//! image of every process writes its own exact profile, named after the
//! tree's first one, recording where it came from; `--no-follow` runs the
//! programs the guest executes natively; a `#!` script runs its
//! interpreter. Guest output is checked natively by tests/guest_diff.rs
//! (`c-processes`); here the profiles are.

mod guest;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-processes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn guest_program(name: &str) -> PathBuf {
    let dirs = guest::Dirs::new();
    guest::build_guests(&dirs.guest);
    dirs.guest.join("build").join(name)
}

/// Run `hotlift run OPTS --profile DIR/p.json -- PROGRAM` in `dir`; the
/// exit code and every profile of the tree, by file name. A tree still
/// running after 120 s is killed (`timeout`'s status 124 or 137).
fn run_tree(dir: &Path, opts: &[&str], program: &[&str]) -> (i32, BTreeMap<String, Value>) {
    let out = Command::new("timeout")
        .args(["-s", "KILL", "120"])
        .arg(env!("CARGO_BIN_EXE_hotlift"))
        .current_dir(dir)
        .arg("run")
        .args(opts)
        .arg("--profile")
        .arg(dir.join("p.json"))
        .arg("--")
        .args(program)
        .output()
        .expect("run hotlift");
    let mut profiles = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("p.json") {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|err| panic!("{name} is not a JSON profile: {err}"));
            profiles.insert(name, v);
        }
    }
    assert!(
        out.status.code().is_some(),
        "hotlift died: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap(), profiles)
}

/// Checks every profile names its image consistently (profile/process.rs
/// I1) and its parent is one of the tree's; returns (began, ending kind)
/// per profile.
fn check_tree(dir: &Path, profiles: &BTreeMap<String, Value>) -> Vec<(String, String)> {
    let base = dir.join("p.json").display().to_string();
    let mut seen = Vec::new();
    for (name, p) in profiles {
        let proc = &p["process"];
        let began = proc["began"].as_str().unwrap().to_string();
        let pid = proc["pid"].as_u64().unwrap();
        let image = proc["image"].as_u64().unwrap();
        let want = match (began.as_str(), image) {
            ("program", 0) => "p.json".to_string(),
            (_, 0) => format!("p.json.{pid}"),
            (_, n) => format!("p.json.{pid}.{n}"),
        };
        assert_eq!(name, &want, "{name}: process {proc}");
        assert_eq!(proc["tree_base"].as_str(), Some(base.as_str()));
        if began == "program" {
            assert!(proc["parent_profile"].is_null());
        } else {
            let parent = proc["parent_profile"].as_str().expect("a parent profile");
            let parent = Path::new(parent).file_name().unwrap().to_string_lossy();
            assert!(
                profiles.contains_key(parent.as_ref()),
                "{name}'s parent {parent} is not in the tree"
            );
            let pp = &profiles[parent.as_ref()]["process"];
            if began == "exec" {
                assert_eq!(pp["pid"], proc["pid"], "{name}: an exec keeps its pid");
                assert_eq!(pp["image"].as_u64().unwrap() + 1, image);
                assert_eq!(profiles[parent.as_ref()]["ending"]["kind"], "exec");
            } else {
                assert_eq!(
                    pp["pid"], proc["parent_pid"],
                    "{name}: forked by its parent"
                );
            }
        }
        let ending = p["ending"]["kind"].as_str().unwrap().to_string();
        seen.push((began, ending));
    }
    seen
}

/// `src` (C) built with `gcc -O1` and `flags` beside itself, without
/// its extension.
fn compile(src: &Path, flags: &[&str]) -> PathBuf {
    let exe = src.with_extension("");
    let o = Command::new("gcc")
        .arg("-O1")
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .output()
        .expect("gcc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exe
}

fn counts(seen: &[(String, String)], began: &str) -> usize {
    seen.iter().filter(|(b, _)| b == began).count()
}

#[test]
fn every_image_of_a_process_tree_writes_an_exact_profile() {
    let exe = guest_program("c-processes");
    let exe = exe.to_str().unwrap();
    // The second time with superblocks built early: the parent has
    // superblocks over the code its first child runs again (fork.rs F2).
    for (k, opts) in [
        &["--count-check"][..],
        &["--count-check", "--sb-threshold", "20", "--sb-warmup", "0"],
    ]
    .into_iter()
    .enumerate()
    {
        let dir = scratch(&format!("tree{k}"));
        let (code, profiles) = run_tree(&dir, opts, &[exe]);
        assert_eq!(code, 0);
        check_tree_profiles(&dir, &profiles, k == 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The tree c-processes makes, every profile exact (`--count-check`).
fn check_tree_profiles(dir: &Path, profiles: &BTreeMap<String, Value>, superblocks: bool) {
    if superblocks {
        assert!(
            !profiles["p.json"]["superblocks"]
                .as_array()
                .unwrap()
                .is_empty(),
            "the first image built superblocks before it forked"
        );
    }
    let seen = check_tree(dir, profiles);
    // c-processes: 18 forks (vforks, posix_spawn and two raw clones included) and 5
    // execve calls that succeed (the four failing ones write nothing).
    assert_eq!(counts(&seen, "program"), 1, "{seen:?}");
    assert_eq!(counts(&seen, "fork"), 18, "{seen:?}");
    assert_eq!(counts(&seen, "exec"), 5, "{seen:?}");
    let endings: BTreeSet<&str> = seen.iter().map(|(_, e)| e.as_str()).collect();
    assert_eq!(
        endings,
        BTreeSet::from(["exec", "exit", "signal"]),
        "exits, the aborted child's signal and the images an execve replaced"
    );
    if superblocks {
        // fork.rs F2: children keep their parent's superblocks and count
        // the passes they make through them.
        let ran: u64 = profiles
            .values()
            .filter(|p| p["process"]["began"] == "fork")
            .map(|p| p["superblock_stats"]["inherited_run"].as_u64().unwrap())
            .sum();
        assert!(ran > 0, "no forked child ran a superblock of its parent");
    }
    for (name, p) in profiles {
        assert_eq!(p["superblock_stats"]["record_errors"], 0, "{name}");
        let check = &p["count_check"];
        assert_eq!(
            check["block_mismatch_total"], 0,
            "{name}: ring and inline counts differ: {check}"
        );
        assert!(
            p["totals"]["guest_instructions"].as_u64().unwrap() > 0,
            "{name}"
        );
        // A forked child lists its parent's blocks only where it ran them
        // (profile I1): the fork happens after c-processes ran hot code the
        // children do not run again.
        let blocks = p["blocks"].as_array().unwrap();
        if p["process"]["began"] == "fork" {
            let parent = &p["process"]["parent_profile"];
            let parent = Path::new(parent.as_str().unwrap()).file_name().unwrap();
            let parent = &profiles[parent.to_str().unwrap()];
            let unrun = blocks.iter().filter(|b| b["count"] == 0).count();
            assert!(
                unrun as u64 <= p["totals"]["translated_blocks"].as_u64().unwrap(),
                "{name}: {unrun} blocks listed that it did not run"
            );
            let inherited = parent["blocks"].as_array().unwrap().len();
            assert!(
                parent["process"]["began"] != "program" || blocks.len() < inherited,
                "{name}: {} blocks listed, its parent (the program) {inherited}",
                blocks.len()
            );
        }
    }
}

#[test]
fn no_follow_runs_executed_programs_natively() {
    let exe = guest_program("c-processes");
    let dir = scratch("no-follow");
    let (code, profiles) = run_tree(&dir, &["--no-follow"], &[exe.to_str().unwrap()]);
    assert_eq!(code, 0);
    let seen = check_tree(&dir, &profiles);
    assert_eq!(counts(&seen, "fork"), 18, "{seen:?}");
    assert_eq!(
        counts(&seen, "exec"),
        0,
        "no image after an execve: {seen:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_script_runs_its_interpreter_as_the_kernel_would() {
    let dir = scratch("script");
    let script = dir.join("hello.sh");
    std::fs::write(
        &script,
        "#! /bin/sh  -e \necho \"args: $0 $*\"\nexec /bin/true\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, profiles) = run_tree(&dir, &[], &["./hello.sh", "one", "two"]);
    assert_eq!(code, 0);
    let seen = check_tree(&dir, &profiles);
    assert_eq!(seen.len(), 2, "the shell, then /bin/true: {seen:?}");
    let root = &profiles["p.json"];
    assert_eq!(
        root["binary"]["path"].as_str(),
        Some("/bin/sh"),
        "the program is the interpreter"
    );
    assert_eq!(
        root["command_line"],
        serde_json::json!(["/bin/sh", "-e", "./hello.sh", "one", "two"])
    );
    let out = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .current_dir(&dir)
        .args(["run", "--", "./hello.sh", "one", "two"])
        .output()
        .unwrap();
    let native = Command::new("/bin/sh")
        .current_dir(&dir)
        .args(["-c", "./hello.sh one two"])
        .output()
        .unwrap();
    assert_eq!(out.stdout, native.stdout);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "args: ./hello.sh one two\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A child of a run with path profiling does not keep its parent's
/// translations (fork.rs F2): it flushes, with code memory holding only
/// the shared stubs. The tree's output is the native one.
#[test]
fn children_of_a_path_profiled_run_start_from_the_stubs() {
    let exe = guest_program("c-processes");
    let native = Command::new(&exe).output().unwrap();
    assert!(native.status.success());
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["paths", "--function", "main", "--"])
        .arg(&exe)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&native.stdout)
    );
}

/// The programs a guest executes see its CPU mask, as natively: hotlift
/// pinned the executing thread to one core and the new program inherited
/// that (`sh -c nproc` printed 1 of 2). Only the tree's first process
/// pins its monitor; the others say why they do not.
#[test]
fn executed_programs_inherit_the_guests_cpu_mask() {
    let dir = scratch("affinity");
    let script = "nproc; (nproc); /bin/sh -c nproc";
    let native = Command::new("/bin/sh")
        .args(["-c", script])
        .output()
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("run")
        .arg("--profile")
        .arg(dir.join("p.json"))
        .args(["--", "/bin/sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&native.stdout),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for e in std::fs::read_dir(&dir).unwrap() {
        let p: Value = serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
        if p["process"]["began"] != "program" {
            assert_eq!(p["monitor"]["pinned"], false, "{}", p["process"]);
            assert!(
                p["monitor"]["note"]
                    .as_str()
                    .unwrap()
                    .contains("a process of a tree"),
                "{}",
                p["monitor"]
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A forked child's profile counts the code-cache flushes of its own life:
/// c-tsc's parent flushes once (`tsc_trapping`: its rdtsc must trap from
/// then on) and then forks; the child inherits the translations and
/// flushes nothing itself. Before, the child reported the parent's flush
/// as its own (the counters and the generation came across the fork).
#[test]
fn a_forked_child_counts_only_its_own_flushes() {
    let exe = guest_program("c-tsc");
    let dir = scratch("flushes");
    let (code, profiles) = run_tree(&dir, &[], &[exe.to_str().unwrap()]);
    assert_eq!(code, 0);
    let seen = check_tree(&dir, &profiles);
    assert_eq!(counts(&seen, "fork"), 1, "{seen:?}");
    for (name, p) in &profiles {
        let causes = p["code_cache_flushes_by_cause"].as_object().unwrap();
        let sum: u64 = causes.values().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(
            p["code_cache_flushes"].as_u64(),
            Some(sum),
            "{name}: the total is the sum of the causes"
        );
        let trapping = causes["tsc_trapping"].as_u64().unwrap();
        match p["process"]["began"].as_str().unwrap() {
            "program" => assert_eq!(trapping, 1, "{name}: the parent asked once"),
            _ => assert_eq!(trapping, 0, "{name}: the child never asked"),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A forked child's monitor starts idle (monitor I5): it wakes when its
/// ring fills, after the idle time, or at the end. Either way each child's
/// profile is exact: one child exits at once (its monitor only ever wakes
/// for the end), one runs calls and loops for far longer than the idle
/// time (its ring fills first). The second time with a small ring and no
/// superblocks, so that the long child's ring wraps again and again: the
/// child's own ring, not the parent's, which its signal handler once kept
/// (dispatch/mailbox.rs M4) and then waited on for ever.
#[test]
fn forked_children_are_exact_however_long_they_live() {
    let dir = scratch("idle");
    let src = dir.join("kids.c");
    std::fs::write(
        &src,
        "#include <stdlib.h>\n#include <unistd.h>\n#include <sys/wait.h>\n\
         __attribute__((noinline)) static long f(long i) { return (i * 7) % 13; }\n\
         int main(void) {\n\
         \x20 pid_t a = fork();\n\
         \x20 if (a == 0) _exit(0);\n\
         \x20 pid_t b = fork();\n\
         \x20 if (b == 0) { long s = 0; for (long i = 0; i < 30000000; i++) s += f(i); _exit(s == 42); }\n\
         \x20 int st; waitpid(a, &st, 0); waitpid(b, &st, 0);\n\
         \x20 return WEXITSTATUS(st);\n\
         }\n",
    )
    .unwrap();
    let exe = compile(&src, &[]);
    let small = [
        "--count-check",
        "--ring-entries",
        "2048",
        "--no-superblocks",
    ];
    for opts in [&["--count-check"][..], &small] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            if e.file_name().to_string_lossy().starts_with("p.json") {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
        let (code, profiles) = run_tree(&dir, opts, &[exe.to_str().unwrap()]);
        assert_eq!(code, 0, "{opts:?}");
        let seen = check_tree(&dir, &profiles);
        assert_eq!(counts(&seen, "fork"), 2, "{seen:?}");
        // (instructions, ring words) of each child, the short one first.
        let mut kids: Vec<(u64, u64)> = Vec::new();
        for (name, p) in &profiles {
            let check = &p["count_check"];
            assert_eq!(check["block_mismatch_total"], 0, "{name}: {check}");
            if p["process"]["began"] == "fork" {
                let insns = p["totals"]["guest_instructions"].as_u64().unwrap();
                kids.push((insns, p["ring"]["entries"].as_u64().unwrap()));
            }
        }
        kids.sort_unstable();
        assert!(kids[0].0 > 0, "{kids:?}");
        assert!(
            kids[1].0 > 30_000_000 * 4,
            "the long child's loop: {kids:?}"
        );
        if opts == small {
            assert!(
                kids[1].1 > 100 * 2048,
                "the long child's ring wrapped: {kids:?}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Threads that fork at once (monitor I4: one pause at a time; a fork
/// takes a napping monitor without waking it, a running one is asked),
/// while threads are being created (fork.rs F1: a child once hung on the
/// CPU mask's lock a starting thread held at the fork): every child's and
/// the parent's profile is exact, the parent's threads' counts included,
/// and no pause is lost (the old protocol let a second fork's request
/// un-pause the monitor under the first).
#[test]
fn threads_forking_at_once_keep_every_profile_exact() {
    let dir = scratch("threadforks");
    let src = dir.join("tf.c");
    std::fs::write(
        &src,
        "#include <pthread.h>\n#include <stdio.h>\n#include <sys/wait.h>\n#include <unistd.h>\n\
         static void *brief(void *arg) { return arg; }\n\
         static void *worker(void *arg) {\n\
         \x20 long sum = (long)arg;\n\
         \x20 for (int i = 0; i < 12; i++) {\n\
         \x20   pthread_t b; void *r;\n\
         \x20   pthread_create(&b, 0, brief, (void *)1);\n\
         \x20   pid_t c = fork();\n\
         \x20   if (c == 0) _exit(i & 7);\n\
         \x20   pthread_join(b, &r); sum += (long)r;\n\
         \x20   int st; waitpid(c, &st, 0); sum += WEXITSTATUS(st);\n\
         \x20   for (volatile int k = 0; k < 20000; k++) sum += k & 1;\n\
         \x20 }\n\
         \x20 return (void *)sum;\n\
         }\n\
         int main(void) {\n\
         \x20 pthread_t t[4]; long total = 0;\n\
         \x20 for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, (void *)i);\n\
         \x20 for (int i = 0; i < 4; i++) { void *r; pthread_join(t[i], &r); total += (long)r; }\n\
         \x20 printf(\"%ld\\n\", total);\n\
         \x20 return total == 480190 ? 0 : 1;\n\
         }\n",
    )
    .unwrap();
    let exe = compile(&src, &["-pthread"]);
    let native = Command::new(&exe).status().expect("run natively");
    assert!(native.success(), "natively: {native:?}");
    let (code, profiles) = run_tree(&dir, &["--count-check"], &[exe.to_str().unwrap()]);
    assert_eq!(code, 0);
    let seen = check_tree(&dir, &profiles);
    assert_eq!(counts(&seen, "fork"), 48, "{seen:?}");
    for (name, p) in &profiles {
        let check = &p["count_check"];
        assert_eq!(check["block_mismatch_total"], 0, "{name}: {check}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// `hotlift summary` of a process tree's profiles.

/// `hotlift ARGS BASE -- /bin/sh -c "/bin/true; /bin/true"` (a tree of
/// five images), checked to succeed.
fn summary_tree(args: &[&str], base: &Path) -> std::process::Output {
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(args)
        .arg(base)
        .args(["--", "/bin/sh", "-c", "/bin/true; /bin/true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    o
}

/// The profiles of the process tree whose first profile is `base`, in
/// `dir` (`base`, `base.PID`, `base.PID.N`).
fn summary_tree_files(dir: &Path, base: &Path) -> Vec<PathBuf> {
    let name = base.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&name) && !n.contains("tmp"))
        })
        .collect()
}

#[test]
fn summary_of_a_process_tree_has_a_line_per_process_and_their_totals() {
    let dir = scratch("summary-a");
    let base = dir.join("tree-summary.json");
    summary_tree(&["run", "--profile"], &base);
    let files = summary_tree_files(&dir, &base);
    assert!(files.len() >= 3, "{files:?}");
    let s = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("summary")
        .args(&files)
        .output()
        .unwrap();
    assert!(s.status.success(), "{s:?}");
    let text = String::from_utf8_lossy(&s.stdout);
    assert!(text.starts_with(&format!("hotlift profile: {} processes\n", files.len())));
    let per_process = text.lines().filter(|l| l.starts_with("  pid ")).count();
    assert_eq!(per_process, files.len(), "{text}");
    let sum: u64 = files
        .iter()
        .map(|f| {
            let p: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            p["totals"]["guest_instructions"].as_u64().unwrap()
        })
        .sum();
    assert!(
        text.contains(&format!("hotlift profile: {sum} guest instructions")),
        "{text}"
    );
}

/// `profile` ends a tree's first process with the tree's summary, and
/// `summary` of profiles of two runs prints one summary for each.
#[test]
fn profile_prints_the_trees_summary_and_summary_keeps_runs_apart() {
    let dir = scratch("summary-b");
    let base = dir.join("tree-at-exit.json");
    let o = summary_tree(&["profile", "-o"], &base);
    let files = summary_tree_files(&dir, &base);
    assert!(files.len() >= 3, "{files:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("hotlift profile: {} processes\n", files.len())),
        "{err}"
    );
    let per_process = err.lines().filter(|l| l.starts_with("  pid ")).count();
    assert_eq!(per_process, files.len(), "{err}");
    // Another run beside it: its own summary, not a seventh process.
    let single = dir.join("tree-at-exit-other.json");
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["profile", "-o"])
        .arg(&single)
        .args(["--", "/bin/true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("processes"), "{err}");
    let s = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("summary")
        .arg(&single)
        .args(&files)
        .output()
        .unwrap();
    assert!(s.status.success(), "{s:?}");
    let text = String::from_utf8_lossy(&s.stdout);
    let heads = text
        .lines()
        .filter(|l| l.starts_with("hotlift profile: ") && l.contains("guest instructions"))
        .count();
    assert_eq!(heads, 2, "{text}");
    assert!(
        text.contains(&format!("hotlift profile: {} processes\n", files.len())),
        "{text}"
    );
}

/// An `execve` the kernel refuses for its arguments' size (`E2BIG`)
/// returns to the guest as natively: the shell says so and goes on. It
/// ended the run before (status 125: the profile had been written, then
/// hotlift's own `execve` failed); one string longer than the kernel's
/// `MAX_ARG_STRLEN` (128 KiB) gave `EFAULT` ("Bad address").
#[test]
fn an_execve_too_big_fails_in_the_guest() {
    let dir = scratch("e2big");
    for (i, script) in [
        "exec /bin/true $(seq 1 400000) || echo still here",
        "exec /bin/true $(head -c 140000 /dev/zero | tr '\\0' a) || echo still here",
        "exec /bin/true $(head -c 131071 /dev/zero | tr '\\0' a) && echo not here",
    ]
    .into_iter()
    .enumerate()
    {
        let native = std::process::Command::new("/bin/sh")
            .args(["-c", script])
            .output()
            .unwrap();
        let p = dir.join(format!("p{i}.json"));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .args(["run", "--profile"])
            .arg(&p)
            .args(["--", "/bin/sh", "-c", script])
            .output()
            .unwrap();
        assert_eq!(native.status.code(), o.status.code(), "{script}: {o:?}");
        assert_eq!(native.stdout, o.stdout, "{script}");
        assert_eq!(native.stderr, o.stderr, "{script}");
        assert!(p.exists(), "its profile");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// dispatch/forkpath.rs: a forked child reports the blocks it made, and
/// its parent makes them before its next fork, so that only the first
/// child of a path makes them; the stub the parent rewrites before each
/// fork (c-fork-paths, whose statuses guest_diff checks against native)
/// is made again from its new bytes by a child when the parent's store
/// dropped the block it had made.
#[test]
fn later_children_inherit_the_path_an_earlier_one_made() {
    let exe = guest_program("c-fork-paths");
    let dir = scratch("forkpaths");
    let (code, profiles) = run_tree(&dir, &[], &[exe.to_str().unwrap()]);
    assert_eq!(code, 0);
    let seen = check_tree(&dir, &profiles);
    assert_eq!(counts(&seen, "fork"), 5, "{seen:?}");
    let total = |p: &Value, k: &str| p["totals"][k].as_u64().unwrap();
    let children: Vec<&Value> = profiles
        .values()
        .filter(|p| p["process"]["began"] == "fork")
        .collect();
    let made: Vec<u64> = children
        .iter()
        .map(|p| total(p, "translated_blocks"))
        .collect();
    assert_eq!(
        made.iter().filter(|&&n| n > 2).count(),
        1,
        "one child makes the path, the others at most the rewritten stub: {made:?}"
    );
    let insns: Vec<u64> = children
        .iter()
        .map(|p| total(p, "guest_instructions"))
        .collect();
    assert!(insns.windows(2).all(|w| w[0] == w[1]), "{insns:?}");
    let parent = &profiles["p.json"];
    let prepared = total(parent, "fork_prepared_blocks");
    assert!(
        prepared >= 10 && prepared <= total(parent, "translated_blocks"),
        "the parent made the path for its later children: {prepared}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
