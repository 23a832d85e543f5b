//! The busybox test's inputs: text, numbers, CSV, tab-separated and
//! binary files and a small directory tree, generated deterministically.

use super::*;

// ---------------------------------------------------------------------------
// Deterministic input generation
// ---------------------------------------------------------------------------

use crate::rng::Seeded as Rng;

pub(crate) const BASE_WORDS: &[&str] = &[
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

pub(crate) const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qu", "an", "er", "in", "on", "us",
    "bra", "cle", "dri", "fro", "glu", "pla", "stri", "th", "ch", "sh",
];

pub(crate) fn vocabulary(rng: &mut Rng) -> Vec<String> {
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

pub(crate) fn gen_text(rng: &mut Rng, vocab: &[String], target: usize) -> Vec<String> {
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

pub(crate) fn join_lines(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// A copy of `lines` with scattered changes, deletions and insertions.
pub(crate) fn edit_lines(rng: &mut Rng, lines: &[String], vocab: &[String]) -> Vec<String> {
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

pub(crate) fn gen_nums(rng: &mut Rng, n: usize) -> String {
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

pub(crate) fn gen_csv(rng: &mut Rng, vocab: &[String], rows: usize) -> String {
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

pub(crate) fn gen_tabs(rng: &mut Rng, vocab: &[String], n: usize) -> String {
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

pub(crate) fn gen_binary(rng: &mut Rng, size: usize) -> Vec<u8> {
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

pub(crate) fn set_times(path: &Path, secs: i64) {
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

pub(crate) fn write_file(path: &Path, data: impl AsRef<[u8]>, mode: u32) {
    fs::write(path, data).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs busybox natively during setup and returns its stdout (panics on failure).
pub(crate) fn native_output(dir: &Path, args: &[&str], stdin: Option<&str>) -> Vec<u8> {
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
pub(crate) const SMALL_SCALE: usize = 10;

pub(crate) const T0: i64 = 1_600_000_000; // 2020-09-13 12:26:40 UTC

/// Builds every input file in `dir`. `applets` decides which derived files
/// (compressed copies etc.) can be made.
pub(crate) fn generate_inputs(dir: &Path, applets: &BTreeSet<String>, scale: usize) {
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
pub(crate) fn setup_inputs(d: &Path, applets: &BTreeSet<String>, scale: usize) {
    fs::create_dir_all(d).unwrap();
    generate_inputs(d, applets, scale);
    if applets.contains("tar") {
        let data = native_output(d, &["tar", "-cf", "-", "tree"], None);
        fs::write(d.join("tree.tar"), data).unwrap();
        set_times(&d.join("tree.tar"), T0);
        set_times(d, T0);
    }
}

pub(crate) fn collect_paths(dir: &Path, out: &mut Vec<PathBuf>) {
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
