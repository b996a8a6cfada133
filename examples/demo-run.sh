#!/usr/bin/env bash
# Runs the quick-start demo: one allowed and one denied access under examples/demo.bwp.
# usage: demo-run.sh BIN_DIR POLICY.o   (as root, on a kernel with the BPF LSM)
set -eu
bin=$1
policy=$2
dir=/tmp/bumblewrap-demo
mkdir -p "$dir"
echo "meeting at noon" >"$dir/notes.txt"
echo "hunter2" >"$dir/secret.txt"

echo "== outside the sandbox, both files are readable:"
cat "$dir/notes.txt" "$dir/secret.txt"
echo
echo "== inside: bwrun demo.o -- sh -c 'cat $dir/notes.txt; cat $dir/secret.txt'"
set +e
LC_ALL=C "$bin/bwrun" --name demo "$policy" -- sh -c "cat $dir/notes.txt; cat $dir/secret.txt"
status=$?
set -e
echo
echo "== the sandboxed shell exited with status $status (cat's EACCES), and bwrun named the rule"
rm -rf "$dir"
