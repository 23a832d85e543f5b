#!/bin/bash
# run-native.sh LIST  (LIST: build/TESTS or build/BENCH)
#
# Runs every test of LIST natively, twice, each time in a fresh temporary
# working directory with the same fixed environment the Rust harness uses,
# and checks that the exit status matches the line's expect= field and that
# stdout and stderr are identical across the two runs (determinism). This is
# the check that the test suite itself is sound; tests/guest_diff.rs then
# compares native runs with hotlift runs.
set -u
list=${1:-build/TESTS}
here=$(cd "$(dirname "$0")" && pwd)
build="$here/build"
fail=0
count=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_once() {   # run_once OUTPREFIX NAME STDIN ARGS...
    local out=$1 name=$2 stdin=$3
    shift 3
    local dir
    dir=$(mktemp -d "$tmp/run.XXXXXX")
    # the braces silence bash's "Segmentation fault" job reports
    { (
        cd "$dir" || exit 99
        ulimit -c 0
        exec env -i PATH=/usr/bin:/bin LC_ALL=C HOME="$dir" TMPDIR="$dir" \
            timeout -s KILL 60 "$build/$name" "$@" <"$stdin" >"$out.stdout" 2>"$out.stderr"
    ); } 2>/dev/null
    echo $? >"$out.status"
    rm -rf "$dir"
}

while read -r line; do
    [ -z "$line" ] && continue
    set -- $line
    name=$1
    shift
    args=()
    stdin=/dev/null
    expect=exit:0
    while [ $# -gt 0 ]; do
        case $1 in
            "<") stdin="$here/$2"; shift 2 ;;
            expect=*) expect=${1#expect=}; shift ;;
            *) args+=("$1"); shift ;;
        esac
    done
    count=$((count + 1))
    run_once "$tmp/a" "$name" "$stdin" "${args[@]}"
    run_once "$tmp/b" "$name" "$stdin" "${args[@]}"
    status=$(cat "$tmp/a.status")
    if [ "$status" -gt 128 ]; then
        got="signal:SIG$(kill -l $((status - 128)))"
    else
        got="exit:$status"
    fi
    problems=""
    [ "$got" != "$expect" ] && problems="$problems status $got (want $expect);"
    cmp -s "$tmp/a.status" "$tmp/b.status" || problems="$problems status differs between runs;"
    cmp -s "$tmp/a.stdout" "$tmp/b.stdout" || problems="$problems stdout differs between runs;"
    cmp -s "$tmp/a.stderr" "$tmp/b.stderr" || problems="$problems stderr differs between runs;"
    if [ -n "$problems" ]; then
        echo "FAIL $line:$problems"
        tail -n 3 "$tmp/a.stdout" "$tmp/a.stderr" | sed 's/^/    /'
        fail=$((fail + 1))
    else
        echo "ok   $line"
    fi
done <"$list"
echo "$count runs, $fail failed"
[ "$fail" -eq 0 ]
