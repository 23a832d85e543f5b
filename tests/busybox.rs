//! Differential test: Debian's statically linked busybox (package
//! `busybox-static`, /bin/busybox) run natively and under hotlift, in both
//! chained, `--no-chain` and superblocks-everywhere (`--sb-threshold 1`) mode. Stdout, stderr and the raw wait status must
//! match byte for byte.
//!
//! Inputs (text, CSV, binary, a small directory tree with fixed mtimes) are
//! generated deterministically into a fresh temporary directory; every case
//! runs with that directory as its working directory, a fixed environment
//! (LC_ALL=C, TZ=UTC) and either /dev/null or one of the generated files as
//! stdin. The `sh-*` cases run shell scripts whose pipelines, subshells
//! and command substitutions fork and exec under hotlift; their `hotlift`
//! run also writes a profile per process of the tree with `--count-check`,
//! and every one must be exact and name its parent's.
//!
//! Environment:
//!   HOTLIFT_BUSYBOX_FILTER=SUBSTR   run only cases whose name contains SUBSTR
//!   HOTLIFT_BUSYBOX_TIMEOUT=SECS    per-run timeout (default 120)
//!   HOTLIFT_BUSYBOX_KEEP=1          keep the temporary input directory
//!   HOTLIFT_BUSYBOX_NOCHAIN_FULL=1  run --no-chain on the full-size inputs too
//!                                   (by default it gets inputs 10x smaller,
//!                                   compared against a native run on those)
//!   CI                              if set, a missing /bin/busybox is a failure
//!                                   instead of a skip

mod guest;

use std::collections::BTreeSet;
use std::ffi::CString;
use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const BUSYBOX: &str = "/bin/busybox";
const HOTLIFT: &str = env!("CARGO_BIN_EXE_hotlift");
const THREADS: usize = 2;

/// The fixed environment every run gets (the rest is cleared).
fn fixed_env(dir: &Path) -> Vec<(String, String)> {
    vec![
        ("LC_ALL".into(), "C".into()),
        ("TZ".into(), "UTC".into()),
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("HOME".into(), dir.display().to_string()),
        ("HOTLIFT_TEST_VAR".into(), "some value with spaces".into()),
    ]
}

// ---------------------------------------------------------------------------
// Deterministic input generation
// ---------------------------------------------------------------------------

use guest::rng::Seeded as Rng;

const BASE_WORDS: &[&str] = &[
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "foo",
    "bar",
    "baz",
    "qux",
    "hello",
    "world",
    "binary",
    "translator",
    "block",
    "chain",
    "dispatch",
    "register",
    "memory",
    "cache",
    "signal",
    "syscall",
    "kernel",
    "page",
    "x86",
    "amd64",
    "QUICK",
    "The",
    "Fox",
    "DOG",
    "error",
    "warning",
    "info",
    "debug",
    "a",
    "an",
    "of",
    "to",
    "in",
    "is",
    "it",
    "and",
    "or",
    "not",
    "café",
    "naïve",
    "Ünïcode",
    "tab\there",
    "foo.bar",
    "key=value",
    "[bracket]",
    "(paren)",
    "$dollar",
    "back\\slash",
    "semi;colon",
];

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qu", "an", "er", "in", "on", "us",
    "bra", "cle", "dri", "fro", "glu", "pla", "stri", "th", "ch", "sh",
];

fn vocabulary(rng: &mut Rng) -> Vec<String> {
    let mut v: Vec<String> = BASE_WORDS.iter().map(|s| s.to_string()).collect();
    for _ in 0..250 {
        let n = 1 + rng.below(4);
        let mut w = String::new();
        for _ in 0..n {
            w.push_str(SYLLABLES[rng.below(SYLLABLES.len() as u64) as usize]);
        }
        if rng.below(10) == 0 {
            w = w.to_uppercase();
        }
        v.push(w);
    }
    v
}

fn gen_text(rng: &mut Rng, vocab: &[String], target: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut size = 0;
    while size < target {
        let r = rng.below(100);
        let line = if r < 3 {
            String::new()
        } else if r < 6 && !lines.is_empty() {
            lines.last().unwrap().clone()
        } else if r < 9 && lines.len() > 50 {
            let back = 1 + rng.below(50) as usize;
            lines[lines.len() - back].clone()
        } else if r < 17 {
            format!(
                "{} {} {}.{:02} {} {}",
                rng.pick(vocab),
                rng.below(100_000),
                rng.below(1000) as i64 - 500,
                rng.below(100),
                rng.pick(vocab),
                rng.below(10)
            )
        } else {
            let mut s = String::new();
            if r < 22 {
                s.push_str(if rng.below(2) == 0 { "    " } else { "\t" });
            }
            let n = 1 + rng.below(14);
            for i in 0..n {
                if i > 0 {
                    s.push(if rng.below(15) == 0 { '\t' } else { ' ' });
                }
                let w = rng.pick(vocab);
                if i == 0 && rng.below(4) == 0 {
                    let mut c = w.chars();
                    let first = c.next().unwrap().to_uppercase().to_string();
                    s.push_str(&first);
                    s.push_str(c.as_str());
                } else {
                    s.push_str(w);
                }
            }
            match rng.below(8) {
                0 => s.push('.'),
                1 => s.push(','),
                2 => s.push_str("!?"),
                _ => {}
            }
            s
        };
        size += line.len() + 1;
        lines.push(line);
    }
    lines
}

