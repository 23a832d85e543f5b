//! The cache directory (src/persist.rs): a warm run's profile names and
//! counts what a cold run's does, its blocks placed from kept
//! translations (dispatch/kept/); a damaged entry, a changed file, code
//! changed in memory, concurrent runs and a directory others may write to
//! each give a cold read or translation, at most a one-line warning, never
//! other names or counts; `--no-cache`, `--cache-dir` and `hotlift cache
//! show|clear` do what they say.

mod guest;
mod kept;

use kept::*;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What a profile says of names: each module's name, path, build id and
/// program hash, and each block's (module, offset, symbol, count).
fn names(p: &serde_json::Value) -> (Vec<String>, Vec<String>) {
    let modules = p["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{} {} {}", m["name"], m["path"], m["build_id"]))
        .chain([format!("{} {}", p["binary"]["sha256"], p["binary"]["size"])])
        .collect();
    let blocks = p["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            format!(
                "{} {} {} {}",
                b["module"], b["offset"], b["symbol"], b["count"]
            )
        })
        .collect();
    (modules, blocks)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("facts"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_warm_run_names_what_a_cold_run_names() {
    let dir = workdir("warm");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let (o, cold) = run(&exe, &dir.join("cold.json"), &arg, &[]);
    assert_eq!(stderr(&o), "");
    // The program, ld.so and libc (not the vDSO, read from memory).
    assert!(entries(&cache).len() >= 3, "{:?}", entries(&cache));
    let (o, warm) = run(&exe, &dir.join("warm.json"), &arg, &[]);
    assert_eq!(stderr(&o), "");
    let (_, none) = run(&exe, &dir.join("none.json"), &["--no-cache"], &[]);
    assert_eq!(names(&warm), names(&cold));
    assert_eq!(names(&none), names(&cold));
    assert!(
        names(&warm).1.iter().any(|b| b.contains("\"work\"")),
        "the program's own function is named"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_entries_are_read_cold_with_a_warning_and_written_again() {
    let dir = workdir("damaged");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let (_, cold) = run(&exe, &dir.join("cold.json"), &arg, &[]);
    let kept = entries(&cache);
    // One entry with a byte changed, one cut short, one emptied.
    for (i, e) in kept.iter().enumerate() {
        let mut b = std::fs::read(e).unwrap();
        match i % 3 {
            0 => {
                let mid = b.len() / 2;
                b[mid] ^= 1;
            }
            1 => b.truncate(b.len() - 7),
            _ => b.clear(),
        }
        std::fs::write(e, b).unwrap();
    }
    let (o, damaged) = run(&exe, &dir.join("damaged.json"), &arg, &[]);
    let err = stderr(&o);
    let warnings: Vec<&str> = err.lines().collect();
    assert_eq!(
        warnings.len(),
        kept.len(),
        "one line per damaged entry: {warnings:?}"
    );
    assert!(
        warnings.iter().all(|w| w.contains("is damaged")),
        "{warnings:?}"
    );
    assert_eq!(names(&damaged), names(&cold));
    let (o, again) = run(&exe, &dir.join("again.json"), &arg, &[]);
    assert_eq!(stderr(&o), "", "written again whole");
    assert_eq!(names(&again), names(&cold));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_changed_program_is_read_again() {
    let dir = workdir("changed");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let (_, before) = run(&exe, &dir.join("before.json"), &arg, &[]);
    // The same path, another program: its function has another name.
    build(&dir, "prog", &PROGRAM.replace("work", "toil"));
    let (_, after) = run(&exe, &dir.join("after.json"), &arg, &[]);
    let has =
        |p: &serde_json::Value, f: &str| names(p).1.iter().any(|b| b.contains(&format!("\"{f}\"")));
    assert!(has(&before, "work") && !has(&before, "toil"));
    assert!(
        has(&after, "toil") && !has(&after, "work"),
        "{:?}",
        names(&after).1
    );
    assert_ne!(names(&after).0, names(&before).0, "another hash");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_runs_share_one_cache() {
    let dir = workdir("concurrent");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    // Six at once, twice: the first round writes symbols and marks, the
    // second kept translations (kept/mod.rs K3), each entry by six writers.
    let round = |r: usize| -> Vec<(Output, serde_json::Value)> {
        let runs: Vec<_> = (0..6)
            .map(|i| {
                let (exe, cache) = (exe.clone(), cache.clone());
                let out = dir.join(format!("p{r}-{i}.json"));
                std::thread::spawn(move || {
                    run(&exe, &out, &["--cache-dir", cache.to_str().unwrap()], &[])
                })
            })
            .collect();
        runs.into_iter().map(|t| t.join().unwrap()).collect()
    };
    let first = round(0);
    let second = round(1);
    let results: Vec<_> = first.iter().chain(&second).collect();
    for (o, p) in &results {
        assert_eq!(stderr(o), "");
        assert_eq!(names(p), names(&results[0].1));
        same_counts(p, &results[0].1);
    }
    // No temporary file left behind, no entry twice.
    for kind in ["facts", "translations", "translations-seen"] {
        let kept = kind_entries(&cache, kind);
        assert!(!kept.is_empty(), "{kind}");
        assert!(
            kept.iter()
                .all(|e| !e.file_name().unwrap().to_str().unwrap().starts_with('.')),
            "{kept:?}"
        );
    }
    let (o, warm) = run(
        &exe,
        &dir.join("warm.json"),
        &["--cache-dir", cache.to_str().unwrap()],
        &[],
    );
    assert_eq!(stderr(&o), "");
    assert_eq!(names(&warm), names(&results[0].1));
    same_counts(&warm, &results[0].1);
    assert!(kept_blocks(&warm) > 0, "placed from what six wrote at once");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_default_directory_and_the_cache_subcommand() {
    let dir = workdir("default");
    let exe = build(&dir, "prog", PROGRAM);
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = [("HOME", home.as_path()), ("XDG_CACHE_HOME", Path::new(""))];
    // --no-cache makes nothing.
    run(&exe, &dir.join("a.json"), &["--no-cache"], &env);
    assert!(!home.join(".cache").exists());
    run(&exe, &dir.join("b.json"), &[], &env);
    let cache = home.join(".cache/hotlift");
    assert!(entries(&cache).len() >= 3, "{cache:?}");
    let cli = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {o:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let show = cli(&["cache", "show"]);
    assert!(
        show.starts_with(&format!("{}\n", cache.display())),
        "{show}"
    );
    assert!(show.contains("facts") && show.contains("entries"), "{show}");
    let n = entries(&cache).len()
        + translation_entries(&cache).len()
        + kind_entries(&cache, "translations-seen").len()
        + kind_entries(&cache, "translations-more").len();
    assert_eq!(
        cli(&["cache", "clear"]),
        format!("{}: {n} entries removed\n", cache.display())
    );
    assert!(entries(&cache).is_empty());
    assert!(cli(&["cache", "show"]).contains("empty"));
    // XDG_CACHE_HOME wins over HOME.
    let xdg = dir.join("xdg");
    let env = [("HOME", home.as_path()), ("XDG_CACHE_HOME", xdg.as_path())];
    run(&exe, &dir.join("c.json"), &[], &env);
    assert!(entries(&xdg.join("hotlift")).len() >= 3);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_others_may_write_to_is_not_used() {
    let dir = workdir("shared");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (o, p) = run(
        &exe,
        &dir.join("p.json"),
        &["--cache-dir", cache.to_str().unwrap()],
        &[],
    );
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("others may write to it") && err.contains("running without it"),
        "{err}"
    );
    assert!(entries(&cache).is_empty());
    assert!(names(&p).1.iter().any(|b| b.contains("\"work\"")));
    let _ = std::fs::remove_dir_all(&dir);
}
/// Translations kept by one run are placed by the next (dispatch/kept/)
/// and its profile counts what the cold run's counts, with the program,
/// ld.so and libc loaded elsewhere (a PIE: every base moves).
#[test]
fn kept_translations_count_what_a_cold_run_counts() {
    let dir = workdir("kept");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let (o, cold) = run(&exe, &dir.join("cold.json"), &arg, &[]);
    assert_eq!(stderr(&o), "");
    assert_eq!(kept_blocks(&cold), 0);
    // K3: the first cold run leaves marks, the second writes.
    assert!(translation_entries(&cache).is_empty());
    let marks = kind_entries(&cache, "translations-seen").len();
    assert!(marks >= 3, "program, ld.so, libc: {marks}");
    let (_, second) = run(&exe, &dir.join("second.json"), &arg, &[]);
    assert_eq!(kept_blocks(&second), 0);
    same_counts(&second, &cold);
    assert_eq!(translation_entries(&cache).len(), marks);
    let (o2, warm) = run(&exe, &dir.join("warm.json"), &arg, &[]);
    assert_eq!(stderr(&o2), "");
    assert_eq!(o2.stdout, o.stdout);
    let translated = warm["totals"]["translated_blocks"].as_u64().unwrap();
    assert!(
        kept_blocks(&warm) * 10 >= translated * 9,
        "{} of {translated} blocks placed from kept translations",
        kept_blocks(&warm)
    );
    same_counts(&warm, &cold);
    // The summary says how many were placed, and only when some were.
    let said = |json: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .arg("summary")
            .arg(dir.join(json))
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
    };
    let placed = format!(
        "; {} of them placed from the cache directory)",
        kept_blocks(&warm)
    );
    assert!(said("warm.json").contains(&placed), "{}", said("warm.json"));
    assert!(
        !said("cold.json").contains("placed from"),
        "{}",
        said("cold.json")
    );
    // Without the monitor the blocks push no words: entries of their
    // own, and the two kinds of run do not take each other's.
    let plain = Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--no-monitor", arg[0], arg[1], "--"])
        .arg(&exe)
        .output()
        .unwrap();
    assert_eq!(plain.stdout, o.stdout);
    assert_eq!(
        kind_entries(&cache, "translations-seen").len(),
        2 * marks,
        "marks of its own"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A damaged entry of kept translations is a cold start for its module
/// with a one-line warning, and the run writes it again.
#[test]
fn damaged_kept_translations_are_translated_again() {
    let dir = workdir("kept-damaged");
    let exe = build(&dir, "prog", PROGRAM);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let (_, cold) = run(&exe, &dir.join("cold.json"), &arg, &[]);
    run(&exe, &dir.join("second.json"), &arg, &[]);
    let kept = translation_entries(&cache);
    assert!(!kept.is_empty());
    for (i, e) in kept.iter().enumerate() {
        let mut b = std::fs::read(e).unwrap();
        if i % 2 == 0 {
            let mid = b.len() / 2;
            b[mid] ^= 0x40;
        } else {
            b.truncate(b.len() / 3);
        }
        std::fs::write(e, b).unwrap();
    }
    let (o, damaged) = run(&exe, &dir.join("damaged.json"), &arg, &[]);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), kept.len(), "one line each: {err}");
    assert!(err.lines().all(|w| w.contains("is damaged")), "{err}");
    assert_eq!(kept_blocks(&damaged), 0);
    same_counts(&damaged, &cold);
    let (o, again) = run(&exe, &dir.join("again.json"), &arg, &[]);
    assert_eq!(stderr(&o), "", "written again whole");
    assert!(kept_blocks(&again) > 0);
    same_counts(&again, &cold);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program that rewrites one of its functions before calling it, when
/// asked: the kept block of the function as the file has it is not the
/// code in memory then, and is not placed (kept/mod.rs K1).
const PATCHER: &str = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\
    #include <stdint.h>\n#include <sys/mman.h>\n\
    __attribute__((noinline)) int answer(void) { return 0x11223344; }\n\
    int main(int argc, char **argv) {\n\
      if (argc > 1) {\n\
        unsigned char *p = (unsigned char *)answer;\n\
        uintptr_t page = (uintptr_t)p & ~(uintptr_t)4095;\n\
        if (mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC)) return 2;\n\
        for (int i = 0; i < 16; i++) if (!memcmp(p + i, \"\\x44\\x33\\x22\\x11\", 4)) { p[i] = 0x55; break; }\n\
      }\n\
      printf(\"%x\\n\", answer());\n\
      return 0;\n\
    }\n";

#[test]
fn a_kept_block_whose_code_changed_in_memory_is_not_placed() {
    let dir = workdir("kept-patched");
    let exe = build(&dir, "patcher", PATCHER);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let native = |args: &[&str]| Command::new(&exe).args(args).output().unwrap().stdout;
    let hotlift = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .arg("run")
            .args(arg)
            .arg("--")
            .arg(&exe)
            .args(args)
            .output()
            .unwrap()
    };
    // Kept as the file has it (at the second run, K3), placed again
    // unchanged.
    for _ in 0..3 {
        let o = hotlift(&[]);
        assert!(o.status.success(), "{o:?}");
        assert_eq!(o.stdout, native(&[]));
    }
    // Rewritten in memory first: its new code runs.
    let patched = native(&["patch"]);
    assert_eq!(patched, b"11223355\n");
    let o = hotlift(&["patch"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(o.stdout, patched);
    let _ = std::fs::remove_dir_all(&dir);
}

/// kept/mod.rs K5: a run that adds a few blocks to a module's entry
/// writes them to the module's second entry, which the next run places
/// from; one that adds many writes the first again, with the second's.
#[test]
fn a_few_new_blocks_go_to_a_second_entry_placed_by_the_next_run() {
    let dir = workdir("kept-more");
    let exe = build(&dir, "variants", &variants_program());
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let v = |k: &'static str| [("VARIANT", Path::new(k))];
    // Marks, then the entries, then a warm run: what is never kept (the
    // vDSO's blocks).
    run(&exe, &dir.join("a.json"), &arg, &v("0"));
    run(&exe, &dir.join("b.json"), &arg, &v("0"));
    let (_, warm0) = run(&exe, &dir.join("c.json"), &arg, &v("0"));
    let base = unkept(&warm0);
    let first = |cache: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        translation_entries(cache)
            .into_iter()
            .map(|e| (e.clone(), std::fs::read(&e).unwrap()))
            .collect()
    };
    let before = first(&cache);
    // Three functions more: a few blocks, to the second entry; the first
    // entries are not written again.
    let (o, few) = run(&exe, &dir.join("d.json"), &arg, &v("3"));
    assert_eq!(stderr(&o), "");
    assert!(unkept(&few) > base, "{} vs {base}", unkept(&few));
    assert_eq!(first(&cache), before, "first entries unchanged");
    assert!(!kind_entries(&cache, "translations-more").is_empty());
    let (_, cold3) = run(&exe, &dir.join("e.json"), &["--no-cache"], &v("3"));
    let (o, again) = run(&exe, &dir.join("f.json"), &arg, &v("3"));
    assert_eq!(stderr(&o), "");
    assert_eq!(unkept(&again), base, "placed from the second entry");
    same_counts(&again, &cold3);
    // All eighty: past K3's threshold, the program's first entry is
    // written again, holding the second's blocks too.
    run(&exe, &dir.join("g.json"), &arg, &v("80"));
    assert_ne!(first(&cache), before, "the first entry written again");
    let (_, cold80) = run(&exe, &dir.join("h.json"), &["--no-cache"], &v("80"));
    let (_, warm80) = run(&exe, &dir.join("i.json"), &arg, &v("80"));
    assert_eq!(unkept(&warm80), base);
    same_counts(&warm80, &cold80);
    let (_, warm3) = run(&exe, &dir.join("j.json"), &arg, &v("3"));
    assert_eq!(unkept(&warm3), base);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program whose forked child runs a function its parent never does.
const FORKER: &str = "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n\
    #include <sys/wait.h>\n\
    __attribute__((noinline)) long in_child(long n) { long s = 1; for (long i = 1; i < n; i++) s = s * 3 % 1000003 + i; return s; }\n\
    __attribute__((noinline)) long extra(long n) { long s = 7; for (long i = 1; i < n; i++) s ^= s << 3 | i; return s; }\n\
    int main(void) {\n\
      pid_t p = fork();\n\
      if (p == 0) { printf(\"%ld\\n\", in_child(100)); fflush(stdout); _exit(0); }\n\
      int st; waitpid(p, &st, 0);\n\
      if (getenv(\"EXTRA\")) return extra(50) == 1;\n\
      return 0;\n\
    }\n";

/// The profile a run's forked child wrote beside `out` (`out.PID`).
fn child_profile(out: &Path) -> serde_json::Value {
    let name = out.file_name().unwrap().to_str().unwrap().to_string();
    let child = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.len() > name.len() + 1 && n.starts_with(&format!("{name}."))
        })
        .unwrap_or_else(|| panic!("no child profile beside {out:?}"));
    serde_json::from_str(&std::fs::read_to_string(child).unwrap()).unwrap()
}

/// kept/mod.rs K3, K5: a forked child keeps the blocks it makes in its
/// modules' second entries, and the next run's child places them; its
/// parent's own write at its end keeps what the child wrote.
#[test]
fn a_forked_childs_blocks_are_kept_for_the_next_runs_child() {
    let dir = workdir("kept-forked");
    let exe = build(&dir, "forker", FORKER);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    // Marks, then the parent's first entries (the child keeps nothing of
    // a module without one), then the child's second entries, which its
    // parent, making blocks of its own in the same module (`extra`),
    // writes again at its end with them.
    let extra = [("EXTRA", Path::new("1"))];
    for (i, env) in [&[][..], &[][..], &extra[..]].iter().enumerate() {
        let d = dir.join(format!("run{i}"));
        std::fs::create_dir_all(&d).unwrap();
        run(&exe, &d.join("p.json"), &arg, env);
    }
    let unkept_child = |n: &str| {
        let d = dir.join(n);
        std::fs::create_dir_all(&d).unwrap();
        let out = d.join("p.json");
        let (o, _) = run(&exe, &out, &arg, &extra);
        assert_eq!(stderr(&o), "");
        assert_eq!(String::from_utf8_lossy(&o.stdout), "277305\n");
        unkept(&child_profile(&out))
    };
    let d = dir.join("cold");
    std::fs::create_dir_all(&d).unwrap();
    let cold_out = d.join("p.json");
    run(&exe, &cold_out, &["--no-cache"], &[]);
    let cold = child_profile(&cold_out);
    let warm = unkept_child("warm");
    assert!(
        warm * 10 <= unkept(&cold),
        "the child placed its own blocks: {warm} unkept, cold {}",
        unkept(&cold)
    );
    let again = unkept_child("again");
    assert_eq!(again, warm, "and goes on placing them");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Offsets of the records of a translations entry (persist.rs: magic,
/// then identity, key and payload after their lengths, then a CRC;
/// kept/record.rs: each record's length, then its block's offset; after
/// the records, their table: 8 bytes a record, then its `u32` count).
fn record_offsets(entry: &Path) -> Vec<u32> {
    let b = std::fs::read(entry).unwrap();
    let mut at = 8;
    let mut part = || {
        let n = u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
        at += 8 + n;
        &b[at - n..at]
    };
    let (_, _, sealed) = (part(), part(), part());
    let count = sealed.len() - 4;
    let n = u32::from_le_bytes(sealed[count..].try_into().unwrap()) as usize;
    let payload = &sealed[..count - 8 * n];
    let mut offsets = Vec::new();
    let mut i = 0;
    while i < payload.len() {
        let len = u32::from_le_bytes(payload[i..i + 4].try_into().unwrap()) as usize;
        offsets.push(u32::from_le_bytes(
            payload[i + 4..i + 8].try_into().unwrap(),
        ));
        i += 4 + len;
    }
    assert_eq!(offsets.len(), n, "{entry:?}: the table's count");
    offsets
}

/// `f`, on a page of its own, loses and gets back its execute permission
/// between calls: each time its translations go, and it is translated
/// again.
const REPROTECTS: &str = "#include <stdio.h>\n#include <stdint.h>\n#include <sys/mman.h>\n\
    __attribute__((noinline, aligned(4096), section(\".text.f\"))) long f(long x) { return x * 3 + (x & 5); }\n\
    int main(void) { long s = 0; void *p = (void *)((uintptr_t)f & ~(uintptr_t)4095);\n\
    for (int i = 0; i < 20; i++) { s += f(i);\n\
    if (mprotect(p, 4096, PROT_READ) || mprotect(p, 4096, PROT_READ | PROT_EXEC)) return 1; }\n\
    printf(\"%ld\\n\", s); return 0; }\n";

/// kept/mod.rs K3: a block translated again in one run (its code's
/// permission changed, a flush) is kept once. Each translation was a
/// record of its own: an OpenJDK library's entry had grown to 370 MB, 1.1
/// million records of 114,000 blocks, read whole by every start.
#[test]
fn a_block_translated_again_is_kept_once() {
    let dir = workdir("kept-again");
    let exe = build(&dir, "reprotects", REPROTECTS);
    let cache = dir.join("cache");
    let arg = ["--cache-dir", cache.to_str().unwrap()];
    let out = dir.join("p.json");
    // The mark, then the entries.
    run(&exe, &out, &arg, &[]);
    let (o, p) = run(&exe, &out, &arg, &[]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "612\n");
    let flushes = p["code_cache_flushes"].as_u64().unwrap();
    assert!(flushes >= 20, "{flushes} flushes");
    let entries = translation_entries(&cache);
    assert!(!entries.is_empty());
    for e in entries {
        let mut offsets = record_offsets(&e);
        let n = offsets.len();
        offsets.sort_unstable();
        offsets.dedup();
        assert_eq!(
            offsets.len(),
            n,
            "{e:?}: {n} records of {} blocks",
            offsets.len()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
