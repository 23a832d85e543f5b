//! Hostile guests (issue 19, containment): a guest that turns a
//! process-wide control against the process it shares with hotlift acts
//! as natively where that is possible, as documented where it is not, and
//! never costs hotlift its profile. Each case runs natively beside where
//! the outcome should match.

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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/limits.c");
    let exe = dir.join("limits");
    let st = Command::new("gcc")
        .args(["-O1", "-static", "-o"])
        .arg(&exe)
        .arg(src)
        .status()
        .expect("gcc");
    assert!(st.success(), "gcc failed");
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