fn join_lines(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// A copy of `lines` with scattered changes, deletions and insertions.
fn edit_lines(rng: &mut Rng, lines: &[String], vocab: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    for l in lines {
        match rng.below(250) {
            0 => {}
            1 => out.push(format!("{} CHANGED {}", l, rng.pick(vocab))),
            2 => {
                out.push(l.clone());
                out.push(format!("inserted line {}", rng.below(1000)));
            }
            _ => out.push(l.clone()),
        }
    }
    out
}

fn gen_nums(rng: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    for _ in 0..n {
        match rng.below(10) {
            0..=5 => writeln!(s, "{}", rng.below(2_000_001) as i64 - 1_000_000).unwrap(),
            6 | 7 => writeln!(
                s,
                "{}.{:03}",
                rng.below(20_000) as i64 - 10_000,
                rng.below(1000)
            )
            .unwrap(),
            8 => writeln!(s, "  {}", rng.below(1000)).unwrap(),
            _ => writeln!(s, "{:05}", rng.below(100_000)).unwrap(),
        }
    }
    s
}

fn gen_csv(rng: &mut Rng, vocab: &[String], rows: usize) -> String {
    const CITIES: &[&str] = &[
        "Berlin", "Paris", "Lisbon", "Oslo", "Rome", "Vienna", "Prague", "Madrid", "Dublin",
        "Athens", "Warsaw", "Zurich", "Helsinki", "Riga", "Sofia", "Tallinn",
    ];
    let mut s = String::from("id,name,city,amount,qty,date\n");
    for id in 1..=rows {
        let name: String = rng
            .pick(vocab)
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        let name = if name.is_empty() {
            "anon".to_string()
        } else {
            name
        };
        writeln!(
            s,
            "{},{},{},{}.{:02},{},2021-{:02}-{:02}",
            id,
            name,
            rng.pick(CITIES),
            rng.below(50_000),
            rng.below(100),
            1 + rng.below(40),
            1 + rng.below(12),
            1 + rng.below(28)
        )
        .unwrap();
    }
    s
}

fn gen_tabs(rng: &mut Rng, vocab: &[String], n: usize) -> String {
    let mut s = String::new();
    for _ in 0..n {
        let fields = 1 + rng.below(6);
        for i in 0..fields {
            if i > 0 {
                for _ in 0..1 + rng.below(2) {
                    s.push('\t');
                }
            }
            s.push_str(rng.pick(vocab).as_str());
            if rng.below(5) == 0 {
                s.push_str("        ");
            }
        }
        s.push('\n');
    }
    s
}

fn gen_binary(rng: &mut Rng, size: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(size);
    // Every byte value once, then a mix of random runs, zero runs and
    // repeated 16-byte rows (hexdump collapses those into '*').
    v.extend(0..=255u8);
    while v.len() < size {
        match rng.below(6) {
            0 => v.extend(std::iter::repeat_n(0u8, 16 * (1 + rng.below(20) as usize))),
            1 => {
                let row: Vec<u8> = (0..16).map(|_| rng.next() as u8).collect();
                for _ in 0..1 + rng.below(6) {
                    v.extend_from_slice(&row);
                }
            }
            2 => v.extend(b"ASCII text inside the binary file, followed by more\n"),
            _ => {
                for _ in 0..1 + rng.below(2000) {
                    v.push(rng.next() as u8);
                }
            }
        }
    }
    v.truncate(size);
    v
}

fn set_times(path: &Path, secs: i64) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    let ts = [
        libc::timespec {
            tv_sec: secs,
            tv_nsec: 0,
        },
        libc::timespec {
            tv_sec: secs,
            tv_nsec: 0,
        },
    ];
    let r = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            ts.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    assert_eq!(
        r,
        0,
        "utimensat {}: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
}

fn write_file(path: &Path, data: impl AsRef<[u8]>, mode: u32) {
    fs::write(path, data).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs busybox natively during setup and returns its stdout (panics on failure).
fn native_output(dir: &Path, args: &[&str], stdin: Option<&str>) -> Vec<u8> {
    let mut cmd = Command::new(BUSYBOX);
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .envs(fixed_env(dir));
    cmd.stdin(match stdin {
        Some(f) => Stdio::from(fs::File::open(dir.join(f)).unwrap()),
        None => Stdio::null(),
    });
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "setup: busybox {:?} failed: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Input size divisor for the `--no-chain` runs (see HOTLIFT_BUSYBOX_NOCHAIN_FULL).
const SMALL_SCALE: usize = 10;

const T0: i64 = 1_600_000_000; // 2020-09-13 12:26:40 UTC

/// Builds every input file in `dir`. `applets` decides which derived files
/// (compressed copies etc.) can be made.
fn generate_inputs(dir: &Path, applets: &BTreeSet<String>, scale: usize) {
    let mut rng = Rng::new(0x686f_746c_6966_7421);
    let vocab = vocabulary(&mut rng);

    let text = gen_text(&mut rng, &vocab, 400_000 / scale);
    write_file(&dir.join("text.txt"), join_lines(&text), 0o644);
    let text2 = edit_lines(&mut rng, &text, &vocab);
    write_file(&dir.join("text2.txt"), join_lines(&text2), 0o644);
    let small = gen_text(&mut rng, &vocab, 3_000);
    write_file(&dir.join("small.txt"), join_lines(&small), 0o644);
    write_file(
        &dir.join("nums.txt"),
        gen_nums(&mut rng, 30_000 / scale),
        0o644,
    );
    write_file(
        &dir.join("data.csv"),
        gen_csv(&mut rng, &vocab, 6_000 / scale),
        0o644,
    );
    write_file(
        &dir.join("tabs.txt"),
        gen_tabs(&mut rng, &vocab, 3_000 / scale),
        0o644,
    );
    let bin = gen_binary(&mut rng, 256 * 1024 / scale);
    let mut bin2 = bin.clone();
    for _ in 0..20 {
        let i = rng.below(bin2.len() as u64) as usize;
        bin2[i] ^= 1 + rng.below(255) as u8;
    }
    write_file(&dir.join("bin.dat"), &bin, 0o644);
    write_file(&dir.join("bin2.dat"), &bin2, 0o644);

    // Numbers for factor: small composites, semiprimes with factors < 2^20,
    // primes below 10^12 (trial division stays cheap).
    let mut f = String::new();
    for i in 0..(300 / scale) as u64 {
        let n = match i % 4 {
            0 => 2 + rng.below(1_000_000),
            1 => (1 + rng.below(1 << 20)) * (1 + rng.below(1 << 20)),
            2 => (1u64 << (1 + rng.below(62))) + rng.below(1000) * ((i % 3) + 1),
            _ => 999_999_999_989 - rng.below(1000) * 2,
        };
        writeln!(f, "{n}").unwrap();
    }
    write_file(&dir.join("factor.txt"), f, 0o644);

    write_file(
        &dir.join("calc.bc"),
        "scale=60\n4*a(1)\ne(1)\nsqrt(2)\nl(10)\ns(1)+c(1)\n2^333\n\
         define f(n) { if (n < 2) return 1; return n * f(n - 1) }\nf(60)\n\
         obase=16\n2^100-1\nobase=10\nscale=0\n(2^127-1) % 1000003\n",
        0o644,
    );
    write_file(
        &dir.join("ed.script"),
        "1,5p\n/the/p\n$p\n20,25n\ng/fox/p\nq\n",
        0o644,
    );
    write_file(
        &dir.join("script.sh"),
        "f() { local x=$1; echo \"f($x) = $((x * x + 1))\"; }\n\
         for i in 1 2 3 4 5; do f $i; done\n\
         s=''\nfor w in one two three; do s=\"$s-$w\"; done\necho \"$s\" \"${s#-}\" \"${#s}\"\n\
         case \"$s\" in *two*) echo matched;; *) echo nope;; esac\n\
         set -- a 'b c' d; echo $# \"$2\"; shift; echo \"$@\"\n\
         [ -f text.txt ] && echo exists; [ -d tree ] && echo isdir\n\
         test 3 -gt 2 && echo gt || echo le\n\
         printf '%05d|%s\\n' 42 \"$HOTLIFT_TEST_VAR\"\n",
        0o644,
    );

    // A directory tree for ls / find / stat / tar.
    let tree = dir.join("tree");
    for d in ["a", "a/deep", "a/deep/x", "a/deep/x/y", "b", "c", "d e"] {
        fs::create_dir_all(tree.join(d)).unwrap();
    }
    let files: &[(&str, usize, u32)] = &[
        ("README", 321, 0o644),
        ("a/one.txt", 100, 0o644),
        ("a/two.c", 2500, 0o644),
        ("a/three.h", 700, 0o600),
        ("a/deep/x/y/z.txt", 12, 0o444),
        ("a/deep/notes.txt", 4096, 0o664),
        ("b/big.dat", 70_000, 0o644),
        ("b/empty", 0, 0o644),
        ("b/run.sh", 64, 0o755),
        ("d e/space name.txt", 33, 0o640),
    ];
    for (i, (name, size, mode)) in files.iter().enumerate() {
        let data: Vec<u8> = (0..*size).map(|j| b"abcdefghij\n"[(i + j) % 11]).collect();
        write_file(&tree.join(name), data, *mode);
    }
    std::os::unix::fs::symlink("a/one.txt", tree.join("link")).unwrap();
    std::os::unix::fs::symlink("does-not-exist", tree.join("b/dangling")).unwrap();
    fs::set_permissions(tree.join("c"), fs::Permissions::from_mode(0o700)).unwrap();
    fs::set_permissions(tree.join("d e"), fs::Permissions::from_mode(0o750)).unwrap();

    // Derived files, made by native busybox.
    let derive = |out: &str, args: &[&str], stdin: Option<&str>| {
        let data = native_output(dir, args, stdin);
        write_file(&dir.join(out), data, 0o644);
    };
    derive("text.sorted", &["sort", "text.txt"], None);
    derive("words.sorted", &["sort", "-u", "small.txt"], None);
    derive(
        "sums.md5",
        &["md5sum", "text.txt", "bin.dat", "data.csv", "nums.txt"],
        None,
    );
    derive("bin.b64", &["base64", "bin.dat"], None);
    derive("text.gz", &["gzip", "-c", "text.txt"], None);
    derive("bin.gz", &["gzip", "-9", "-c", "bin.dat"], None);
    if applets.contains("bzip2") {
        derive("text.bz2", &["bzip2", "-c", "text.txt"], None);
    }
    if applets.contains("lzop") {
        derive("text.lzo", &["lzop", "-c", "text.txt"], None);
    }
    if applets.contains("uuencode") {
        derive("bin.uu", &["uuencode", "bin.dat", "bin.dat"], None);
    }
    if applets.contains("xxd") {
        derive("small.xxd", &["xxd", "small.txt"], None);
    }
    let mut crlf = String::new();
    for l in small.iter().take(40) {
        crlf.push_str(l);
        crlf.push_str("\r\n");
    }
    write_file(&dir.join("crlf.txt"), crlf, 0o644);

    // Fixed timestamps on everything, a function of the relative path
    // (utimensat on a child does not touch its parent's times).
    let mut all = Vec::new();
    collect_paths(dir, &mut all);
    for p in &all {
        let rel = p.strip_prefix(dir).unwrap().display().to_string();
        // Deterministic per path (not per enumeration order).
        let h = rel.bytes().fold(1469598103934665603u64, |h, b| {
            (h ^ b as u64).wrapping_mul(1099511628211)
        });
        set_times(p, T0 + (h % 10_000) as i64 * 3607);
    }
    set_times(dir, T0);
}

/// Fresh input directory `d` at the given size divisor, including a tar
/// archive of its tree (made after the mtimes are fixed).
fn setup_inputs(d: &Path, applets: &BTreeSet<String>, scale: usize) {
    fs::create_dir_all(d).unwrap();
    generate_inputs(d, applets, scale);
    if applets.contains("tar") {
        let data = native_output(d, &["tar", "-cf", "-", "tree"], None);
        fs::write(d.join("tree.tar"), data).unwrap();
        set_times(&d.join("tree.tar"), T0);
        set_times(d, T0);
    }
}

fn collect_paths(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            collect_paths(&p, out);
        }
        out.push(p);
    }
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    Exit(i32),
    Signal(i32),
}

#[derive(Clone, Debug)]
struct Case {
    name: String,
    args: Vec<String>,
    stdin: Option<String>,
    expect: Expect,
    empty_ok: bool,
    needs: Vec<String>,
}

impl Case {
    fn stdin(mut self, f: &str) -> Self {
        self.stdin = Some(f.into());
        self
    }
    fn exit(mut self, code: i32) -> Self {
        self.expect = Expect::Exit(code);
        self
    }
    fn signal(mut self, sig: i32) -> Self {
        self.expect = Expect::Signal(sig);
        self
    }
    fn empty_ok(mut self) -> Self {
        self.empty_ok = true;
        self
    }
    fn needs(mut self, applet: &str) -> Self {
        self.needs.push(applet.into());
        self
    }
}

fn c(name: &str, args: &[&str]) -> Case {
    Case {
        name: name.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        stdin: None,
        expect: Expect::Exit(0),
        empty_ok: false,
        needs: vec![args[0].to_string()],
    }
}

fn cases() -> Vec<Case> {
    let awk_cities = r##"NR > 1 { n[$3]++; t[$3] += $4; if ($4 > m[$3]) m[$3] = $4 }
END { for (k in n) printf "%-10s %5d %14.2f %10.2f\n", k, n[k], t[k], m[k] }"##;
    let awk_words = r##"{ for (i = 1; i <= NF; i++) { w = tolower($i); c[w]++ } }
END { for (w in c) if (c[w] * 40 > NR) print c[w], w }"##;
    let awk_fmt = r##"BEGIN { for (i = 1; i <= 3000; i++) { x = (i * 7919 % 2003 - 1001) * 1.37; y = (i % 50) * (i % 53) / 7 + 0.001 * i;
printf "%d %.6f %e %g %x %o %c|%-6s|%6s\n", i, x, y, x * y, i * 7, i, 65 + i % 26, substr("abcdefgh", i % 5 + 1, 3), i % 97 } }"##;
    let awk_str = r##"length($0) > 40 { n = split($0, a, /[ \t]+/); s = ""; for (i = n; i > 0; i--) s = s a[i] " ";
