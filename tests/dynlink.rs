//! Dynamic linking beyond the guest-test run list: what the profile says
//! about libraries loaded at run time, ld.so started as the program, and a
//! program started through a symbolic link (the guest tests themselves run
//! natively and under hotlift in `guest_diff.rs`, and are single-stepped in
//! `exact.rs`).
//!
//! Invariants:
//! - L1. A run compared with native gets the same argv, environment, stdin
//!   and a fresh working directory (`tests/guest/mod.rs`, D1-D3), and must
//!   match it byte for byte, status included.
//! - L2. The profile of `dyn-dlopen`, which loads `libhlplugin.so`, unloads
//!   it, loads `libhlplugin2.so` (mapped where the first was) and the first
//!   again, lists three modules for them, each unmapped by the end and each
//!   with its own executed `hl_plugin_run` blocks: one address, three
//!   images, told apart (profile modules.rs I1, I3).
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod guest;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use guest::{diff_summary, Dirs, Launch, RunResult};

const LD_SO: &str = "/lib64/ld-linux-x86-64.so.2";
const ENV: &[(&str, &str)] = &[("PATH", "/usr/bin:/bin"), ("LC_ALL", "C")];

/// The guest-test directories, the guests built once per process (both
/// tests would otherwise run make in one directory at once).
fn built() -> Dirs {
    static BUILT: std::sync::Once = std::sync::Once::new();
    let dirs = Dirs::new();
    BUILT.call_once(|| guest::build_guests(&dirs.guest));
    dirs
}

/// Runs `program args` natively (`hotlift` None) or under `hotlift ARGS --`.
fn run(program: &Path, args: &[&str], hotlift: Option<&[&str]>) -> RunResult {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("hotlift-dynlink-{}-{n}", std::process::id()));
    let tool = Path::new(env!("CARGO_BIN_EXE_hotlift"));
    let pre: Vec<OsString> = hotlift
        .unwrap_or_default()
        .iter()
        .map(OsString::from)
        .chain(["--".into()])
        .collect();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let r = guest::run(&Launch {
        launcher: hotlift.map(|_| (tool, pre.as_slice())),
        program,
        args: &args,
        dir: &dir,
        env: ENV,
        stdin: None,
        timeout: Duration::from_secs(60),
        cpu: None,
        no_randomize: false,
    });
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// L1: the native run and the hotlift run agree; returns the hotlift run.
fn same_as_native(program: &Path, args: &[&str], hotlift: &[&str]) -> RunResult {
    let native = run(program, args, None);
    assert!(
        guest::outcome_matches(&native.outcome, guest::Expect::Exit(0)),
        "native {} {args:?}: {}",
        program.display(),
        native.outcome
    );
    let r = run(program, args, Some(hotlift));
    let mut why = String::new();
    if r.outcome != native.outcome {
        why.push_str(&format!(
            "status: native {}, hotlift {}\n",
            native.outcome, r.outcome
        ));
    }
    why.extend(diff_summary("stdout", &native.stdout, &r.stdout));
    why.extend(diff_summary("stderr", &native.stderr, &r.stderr));
    assert!(why.is_empty(), "{} {args:?}:\n{why}", program.display());
    r
}

fn profile_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "hotlift-dynlink-{}-{name}.json",
        std::process::id()
    ))
}

fn read_profile(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("profile written");
    let _ = std::fs::remove_file(path);
    serde_json::from_str(&text).expect("profile is JSON")
}

/// Executed blocks of module `module` whose symbol starts with `symbol`.
fn runs_in(p: &serde_json::Value, module: &str, symbol: &str) -> u64 {
    p["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["module"] == module)
        .filter(|b| b["symbol"].as_str().is_some_and(|s| s.starts_with(symbol)))
        .map(|b| b["count"].as_u64().unwrap())
        .sum()
}

fn module<'a>(p: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    p["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no module {name} in {}", p["modules"]))
}

#[test]
fn dlopen_profile_tells_libraries_at_one_place_apart() {
    let dirs = built();
    let profile = profile_path("dlopen");
    let p = profile.to_str().unwrap();
    same_as_native(
        &dirs.build.join("dyn-dlopen"),
        &[],
        &["run", "--profile", p],
    );
    let p = read_profile(&profile);
    let names = ["libhlplugin.so", "libhlplugin2.so", "libhlplugin.so#2"];
    for name in names {
        let m = module(&p, name);
        assert_eq!(m["kind"], "mapped", "{m}");
        assert_eq!(m["unmapped"], true, "{m}");
        assert!(
            m["path"]
                .as_str()
                .unwrap()
                .contains("/build/lib/libhlplugin"),
            "{m}"
        );
        assert!(
            runs_in(&p, name, "hl_plugin_run") > 0,
            "{name}: no executed hl_plugin_run"
        );
    }
    // Each image's blocks are its own: the second plugin's comparison
    // function ran only in it.
    assert!(runs_in(&p, "libhlplugin2.so", "cmp") > 0);
    assert_eq!(runs_in(&p, "libhlplugin.so", "cmp"), 0);
    assert_eq!(module(&p, "libc.so.6")["unmapped"], false);
    assert!(runs_in(&p, "dyn-dlopen", "dlopen@plt") > 0);
    let tree = p["call_tree"].as_array().unwrap();
    assert!(tree.iter().any(|n| n["symbol"] == "hl_plugin_run"));
}

#[test]
fn ld_so_as_the_program_and_programs_through_a_symlink() {
    let dirs = built();
    let origin = dirs.build.join("dyn-origin");
    let o = origin.to_str().unwrap();
    // ld.so run directly: it is the program, as natively (/proc/self/exe
    // names it, $ORIGIN of the program it loads is its own directory).
    let profile = profile_path("ldso");
    let pp = profile.to_str().unwrap();
    same_as_native(Path::new(LD_SO), &[o], &["run", "--profile", pp]);
    let p = read_profile(&profile);
    assert_eq!(p["binary"]["path"], LD_SO);
    assert_eq!(module(&p, "ld-linux-x86-64.so.2")["kind"], "program");
    assert_eq!(module(&p, "dyn-origin")["kind"], "mapped");
    assert!(runs_in(&p, "dyn-origin", "main") > 0);
    assert!(runs_in(&p, "libhlorigin.so", "hl_origin_greeting") > 0);
    // Through ld.so with an explicit library path.
    same_as_native(
        Path::new(LD_SO),
        &["--library-path", "/nonexistent", o],
        &["run"],
    );

    // A symbolic link to the program, elsewhere: argv[0] and AT_EXECFN
    // name the link, /proc/self/exe (and so $ORIGIN) the program.
    let dir = std::env::temp_dir().join(format!("hotlift-dynlink-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("linked-origin");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&origin, &link).unwrap();
    let r = same_as_native(&link, &[], &["run"]);
    let out = String::from_utf8_lossy(&r.stdout);
    assert!(out.contains("argv[0] names linked-origin"), "{out}");
    assert!(out.contains("/proc/self/exe names dyn-origin"), "{out}");
    assert!(
        out.contains("loaded from $ORIGIN/lib/libhlorigin.so"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
