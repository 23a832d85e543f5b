//! Hostile guests (issue 19, containment): a guest that turns a
//! process-wide control against the process it shares with hotlift acts
//! as natively where that is possible, as documented where it is not, and
//! never costs hotlift its profile. Each case runs natively beside where
//! the outcome should match.

/// Forged signal frames.
#[path = "hostile/frames.rs"]
mod frames;
mod guest;
/// Guests that give up root, or shrink the stack the next program starts
/// with.
#[path = "hostile/privileges.rs"]
mod privileges;
/// Syscalls aimed at hotlift's memory.
#[path = "hostile/reach.rs"]
mod reach;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn workdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hotlift-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `tests/hostile/limits.c`, built static into `dir`.
fn build(dir: &Path) -> PathBuf {
    build_named(dir, "limits")
}

/// `tests/hostile/NAME.c`, built static (with threads) into `dir`.
fn build_named(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/hostile/{name}.c"));
    let exe = dir.join(name);
    guest::gcc(&src, &exe, &["-pthread", "-static"]);
    exe
}

/// Run `exe mode` natively (`profile` None) or under hotlift, stdout to
/// the file `out` when given (else piped).
fn run(exe: &Path, mode: &str, profile: Option<&Path>, out: Option<&Path>) -> Output {
    let mut c = match profile {
        None => Command::new(exe),
        Some(p) => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_hotlift"));
            c.arg("run").arg("--profile").arg(p).arg("--").arg(exe);
            c
        }
    };
    c.arg(mode).stdin(Stdio::null()).stderr(Stdio::piped());
    match out {
        Some(f) => c.stdout(std::fs::File::create(f).unwrap()),
        None => c.stdout(Stdio::piped()),
    };
    c.output().unwrap()
}

/// `hotlift run --profile p -- exe` with stdout piped (and stdin, if
/// `stdin`), started.
fn spawn_profiled(exe: &Path, p: &Path, stdin: bool) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("run")
        .arg("--profile")
        .arg(p)
        .arg("--")
        .arg(exe)
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// [`spawn_profiled`] with stdin, once the guest printed "ready": the
/// child, the rest of its stdout, and its maps as the kernel lists them
/// from outside (hotlift's memory too).
fn spawn_ready(
    exe: &Path,
    p: &Path,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    String,
) {
    use std::io::BufRead;
    let mut child = spawn_profiled(exe, p, true);
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap();
    (child, out, maps)
}

fn read_profile(p: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(p).unwrap_or_else(|e| panic!("no profile {}: {e}", p.display()));
    serde_json::from_str(&text).expect("profile is JSON")
}

#[test]
fn seccomp_is_refused_and_the_guest_goes_on() {
    let dir = workdir("seccomp");
    let exe = build(&dir);
    let p = dir.join("p.json");
    let o = run(&exe, "seccomp", Some(&p), None);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "PR_SET_SECCOMP strict: EINVAL\nseccomp filter: EINVAL\nPR_GET_SECCOMP: 0\ngetppid works\n"
    );
    assert_eq!(read_profile(&p)["ending"]["code"], 3);
    // Natively the strict filter kills it at its next syscall (this
    // write is allowed; getppid is not).
    let n = run(&exe, "seccomp", None, None);
    assert_eq!(n.status.signal(), Some(libc::SIGKILL), "{n:?}");
}