print NR ": " toupper(substr(s, 1, 30)) " " index($0, "e") " " match($0, /[0-9]+/) " " RSTART " " RLENGTH }"##;
    let awk_gsub = r##"{ n = gsub(/[aeiou]/, "#"); total += n; sub(/^[ \t]+/, ""); print n ": " $0 } END { print "total", total }"##;
    let awk_num = r##"{ s += $1; ss += $1 * $1; if (NR == 1 || $1 < mn) mn = $1; if (NR == 1 || $1 > mx) mx = $1 }
END { printf "n=%d sum=%.3f mean=%.6f var=%.4f min=%s max=%s int=%d\n", NR, s, s / NR, ss / NR - (s / NR) * (s / NR), mn, mx, int(s / 7) }"##;
    let sh_loop = "i=0; s=0; while [ $i -lt 3000 ]; do s=$((s + i * i % 977)); i=$((i + 1)); done; echo $s $i";
    let sh_read = "n=0; w=0; while read -r a b rest; do n=$((n + 1)); [ -n \"$b\" ] && w=$((w + 1)); done < tabs.txt; echo $n $w";
    let sh_str = "x='hello wonderful world'; echo ${x#hello} ${#x} ${x%%o*} ${x##*o} \"${x:6:9}\"; \
                  set -- $x; echo $# $3; for w in \"$@\"; do printf '<%s>' \"$w\"; done; echo; \
                  case $x in h*d) echo glob-yes;; *) echo glob-no;; esac; echo $((0x7f + 010 + 2 ** 10))";

    vec![
        // cat
        c("cat-text", &["cat", "text.txt"]),
        c("cat-bin", &["cat", "bin.dat"]),
        c("cat-stdin", &["cat"]).stdin("data.csv"),
        c("cat-n", &["cat", "-n", "small.txt"]),
        c("cat-A", &["cat", "-A", "tabs.txt"]),
        c("cat-v-bin", &["cat", "-v", "bin.dat"]),
        c("cat-missing", &["cat", "text.txt", "no-such-file"]).exit(1),
        // sort
        c("sort", &["sort", "text.txt"]),
        c("sort-n", &["sort", "-n", "nums.txt"]),
        c("sort-rn", &["sort", "-rn", "nums.txt"]),
        c("sort-r", &["sort", "-r", "text.txt"]),
        c("sort-u", &["sort", "-u", "text.txt"]),
        c("sort-f", &["sort", "-f", "small.txt"]),
        c("sort-k2", &["sort", "-k2", "text.txt"]),
        c(
            "sort-csv-k",
            &["sort", "-t,", "-k3,3", "-k4,4n", "data.csv"],
        ),
        c(
            "sort-csv-rnk",
            &["sort", "-s", "-t,", "-k5,5rn", "data.csv"],
        ),
        c("sort-stdin", &["sort"]).stdin("tabs.txt"),
        c("sort-g", &["sort", "-g", "nums.txt"]),
        // uniq
        c("uniq", &["uniq", "text.txt"]),
        c("uniq-c", &["uniq", "-c", "text.sorted"]),
        c("uniq-d", &["uniq", "-d", "text.sorted"]),
        c("uniq-u", &["uniq", "-u", "text.sorted"]),
        // wc
        c("wc", &["wc", "text.txt", "bin.dat", "data.csv", "nums.txt"]),
        c("wc-l-stdin", &["wc", "-l"]).stdin("text.txt"),
        c("wc-L", &["wc", "-L", "-w", "text.txt"]),
        // head / tail
        c("head-n", &["head", "-n", "50", "text.txt"]),
        c("head-c", &["head", "-c", "1000", "bin.dat"]),
        c("head-multi", &["head", "-n", "3", "small.txt", "data.csv"]),
        c("tail-n", &["tail", "-n", "30", "text.txt"]),
        c("tail-c", &["tail", "-c", "500", "bin.dat"]),
        c("tail-plus", &["tail", "-n", "+700", "text.txt"]),
        c("tail-stdin", &["tail", "-n", "100"]).stdin("nums.txt"),
        // tr
        c("tr-upper", &["tr", "a-z", "A-Z"]).stdin("text.txt"),
        c("tr-d", &["tr", "-d", "0-9aeiou"]).stdin("text.txt"),
        c("tr-s", &["tr", "-s", " \t"]).stdin("tabs.txt"),
        c("tr-c", &["tr", "-c", "[:alnum:]\n", "_"]).stdin("small.txt"),
        c("tr-bin", &["tr", "\\000-\\377", "\\177-\\377\\000-\\176"]).stdin("bin.dat"),
        // cut
        c("cut-csv", &["cut", "-d,", "-f2,4", "data.csv"]),
        c("cut-c", &["cut", "-c", "1-10,20-25", "text.txt"]),
        c("cut-f", &["cut", "-f", "2-"]).stdin("tabs.txt"),
        c("cut-s", &["cut", "-s", "-f1,3", "tabs.txt"]),
        // sed
        c("sed-p", &["sed", "-n", "/^[A-Z]/p", "text.txt"]),
        c(
            "sed-swap",
            &["sed", "s/\\([a-z]*\\) \\([a-z]*\\)/\\2 \\1/g", "text.txt"],
        ),
        c(
            "sed-multi",
            &[
                "sed",
                "-e",
                "10,200d",
                "-e",
                "s/e/E/3",
                "-e",
                "/fox/a\\\nafter fox",
                "text.txt",
            ],
        ),
        c("sed-count", &["sed", "-n", "$="]).stdin("text.txt"),
        c(
            "sed-E",
            &[
                "sed",
                "-E",
                "s/([0-9]+)\\.([0-9]+)/<\\2.\\1>/g; s/^[[:space:]]+//",
                "text.txt",
            ],
        ),
        c("sed-y", &["sed", "y/abcdefghij/ABCDEFGHIJ/", "data.csv"]),
        c(
            "sed-range",
            &["sed", "-n", "100,300{s/^/> /;s/$/ </;p}", "text.txt"],
        ),
        c("sed-hold", &["sed", "-n", "1!G;h;$p", "small.txt"]),
        c(
            "sed-csv",
            &[
                "sed",
                "-e",
                "1d",
                "-e",
                "s/,\\([^,]*\\),\\([^,]*\\),/ [\\2:\\1] /",
                "data.csv",
            ],
        ),
        // awk
        c(
            "awk-sum",
            &[
                "awk",
                "-F,",
                "NR > 1 { s += $4; q += $5 } END { printf \"%.2f %d %d\\n\", s, q, NR }",
                "data.csv",
            ],
        ),
        c("awk-assoc", &["awk", "-F,", awk_cities, "data.csv"]),
        c("awk-words", &["awk", awk_words, "text.txt"]),
        c("awk-printf", &["awk", awk_fmt]).empty_ok(),
        c("awk-strings", &["awk", awk_str, "text.txt"]),
        c("awk-gsub", &["awk", awk_gsub]).stdin("small.txt"),
        c("awk-stats", &["awk", awk_num, "nums.txt"]),
        c(
            "awk-fields",
            &[
                "awk",
                "-F,",
                "-v",
                "OFS=|",
                "NR % 7 == 0 { $2 = toupper($2); $1 = $1 * 3; print; print NF }",
                "data.csv",
            ],
        ),
        // grep
        c("grep", &["grep", "fox", "text.txt"]),
        c("grep-c", &["grep", "-c", "the", "text.txt"]),
        c("grep-v", &["grep", "-v", "e", "text.txt"]),
        c(
            "grep-E",
            &[
                "grep",
                "-E",
                "^[a-z]+ [0-9]+ -?[0-9]+\\.[0-9]{2}",
                "text.txt",
            ],
        ),
        c("grep-i", &["grep", "-i", "QUICK", "text.txt"]),
        c("grep-n-w", &["grep", "-n", "-w", "dog", "text.txt"]),
        c(
            "grep-o",
            &["grep", "-o", "[0-9][0-9]*\\.[0-9]*", "text.txt"],
        ),
        c(
            "grep-F-multi",
            &[
                "grep",
                "-F",
                "-e",
                "key=value",
                "-e",
                "(paren)",
                "text.txt",
                "text2.txt",
            ],
        ),
        c("grep-nomatch", &["grep", "zzzzzz-no-match", "text.txt"])
            .exit(1)
            .empty_ok(),
        c("grep-stdin", &["grep", "-c", "-i", "berlin"]).stdin("data.csv"),
        c("grep-bin", &["grep", "-c", "ASCII text"]).stdin("bin.dat"),
        // hashes
        c("md5sum", &["md5sum", "text.txt", "bin.dat", "data.csv"]),
        c("md5sum-c", &["md5sum", "-c", "sums.md5"]),
        c("sha1sum", &["sha1sum", "text.txt", "bin.dat"]),
        c(
            "sha256sum",
            &["sha256sum", "text.txt", "bin.dat", "nums.txt"],
        ),
        c("sha256sum-stdin", &["sha256sum"]).stdin("bin.dat"),
        c("sha512sum", &["sha512sum", "text.txt", "bin.dat"]),
        c("sha3sum", &["sha3sum", "text.txt", "bin.dat"]),
        c("crc32", &["crc32", "text.txt", "bin.dat"]),
        // base64 / od / hexdump / xxd
        c("base64", &["base64", "bin.dat"]),
        c("base64-d", &["base64", "-d", "bin.b64"]),
        c("od-x1", &["od", "-A", "x", "-t", "x1", "bin.dat"]),
        c("od-x1z", &["od", "-A", "x", "-t", "x1z", "bin.dat"])
            .exit(1)
            .empty_ok(),
        c("od-c", &["od", "-c", "small.txt"]),
        c(
            "od-d4",
            &["od", "-A", "d", "-t", "d4", "-N", "8192", "bin.dat"],
        ),
        c(
            "od-fx8",
            &["od", "-t", "f8", "-t", "x8", "-N", "4096", "bin.dat"],
        ),
        c("hexdump-C", &["hexdump", "-C", "bin.dat"]),
        c(
            "hexdump-n",
            &["hexdump", "-C", "-s", "100", "-n", "2000", "text.txt"],
        ),
        c("xxd", &["xxd", "bin.dat"]),
        c("xxd-p", &["xxd", "-p", "-l", "10000", "bin.dat"]),
        c("xxd-r", &["xxd", "-r", "small.xxd"]).needs("xxd"),
        c("strings", &["strings", "-n", "6", "bin.dat"]),
        // seq / expr / printf / factor / bc / dc
        c("seq", &["seq", "1", "100000"]),
        c("seq-w", &["seq", "-w", "0.5", "0.25", "100"]),
        c("seq-s", &["seq", "-s,", "10", "-3", "-1000"]),
        c(
            "expr-arith",
            &["expr", "123456", "*", "789", "+", "5", "%", "7"],
        ),
        c("expr-length", &["expr", "length", "hello world"]),
        c("expr-substr", &["expr", "substr", "abcdefgh", "3", "4"]),
        c(
            "expr-match",
            &["expr", "abc123def", ":", "[a-z]*\\([0-9]*\\)"],
        ),
        c("expr-false", &["expr", "5", "<", "3"]).exit(1),
        c("expr-div0", &["expr", "5", "/", "0"]).exit(2).empty_ok(),
        c(
            "printf",
            &[
                "printf",
                "%s|%5d|%-8.3f|%x|%o|%e|%c|%10.4s|\\n",
                "abc",
                "42",
                "3.14159",
                "255",
                "8",
                "12345.678",
                "Z",
                "truncated",
            ],
        ),
        c(
            "printf-b",
            &["printf", "%b|%5.2s|\\n", "a\\tb\\n\\x41\\0101", "it's"],
        ),
        c(
            "printf-loop",
            &[
                "printf", "%d:%s\\n", "1", "a", "2", "b", "3", "c", "-7", "d",
            ],
        ),
        c(
            "factor-args",
            &[
                "factor",
                "1",
                "2",
                "97",
                "360",
                "1000000007",
                "999999999989",
                "18446744073709551615",
                "600851475143",
            ],
        ),
        c("factor-stdin", &["factor"]).stdin("factor.txt"),
        c("bc", &["bc", "-l", "calc.bc"]),
        c(
            "dc",
            &["dc", "-e", "2 200 ^ p 20 k 10 3 / p 7 v p 16 o 255 p"],
        ),
        // compression
        c("gzip", &["gzip", "-c", "text.txt"]),
        c("gzip-9-bin", &["gzip", "-9", "-c", "bin.dat"]),
        c("gzip-1-stdin", &["gzip", "-1", "-c"]).stdin("data.csv"),
        c("gunzip", &["gunzip", "-c", "text.gz"]),
        c("gunzip-bin", &["gunzip", "-c", "bin.gz"]),
        c("bzip2", &["bzip2", "-c", "text.txt"]),
        c("bunzip2", &["bunzip2", "-c", "text.bz2"]),
        c("lzop", &["lzop", "-c", "text.txt"]),
        c("lzop-d", &["lzop", "-dc", "text.lzo"]),
        c("uuencode", &["uuencode", "-m", "bin.dat", "x.bin"]),
        c("uudecode", &["uudecode", "-o", "-", "bin.uu"]),
        c("tar-c", &["tar", "-cf", "-", "tree"]),
        c("tar-t", &["tar", "-tvf", "-"])
            .stdin("tree.tar")
            .needs("tar"),
        // text utilities
        c("fold", &["fold", "-w", "40", "text.txt"]),
        c("fold-s", &["fold", "-s", "-w", "30", "small.txt"]),
        c("nl", &["nl", "text.txt"]),
        c(
            "nl-ba",
            &[
                "nl",
                "-b",
                "a",
                "-v",
                "5",
                "-i",
                "3",
                "-w",
                "8",
                "-s",
                ": ",
                "small.txt",
            ],
        ),
        c("paste", &["paste", "small.txt", "nums.txt"]),
        c("paste-s", &["paste", "-s", "-d", ",:", "small.txt"]),
        c("rev", &["rev", "text.txt"]),
        c("tac", &["tac", "text.txt"]),
        c("expand", &["expand", "tabs.txt"]),
        c("expand-t", &["expand", "-t", "4"]).stdin("text.txt"),
        c("unexpand", &["unexpand", "-a", "tabs.txt"]),
        c("dos2unix", &["dos2unix"]).stdin("crlf.txt"),
        c("unix2dos", &["unix2dos"]).stdin("small.txt"),
        c("cmp-diff", &["cmp", "text.txt", "text2.txt"]).exit(1),
        c("cmp-l", &["cmp", "-l", "bin.dat", "bin2.dat"]).exit(1),
        c("cmp-same", &["cmp", "bin.dat", "bin.dat"]).empty_ok(),
        c("diff", &["diff", "text.txt", "text2.txt"]).exit(1),
        c("diff-u", &["diff", "-u", "text.txt", "text2.txt"]).exit(1),
        c("diff-same", &["diff", "data.csv", "data.csv"]).empty_ok(),
        c("ed", &["ed", "text.txt"]).stdin("ed.script"),
        // files and directories
        c("ls", &["ls", "tree"]),
        c("ls-la", &["ls", "-la", "tree/a"]),
        c("ls-lR", &["ls", "-lR", "tree"]),
        c("ls-1aR", &["ls", "-1aR", "tree"]),
        c("ls-lSr", &["ls", "-lSr", "tree/b", "tree/a"]),
        c("ls-ltn", &["ls", "-ltn", "--full-time", "tree"]),
        c("ls-F", &["ls", "-F", "-i", "tree", "tree/b"]),
        c("ls-missing", &["ls", "-l", "tree/nope", "tree/link"]).exit(1),
        c(
            "stat",
            &[
                "stat",
                "-c",
                "%n|%s|%a|%A|%F|%h|%Y|%y|%U|%G|%u|%b|%N",
                "text.txt",
                "bin.dat",
                "tree",
                "tree/link",
                "tree/a/one.txt",
                "tree/c",
                "tree/b/empty",
                "tree/b/dangling",
            ],
        ),
        c("stat-L", &["stat", "-L", "-c", "%n %s %F %Y", "tree/link"]),
        c(
            "dd",
            &[
                "dd",
                "if=bin.dat",
                "bs=1000",
                "count=50",
                "skip=3",
                "status=noxfer",
            ],
        ),
        c(
            "dd-swab",
            &["dd", "bs=8", "count=1000", "conv=swab", "status=noxfer"],
        )
        .stdin("text.txt"),
        c(
            "dd-skip-bytes",
            &[
                "dd",
                "if=text.txt",
                "bs=1",
                "skip=12345",
                "count=777",
                "status=noxfer",
            ],
        ),
        c("find-name", &["find", "tree", "-name", "*.txt"]),
        c("find-type", &["find", "tree", "-type", "d"]),
        c(
            "find-expr",
            &[
                "find", "tree", "(", "-name", "*.c", "-o", "-name", "*.h", ")", "-o", "-type", "l",
                "-print",
            ],
        ),
        c(
            "find-size-perm",
            &[
                "find", "tree", "-size", "+1k", "-perm", "-u+r", "-type", "f",
            ],
        ),
        c("find-newer", &["find", "tree", "-newer", "tree/a/one.txt"]),
        c(
            "find-depth",
            &["find", "tree", "-mindepth", "2", "-maxdepth", "3"],
        ),
        c("du", &["du", "-a", "tree"]),
        c("realpath", &["realpath", "tree/a/../b/../link", "tree/d e"]),
        c("readlink-f", &["readlink", "-f", "tree/link"]),
        c("basename-dirname", &["basename", "/a/b/c.tar.gz", ".gz"]),
        c("dirname", &["dirname", "/a/b/c.tar.gz"]),
        // shell builtins only
        c("sh-loop", &["sh", "-c", sh_loop]),
        c("sh-read", &["sh", "-c", sh_read]),
        c("sh-strings", &["sh", "-c", sh_str]),
        c("sh-script", &["sh", "script.sh"]),
        c("sh-exit", &["sh", "-c", "echo before; exit 7"]).exit(7),
        c("sh-kill-term", &["sh", "-c", "echo dying; kill -TERM $$"]).signal(libc::SIGTERM),
        c("sh-kill-segv", &["sh", "-c", "kill -SEGV $$"])
            .signal(libc::SIGSEGV)
            .empty_ok(),
        // A kill()-sent SIGILL is not a fault: it must not look like one.
        c("sh-kill-ill", &["sh", "-c", "kill -ILL $$"])
            .signal(libc::SIGILL)
            .empty_ok(),
        c("sh-kill-usr1", &["sh", "-c", "kill -USR1 $$"])
            .signal(libc::SIGUSR1)
            .empty_ok(),
        // forking shells (fork, execve under hotlift, pipes, wait): the
        // applets run as programs found in PATH (Debian's, dynamically
        // linked) and as busybox itself
        c(
            "sh-pipeline",
            &["sh", "-c", "cat text.txt | tr A-Z a-z | sort | uniq -c | sort -rn | head -5"],
        ),
        c(
            "sh-command-substitution",
            &[
                "sh",
                "-c",
                "n=$(wc -l < text.txt); echo \"lines: $n\"; echo \"nested: $(echo $(echo deep) | tr a-z A-Z)\"; \
                 echo \"sum: $(seq 1 100 | awk '{s += $1} END {print s}')\"",
            ],
        ),
        c(
            "sh-subshells",
            &[
                "sh",
                "-c",
                "(cd tree && ls | sort); echo after; (exit 3); echo status $?; \
                 { echo grouped; echo lines; } | wc -l; x=outer; (x=inner; echo $x); echo $x",
            ],
        ),
        c(
            "sh-background-and-wait",
            &[
                "sh",
                "-c",
                "for i in 1 2 3; do (sleep 0.0$i; exit $i) & done; wait; echo waited; \
                 /bin/busybox sh -c 'exit 5' & wait $!; echo child status $?",
            ],
        ),
        c(
            "sh-while-read-pipe",
            &[
                "sh",
                "-c",
                "grep -n the text.txt | head -20 | while IFS=: read -r n rest; do echo \"$n\"; done | xargs echo",
            ],
        ),
        c(
            "sh-busybox-applets",
            &[
                "sh",
                "-c",
                "/bin/busybox seq 5 | /bin/busybox paste -sd+ | /bin/busybox bc; \
                 /bin/busybox echo \"$(/bin/busybox basename /a/b/c)\"",
            ],
        ),
        // misc
        c("cal", &["cal", "2", "2024"]),
        c("cal-year", &["cal", "1999"]),
        c(
            "date",
            &[
                "date",
                "-u",
                "-d",
                "@1234567890",
                "+%Y-%m-%d %H:%M:%S %A %j %s %Z",
            ],
        ),
        c(
            "date-parse",
            &["date", "-d", "2021-03-04 05:06:07", "+%s %a %b %e %U"],
        ),
        c("ipcalc", &["ipcalc", "-bnmp", "192.168.77.10/20"]),
        c("env", &["env"]),
        c("pwd", &["pwd"]),
        c("echo", &["echo", "-e", "a\\tb\\x41\\0102\\c", "ignored"]),
        c("test-false", &["test", "-d", "text.txt"])
            .exit(1)
            .empty_ok(),
        c("true", &["true"]).empty_ok(),
        c("false", &["false"]).exit(1).empty_ok(),
        c("sleep", &["sleep", "0.05"]).empty_ok(),
        c("uname", &["uname", "-sm"]),
        c(
            "getopt",
            &[
                "getopt",
                "-o",
                "ab:c::",
                "-l",
                "long,arg:",
                "--",
                "-a",
                "-b",
                "x",
                "--long",
                "--arg=y",
                "rest",
                "-cz",
            ],
        ),
        c("usage-error", &["sort", "--no-such-option"])
            .exit(2)
            .empty_ok(),
    ]
}

