#!/bin/sh
# gen-lists.sh MANIFEST BUILDDIR SOURCES...
#
# Expands the manifest into BUILDDIR/TESTS and BUILDDIR/BENCH. Every source
# gives test names (asm/X.S -> asm-X; c/X.c -> c-X and cpie-X). A manifest
# line naming c-X applies to both c-X and cpie-X. A test without a manifest
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
        c/*.c) names="$names c-${base%.c}" ;;
        *) echo "gen-lists.sh: unexpected source $src" >&2; exit 1 ;;
    esac
done

rm -f "$out/TESTS.tmp" "$out/BENCH.tmp"
awk -v names="$names" -v tests="$out/TESTS.tmp" -v bench="$out/BENCH.tmp" '
function die(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"; err = 1; exit 1 }
function emit(file, name, rest, expect,   variants, i, n, line) {
    if (name ~ /^c-/) { variants[1] = name; variants[2] = "cpie-" substr(name, 3); n = 2 }
    else { variants[1] = name; n = 1 }
    for (i = 1; i <= n; i++) {
        line = variants[i] rest
        if (expect != "") line = line " " expect
        print line > file
    }
}
BEGIN {
    split(names, list, " ")
    for (i in list) { known[list[i]] = 1; order[++count] = list[i] }
}
/^[ \t]*(#|$)/ { next }
{
    kind = "test"; f = 1
    if ($1 == "bench") { kind = "bench"; f = 2 }
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
    if (kind == "bench") { emit(bench, name, rest, expect); next }
    emit(tests, name, rest, expect)
    listed[name] = 1
}
END {
    if (err) exit 1
    for (i = 1; i <= count; i++)
        if (!(order[i] in listed)) emit(tests, order[i], "", "expect=exit:0")
    close(tests); close(bench)
}
' "$manifest"
# awk only creates files it writes to.
touch "$out/TESTS.tmp" "$out/BENCH.tmp"
sort -o "$out/TESTS" "$out/TESTS.tmp"
sort -o "$out/BENCH" "$out/BENCH.tmp"
rm -f "$out/TESTS.tmp" "$out/BENCH.tmp"
