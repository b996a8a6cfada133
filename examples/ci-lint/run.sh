#!/usr/bin/env bash
# The policy lint of a CI pipeline, on a passing and a failing policy (see README.md).
# usage: run.sh   (needs no root: bwc check only reads policies)
set -u
. "$(dirname "$0")/../common.sh"
work=$(mktemp -d /tmp/bw-example-ci-lint.XXXXXX)
trap 'rm -rf "$work"' EXIT
policies=$examples/ci-lint/policies
# The lints judge the grants of ${HOME}: fix it, so that the result does not depend on who runs this.
export HOME=/home/ci

step "the pipeline on the passing policy"
BWC="$bin/bwc" SARIF_DIR="$work/good" bash "$examples/ci-lint/pipeline.sh" "$policies/good.bwp"
check "the job passes" test $? = 0

step "the pipeline on both policies"
BWC="$bin/bwc" SARIF_DIR="$work/all" bash "$examples/ci-lint/pipeline.sh" "$policies/good.bwp" "$policies/bad.bwp"
check "the job fails" test $? = 1
# What a code-scanning service reads: rule, file and line of each finding.
python3 - "$work/all/bad.sarif" "$work/all/good.sarif" >"$work/findings" <<'PY'
import json, sys
for path in sys.argv[1:]:
    for run in json.load(open(path))["runs"]:
        for r in run["results"]:
            loc = r["locations"][0]["physicalLocation"]
            print(r["ruleId"], r["level"], loc["artifactLocation"]["uri"].rsplit("/", 1)[-1],
                  loc["region"]["startLine"])
PY
cat "$work/findings"
check "bad.sarif names the repeated rule at line 7" grep -qx "BW3006 warning bad.bwp 7" "$work/findings"
check "bad.sarif names the ssh key grant at line 8" grep -qx "BW3017 warning bad.bwp 8" "$work/findings"
check "good.sarif has no finding" sh -c "! grep -q good.bwp '$work/findings'"
done_example