/// Item 3's kin: syscall user dispatch (hotlift died of SIGSYS at its own
/// next syscall, no profile) and MDWE (the kernel refused the forked
/// child's copy of the code cache; hotlift panicked, status 125) fail with
/// EINVAL, as under QEMU user mode, and the guest goes on; so does
/// PR_SET_MM (`/proc/self/cmdline` read hotlift's heap).
#[test]
fn controls_that_would_bind_hotlift_are_refused() {
    let dir = workdir("prctl");
    let exe = build(&dir);
    for (mode, out, code) in [
        (
            "sud",
            "PR_SET_SYSCALL_USER_DISPATCH: EINVAL\nstill making syscalls\n",
            4,
        ),
        (
            "mdwe",
            "PR_SET_MDWE: EINVAL\nPR_GET_MDWE: 0\nchild exited 5\n",
            0,
        ),
        ("setmm", "PR_SET_MM: EINVAL\n", 0),
    ] {
        let p = dir.join(format!("{mode}.json"));
        let o = run(&exe, mode, Some(&p), None);
        assert_eq!(o.status.code(), Some(code), "{mode}: {o:?}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), out, "{mode}");
        assert_eq!(read_profile(&p)["ending"]["code"], code, "{mode}");
        // Natively (kernels with the control) it binds the guest.
        let n = run(&exe, mode, None, None);
        if String::from_utf8_lossy(&n.stdout).contains(": ok\n") && mode == "sud" {
            assert_eq!(n.status.signal(), Some(libc::SIGSYS), "{n:?}");
        }
    }
}

/// memfile.rs M1, M2: the guest's own `/proc/self/mem` opened for
/// writing by any name (a symlink, relative to `/proc/self`, `openat2`,
/// its reading descriptor reopened) is refused; for reading it reads the
/// guest's memory as natively, short where a range runs into an unmapped
/// page (hotlift keeps a placeholder there, which the file would read)
/// and EIO at one; another process's is refused, and so is the parent's
/// that a forked child inherited (README, threat model). (Reads of hotlift's own
/// memory through it: `syscalls_aimed_at_hotlift_memory_fail_as_on_unmapped_memory`.)
#[test]
fn own_proc_mem_reaches_only_guest_memory() {
    let dir = workdir("procmem");
    let exe = build_named(&dir, "procmem");
    let p = dir.join("p.json");
    let arg = dir.join("x");
    let arg = arg.to_str().unwrap();
    let reads = "a link to it for reading: opened\n";
    let own = "pread of its own data: 7 copied\n\
               readv: 7 copied\n\
               a range running into an unmapped page: 4096\n\
               preadv of the same: 4096\n\
               the unmapped page: EIO\n\
               read there: EIO\n\
               write through the reading one: Bad file descriptor\n\
               openat2 of its maps shows hotlift: no\n";
    let writes = |how: &str| {
        format!(
            "/proc/self/mem for writing: {how}\n\
             a link to it for writing: {how}\n\
             mem relative to /proc/self for writing: {how}\n\
             openat2 for writing: {how}\n\
             {reads}\
             its descriptor reopened for writing: {how}\n\
             {own}"
        )
    };
    let o = run(&exe, arg, Some(&p), None);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!(
            "{}a child's mem file for reading: EACCES\n\
             a forked child reading through it: EIO \n",
            writes("EACCES")
        )
    );
    let err = String::from_utf8_lossy(&o.stderr);
    for said in [
        "opened its own /proc/self/mem for writing",
        "opened another process's /proc/PID/mem",
    ] {
        assert_eq!(err.matches(said).count(), 1, "{said}: {err}");
    }
    assert_eq!(read_profile(&p)["ending"]["code"], 0);
    // Natively the program may write its own memory that way; a child's
    // file opens as the machine's ptrace policy says.
    let n = run(&exe, arg, None, None);
    let out = String::from_utf8_lossy(&n.stdout);
    assert!(out.starts_with(&writes("opened")), "{out}");
}

/// selfview.rs I6: the entries of `/proc/self/map_files` (which open the
/// mapped object: the code cache's memory file, writable, among them)
/// that are not the guest's memory do not exist for it; its own do, as
/// natively. The guest lists the directory and opens every entry by its
/// name relative to the directory, by its absolute path and by other
/// names of it (`/proc//self/…`, `/proc/self/root/proc/self/…`, for
/// writing too: selfview.rs I7); it tells how many it could open that its
/// own `/proc/self/maps` does not show. Unprivileged, nothing there
/// opens, natively or not. Its maps read by such other names show the
/// same ranges as `/proc/self/maps` (before I7 they showed hotlift's).
#[test]
fn map_files_of_hotlift_memory_do_not_open() {
    let dir = workdir("mapfiles");
    let exe = build(&dir);
    let p = dir.join("p.json");
    let o = run(&exe, "mapfiles", Some(&p), None);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let native = run(&exe, "mapfiles", None, None);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("map_files entries outside its maps that open: 0\n"),
        "{out}"
    );
    assert!(out.contains("by other names that differ: 0\n"), "{out}");
    assert_eq!(out, String::from_utf8_lossy(&native.stdout));
    assert_eq!(read_profile(&p)["ending"]["code"], 0);
}

