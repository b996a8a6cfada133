#!/usr/bin/env bash
# Fuzzes the parser, front end, path automata, map backend and formatter for SECONDS:
#
#   bash tests/fuzz/run_fuzz.sh SECONDS
#
# Configures and builds the libFuzzer build (clang 19, ASan + UBSan, every library
# instrumented) in $BW_FUZZ_BUILD_DIR (default build-fuzz/) when it is missing or out of
# date, then runs bw_fuzz_frontend over a temporary copy of tests/fuzz/corpus (the
# checked-in corpus is never modified) with tests/fuzz/bwp.dict.
#
# Prints "fuzz build: ...", then one summary line. Exit status: 0 when nothing was found,
# 1 when libFuzzer found a crash, sanitizer report, leak, timeout or OOM (the reproducer is
# kept under $BW_FUZZ_BUILD_DIR/fuzz-artifacts/ and its path printed), 2 when the fuzzer
# could not be built or run.
#
# Reproduce a finding: build-fuzz/bin/bw_fuzz_frontend build-fuzz/fuzz-artifacts/crash-...
set -u

seconds=${1:-}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 SECONDS" >&2
    exit 2
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BW_FUZZ_BUILD_DIR:-$root/build-fuzz}
fuzzer=$build/bin/bw_fuzz_frontend
artifacts=$build/fuzz-artifacts
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- build (incremental; configure only when the cache is missing or not a fuzz build) ---

mkdir -p "$build"
build_log=$build/fuzz-build.log
t=$(now)
if ! grep -qs '^BW_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
    if ! cmake -S "$root" -B "$build" -DBW_FUZZ=ON -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build_log" 2>&1; then
        echo "fuzz build: configure failed after $(elapsed "$t")s: $(tail -n 20 "$build_log")"
        exit 2
    fi
fi
if ! cmake --build "$build" --target bw_fuzz_frontend -j"$(nproc)" >>"$build_log" 2>&1; then
    echo "fuzz build: failed after $(elapsed "$t")s (log: $build_log):"
    grep -m 20 -E 'error|Error' "$build_log"
    exit 2
fi
echo "fuzz build: $(elapsed "$t")s ($build)"

# --- run over a copy of the corpus -------------------------------------------------------

work=$(mktemp -d "${TMPDIR:-/tmp}/bw-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$artifacts"
cp "$root"/tests/fuzz/corpus/* "$work/corpus/"
fuzz_log=$build/fuzz.log

# libFuzzer's exit status tells a finding (crash, leak, timeout, OOM: non-zero) from a clean run.
# ASan's default 256 MB quarantine of freed memory alone takes the process past 1 GB of RSS
# here; a smaller one keeps -rss_limit_mb meaningful for the compiler's own memory.
(
    cd "$work" &&
        ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=32} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
            "$fuzzer" -max_total_time="$seconds" -dict="$root/tests/fuzz/bwp.dict" -timeout=10 \
            -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" "$work/corpus"
) >"$fuzz_log" 2>&1
rc=$?

runs=$(sed -n 's/^Done \([0-9]*\) runs in .*/\1/p' "$fuzz_log" | tail -n 1)
[ -n "$runs" ] || runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$fuzz_log" | tail -n 1)
last=$(grep -E '^#[0-9]+[[:space:]]' "$fuzz_log" | tail -n 1)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$fuzz_log" | tail -n 1)

if [ "$rc" = 0 ] && [ -z "$reproducer" ]; then
    echo "fuzz: ${runs:-?} runs in ${seconds} s, coverage ${cov:-?} edges (${ft:-?} features), corpus ${corp:-?} inputs, no crash"
    exit 0
fi
if [ -z "$reproducer" ] && ! grep -q 'INITED' "$fuzz_log"; then
    echo "fuzz: $fuzzer did not start (status $rc): $(tail -n 5 "$fuzz_log")"
    exit 2
fi
kind=$(grep -m 1 -oE 'fuzz_frontend: [a-z ]+|ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer): [a-z-]+|runtime error: .*|ALARM: working on the last Unit for [0-9]+ seconds|==[0-9]+== ERROR: libFuzzer: [a-z-]+' "$fuzz_log")
[ -n "$kind" ] || kind="libFuzzer exited with status $rc"
echo "fuzz: ${kind} after ${runs:-?} runs (coverage ${cov:-?} edges); reproducer: ${reproducer:-none written}; log: $fuzz_log"
echo "fuzz: reproduce with $fuzzer ${reproducer:-<input>}"
exit 1