// ---------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Native,
    Hotlift,
    HotliftNoChain,
    /// Superblocks at nearly every block (thresholds of 1).
    HotliftSbAll,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Native => "native",
            Mode::Hotlift => "hotlift",
            Mode::HotliftNoChain => "hotlift --no-chain",
            Mode::HotliftSbAll => "hotlift --sb-threshold 1",
        }
    }
    fn argv(self, args: &[String]) -> Vec<String> {
        let mut v: Vec<String> = match self {
            Mode::Native => vec![],
            Mode::Hotlift => vec![HOTLIFT.into(), "run".into(), "--".into()],
            Mode::HotliftNoChain => {
                vec![
                    HOTLIFT.into(),
                    "run".into(),
                    "--no-chain".into(),
                    "--".into(),
                ]
            }
            Mode::HotliftSbAll => [
                "run",
                "--sb-threshold",
                "1",
                "--sb-edge-threshold",
                "1",
                "--sb-min-yield",
                "0",
                "--",
            ]
            .iter()
            .map(|s| s.to_string())
            .fold(vec![HOTLIFT.to_string()], |mut v, s| {
                v.push(s);
                v
            }),
        };
        v.push(BUSYBOX.into());
        v.extend(args.iter().cloned());
        v
    }
}

struct Outcome {
    /// Raw wait status, or None on timeout / spawn failure.
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    error: Option<String>,
    elapsed: Duration,
}