#[test]
fn lowered_limits_cost_no_profile() {
    let dir = workdir("limits");
    let exe = build(&dir);
    for (mode, to_file) in [("nofile0", false), ("fsize0", true), ("as0-fork", false)] {
        let (nout, hout) = (
            dir.join(format!("{mode}.native")),
            dir.join(format!("{mode}.hotlift")),
        );
        let n = run(&exe, mode, None, to_file.then_some(nout.as_path()));
        let p = dir.join(format!("{mode}.json"));
        let h = run(&exe, mode, Some(&p), to_file.then_some(hout.as_path()));
        assert_eq!(h.status.code(), n.status.code(), "{mode}: {h:?} vs {n:?}");
        assert_eq!(
            h.status.signal(),
            n.status.signal(),
            "{mode}: {h:?} vs {n:?}"
        );
        assert_eq!(h.stdout, n.stdout, "{mode}");
        if to_file {
            assert_eq!(
                std::fs::read(&hout).unwrap(),
                std::fs::read(&nout).unwrap(),
                "{mode}"
            );
        }
        assert!(
            h.stderr.is_empty(),
            "{mode}: {}",
            String::from_utf8_lossy(&h.stderr)
        );
        let prof = read_profile(&p);
        match n.status.signal() {
            Some(sig) => assert_eq!(prof["ending"]["signal"], sig, "{mode}"),
            None => assert_eq!(prof["ending"]["code"], n.status.code().unwrap(), "{mode}"),
        }
        if mode == "as0-fork" {
            // The child's profile too (its code cache copied, its monitor
            // started under the guest's limits).
            let child = std::fs::read_dir(&dir)
                .unwrap()
                .filter_map(|e| e.ok())
                .any(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("as0-fork.json.")
                });
            assert!(child, "no profile of the forked child");
        }
    }
    assert!(
        run(&exe, "fsize0", None, Some(&dir.join("x")))
            .status
            .signal()
            == Some(libc::SIGXFSZ)
    );
}

/// Item 5: a forked child lowers its parent's RLIMIT_FSIZE or
/// RLIMIT_NOFILE to 0, hard limit included. The parent's profile was lost
/// ("File too large", "Too many open files"; the profile's temporary file
/// left beside it): the parent is hotlift too, and its hard limit is now
/// kept (limits.rs I4).
#[test]
fn a_child_lowering_its_parents_limits_costs_no_profile() {
    let dir = workdir("parent-limits");
    let exe = build(&dir);
    for mode in ["parent-fsize0", "parent-nofile0"] {
        let n = run(&exe, mode, None, None);
        assert_eq!(n.stdout, b"the child lowered it\n", "{mode}: {n:?}");
        let p = dir.join(format!("{mode}.json"));
        let h = run(&exe, mode, Some(&p), None);
        assert_eq!(h.stdout, n.stdout, "{mode}: {h:?}");
        assert_eq!(h.status.code(), Some(0), "{mode}: {h:?}");
        assert!(h.stderr.is_empty(), "{mode}: {h:?}");
        assert_eq!(read_profile(&p)["ending"]["code"], 0, "{mode}");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("tmp-hotlift"))
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{mode}: {left:?}");
    }
}

#[test]
fn a_signal_from_outside_ends_many_spinning_threads_with_the_profile() {
    // Issue 19: within 1 s, the profile written (0.1 to 0.4 s on an idle
    // 2-core machine; it was 60 s, then a panic). The best of up to three
    // tries, so that a test machine busy with other tests does not fail
    // it; 30 s for any one tells a hang.
    let dir = workdir("spin");
    let exe = build_named(&dir, "spin");
    let mut took = Vec::new();
    for k in 0..3 {
        let t = sigterm_ends(&exe, &dir.join(format!("p{k}.json")), true);
        took.push(t);
        if t < std::time::Duration::from_secs(1) {
            return;
        }
    }
    panic!("SIGTERM ended 64 spinning threads in {took:?}, never within 1 s");
}

/// A vfork parent waiting on its child dies of a signal from outside at
/// once, as natively (it waited for the child's end: 30 s here).
#[test]
fn a_signal_from_outside_ends_a_vfork_wait() {
    let dir = workdir("vforkwait");
    let exe = build_named(&dir, "vforkwait");
    let took = sigterm_ends(&exe, &dir.join("p.json"), false);
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
}

/// Start the guest (spinning threads when `threads`), SIGTERM hotlift,
/// check its end and profile at `p`: how long the end took.
fn sigterm_ends(exe: &Path, p: &Path, threads: bool) -> std::time::Duration {
    use std::io::{BufRead, BufReader};
    let mut child = spawn_profiled(exe, p, false);
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "spinning\n");
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let began = std::time::Instant::now();
    let st = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if began.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("hotlift still running 30 s after SIGTERM");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let took = began.elapsed();
    assert_eq!(st.signal(), Some(libc::SIGTERM));
    let prof = read_profile(p);
    assert_eq!(prof["ending"]["signal"], libc::SIGTERM);
    assert!(!threads || prof["threads"].as_array().unwrap().len() > 1);
    took
}

