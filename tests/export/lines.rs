//! Source lines in the callgrind export (issue 20 goal 2), read back by
//! the real `callgrind_annotate` (Debian's valgrind), and `rep` string
//! iterations at their instruction as valgrind's own callgrind has them.

use super::*;

/// The count `callgrind_annotate --auto=yes` shows for the first line
/// holding `text` in the annotated source of a file whose path ends with
/// `file` (0 for a line shown as `.`).
fn annotated_count(report: &str, file: &str, text: &str) -> u64 {
    let section = report
        .split("-- Auto-annotated source: ")
        .skip(1)
        .find(|s| {
            s.lines()
                .next()
                .is_some_and(|l| l.trim_end().ends_with(file))
        })
        .unwrap_or_else(|| panic!("{file} is not annotated:\n{report}"));
    let line = section
        .lines()
        .find(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no line {text:?} in {file}:\n{section}"));
    let n = line.split_whitespace().next().unwrap();
    if n == "." {
        return 0;
    }
    n.replace(',', "").parse().unwrap()
}

/// `callgrind_annotate --auto=yes --threshold=100 FILE`, checked.
fn annotate_source(file: &Path) -> String {
    let o = Command::new("callgrind_annotate")
        .args(["--auto=yes", "--threshold=100"])
        .arg(file)
        .output()
        .expect("callgrind_annotate (install valgrind: .ci/run does)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn callgrind_annotate_shows_source_lines_with_exact_counts() {
    // Issue 20 goal 2: DWARF lines in the callgrind export. A loop line's
    // count is its instructions per iteration times the iterations.
    let dir = workdir("lines");
    // The loop the coverage tests use (1009 iterations).
    std::fs::write(dir.join("loop.c"), coverage::LOOP_C).unwrap();
    let cpp = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/names/names.cpp");
    for (compiler, src, file, line, times) in [
        (
            "gcc",
            dir.join("loop.c"),
            "loop.c",
            "s += (long)i * i;",
            1009,
        ),
        ("g++", cpp, "names.cpp", "s += x ^ r;", 2_000_000),
    ] {
        let exe = dir.join(format!("{file}.exe"));
        let o = Command::new(compiler)
            .args(["-O0", "-g", "-o"])
            .arg(&exe)
            .arg(&src)
            .output()
            .unwrap_or_else(|e| panic!("{compiler}: {e}"));
        assert!(o.status.success(), "{compiler}: {}", show(&o));
        let p = dir.join(format!("{file}.json"));
        profile(&dir, &p, &[exe.to_str().unwrap()]);
        let out = dir.join(format!("{file}.callgrind"));
        export(&p, "callgrind", &out);
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains("\npositions: instr line\n"), "{file}");
        let report = annotate_source(&out);
        let n = annotated_count(&report, file, line);
        assert!(
            n > 0 && n.is_multiple_of(times),
            "{file}: {line:?} ran {n} instructions, not a multiple of {times}"
        );
        if compiler == "g++" {
            // Library templates have lines of their own headers.
            assert!(
                text.contains("/stl_map.h") || text.contains("/stl_vector.h"),
                "{file}: no STL header among the files"
            );
        }
    }
}

#[test]
fn rep_iterations_sit_at_their_instruction_as_callgrinds() {
    // Issue 20: a `rep movsb` line costs its iterations, as in valgrind's
    // own callgrind, which counts one more per execution than the CPU
    // single-steps (the check that ends it, RCX = 0): 300 here. Nothing
    // is left for the `[rep string iterations]` pseudo-function.
    let dir = workdir("rep");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/profile/rep.c");
    let exe = dir.join("rep");
    let o = Command::new("gcc")
        .args(["-O0", "-g", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("gcc");
    assert!(o.status.success(), "gcc: {}", show(&o));
    let p = dir.join("rep.json");
    let prof = profile(&dir, &p, &[exe.to_str().unwrap()]);
    let placed: u64 = prof["rep_iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["extra"].as_u64().unwrap())
        .sum();
    assert_eq!(
        placed,
        prof["totals"]["rep_extra_iterations"].as_u64().unwrap()
    );
    // The summary's top block is the copy's, its iterations counted.
    let o = Command::new(HOTLIFT)
        .args(["summary", "--top", "1"])
        .arg(&p)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let top = text
        .lines()
        .skip_while(|l| !l.starts_with("top blocks"))
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    let insns: u64 = top
        .split(": ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{top}"));
    assert!(top.contains("main") && insns > placed, "{top}");
    let ours = dir.join("rep.hotlift.callgrind");
    export(&p, "callgrind", &ours);
    let text = std::fs::read_to_string(&ours).unwrap();
    assert!(!text.contains("[rep string iterations]"), "{text}");
    let theirs = dir.join("rep.valgrind.callgrind");
    let o = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", theirs.display()))
        .arg(&exe)
        .output()
        .expect("valgrind (install it: .ci/run does)");
    assert!(o.status.success(), "valgrind: {}", show(&o));
    let (ours, theirs) = (annotate_source(&ours), annotate_source(&theirs));
    let copy = |r: &str| annotated_count(r, "rep.c", "the copy");
    assert!(copy(&ours) > 300_000, "{ours}");
    assert_eq!(copy(&ours) + 300, copy(&theirs));
    let line = |r: &str| annotated_count(r, "rep.c", "s += b[i]");
    assert_eq!(line(&ours), line(&theirs));
}

#[test]
fn source_lines_from_a_debuglink_file_only_when_its_crc_matches() {
    // A program without a build id: its .gnu_debuglink's CRC-32 is all
    // that ties the debug file to it.
    let dir = workdir("debuglink-crc");
    stripped_with_debuglink(&dir, &["-Wl,--build-id=none"]);
    let p = dir.join("rec.json");
    let prof = profile(&dir, &p, &[dir.join("rec").to_str().unwrap()]);
    assert!(prof["binary"]["build_id"].is_null(), "no build id");
    let out = dir.join("rec.callgrind");
    export(&p, "callgrind", &out);
    let has_lines = || {
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("/recursion.c\n")
    };
    assert!(has_lines(), "lines from rec.debug, whose CRC matches");
    // The same debug file with one more byte: another CRC.
    let mut bytes = std::fs::read(dir.join("rec.debug")).unwrap();
    bytes.push(0);
    std::fs::write(dir.join("rec.debug"), bytes).unwrap();
    export(&p, "callgrind", &out);
    assert!(
        !has_lines(),
        "a debug file whose CRC differs gives no lines"
    );
}