fn spawn_reader(mut r: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        let _ = tx.send(v);
    });
    rx
}

fn run(argv: &[String], stdin: Option<&Path>, dir: &Path, timeout: Duration) -> Outcome {
    let start = Instant::now();
    let deadline = start + timeout;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(dir)
        .env_clear()
        .envs(fixed_env(dir))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // No core files (they would also set the core-dump bit in the status).
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &lim);
            Ok(())
        });
    }
    match stdin {
        Some(p) => match fs::File::open(p) {
            Ok(f) => cmd.stdin(Stdio::from(f)),
            Err(e) => {
                return Outcome {
                    status: None,
                    stdout: vec![],
                    stderr: vec![],
                    error: Some(format!("open stdin {}: {e}", p.display())),
                    elapsed: start.elapsed(),
                }
            }
        },
        None => cmd.stdin(Stdio::null()),
    };
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                status: None,
                stdout: vec![],
                stderr: vec![],
                error: Some(format!("spawn {}: {e}", argv[0])),
                elapsed: start.elapsed(),
            }
        }
    };
    let pid = child.id() as i32;
    let out_rx = spawn_reader(child.stdout.take().unwrap());
    let err_rx = spawn_reader(child.stderr.take().unwrap());
    let (st_tx, st_rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = st_tx.send(child.wait());
    });
    let kill_group = || unsafe {
        libc::kill(-pid, libc::SIGKILL);
    };
    let mut error = None;
    let status = match st_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(st)) => Some(st.into_raw()),
        Ok(Err(e)) => {
            error = Some(format!("wait: {e}"));
            None
        }
        Err(_) => {
            kill_group();
            let _ = st_rx.recv();
            error = Some(format!(
                "timed out after {:.0} s (killed)",
                timeout.as_secs_f64()
            ));
            None
        }
    };
    // The pipes close when every process holding them is gone; a straggler
    // (some forked child) would keep them open, so bound that wait as well.
    let mut collect = |rx: mpsc::Receiver<Vec<u8>>| -> Vec<u8> {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_secs(2));
        match rx.recv_timeout(left) {
            Ok(v) => v,
            Err(_) => {
                kill_group();
                if error.is_none() {
                    error = Some("output pipe held open after exit (stray process killed)".into());
                }
                rx.recv().unwrap_or_default()
            }
        }
    };
    let stdout = collect(out_rx);
    let stderr = collect(err_rx);
    Outcome {
        status,
        stdout,
        stderr,
        error,
        elapsed: start.elapsed(),
    }
}

fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSYS => "SIGSYS",
        _ => "",
    };
    format!("signal {sig} {name}").trim_end().to_string()
}

fn describe_status(raw: Option<i32>) -> String {
    match raw {
        None => "no status".into(),
        Some(raw) => {
            let st = std::process::ExitStatus::from_raw(raw);
            if let Some(code) = st.code() {
                format!("exit {code}")
            } else if let Some(sig) = st.signal() {
                let core = if st.core_dumped() {
                    " (core dumped)"
                } else {
                    ""
                };
                format!("{}{core}", signal_name(sig))
            } else {
                format!("raw wait status {raw:#x}")
            }
        }
    }
}

fn expected_raw(e: Expect) -> i32 {
    match e {
        Expect::Exit(code) => code << 8,
        Expect::Signal(sig) => sig,
    }
}

fn show_line(l: Option<&[u8]>) -> String {
    let Some(l) = l else {
        return "<end of output>".into();
    };
    let mut s = String::from("\"");
    for &b in l.iter().take(150) {
        match b {
            b'\t' => s.push_str("\\t"),
            b'\r' => s.push_str("\\r"),
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(b as char),
            _ => write!(s, "\\x{b:02x}").unwrap(),
        }
    }
    s.push('"');
    if l.len() > 150 {
        write!(s, "... ({} bytes)", l.len()).unwrap();
    }
    s
}