/// Also after `personality(READ_IMPLIES_EXEC)` ("rie"), which made the
/// kernel add execute to every readable mapping, hotlift's included: the
/// guest's read-write page was writable and executable in hotlift's
/// process (and its code then faulted under hotlift, where natively it ran).
#[test]
fn no_page_is_writable_and_executable() {
    use std::io::{BufRead, BufReader};
    let dir = workdir("wx");
    let exe = build_named(&dir, "wx");
    for mode in ["", "rie"] {
        let n = Command::new(&exe)
            .arg(mode)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&n.stdout), "85 1\n", "{mode}");
        let p = dir.join(format!("p{mode}.json"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .arg("run")
            .arg("--profile")
            .arg(&p)
            .arg("--")
            .arg(&exe)
            .arg(mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // The guest saw what it asked for, as natively.
        assert_eq!(line, "85 1\n", "{mode}");
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap();
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success(), "{mode}");
        let wx: Vec<&str> = maps
            .lines()
            .filter(|l| {
                let perms = l.split_whitespace().nth(1).unwrap_or("");
                perms.as_bytes().get(1) == Some(&b'w') && perms.as_bytes().get(2) == Some(&b'x')
            })
            .collect();
        assert!(wx.is_empty(), "{mode}: writable and executable: {wx:?}");
        assert_eq!(read_profile(&p)["ending"]["code"], 0, "{mode}");
    }
}

/// Item 11 (the JVM's 1-in-5 SIGSEGV): threads storing into one page of
/// code and data at once. A store that faulted on hotlift's write
/// protection found the page already given back by another thread's
/// handler and went to the guest as a SIGSEGV (3 runs in 5 before).
#[test]
fn threads_storing_into_one_page_of_code_race_no_fault() {
    let dir = workdir("smcrace");
    let exe = build_named(&dir, "smcrace");
    let n = run(&exe, "", None, None);
    assert!(n.status.success(), "{n:?}");
    for k in 0..4 {
        let p = dir.join(format!("p{k}.json"));
        let o = run(&exe, "", Some(&p), None);
        assert_eq!(o.status.code(), Some(0), "run {k}: {o:?}");
        assert_eq!(o.stdout, n.stdout, "run {k}");
        assert_eq!(read_profile(&p)["ending"]["code"], 0);
    }
}

/// A rewriting guest (tests/hostile/GUEST.c, 20,000 rewrites) under
/// `hotlift run --no-cache` with `opts` and its profile at `p`, its output
/// checked against the native run's: the profile.
fn rewrite_profiled(dir: &Path, guest: &str, opts: &[&str], p: &Path) -> serde_json::Value {
    let exe = build_named(dir, guest);
    let n = run(&exe, "20000", None, None);
    assert!(n.status.success(), "{n:?}");
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--no-cache"])
        .args(opts)
        .arg("--profile")
        .arg(p)
        .arg("--")
        .arg(&exe)
        .arg("20000")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{opts:?}: {o:?}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&n.stdout),
        "{opts:?}"
    );
    read_profile(p)
}

/// Item 8 (code rewritten forever): a guest rewriting a function in an
/// RWX page gives the native output also across full code-cache flushes.
/// The translation that found the cache full had write-protected the
/// page, then flushed (which gives every page its protection back) and
/// committed its code into the emptied cache: the page stayed writable,
/// later rewrites were not seen, and the stale code ran (a wrong sum
/// after the first full cache, with the default cache after about
/// 840,000 rewrites).
#[test]
fn code_rewritten_across_full_code_caches_runs_as_last_written() {
    let dir = workdir("rewrite");
    let prof = rewrite_profiled(&dir, "rewrite", &["--cache-mib", "1"], &dir.join("p.json"));
    let causes = &prof["code_cache_flushes_by_cause"];
    assert!(causes["cache_full"].as_u64().unwrap() >= 1, "{causes}");
    assert!(
        causes["code_written"].as_u64().unwrap() >= 19_000,
        "{causes}"
    );
}

