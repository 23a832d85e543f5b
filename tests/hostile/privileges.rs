//! Hostile guests that change what the next process or hotlift's own
//! files would get: giving up root, `chroot`, a small `RLIMIT_STACK`
//! before `execve`, a `umask` that would reach the profile.

use super::*;

/// Run as root, a guest that gives up root (a new user id, or a
/// `chroot`) keeps its profile: hotlift opens the file before the guest
/// runs (profiling `hold_output`); it could not create it after. Under a
/// lowered `RLIMIT_NPROC` after the drop, a forked child still gets its
/// monitor thread (limits.rs I6; it panicked). The directory is open to
/// all, so the children after the drop can create theirs; a child in the
/// chroot cannot (it says so, its status unchanged). Not root: nothing
/// to give up, and the test says so.
#[test]
fn a_guest_giving_up_root_keeps_its_profile() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: a guest cannot give up root, nothing to check");
        return;
    }
    let dir = workdir("privdrop");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let exe = build_named(&dir, "privdrop");
    for mode in ["nproc", "drop", "chroot"] {
        let n = run(&exe, mode, None, None);
        let p = dir.join(format!("{mode}.json"));
        let h = run(&exe, mode, Some(&p), None);
        assert_eq!(h.status.code(), n.status.code(), "{mode}: {h:?} vs {n:?}");
        assert_eq!(h.stdout, n.stdout, "{mode}");
        let stderr = String::from_utf8_lossy(&h.stderr);
        if mode == "chroot" {
            assert!(
                stderr
                    .lines()
                    .all(|l| l.contains("cannot write the profile to")
                        && l.contains(&format!("{mode}.json."))),
                "{mode}: {stderr}"
            );
        } else {
            assert!(stderr.is_empty(), "{mode}: {stderr}");
        }
        let prof = read_profile(&p);
        assert_eq!(prof["ending"]["code"], n.status.code().unwrap(), "{mode}");
    }
}

/// A guest that lowers its soft `RLIMIT_STACK` to 32 KiB and then
/// `execve`s: the next hotlift's own stack overflowed ("stack overflow,
/// aborting", status 134). It starts with the limit raised and gives the
/// program the guest's limit back (dispatch/exec.rs `OWN_STACK`).
#[test]
fn a_small_stack_limit_before_execve_is_the_guests_alone() {
    let dir = workdir("stackexec");
    // Soft 32 KiB under the usual hard limit, and under a hard limit of
    // 1 MiB (less than the stack the next hotlift grows at start).
    for (i, (script, out)) in [
        (
            "ulimit -S -s 32 && exec /bin/sh -c 'ulimit -S -s; /bin/echo hello'",
            "32\nhello\n",
        ),
        (
            "ulimit -s 1024 && ulimit -S -s 32 && exec /bin/sh -c 'ulimit -S -s; ulimit -H -s'",
            "32\n1024\n",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        // A small environment: natively, the program's start-up must fit
        // in the 32 KiB with it (16 KiB did not always).
        let native = Command::new("/bin/sh")
            .args(["-c", script])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        let p = dir.join(format!("p{i}.json"));
        let h = Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .arg("run")
            .arg("--profile")
            .arg(&p)
            .args(["--", "/bin/sh", "-c", script])
            .output()
            .unwrap();
        assert_eq!(h.status.code(), native.status.code(), "{script}: {h:?}");
        assert_eq!(h.stdout, native.stdout, "{script}");
        assert_eq!(String::from_utf8_lossy(&native.stdout), out);
        let stderr = String::from_utf8_lossy(&h.stderr);
        assert!(stderr.is_empty(), "{script}: {stderr}");
        assert!(read_profile(&p)["ending"].is_object());
    }
}

/// The guest's `umask` is the guest's: the profile's file gets the
/// permissions of the `umask` hotlift started with (a guest's 0777 made
/// it `----------`).
#[test]
fn a_guests_umask_does_not_reach_the_profile() {
    let dir = workdir("umask");
    let p = dir.join("p.json");
    let h = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("run")
        .arg("--profile")
        .arg(&p)
        .args(["--", "/bin/sh", "-c", "umask 0777; exit 3"])
        .output()
        .unwrap();
    assert_eq!(h.status.code(), Some(3), "{h:?}");
    // SAFETY: reads this process's umask and puts it back.
    let ours = unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m
    };
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !ours, "{mode:o}");
    assert_eq!(read_profile(&p)["ending"]["code"], 3);
}

