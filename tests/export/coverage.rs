//! `hotlift export --format lcov|cobertura` (issue 20 goal 3): exact line,
//! function and branch counts of a `-g` program with no rebuild, read by
//! the real consumers: `genhtml` (Debian's lcov) and pycobertura (PyPI;
//! `.ci/run` installs it under `target/pydeps`).

use super::*;

/// A loop of 1009 iterations, a function never called and a branch that
/// goes one way.
pub(super) const LOOP_C: &str = "#include <stdio.h>\n\
static long sumsq(int n) {\n\
\x20   long s = 0;\n\
\x20   for (int i = 0; i < n; i++)\n\
\x20       s += (long)i * i;\n\
\x20   return s;\n\
}\n\
static int never(int x) {\n\
\x20   return x * 3;\n\
}\n\
int main(int argc, char **argv) {\n\
\x20   printf(\"%ld\\n\", sumsq(1009));\n\
\x20   if (argc > 5)\n\
\x20       return never(argc);\n\
\x20   return 0;\n\
}\n";

/// Build loop.c with `-O0 -g` in `dir`: the program's path.
fn build_loop(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("loop.c"), LOOP_C).unwrap();
    let exe = dir.join("loop");
    let o = Command::new("gcc")
        .args(["-O0", "-g", "-o"])
        .arg(&exe)
        .arg(dir.join("loop.c"))
        .output()
        .expect("gcc");
    assert!(o.status.success(), "gcc: {}", show(&o));
    exe
}

/// The lcov records of the source file ending with `file`: its `KEY:rest`
/// lines.
fn lcov_record(info: &str, file: &str) -> Vec<String> {
    let rec = info
        .split("end_of_record")
        .find(|r| r.lines().any(|l| l.starts_with("SF:") && l.ends_with(file)))
        .unwrap_or_else(|| panic!("no record for {file}:\n{info}"));
    rec.lines().map(str::to_string).collect()
}

/// Hits of `line` in an lcov record (`DA:line,hits`).
fn da(rec: &[String], line: u32) -> Option<u64> {
    let key = format!("DA:{line},");
    rec.iter()
        .find_map(|l| l.strip_prefix(&key))
        .map(|n| n.parse().unwrap())
}

/// The first file named `name` under `dir`.
fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let path = e.path();
        if path.is_dir() {
            if let Some(f) = find_file(&path, name) {
                return Some(f);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

/// The line of LOOP_C holding `text` (1-based).
fn line_of(text: &str) -> u32 {
    LOOP_C.lines().position(|l| l.contains(text)).unwrap() as u32 + 1
}

#[test]
fn lcov_export_has_exact_line_counts_and_genhtml_renders_it() {
    let dir = workdir("lcov");
    let exe = build_loop(&dir);
    let p = dir.join("p.json");
    profile(&dir, &p, &[exe.to_str().unwrap()]);
    let info = dir.join("p.info");
    export_all(std::slice::from_ref(&p), "lcov", &info);
    let text = std::fs::read_to_string(&info).unwrap();
    let rec = lcov_record(&text, "/loop.c");
    // A loop body's line ran its iterations, the `for` line one more
    // (its test), as gcov counts them.
    assert_eq!(da(&rec, line_of("s += (long)i * i;")), Some(1009));
    assert_eq!(da(&rec, line_of("for (int i")), Some(1010));
    assert_eq!(da(&rec, line_of("return x * 3;")), Some(0), "never ran");
    assert_eq!(da(&rec, line_of("return never(argc);")), Some(0));
    assert_eq!(da(&rec, line_of("return 0;")), Some(1));
    assert!(rec.contains(&"FNDA:1,sumsq".to_string()), "{rec:?}");
    assert!(rec.contains(&"FNDA:0,never".to_string()), "{rec:?}");
    // `if (argc > 5)`: both ways of its one jump, one of them never.
    let branch = line_of("if (argc > 5)");
    let brda: Vec<&String> = rec
        .iter()
        .filter(|l| l.starts_with(&format!("BRDA:{branch},")))
        .collect();
    assert_eq!(brda.len(), 2, "{rec:?}");
    let counts: Vec<&str> = brda.iter().map(|l| l.rsplit(',').next().unwrap()).collect();
    assert!(counts.contains(&"0") && counts.contains(&"1"), "{brda:?}");
    let lf = rec.iter().find_map(|l| l.strip_prefix("LF:")).unwrap();
    let lh = rec.iter().find_map(|l| l.strip_prefix("LH:")).unwrap();

    // genhtml renders it, and counts what the tracefile says.
    let html = dir.join("html");
    let o = Command::new("genhtml")
        .args(["--branch-coverage", "-o"])
        .arg(&html)
        .arg(&info)
        .output()
        .expect("genhtml (install lcov: .ci/run does)");
    assert!(o.status.success(), "genhtml: {}", show(&o));
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        summary.contains(&format!("({lh} of {lf} lines)")),
        "genhtml: {summary}"
    );
    // Under the folder genhtml keeps of the source's path.
    let page = find_file(&html, "loop.c.gcov.html").expect("genhtml wrote loop.c's page");
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains("1009"), "the loop body's count on the page");
}