/// Item 8 (memory bounded under code rewritten for ever): with small id
/// epochs (`--id-epoch`), block ids are given again many times over, and
/// the profile is the one a run without epochs writes (blocks, edges and
/// calling contexts by module and offset, every total but the
/// translations made), with a translation list bounded by the epoch
/// rather than growing with every rewrite.
#[test]
fn code_rewritten_across_id_epochs_keeps_its_exact_profile() {
    let dir = workdir("epochs");
    let profile = |epoch: &str| {
        let p = dir.join(format!("p{epoch}.json"));
        rewrite_profiled(&dir, "rewrite", &["--id-epoch", epoch], &p)
    };
    let (whole, cut) = (profile("0"), profile("1024"));
    let epochs = |p: &serde_json::Value| p["code_cache_flushes_by_cause"]["id_epoch"].as_u64();
    assert_eq!(epochs(&whole), Some(0));
    assert!(
        epochs(&cut).unwrap() >= 3,
        "{}",
        cut["code_cache_flushes_by_cause"]
    );
    let totals = |p: &serde_json::Value| {
        let mut t = p["totals"].clone();
        t.as_object_mut().unwrap().remove("translated_blocks");
        t
    };
    assert_eq!(totals(&cut), totals(&whole));
    for key in [
        "returns",
        "unmatched_returns",
        "unresolved_exits",
        "max_call_depth",
    ] {
        assert_eq!(cut[key], whole[key], "{key}");
    }
    assert_eq!(by_offset(&cut), by_offset(&whole));
    let listed = |p: &serde_json::Value| p["translations"].as_array().unwrap().len();
    assert!(
        listed(&cut) * 4 < listed(&whole),
        "{} translations listed, {} without epochs",
        listed(&cut),
        listed(&whole)
    );
}

