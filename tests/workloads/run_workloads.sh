#!/usr/bin/env bash
# Real workloads under stdlib policies, with no false denial: a coreutils shell script, a
# python3 program, a gcc + make build and a git repository each run in a sandbox whose
# policy includes stdlib-policies/ and may write only the workload's own folder. Each test
# asserts exit status 0, the workload's output, and an empty `--audit` file; then that the
# same policy still denies writing outside the folder and reading a key under ~/.ssh.
# Runs as root inside scripts/bwvm, like tests/e2e/run_e2e.sh.
#
# usage: run_workloads.sh BIN_DIR [maps|c]
# Prints one line per test, "ok NAME" or "not ok NAME: why", then "workloads-done".
set -u

bin=$(cd "${1:?usage: run_workloads.sh BIN_DIR [maps|c]}" && pwd)
backend=${2:-maps}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/tmp/bw-work
home=$W/home
secret=$home/.ssh/id_ed25519
outside=$W/outside
out=$W/out
export LC_ALL=C

. "$here/../lib/vm_suite.sh"

setup() {
    rm -rf "$W"
    mkdir -p "$W" "$out" "$outside" "$home/.ssh"
    echo "PRIVATE KEY" >"$secret"
    local name
    for name in shell python gcc git; do
        cp -r "$here/$name" "$W/$name"
        mkdir -p "$W/$name/tmp"
        "$bin/bwc" -D CWD="$W/$name" -D HOME="$home" --backend="$backend" "$here/policies/$name-workload.bwp" \
            -o "$W/$name.o" 2>"$out/bwc-$name.err" || { echo "bwc $name: $(cat "$out/bwc-$name.err")"; return 1; }
    done
    "$bin/bwc" -D CWD="$W/shell" --backend="$backend" "$here/policies/nscd-probe-workload.bwp" \
        -o "$W/nscd-probe.o" 2>"$out/bwc-nscd-probe.err" || { echo "bwc nscd-probe: $(cat "$out/bwc-nscd-probe.err")"; return 1; }
}

# sandbox NAME RUN ARGS...: ARGS in workload NAME's sandbox, in its folder; stdout,
# stderr, status and the audit file in $out/RUN.*. SHELL is set as a login session sets
# it: without it bash looks its user up at startup, which is the nscd probe that
# test_shell_nscd_probe_reported covers, and CI runs with no SHELL.
sandbox() {
    local name=$1 run=$2
    shift 2
    rm -f "$out/$run.audit"
    "$bin/bwrun" --audit "$out/$run.audit" --cwd "$W/$name" --setenv HOME="$home" --setenv SHELL=/bin/bash \
        --setenv TMPDIR="$W/$name/tmp" "$W/$name.o" -- "$@" >"$out/$run.stdout" 2>"$out/$run.stderr"
    echo $? >"$out/$run.status"
}

# expect_clean NAME EXPECTED_STDOUT: the workload exited 0, printed exactly that, and
# bwrun recorded no denial.
expect_clean() {
    local name=$1 want=$2
    [ "$(cat "$out/$name.status")" = 0 ] ||
        fail "status $(cat "$out/$name.status"); stderr: $(head -c 1500 "$out/$name.stderr")"
    [ "$(cat "$out/$name.stdout")" = "$want" ] ||
        fail "output: $(head -c 600 "$out/$name.stdout"); wanted: $want"
    [ ! -s "$out/$name.audit" ] ||
        fail "$(wc -l <"$out/$name.audit") denials: $(denials "$out/$name.audit")"
}

# expect_denied RUN ACCESS PATH: the sandboxed command failed, and the audit file holds a
# denial of ACCESS on PATH.
expect_denied() {
    local run=$1 access=$2 path=$3
    [ "$(cat "$out/$run.status")" != 0 ] || fail "$run: the command succeeded"
    grep -F "\"access\":\"$access\"" "$out/$run.audit" 2>/dev/null | grep -qF "\"path\":\"$path\"" ||
        fail "$run: no $access denial of $path: $(denials "$out/$run.audit" 2>/dev/null)"
}

# expect_confined NAME WRITE_CMD READ_CMD: the workload's own tools, run by sh -c, can
# neither write outside its folder (WRITE_CMD creates $outside/NAME) nor read the key
# under ~/.ssh (READ_CMD).
expect_confined() {
    local name=$1 write_cmd=$2 read_cmd=$3
    sandbox "$name" "$name-write" sh -c "$write_cmd"
    expect_denied "$name-write" create "$outside/$name"
    [ ! -e "$outside/$name" ] || fail "$outside/$name was written"
    sandbox "$name" "$name-read" sh -c "$read_cmd"
    expect_denied "$name-read" read "$secret"
    ! grep -q "PRIVATE KEY" "$out/$name-read.stdout" || fail "the key was read"
}

test_shell_coreutils() {
    sandbox shell shell /bin/bash ./work.sh
    expect_clean shell "lines 3
apples 1
files extracted/src/fruit.txt out/edited.txt out/sorted.txt out/src.tar 
mode 600"
    expect_confined shell "cp work.sh $outside/shell" "cat $secret"
}

test_shell_nscd_probe_reported() {
    # The one denial the shell workload's policy removes with its unix grant: tar still
    # works (glibc falls back to /etc/passwd), and the audit file names the socket.
    rm -f "$out/nscd.audit"
    "$bin/bwrun" --audit "$out/nscd.audit" --cwd "$W/shell" "$W/nscd-probe.o" -- tar -cf tmp/probe.tar work.sh \
        >"$out/nscd.stdout" 2>"$out/nscd.stderr"
    local rc=$?
    [ "$rc" = 0 ] || fail "tar: status $rc: $(head -c 600 "$out/nscd.stderr")"
    grep -F '"comm":"tar","access":"net","net":"create socket unix type 1 protocol 0"' "$out/nscd.audit" |
        grep -qF '"rule":"default deny"' || fail "no socket denial in the audit file: $(head -c 1500 "$out/nscd.audit")"
}

test_python_stdlib() {
    sandbox python python /usr/bin/python3 work.py
    expect_clean python "sum 6 sorted 1,2,3 child 42"
    expect_confined python "/usr/bin/python3 -c 'open(\"$outside/python\", \"w\")'" "/usr/bin/python3 -c 'print(open(\"$secret\").read())'"
}

test_gcc_make() {
    sandbox gcc gcc sh -c 'make -s && ./hello'
    expect_clean gcc "hello workload
sum 55"
    expect_confined gcc "gcc -c -o $outside/gcc sum.c" "gcc -E -x c $secret"
}

test_git() {
    sandbox git git /bin/bash ./work.sh
    expect_clean git "second
first
 1 file changed, 1 insertion(+)"
    expect_confined git "git init -q $outside/git" "git hash-object $secret"
}

echo "kernel $(uname -r), LSMs $(cat /sys/kernel/security/lsm), backend $backend"
if ! setup; then
    echo "not ok setup: the workload policies do not compile"
    echo "workloads-done"
    exit 1
fi
for t in ${BW_WORKLOADS_ONLY:-shell_coreutils shell_nscd_probe_reported python_stdlib gcc_make git}; do
    run "$t"
done
echo "workloads-done"
[ "$failures" = 0 ]