/// Explains where `got` first differs from `want`.
fn first_difference(want: &[u8], got: &[u8]) -> String {
    let byte = want
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    let wl: Vec<&[u8]> = want.split(|&b| b == b'\n').collect();
    let gl: Vec<&[u8]> = got.split(|&b| b == b'\n').collect();
    let line = (0..wl.len().max(gl.len()))
        .find(|&i| wl.get(i) != gl.get(i))
        .unwrap_or(0);
    format!(
        "{} vs {} bytes, first difference at byte {byte}, line {}:\n        native:  {}\n        hotlift: {}",
        want.len(),
        got.len(),
        line + 1,
        show_line(wl.get(line).copied()),
        show_line(gl.get(line).copied())
    )
}

struct CaseReport {
    name: String,
    failures: Vec<String>,
    times: Vec<(String, Duration)>,
}

/// Runs one case: natively and under hotlift on the full-size inputs, and
/// (when `small` is given) natively and under `hotlift --no-chain` on the
/// reduced inputs in `small`; otherwise `--no-chain` also uses `full`.
fn run_case(case: &Case, full: &Path, small: Option<&Path>, timeout: Duration) -> CaseReport {
    let mut report = CaseReport {
        name: case.name.clone(),
        failures: vec![],
        times: vec![],
    };
    let cmdline = format!("busybox {}", case.args.join(" "));
    let stdin_note = case
        .stdin
        .as_ref()
        .map(|f| format!(" < {f}"))
        .unwrap_or_default();
    let groups: Vec<(&Path, Vec<Mode>, &str)> = match small {
        Some(small) => vec![
            (full, vec![Mode::Hotlift, Mode::HotliftSbAll], ""),
            (small, vec![Mode::HotliftNoChain], " (small inputs)"),
        ],
        None => vec![(
            full,
            vec![Mode::Hotlift, Mode::HotliftSbAll, Mode::HotliftNoChain],
            "",
        )],
    };

    for (dir, modes, note) in groups {
        let stdin = case.stdin.as_ref().map(|f| dir.join(f));
        let stdin = stdin.as_deref();
        let native = run(&Mode::Native.argv(&case.args), stdin, dir, timeout);
        report.times.push((
            format!("native{}", if note.is_empty() { "" } else { " (small)" }),
            native.elapsed,
        ));
        // Sanity-check the native run, so that a broken case (e.g. an option
        // this busybox lacks) cannot pass by failing identically everywhere.
        let mut native_problems = vec![];
        if let Some(e) = &native.error {
            native_problems.push(e.clone());
        } else if native.status != Some(expected_raw(case.expect)) {
            native_problems.push(format!(
                "status {} (expected {}); stderr: {}",
                describe_status(native.status),
                describe_status(Some(expected_raw(case.expect))),
                show_line(native.stderr.split(|&b| b == b'\n').next())
            ));
        }
        if native.stdout.is_empty() && !case.empty_ok {
            native_problems.push("empty stdout".into());
        }
        if !native_problems.is_empty() {
            report.failures.push(format!(
                "{} [native{note}] test case itself is broken: {}\n      command: {cmdline}{stdin_note}",
                case.name,
                native_problems.join("; ")
            ));
            return report;
        }

        for mode in modes {
            let profiled = mode == Mode::Hotlift && case.name.starts_with("sh-");
            let profile = std::env::temp_dir().join(format!(
                "hotlift-busybox-{}-{}.json",
                std::process::id(),
                case.name
            ));
            let mut argv = mode.argv(&case.args);
            if profiled {
                let at = argv.iter().position(|a| a == "--").expect("run ... --");
                let extra = ["--count-check".to_string(), "--profile".into()];
                argv.splice(
                    at..at,
                    extra.into_iter().chain([profile.display().to_string()]),
                );
            }
            let got = run(&argv, stdin, dir, timeout);
            report.times.push((mode.name().to_string(), got.elapsed));
            let mut diffs = vec![];
            if let Some(e) = &got.error {
                diffs.push(e.clone());
            }
            if got.status != native.status && got.error.is_none() {
                diffs.push(format!(
                    "wait status: native {}, hotlift {}",
                    describe_status(native.status),
                    describe_status(got.status)
                ));
            }
            if got.stdout != native.stdout {
                diffs.push(format!(
                    "stdout differs: {}",
                    first_difference(&native.stdout, &got.stdout)
                ));
            }
            if got.stderr != native.stderr {
                diffs.push(format!(
                    "stderr differs: {}",
                    first_difference(&native.stderr, &got.stderr)
                ));
            }
            if profiled {
                if let Err(e) = check_tree_profiles(&profile) {
                    diffs.push(format!("profiles: {e}"));
                }
            }
            if !diffs.is_empty() {
                report.failures.push(format!(
                    "{} [{}{note}]\n      command: {cmdline}{stdin_note}\n      {}",
                    case.name,
                    mode.name(),
                    diffs.join("\n      ")
                ));
            }
        }
    }
    report
}

