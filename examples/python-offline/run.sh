#!/usr/bin/env bash
# A python script with no network and a read-only home (see README.md).
# usage: run.sh   (as root, on a kernel with the BPF LSM; scripts/bwvm runs it elsewhere)
set -u
. "$(dirname "$0")/../common.sh"
need_root
work=$(mktemp -d /tmp/bw-example-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
home=$work/home
mkdir -p "$home/.ssh"
printf 'what,amount\nrent,800\nfood,215.50\n' >"$home/expenses.csv"
echo "PRIVATE KEY" >"$home/.ssh/id_ed25519"

step "compile the policy for this home"
"$bin/bwc" -D HOME="$home" "$examples/python-offline/policy.bwp" -o "$work/python-offline.o"
check "bwc compiled the policy" test -s "$work/python-offline.o"

step "run the script in the sandbox"
# The script comes in on stdin, so that the policy need not grant the examples' folder;
# the home is the working folder, which python lists to import from.
cd "$home"
"$bin/bwrun" --setenv HOME="$home" "$work/python-offline.o" -- /usr/bin/python3 - \
    <"$examples/python-offline/report.py" >"$work/out" 2>"$work/err"
cat "$work/out"
echo "-- what bwrun reported:"
cat "$work/err"
check "the script read the home and summed it" grep -qx "total 1015.50" "$work/out"
check "the upload was refused" grep -q "^upload: .*Permission denied" "$work/out"
check "even a DNS socket was refused" grep -qx "dns socket: Permission denied" "$work/out"
check "the home was not written" grep -qx "write home: Permission denied" "$work/out"
check "the key was not read" grep -qx "read key: Permission denied" "$work/out"
check "expenses.csv is unchanged" test "$(wc -l <"$home/expenses.csv")" = 3
done_example
