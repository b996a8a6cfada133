#!/usr/bin/env bash
# A C project built in a sandbox that may write only the project's tree (see README.md).
# usage: run.sh   (as root, on a kernel with the BPF LSM; scripts/bwvm runs it elsewhere)
set -u
. "$(dirname "$0")/../common.sh"
need_root
work=$(mktemp -d /tmp/bw-example-c-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$examples/c-build/project" "$work/project"
mkdir -p "$work/home"
touch "$work/home/.bashrc"
cd "$work/project"

step "compile the policy, with the project's folder as \${CWD}"
"$bin/bwc" -D HOME="$work/home" "$examples/c-build/policy.bwp" -o "$work/c-build.o"
check "bwc compiled the policy" test -s "$work/c-build.o"

step "build the project in the sandbox, then run what it built (outside: the policy lets the
   build write its tree, and a sandbox that may run what it writes could run anything)"
"$bin/bwrun" --setenv TMPDIR="$work/project" --setenv HOME="$work/home" "$work/c-build.o" -- make -s
./hello | tee "$work/out"
check "the build ran and the program printed its greeting" grep -q "hello from the sandboxed build" "$work/out"

step "a build step that writes outside the tree (make tamper) is denied"
"$bin/bwrun" --setenv HOME="$work/home" "$work/c-build.o" -- make -s tamper 2>&1 | tee "$work/tamper"
check "bwrun reported the denied append to ~/.bashrc" grep -q "denied .* $work/home/.bashrc" "$work/tamper"
check "~/.bashrc is unchanged" test ! -s "$work/home/.bashrc"
done_example
