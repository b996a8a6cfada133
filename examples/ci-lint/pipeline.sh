#!/usr/bin/env bash
# A CI job's policy lint step: `bwc check -Werror` on each policy given, a SARIF report of
# each in SARIF_DIR (for a code-scanning upload), one summary line per policy. The job
# fails if any policy has a finding.
# usage: SARIF_DIR=DIR pipeline.sh POLICY.bwp...
set -u
bwc=${BWC:-bwc}
sarif_dir=${SARIF_DIR:?set SARIF_DIR to the folder for the SARIF reports}
mkdir -p "$sarif_dir"
status=0
for policy in "$@"; do
    report=$sarif_dir/$(basename "$policy" .bwp).sarif
    if "$bwc" check -Werror --format=sarif "$policy" >"$report"; then
        echo "pass  $policy"
    else
        echo "FAIL  $policy (findings in $report)"
        "$bwc" check -Werror "$policy" 2>&1 | sed 's/^/      /'
        status=1
    fi
done
exit $status
