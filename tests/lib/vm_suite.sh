# shellcheck shell=bash
# What the VM suites (tests/e2e, tests/security, tests/workloads, tests/stdlib, ...) share:
# the protocol that tests/run_tests.sh reads, one line per test, "ok NAME (N s)" or "not
# ok NAME: why". A suite sources this file, defines test_NAME functions and calls `run
# NAME` for each.

failures=0
current=

# fail WHY...: the current test failed. Returns 1, so that a test can stop at `|| return`.
fail() {
    echo "not ok $current: $*"
    failures=$((failures + 1))
    return 1
}

# run NAME: runs test_NAME; a test passes when it returns 0 without calling fail.
run() {
    current=$1
    local before=$failures start=$SECONDS
    if "test_$1" && [ "$failures" = "$before" ]; then
        echo "ok $1 ($((SECONDS - start)) s)"
    elif [ "$failures" = "$before" ]; then
        fail "returned non-zero"
    fi
}

# denials AUDIT_FILE: each distinct denial of bwrun's --audit file as "comm access object
# (rule)", the object a path or a socket operation, on one line.
denials() {
    sed 's/.*"comm":"\([^"]*\)","access":"\([^"]*\)","\(path\|net\)[a-z_]*":"\([^"]*\)".*"rule":"\([^"]*\)".*/\1 \2 \4 (\5)/' "$1" |
        sed 's,/proc/[0-9]*/,/proc/PID/,' | sort -u | head -n 40 | paste -sd ';' | sed 's/;/; /g'
}
