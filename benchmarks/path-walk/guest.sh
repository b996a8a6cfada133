#!/usr/bin/env bash
# The in-VM half of the path-walk benchmark (benchmarks/path-walk/run.py boots one VM per
# kernel with `scripts/bwvm --icount` and runs this as root inside it).
#
# usage: guest.sh INPUT_DIR BIN_DIR REPEAT ITERATIONS
# INPUT_DIR holds open_loop, the compiled policies, paths.txt (the files to create) and
# plan.txt ("ID MODE POLICY PATH" per line; MODE is none, outside or sandbox). Prints
# "kernel RELEASE", then "result ID REP NS" per run, then "guest-done".
set -euo pipefail

in=${1:?usage: guest.sh INPUT_DIR BIN_DIR REPEAT ITERATIONS}
bin=${2:?}
repeat=${3:?}
iterations=${4:?}
# Single-letter roots keep a 2-component path 20 bytes long. /pw holds the tools.
readonly pw=/pw

die() {
    echo "guest.sh: $*" >&2
    exit 1
}

# Everything the timed command touches lives on guest tmpfs: a read from the host's 9p
# share during a timed loop would make the icount clock jump (design.md, section 2).
for d in /a /w $pw; do
    mkdir -p "$d"
    mount -t tmpfs -o mode=755 "bench${d#/}" "$d" || die "cannot mount a tmpfs on $d"
done
cp "$in"/open_loop "$in"/*.o "$in"/plan.txt "$pw"/
while read -r path; do
    mkdir -p "$(dirname "$path")"
    : >"$path"
done <"$in/paths.txt"

echo "kernel $(uname -r)"

run_phase() { # MODE: runs every plan line of that mode REPEAT times, repetitions outermost
    local mode=$1 rep id m policy path ns
    for rep in $(seq "$repeat"); do
        while read -r id m policy path; do
            [ "$m" = "$mode" ] || continue
            if [ "$m" = sandbox ]; then
                ns=$("$bin/bwrun" "$pw/$policy" -- "$pw/open_loop" "$path" "$iterations") ||
                    die "run $id failed under $policy: $path"
            else
                ns=$("$pw/open_loop" "$path" "$iterations") || die "run $id failed: $path"
            fi
            echo "result $id $rep $ns"
        done <"$pw/plan.txt"
    done
}

# 1. No BPF program loaded at all.
run_phase none

# 2. A sandbox that does nothing keeps the program attached (and, as a side effect, loaded
# once for every later bwrun): processes outside it pay the cgroup lookup only.
"$bin/bwrun" --quiet --name hold "$pw/hold.o" -- /bin/sleep 1000000 &
holder=$!
for _ in $(seq 600); do
    grep -qs . /sys/fs/cgroup/bumblewrap/hold/cgroup.procs && break
    kill -0 "$holder" 2>/dev/null || die "the holding sandbox did not start"
    sleep 0.1
done
grep -qs . /sys/fs/cgroup/bumblewrap/hold/cgroup.procs || die "the holding sandbox did not start in 60 s"
run_phase outside

# 3. Inside sandboxes.
run_phase sandbox

kill "$holder"
wait "$holder" 2>/dev/null || true
echo guest-done
