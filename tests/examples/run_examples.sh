#!/usr/bin/env bash
# The walkthroughs in examples/, run as a reader runs them: each folder's run.sh, which
# checks that every step behaved as its README says and ends with "example ok". Runs as
# root inside scripts/bwvm, like tests/e2e/run_e2e.sh.
#
# usage: run_examples.sh BIN_DIR
# Prints one line per example, "ok NAME" or "not ok NAME: why", then "examples-done".
set -u

bin=$(cd "${1:?usage: run_examples.sh BIN_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
examples=$here/../../examples
out=/tmp/bw-examples
rm -rf "$out"
mkdir -p "$out"

. "$here/../lib/vm_suite.sh"

example() {
    BW_BIN=$bin bash "$examples/$current/run.sh" >"$out/$current.log" 2>&1
    local rc=$?
    [ $rc = 0 ] && grep -qx "example ok" "$out/$current.log" ||
        fail "status $rc: $(grep -v "^   as expected" "$out/$current.log" | tail -n 30)"
}

echo "kernel $(uname -r), LSMs $(cat /sys/kernel/security/lsm)"
for name in ${BW_EXAMPLES_ONLY:-c-build python-offline agent-shell gpu ci-lint}; do
    eval "test_$name() { example; }"
    run "$name"
done
echo "examples-done"