/// Functions declared over several lines, an optimised leaf whose entry
/// is its first statement's code, and a C++ member defined out of its
/// class (`DW_AT_specification`).
const DECL_CPP: &str = "#include <cstdio>\n\
struct Acc {\n\
\x20   unsigned long total = 0;\n\
\x20   void add(unsigned long x);\n\
};\n\
__attribute__((noinline))\n\
void\n\
Acc::add(unsigned long x)\n\
{\n\
\x20   total += x * 3 + 1;\n\
}\n\
__attribute__((noinline))\n\
static unsigned long\n\
leaf(unsigned long x)\n\
{\n\
\x20   return x * 7 + 2;\n\
}\n\
int main() {\n\
\x20   Acc a;\n\
\x20   for (unsigned long i = 0; i < 10; i++)\n\
\x20       a.add(leaf(i));\n\
\x20   std::printf(\"%lu\\n\", a.total);\n\
\x20   return 0;\n\
}\n";

/// lcov's `FN:` lines are where the functions are declared, as gcov's own
/// (the oracle: the same source built with `--coverage`, run natively,
/// read with `gcov --json-format`), not the line-table row at their entry.
#[test]
fn function_lines_are_gcovs() {
    let dir = workdir("decl");
    let src = dir.join("decl.cc");
    std::fs::write(&src, DECL_CPP).unwrap();
    let gxx = |args: &[&str], exe: &str| {
        let o = Command::new("g++")
            .args(["-O2", "-g"])
            .args(args)
            .arg("-o")
            .arg(dir.join(exe))
            .arg(&src)
            .current_dir(&dir)
            .output()
            .expect("g++");
        assert!(o.status.success(), "g++: {}", show(&o));
    };
    gxx(&[], "decl");
    gxx(&["--coverage"], "decl-cov");
    let native = Command::new(dir.join("decl-cov"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(native.status.success());
    let gcda = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "gcda"))
        .expect("the --coverage run wrote its .gcda");
    let o = Command::new("gcov")
        .args(["--json-format", "--stdout"])
        .arg(&gcda)
        .current_dir(&dir)
        .output()
        .expect("gcov");
    assert!(o.status.success(), "gcov: {}", show(&o));
    let gcov: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let want: Vec<(String, u64)> = gcov["files"][0]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["demangled_name"].as_str().unwrap().to_string(),
                f["start_line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(want.len(), 3, "{want:?}");

    let p = dir.join("p.json");
    profile(&dir, &p, &[dir.join("decl").to_str().unwrap()]);
    let info = dir.join("p.info");
    export_all(std::slice::from_ref(&p), "lcov", &info);
    let text = std::fs::read_to_string(&info).unwrap();
    let rec = lcov_record(&text, "/decl.cc");
    for (name, line) in &want {
        // gcov names `Acc::add(unsigned long)`, `leaf(unsigned long)`,
        // `main()`; hotlift's demangled names may drop the parameters.
        let short = name.split('(').next().unwrap();
        let fnl = rec
            .iter()
            .filter_map(|l| l.strip_prefix("FN:"))
            .find(|l| {
                let n = l.split_once(',').unwrap().1;
                n == name || n == short || n.split('(').next() == Some(short)
            })
            .unwrap_or_else(|| panic!("no FN for {name}: {rec:?}"));
        assert_eq!(
            fnl.split(',').next().unwrap(),
            line.to_string(),
            "{name}: {rec:?}"
        );
    }
}

/// An inline function inlined into two callers that run it 100 and 37
/// times.
const INLINED_C: &str = "static inline __attribute__((always_inline)) long sq(long x) {\n\
\x20   return x * x + 1; /* inlined */\n\
}\n\
__attribute__((noinline)) long a(long n) {\n\
\x20   long s = 0;\n\
\x20   for (long i = 0; i < n; i++) s += sq(i);\n\
\x20   return s;\n\
}\n\
__attribute__((noinline)) long b(long n) {\n\
\x20   long s = 1;\n\
\x20   for (long i = 0; i < n; i++) s ^= sq(i + 3);\n\
\x20   return s;\n\
}\n\
int main(void) { return (int)((a(100) + b(37)) & 1); }\n";

#[test]
fn a_line_inlined_into_two_functions_counts_both_copies() {
    // As gcov counts a header's line: its copies add up (one copy's most
    // was the count before).
    let dir = workdir("lcov-inline");
    std::fs::write(dir.join("inl.c"), INLINED_C).unwrap();
    let exe = dir.join("inl");
    let o = Command::new("gcc")
        .args(["-O1", "-fno-tree-vectorize", "-g", "-o"])
        .arg(&exe)
        .arg(dir.join("inl.c"))
        .output()
        .expect("gcc");
    assert!(o.status.success(), "gcc: {}", show(&o));
    let p = dir.join("p.json");
    profile(&dir, &p, &[exe.to_str().unwrap()]);
    let info = dir.join("p.info");
    export_all(std::slice::from_ref(&p), "lcov", &info);
    let rec = lcov_record(&std::fs::read_to_string(&info).unwrap(), "/inl.c");
    let line = INLINED_C
        .lines()
        .position(|l| l.contains("/* inlined */"))
        .unwrap() as u32
        + 1;
    assert_eq!(da(&rec, line), Some(137), "{rec:?}");
}

#[test]
fn coverage_of_a_process_tree_adds_its_profiles_up() {
    let dir = workdir("lcov-tree");
    let exe = build_loop(&dir);
    let script = dir.join("twice.sh");
    std::fs::write(&script, format!("#!/bin/sh\n{0}\n{0}\n", exe.display())).unwrap();
    let p = dir.join("t.json");
    profile(&dir, &p, &["/bin/sh", script.to_str().unwrap()]);
    // t.json (sh), t.json.PID (each fork), t.json.PID.1 (each loop).
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("t.json"))
        })
        .collect();
    all.sort();
    assert!(all.len() >= 3, "one profile per image: {all:?}");
    let info = dir.join("t.info");
    export_all(&all, "lcov", &info);
    let rec = lcov_record(&std::fs::read_to_string(&info).unwrap(), "/loop.c");
    assert_eq!(da(&rec, line_of("s += (long)i * i;")), Some(2 * 1009));
    assert!(rec.contains(&"FNDA:2,sumsq".to_string()), "{rec:?}");
    // One profile at a time for the other formats.
    let o = Command::new(HOTLIFT)
        .arg("export")
        .args(&all)
        .args(["--format", "drcov"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
}

#[test]
fn cobertura_export_reads_back_with_pycobertura() {
    let dir = workdir("cobertura");
    let exe = build_loop(&dir);
    let p = dir.join("p.json");
    profile(&dir, &p, &[exe.to_str().unwrap()]);
    let xml = dir.join("cov.xml");
    export_all(std::slice::from_ref(&p), "cobertura", &xml);
    // pycobertura's view, and the loop line's hits from the same element
    // tree it parsed.
    let script = format!(
        "import sys\n\
         from pycobertura import Cobertura\n\
         c = Cobertura(sys.argv[1])\n\
         [f] = [f for f in c.files() if f.endswith('loop.c')]\n\
         print('files', len(c.files()))\n\
         print('hit', ','.join(map(str, c.hit_statements(f))))\n\
         print('missed', ','.join(map(str, c.missed_statements(f))))\n\
         print('rate', c.line_rate(f))\n\
         for l in c.xml.iter('line'):\n\
         \x20   if l.get('number') == '{}' and l.get('branch') == 'false':\n\
         \x20       print('hits', l.get('hits'))\n\
         \x20       break\n",
        line_of("s += (long)i * i;")
    );
    let pydeps = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/pydeps");
    let o = Command::new("python3")
        .arg("-c")
        .arg(&script)
        .arg(&xml)
        .env("PYTHONPATH", &pydeps)
        .output()
        .expect("python3");
    assert!(
        o.status.success(),
        "pycobertura (.ci/run installs it: pip install --target target/pydeps pycobertura): {}",
        show(&o)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let field = |k: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{k} ")))
            .unwrap_or_else(|| panic!("no {k}: {out}"))
            .to_string()
    };
    assert_eq!(field("files"), "1", "system headers left out by default");
    assert_eq!(field("hits"), "1009");
    let missed: Vec<u32> = field("missed")
        .split(',')
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(missed.contains(&line_of("return x * 3;")), "{out}");
    assert!(!missed.contains(&line_of("for (int i")), "{out}");
    let rate: f64 = field("rate").parse().unwrap();
    assert!(rate > 0.5 && rate < 1.0, "{out}");
}

/// Source files this machine cannot read are left out with a warning
/// that names the program's own (one deleted after the build) on a line
/// of its own, apart from other modules' (libc's line tables, where
/// libc6-dbg is installed, name glibc's build tree), which are counted
/// by module: they are not the program's sources.
#[test]
fn unreadable_sources_of_the_program_are_named_apart_from_other_modules() {
    let dir = workdir("lcov-gone");
    std::fs::write(dir.join("loop.c"), LOOP_C).unwrap();
    std::fs::write(
        dir.join("gone.c"),
        "long gone(long x) {\n  return x + 1;\n}\n",
    )
    .unwrap();
    let exe = dir.join("loop");
    let o = Command::new("gcc")
        .args(["-O0", "-g", "-o"])
        .arg(&exe)
        .args([dir.join("loop.c"), dir.join("gone.c")])
        .output()
        .expect("gcc");
    assert!(o.status.success(), "gcc: {}", show(&o));
    std::fs::remove_file(dir.join("gone.c")).unwrap();
    let p = dir.join("p.json");
    profile(&dir, &p, &[exe.to_str().unwrap()]);
    let o = export(&p, "lcov", &dir.join("p.info"));
    let err = String::from_utf8_lossy(&o.stderr);
    let program: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("of the program"))
        .collect();
    assert_eq!(program.len(), 1, "{err}");
    assert!(
        program[0].contains(" 1 source file of the program")
            && program[0].contains(&format!("({}/gone.c)", dir.display())),
        "{err}"
    );
    for l in err.lines().filter(|l| !l.contains("of the program")) {
        assert!(
            l.contains("source files of other modules (")
                && l.contains("libc.so.6")
                && !l.contains("gone.c"),
            "{err}"
        );
    }
    let info = std::fs::read_to_string(dir.join("p.info")).unwrap();
    assert!(
        info.contains("/loop.c\n") && !info.contains("gone.c"),
        "{info}"
    );
}

#[test]
fn coverage_without_source_lines_is_an_error_not_an_empty_file() {
    // busybox-static has no line tables.
    let dir = workdir("lcov-none");
    let p = dir.join("bb.json");
    profile(&dir, &p, &[busybox(), "true"]);
    for format in ["lcov", "cobertura"] {
        let out = dir.join(format!("bb.{format}"));
        let o = Command::new(HOTLIFT)
            .arg("export")
            .arg(&p)
            .args(["--format", format, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{format}: {}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("no source lines"),
            "{format}: {}",
            show(&o)
        );
        assert!(!out.exists(), "{format}: no file written");
    }
}