/// The profiles of a process tree written to `base` and `base.N…`: each
/// exact by `--count-check`, each naming a parent profile of the tree;
/// removed afterwards.
fn check_tree_profiles(base: &Path) -> Result<(), String> {
    let dir = base.parent().expect("a directory");
    let name = base
        .file_name()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    let files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n == name.as_str() || n.starts_with(&format!("{name}."))
        })
        .collect();
    let result = (|| {
        if !files.contains(&base.to_path_buf()) {
            return Err("no profile of the shell".to_string());
        }
        for f in &files {
            let text = fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
            let p: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?;
            let c = &p["count_check"];
            if c["block_mismatch_total"] != 0
                || c["thread_mismatches"] != 0
                || c["blocks_compared"].as_u64().unwrap_or(0) == 0
            {
                return Err(format!("{}: count check {c}", f.display()));
            }
            if p["totals"]["guest_instructions"].as_u64().unwrap_or(0) == 0 {
                return Err(format!("{}: no instructions", f.display()));
            }
            if let Some(parent) = p["process"]["parent_profile"].as_str() {
                if !files.iter().any(|g| g == Path::new(parent)) {
                    return Err(format!("{}: parent {parent} not in the tree", f.display()));
                }
            }
        }
        Ok(())
    })();
    for f in &files {
        let _ = fs::remove_file(f);
    }
    result.map(|_| ())
}

fn applet_list() -> BTreeSet<String> {
    let out = Command::new(BUSYBOX)
        .arg("--list")
        .output()
        .expect("run busybox --list");
    assert!(out.status.success(), "busybox --list failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|s| s.trim().to_string())
        .collect()
}

#[test]
fn busybox_matches_native() {
    if !Path::new(BUSYBOX).exists() {
        if std::env::var_os("CI").is_some() {
            panic!("{BUSYBOX} is missing but CI is set: install the busybox-static package");
        }
        println!(
            "SKIPPED busybox_matches_native: {BUSYBOX} not found \
             (apt-get install busybox-static); set CI=1 to make this a failure"
        );
        return;
    }
    let timeout = Duration::from_secs(
        std::env::var("HOTLIFT_BUSYBOX_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(120),
    );
    let filter = std::env::var("HOTLIFT_BUSYBOX_FILTER")
        .ok()
        .filter(|s| !s.is_empty());

    // --no-chain sends every block exit through the dispatcher and is far
    // slower, so by default it runs on inputs SMALL_SCALE times smaller.
    let nochain_full = std::env::var_os("HOTLIFT_BUSYBOX_NOCHAIN_FULL").is_some();
    let applets = applet_list();
    let dir = std::env::temp_dir().join(format!("hotlift-busybox-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let full = dir.join("full");
    setup_inputs(&full, &applets, 1);
    let small = if nochain_full {
        None
    } else {
        let small = dir.join("small");
        setup_inputs(&small, &applets, SMALL_SCALE);
        Some(small)
    };

    let all = cases();
    {
        let mut seen = BTreeSet::new();
        for c in &all {
            assert!(
                seen.insert(c.name.clone()),
                "duplicate case name {}",
                c.name
            );
        }
    }
    let mut skipped = vec![];
    let mut selected = vec![];
    for case in all {
        if let Some(f) = &filter {
            if !case.name.contains(f.as_str()) {
                continue;
            }
        }
        let missing: Vec<&String> = case
            .needs
            .iter()
            .filter(|a| !applets.contains(*a))
            .collect();
        if !missing.is_empty() {
            skipped.push(format!("{} (no applet {:?})", case.name, missing));
            continue;
        }
        selected.push(case);
    }
    println!(
        "busybox: {} cases selected, {} skipped, per-run timeout {} s, inputs in {}",
        selected.len(),
        skipped.len(),
        timeout.as_secs(),
        dir.display()
    );
    for s in &skipped {
        println!("  skip {s}");
    }
    // Debian's busybox-static has every applet a case needs: in CI (which
    // installs it) a case without its applet is a broken set-up.
    assert!(
        skipped.is_empty() || std::env::var_os("CI").is_none(),
        "CI is set but {} busybox cases lack an applet: {skipped:?}",
        skipped.len()
    );
    if let Some(f) = &filter {
        assert!(
            !selected.is_empty(),
            "HOTLIFT_BUSYBOX_FILTER={f:?} selects no case"
        );
    }

    let selected = Arc::new(selected);
    let next = Arc::new(AtomicUsize::new(0));
    let reports: Arc<Mutex<Vec<(usize, CaseReport)>>> = Arc::new(Mutex::new(vec![]));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (selected, next, reports, full, small) = (
                selected.clone(),
                next.clone(),
                reports.clone(),
                full.clone(),
                small.clone(),
            );
            thread::spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= selected.len() {
                    break;
                }
                let r = run_case(&selected[i], &full, small.as_deref(), timeout);
                let times: Vec<String> = r
                    .times
                    .iter()
                    .map(|(m, d)| format!("{} {:.2}s", m, d.as_secs_f64()))
                    .collect();
                println!(
                    "  {:<5} {:<18} {}",
                    if r.failures.is_empty() { "ok" } else { "FAIL" },
                    r.name,
                    times.join(", ")
                );
                reports.lock().unwrap().push((i, r));
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker thread panicked");
    }

    let mut reports = std::mem::take(&mut *reports.lock().unwrap());
    reports.sort_by_key(|(i, _)| *i);
    let failed: Vec<&CaseReport> = reports
        .iter()
        .map(|(_, r)| r)
        .filter(|r| !r.failures.is_empty())
        .collect();
    let failures: Vec<&String> = failed.iter().flat_map(|r| r.failures.iter()).collect();

    if std::env::var_os("HOTLIFT_BUSYBOX_KEEP").is_none() && failed.is_empty() {
        let _ = fs::remove_dir_all(&dir);
    }
    if !failures.is_empty() {
        let mut msg = format!(
            "{} of {} busybox cases failed ({} failing runs); inputs kept in {}\n",
            failed.len(),
            reports.len(),
            failures.len(),
            dir.display()
        );
        for f in failures {
            writeln!(msg, "  - {f}").unwrap();
        }
        writeln!(
            msg,
            "failed cases: {}",
            failed
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        )
        .unwrap();
        panic!("{msg}");
    }
    println!("busybox: all {} cases match native", reports.len());
}
