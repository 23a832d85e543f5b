#!/bin/sh
# gen-lists.sh MANIFEST BUILDDIR SOURCES...
#
# Expands the manifest into BUILDDIR/TESTS, BUILDDIR/BENCH and
# BUILDDIR/COUNT (a test's count lines, or else its TESTS lines). Every source
# gives test names (asm/X.S -> asm-X; c/X.c -> c-X, cpie-X and cdyn-X;
# dyn/X.c -> dyn-X). A manifest line naming c-X applies to c-X, cpie-X and
# cdyn-X, except bench and count lines: the dynamically linked cdyn-X is
# benchmarked only when a bench line names it, and single-stepped
# (COUNT) only when a count line names cdyn-X itself, because ld.so's
# start-up alone is about 110,000 instructions. A test without a manifest
# line runs once with no arguments and expect=exit:0. Output lines always
# carry an explicit expect= field. Unknown names or malformed lines are
# errors, so a typo cannot silently drop a test.
set -eu
export LC_ALL=C
manifest=$1
out=$2
shift 2

names=""
for src in "$@"; do
    base=$(basename "$src")
    case "$src" in
        asm/*.S) names="$names asm-${base%.S}" ;;
        c/*.c) names="$names c-${base%.c} cdyn-${base%.c}" ;;
        dyn/*.c) names="$names dyn-${base%.c}" ;;
        *) echo "gen-lists.sh: unexpected source $src" >&2; exit 1 ;;
    esac
done

rm -f "$out/TESTS.tmp" "$out/BENCH.tmp" "$out/COUNT.tmp"
awk -v names="$names" -v tests="$out/TESTS.tmp" -v bench="$out/BENCH.tmp" -v counts="$out/COUNT.tmp" '
function die(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"; err = 1; exit 1 }
# Appends "variant rest expect" to store[variant] for NAME and, for c-X,
# cpie-X and (unless only_static) cdyn-X too.
function add(store, name, rest, expect, only_static,   variants, i, n, line) {
    if (name ~ /^c-/) {
        variants[1] = name; variants[2] = "cpie-" substr(name, 3); n = 2
        if (!only_static) { variants[3] = "cdyn-" substr(name, 3); n = 3 }
    }
    else { variants[1] = name; n = 1 }
    for (i = 1; i <= n; i++) {
        line = variants[i] rest
        if (expect != "") line = line " " expect
        store[variants[i]] = store[variants[i]] line "\n"
    }
}
BEGIN {
    split(names, list, " ")
    for (i in list) {
        known[list[i]] = 1
        # cdyn-X is listed with its c-X (the variants loop below).
        if (list[i] !~ /^cdyn-/) order[++count] = list[i]
    }
}
/^[ \t]*(#|$)/ { next }
{
    kind = "test"; f = 1
    if ($1 == "bench" || $1 == "count") { kind = $1; f = 2 }
    name = $f
    if (!(name in known)) die("unknown test " name " (no asm/ or c/ source)")
    rest = ""; expect = ""; stdin = 0
    for (i = f + 1; i <= NF; i++) {
        if ($i == "<") {
            if (i + 1 > NF) die("< without a file")
            rest = rest " < " $(i + 1); i++; stdin = 1
        } else if ($i ~ /^expect=/) {
            if ($i !~ /^expect=(exit:[0-9]+|signal:SIG[A-Z0-9]+)$/) die("bad " $i)
            expect = $i
        } else {
            if (stdin) die("arguments must come before < FILE")
            rest = rest " " $i
        }
    }
    if (expect == "") expect = "expect=exit:0"
    if (kind == "bench") add(bench_lines, name, rest, expect, 1)
    else if (kind == "count") add(count_lines, name, rest, expect, 1)
    else add(test_lines, name, rest, expect, 0)
}
END {
    if (err) exit 1
    for (i = 1; i <= count; i++) {
        name = order[i]
        if (name ~ /^c-/) {
            variants[1] = name; variants[2] = "cpie-" substr(name, 3)
            variants[3] = "cdyn-" substr(name, 3); n = 3
        }
        else { variants[1] = name; n = 1 }
        for (j = 1; j <= n; j++) {
            v = variants[j]
            if (!(v in test_lines)) test_lines[v] = v " expect=exit:0\n"
            printf "%s", test_lines[v] > tests
            if (v in count_lines) printf "%s", count_lines[v] > counts
            else if (v !~ /^cdyn-/) printf "%s", test_lines[v] > counts
            if (v in bench_lines) printf "%s", bench_lines[v] > bench
        }
    }
    close(tests); close(bench); close(counts)
}
' "$manifest"
# awk only creates files it writes to.
touch "$out/TESTS.tmp" "$out/BENCH.tmp" "$out/COUNT.tmp"
sort -o "$out/TESTS" "$out/TESTS.tmp"
sort -o "$out/BENCH" "$out/BENCH.tmp"
sort -o "$out/COUNT" "$out/COUNT.tmp"
rm -f "$out/TESTS.tmp" "$out/BENCH.tmp" "$out/COUNT.tmp"
