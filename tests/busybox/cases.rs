//! The busybox test's cases: an applet, its arguments, stdin and the
//! ending expected natively.

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Expect {
    Exit(i32),
    Signal(i32),
}

#[derive(Clone, Debug)]
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) args: Vec<String>,
    pub(crate) stdin: Option<String>,
    pub(crate) expect: Expect,
    pub(crate) empty_ok: bool,
    pub(crate) needs: Vec<String>,
}

impl Case {
    pub(crate) fn stdin(mut self, f: &str) -> Self {
        self.stdin = Some(f.into());
        self
    }
    pub(crate) fn exit(mut self, code: i32) -> Self {
        self.expect = Expect::Exit(code);
        self
    }
    pub(crate) fn signal(mut self, sig: i32) -> Self {
        self.expect = Expect::Signal(sig);
        self
    }
    pub(crate) fn empty_ok(mut self) -> Self {
        self.empty_ok = true;
        self
    }
    pub(crate) fn needs(mut self, applet: &str) -> Self {
        self.needs.push(applet.into());
        self
    }
}

pub(crate) fn c(name: &str, args: &[&str]) -> Case {
    Case {
        name: name.into(),
        args: args.iter().map(|s| s.to_string()).collect(),
        stdin: None,
        expect: Expect::Exit(0),
        empty_ok: false,
        needs: vec![args[0].to_string()],
    }
}

pub(crate) fn cases() -> Vec<Case> {
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