/// Item 8 with the inline counters (dispatch/epoch.rs E4): `--count-inline`
/// across id epochs counts every block as a run without epochs does, and
/// `--count-check` finds the monitor and the counters agreeing on every
/// block of every epoch (with threads: the threads-and-forks guest).
#[test]
fn inline_counters_fold_across_id_epochs() {
    let dir = workdir("epoch-inline");
    let inline = |epoch: &str| {
        let p = dir.join(format!("inline{epoch}.json"));
        rewrite_profiled(
            &dir,
            "rewrite",
            &["--count-inline", "--id-epoch", epoch],
            &p,
        )
    };
    let (whole, cut) = (inline("0"), inline("1024"));
    let epochs = |p: &serde_json::Value| {
        p["code_cache_flushes_by_cause"]["id_epoch"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(epochs(&whole), 0);
    assert!(epochs(&cut) >= 3, "{}", epochs(&cut));
    assert_eq!(by_offset(&cut)[0], by_offset(&whole)[0]);
    assert_eq!(
        cut["totals"]["block_executions"],
        whole["totals"]["block_executions"]
    );
    for (guest, opts) in [
        ("rewrite", &["--count-check", "--id-epoch", "1024"][..]),
        ("rewrite_threads", &["--count-check", "--id-epoch", "512"]),
    ] {
        let p = rewrite_profiled(&dir, guest, opts, &dir.join(format!("check-{guest}.json")));
        assert!(epochs(&p) >= 3, "{guest}: {}", epochs(&p));
        let c = &p["count_check"];
        assert_eq!(c["block_mismatch_total"], 0, "{guest}: {c}");
        assert_eq!(c["thread_mismatches"], 0, "{guest}: {c}");
        let counted: u64 = c["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t[1].as_u64().unwrap())
            .sum();
        assert_eq!(
            counted,
            p["totals"]["block_executions"].as_u64().unwrap(),
            "{guest}"
        );
    }
}

/// Item 8 with threads and forks: three threads rewriting code while the
/// main thread forks; id epochs end under it all (every thread stopped,
/// the monitor draining four rings), and the run gives the native output
/// with a profile whose every indirect exit found its target and every
/// ring word its block.
#[test]
fn id_epochs_end_under_threads_and_forks() {
    let dir = workdir("epoch-threads");
    let p = dir.join("p.json");
    let prof = rewrite_profiled(&dir, "rewrite_threads", &["--id-epoch", "512"], &p);
    let epochs = prof["code_cache_flushes_by_cause"]["id_epoch"]
        .as_u64()
        .unwrap();
    assert!(epochs >= 10, "{epochs} id epochs");
    assert_eq!(prof["unresolved_exits"], 0);
    assert_eq!(prof["superblock_stats"]["record_errors"], 0);
    let threads = prof["threads"].as_array().unwrap();
    let sum: u64 = threads
        .iter()
        .map(|t| t["guest_instructions"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, prof["totals"]["guest_instructions"].as_u64().unwrap());
}

/// A profile's blocks, edges and calling contexts named by module and
/// offset (two runs' addresses differ).
fn by_offset(p: &serde_json::Value) -> Vec<std::collections::BTreeMap<String, u64>> {
    let modules: Vec<(u64, u64, String)> = p["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let n = m["name"].as_str().unwrap().to_string();
            (m["base"].as_u64().unwrap(), m["end"].as_u64().unwrap(), n)
        })
        .collect();
    let at = |a: &serde_json::Value| {
        let a = a.as_u64().unwrap();
        match modules
            .iter()
            .find(|(b, e, n)| n != "[anon]" && (*b..*e).contains(&a))
        {
            Some((b, _, n)) => format!("{n}+{:#x}", a - b),
            None => format!("[anon]+{:#x}", a & 0xfff),
        }
    };
    let mut out = vec![std::collections::BTreeMap::new(); 4];
    for b in p["blocks"].as_array().unwrap() {
        for side in ["count", "taken", "fallthrough"] {
            let k = format!("{} {side}", at(&b["addr"]));
            *out[0].entry(k).or_default() += b[side].as_u64().unwrap_or(0);
        }
    }
    for (i, list) in ["edges", "indirect_edges"].into_iter().enumerate() {
        for e in p[list].as_array().unwrap() {
            let k = format!("{} -> {}", at(&e["from"]), at(&e["to"]));
            *out[1 + i].entry(k).or_default() += e["count"].as_u64().unwrap();
        }
    }
    let tree = p["call_tree"].as_array().unwrap();
    for c in tree {
        let mut path = vec![];
        let mut n = c;
        while let Some(parent) = n["parent"].as_u64() {
            path.push(at(&n["function"]));
            n = &tree[parent as usize];
        }
        let k = path.join(" < ");
        *out[3].entry(format!("{k} calls")).or_default() += c["calls"].as_u64().unwrap();
        *out[3].entry(format!("{k} self")).or_default() += c["self_instructions"].as_u64().unwrap();
    }
    out
}

/// Item 10: the files hotlift writes at the end go where the command line
/// said. A relative `--profile` followed the guest's `chdir` (the
/// profile landed in the directory it moved to; a shell's `cd` moved its
/// children's profiles), and a profile that cannot be written at the end
/// (`/dev/full`) was said but the run exited 0.
#[test]
fn outputs_go_where_asked_and_their_errors_end_nonzero() {
    let dir = workdir("outputs");
    let exe = build(&dir);
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--profile", "p.json", "--"])
        .arg(&exe)
        .arg("chdir")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "moved\n");
    assert!(!dir.join("elsewhere/p.json").exists(), "followed the guest");
    assert_eq!(read_profile(&dir.join("p.json"))["ending"]["code"], 0);

    // The guest exits 0; the profile it promised is not written.
    let full = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--profile", "/dev/full", "--"])
        .arg(&exe)
        .arg("chdir")
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&full.stderr);
    assert_eq!(full.status.code(), Some(125), "{err}");
    assert!(
        err.contains("cannot write the profile to /dev/full"),
        "{err}"
    );

    // A superblock dump directory that cannot be made: refused before the
    // guest runs (it ran, and every dump was dropped, status 0); one that
    // is missing is made.
    let file = dir.join("p.json");
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--dump-superblocks"])
        .arg(file.join("sbs"))
        .args(["--", "/bin/echo", "ran"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(err.contains("cannot write superblock dumps into"), "{err}");
    assert!(o.stdout.is_empty(), "the guest did not run: {o:?}");
    let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--dump-superblocks", "new/sbs", "--", "/bin/true"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(dir.join("new/sbs").is_dir(), "made");

    // The tools' standard output on a full device: an error, exit 2 (summary,
    // diff and store list panicked with status 134, dump exited 0 silently).
    let p = dir.join("p.json");
    let p = p.to_str().unwrap();
    let store = dir.join("store");
    // A loop hot enough for superblocks, so that the store has a program.
    let stored = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--sb-warmup", "0", "--store"])
        .arg(&store)
        .args([
            "--",
            "/bin/sh",
            "-c",
            "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done",
        ])
        .output()
        .unwrap();
    assert!(stored.status.success(), "{stored:?}");
    let store = store.to_str().unwrap();
    for args in [
        vec!["summary", p],
        vec!["diff", p, p],
        vec!["dump", p],
        vec!["report", p],
        vec!["store", "list", store],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .args(&args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("cannot write to standard output") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}