/// hotlift's own descriptors are not the guest's (host.rs H1,
/// syscall/hidden.rs): a guest that closes its stderr, looks for every
/// open descriptor, `close_range`s them all and `dup2`s onto every high
/// number (guest-tests/c/hidden.c) finds what it finds natively, and the
/// `--strace-file` log, hotlift's stderr copy and the profile go on to
/// the end (the log was closed by the guest's `close_range`).
#[test]
fn a_guest_closing_every_descriptor_keeps_hotlifts() {
    let dir = workdir("hiddenfds");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = dir.join("hidden");
    let include = format!("-I{}", root.join("guest-tests/c").display());
    guest::gcc(
        &root.join("guest-tests/c/hidden.c"),
        &exe,
        &["-static", &include],
    );
    let native = Command::new(&exe).stdin(Stdio::null()).output().unwrap();
    let (p, log) = (dir.join("p.json"), dir.join("strace.log"));
    let h = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .arg("run")
        .arg("--profile")
        .arg(&p)
        .arg("--strace-file")
        .arg(&log)
        .arg("--")
        .arg(&exe)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&h.stdout);
    assert_eq!(
        h.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&h.stderr)
    );
    assert_eq!(text, String::from_utf8_lossy(&native.stdout));
    assert!(text.contains("signalled 0, timers 0, owners 0"), "{text}");
    let log = std::fs::read_to_string(&log).unwrap();
    let last = log.lines().last().unwrap_or_default();
    assert!(
        log.contains("close_range(3, ") && last.starts_with("exit_group(0)"),
        "{last}"
    );
    assert_eq!(read_profile(&p)["ending"]["code"], 0);
}

/// A program started with descriptors 0-2 closed finds them closed under
/// hotlift too (the standard library's start-up opened `/dev/null` on
/// them, and the guest saw that: host.rs `close_std_fds_for_guest`).
#[test]
fn descriptors_closed_at_start_stay_closed() {
    let script = |run: &str| {
        format!("exec 0<&- 2>&-; {run} /bin/sh -c 'readlink /proc/self/fd/0 /proc/self/fd/2; echo status $?'")
    };
    let native = Command::new("/bin/sh")
        .args(["-c", &script("exec")])
        .output()
        .unwrap();
    let hotlift = format!("exec {} run --", env!("CARGO_BIN_EXE_hotlift"));
    let h = Command::new("/bin/sh")
        .args(["-c", &script(&hotlift)])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&h.stdout);
    assert_eq!(text, String::from_utf8_lossy(&native.stdout));
    assert_eq!(text, "status 1\n");
}

/// `mlockall(MCL_CURRENT | MCL_FUTURE)` locks the guest's memory, now and
/// a mapping made after, and not hotlift's (syscall/mem/lock.rs L1, L2):
/// passed through, it locked more than a terabyte of hotlift's mappings
/// and made gigabytes resident.
#[test]
fn mlockall_locks_the_guests_memory_alone() {
    let dir = workdir("mlock");
    let exe = build_named(&dir, "mlock");
    let p = dir.join("p.json");
    let n = run(&exe, "", None, None);
    if n.status.code() != Some(0) {
        // Without CAP_IPC_LOCK, RLIMIT_MEMLOCK (8 MiB by default) refuses
        // the 16 MiB locked natively too.
        let out = String::from_utf8_lossy(&n.stdout);
        eprintln!("mlockall or a locked mmap fails natively here, nothing to compare: {out}");
        return;
    }
    let h = run(&exe, "", Some(&p), None);
    let (text, native) = (
        String::from_utf8_lossy(&h.stdout),
        String::from_utf8_lossy(&n.stdout),
    );
    assert_eq!(h.status.code(), Some(0), "{text}");
    let kib = |t: &str, what: &str| -> i64 {
        t.lines()
            .find_map(|l| l.strip_prefix(what))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {what} in {t}"))
    };
    assert!(
        text.starts_with("bad flags: EINVAL\nonfault alone: EINVAL\n"),
        "{text}"
    );
    let locked = kib(&text, "locked ");
    assert!(locked < 64 << 10, "{locked} KiB locked: {text}");
    assert!(kib(&text, "after mmap ") - locked >= 16 << 10, "{text}");
    assert_eq!(kib(&text, "unlocked "), 0, "{text}");
    assert_eq!(kib(&native, "unlocked "), 0, "{native}");
    assert_eq!(read_profile(&p)["ending"]["code"], 0);
}
