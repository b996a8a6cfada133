# shellcheck shell=bash
# What the VM suites (tests/e2e, tests/security, tests/workloads) share: the protocol that
# tests/run_tests.sh reads, one line per test, "ok NAME (N s)" or "not ok NAME: why".
# A suite sources this file, defines test_NAME functions and calls `run NAME` for each.

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
