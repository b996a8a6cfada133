#!/usr/bin/env bash
# The in-VM half of benchmarks/run, which boots scripts/bwvm and runs this as root inside.
#
# usage: guest.sh SUITE_DIR BIN_DIR RUNS MODES WORKLOADS [scale]
# SUITE_DIR holds bench_io, bw-landlock and the benchmark policy compiled by both backends
# (maps.o, c.o). MODES and WORKLOADS are comma-separated. Prints "kernel RELEASE", one
# "skip MODE: why" per mode that cannot run here, "result WORKLOAD MODE RUN NS" per timed
# run, then "guest-done". Run 0 is a warm-up and is not printed.
# With "scale", for each bwrun backend among MODES, it then prints what sandboxes cost:
#   outside BACKEND N RUN NS    the open workload, outside every sandbox, while N run
#   memory BACKEND N KERNEL PROCESS  the kernel memory charged to the held bwruns' cgroup,
#                               in bytes, and of it their own stacks and page tables
#   startup BACKEND RUN NS      bwrun -- /bin/true when no sandbox holds the program
#   hook BACKEND WORKLOAD inside|outside PROG CALLS NS   a program's mean run time over
#                               the open or walk workload, in a sandbox or outside one
#                               (bpf_stats_enabled)
set -euo pipefail

suite=${1:?usage: guest.sh SUITE_DIR BIN_DIR RUNS MODES WORKLOADS [scale]}
bin=${2:?}
runs=${3:?}
IFS=, read -ra modes <<<"${4:?}"
IFS=, read -ra workloads <<<"${5:?}"
scale=${6:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cost="/usr/bin/python3 -I -S -B $here/bpf_cost.py"
stagepy="/usr/bin/python3 -I -S -B $here/stage.py"
readonly B=/bench tools=/bench/bin work=/bench/work fuse=/bench/fuse
# The user's home is on the tmpfs too: the benchmark policy's deny-secrets denies /root/.
export HOME=/bench/home LC_ALL=C GIT_CONFIG_NOSYSTEM=1

die() {
    echo "guest.sh: $*" >&2
    exit 1
}

# --- inputs, on a guest tmpfs ----------------------------------------------------------

mkdir -p "$B"
mount -t tmpfs -o mode=755,size=1536m bench "$B" || die "cannot mount a tmpfs on $B"
mkdir -p "$tools" "$work" "$fuse" "$work/tmp" "$HOME"
cp "$suite/bench_io" "$suite/bw-landlock" "$suite/maps.o" "$suite/c.o" "$tools/"

# open: 15,000 small files in 100 folders.
for d in $(seq -w 0 99); do
    mkdir -p "$work/files/d$d"
    for f in $(seq -w 0 149); do
        echo "file $d/$f of the open benchmark, a few dozen bytes" >"$work/files/d$d/f$f"
    done
done
# walk: 2,000 files, 10 x 10 folders of 20.
for a in $(seq 0 9); do
    for b in $(seq 0 9); do
        mkdir -p "$work/tree/a$a/b$b"
        for f in $(seq 0 19); do : >"$work/tree/a$a/b$b/f$f.txt"; done
    done
done
# gcc: a 30-module C project and its Makefile.
mkdir -p "$work/proj"
{
    echo "#include <stdio.h>"
    for m in $(seq -w 0 29); do echo "long mod$m(long);"; done
    echo "int main(void) { long s = 0;"
    for m in $(seq -w 0 29); do echo "    s += mod$m(s);"; done
    echo '    printf("%ld\n", s); return 0; }'
} >"$work/proj/main.c"
for m in $(seq -w 0 29); do
    cat >"$work/proj/mod$m.c" <<EOF
#include <stdlib.h>
#include <string.h>
struct item$m { long key; char name[32]; };
static int cmp$m(const void *a, const void *b)
{
    const struct item$m *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}
long mod$m(long seed)
{
    struct item$m items[64];
    long s = 0;
    for (int i = 0; i < 64; i++) {
        items[i].key = (seed * 31 + i * $((10#$m + 7))) % 1000;
        memset(items[i].name, 'a' + i % 26, sizeof(items[i].name));
    }
    qsort(items, 64, sizeof(items[0]), cmp$m);
    for (int i = 0; i < 64; i++)
        s += items[i].key * (i + 1) + items[i].name[i % 32];
    return s;
}
EOF
done
{
    echo "CFLAGS = -O2"
    echo "OBJS = main.o $(for m in $(seq -w 0 29); do printf 'mod%s.o ' "$m"; done)"
    printf 'prog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n'
    printf 'clean:\n\trm -f prog $(OBJS)\n'
} >"$work/proj/Makefile"
# git: a repository of 5,000 committed files.
for d in $(seq -w 0 49); do
    mkdir -p "$work/repo/src$d"
    for f in $(seq -w 0 99); do echo "source $d/$f" >"$work/repo/src$d/f$f.c"; done
done
git -C "$work/repo" init -q
git -C "$work/repo" add -A
git -C "$work/repo" -c user.name=bench -c user.email=bench@localhost commit -qm "5,000 files"
# python: a script that imports 50 stdlib modules.
echo "import abc, argparse, ast, base64, bisect, calendar, collections, contextlib, copy, csv, dataclasses, \
datetime, decimal, difflib, email, enum, fnmatch, fractions, functools, glob, gzip, hashlib, heapq, hmac, html, \
http, inspect, io, ipaddress, itertools, json, logging, math, operator, os, pathlib, pickle, platform, pprint, \
random, re, shlex, shutil, socket, statistics, string, struct, subprocess, tempfile, textwrap" \
    >"$work/imports.py"

# --- staging: the host files the workloads read, copied up into the guest -----------------

# The files, symlinks and directories that each workload and each mode's launcher name
# (strace), copied up from the 9p share (see stage.py). Run after the modes are known.
stage() {
    local w m
    for w in "${workloads[@]}"; do
        [ "$w" = gcc ] && make -s -C "$work/proj" clean
        # shellcheck disable=SC2046 # the command is a word list
        (cd "$work" && TMPDIR=$work/tmp strace -f -qq -s 4096 -o "$B/trace.$w" -e trace=%file,execve \
            $(workload_cmd "$w" "$work") >/dev/null 2>&1) || die "$w does not run natively"
    done
    for m in "${usable[@]}"; do
        mode_up "$m"
        # shellcheck disable=SC2046 # the prefix is a word list
        strace -f -qq -s 4096 -o "$B/trace.mode-$m" -e trace=%file,execve $(mode_prefix "$m") /bin/true \
            >/dev/null 2>"$B/stderr" || die "$m does not start /bin/true under strace: $(head -c 600 "$B/stderr")"
        mode_down "$m"
    done
    $stagepy up "$B"/trace.* >&2 || die "cannot stage the host files"
}

# --- modes and workloads ------------------------------------------------------------------

# The workload's command, run from ROOT ($work, or its bindfs view). open and walk time
# themselves (bench_io, the work alone); the others are timed whole, from outside the mode's
# launcher, as a user who types the command waits for it.
workload_cmd() { # WORKLOAD ROOT
    case $1 in
        open) echo "$tools/bench_io open $2/files" ;;
        walk) echo "$tools/bench_io walk $2/tree 5" ;;
        gcc) echo "make -s -C $2/proj -j1" ;;
        true) echo "/bin/true" ;;
        git) echo "git -C $2/repo status --porcelain" ;;
        python) echo "/usr/bin/python3 $2/imports.py" ;;
        *) die "unknown workload $1" ;;
    esac
}
# What bench_io prints after the time: the files it touched, or the command's status.
expected() {
    case $1 in
        open) echo 15000 ;;
        walk) echo $((5 * (1 + 10 + 100 + 2000))) ;;
        *) echo 0 ;;
    esac
}
# What a mode puts before the command.
mode_prefix() {
    case $1 in
        native | bindfs) ;;
        maps) echo "$bin/bwrun --quiet $tools/maps.o --" ;;
        c) echo "$bin/bwrun --quiet $tools/c.o --" ;;
        bwrap) echo "bwrap --bind / / --dev /dev --proc /proc --" ;;
        landlock) echo "$tools/bw-landlock --ro /usr --ro /etc --ro /proc --ro $tools --rw $work --rw /tmp --rw /dev --" ;;
        firejail) echo "firejail --quiet --noprofile --" ;;
        *) die "unknown mode $1" ;;
    esac
}
# hold NAME ARTIFACT: a sandbox named NAME that runs sleep under ARTIFACT, once it runs.
holders=()
# Every held bwrun runs in this cgroup, so that the kernel memory it makes (its maps and
# programs, and its own process's) is charged to one memory cgroup that nothing else uses.
readonly hold_cg=/sys/fs/cgroup/bench-hold
grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
    echo +memory >/sys/fs/cgroup/cgroup.subtree_control || die "cannot enable the memory controller"
mkdir -p "$hold_cg"
hold() {
    sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$hold_cg" \
        "$bin/bwrun" --quiet --name "$1" "$2" -- /bin/sleep 1000000 &
    holders+=($!)
    local n=0
    until grep -qs . "/sys/fs/cgroup/bumblewrap/$1/cgroup.procs"; do
        kill -0 "${holders[-1]}" 2>/dev/null || die "$2 did not load"
        n=$((n + 1))
        [ $n -lt 3000 ] || die "$2 did not load in 300 s"
        sleep 0.1
    done
}
# release: ends every held sandbox and waits until no BPF program of ours is attached.
release() {
    local n=0 h
    [ ${#holders[@]} = 0 ] || kill "${holders[@]}"
    for h in "${holders[@]}"; do wait "$h" 2>/dev/null || true; done
    holders=()
    while [ -e /sys/fs/bpf/bumblewrap ] || bpftool prog show 2>/dev/null | grep -q bw_file_open; do
        n=$((n + 1))
        [ $n -lt 1200 ] || die "the program was not unloaded in 120 s"
        sleep 0.1
    done
}
# Brings a mode up for a round: bindfs's mount, a bwrun backend's program (a sandbox that
# holds it loaded, so that every timed bwrun finds it: start-up is then bwrun's own).
mode_up() {
    case $1 in
        bindfs) bindfs --no-allow-other "$work" "$fuse" ;;
        maps | c) hold "hold-$1" "$tools/$1.o" ;;
    esac
}
# Takes it down: every mode starts with no BPF program of ours attached.
mode_down() {
    case $1 in
        bindfs) fusermount -u "$fuse" ;;
        maps | c) release ;;
    esac
}
# One timed run: prints NS. The command must do the whole work and report no denial.
timed() { # WORKLOAD MODE
    local root=$work out ns what
    [ "$2" = bindfs ] && root=$fuse
    [ "$1" = gcc ] && make -s -C "$root/proj" clean
    # shellcheck disable=SC2046 # the prefix and the command are word lists
    case $1 in
        open | walk) out=$(cd "$root" && $(mode_prefix "$2") $(workload_cmd "$1" "$root") 2>"$B/stderr") ;;
        *) out=$(cd "$root" && TMPDIR=$work/tmp "$tools/bench_io" run $(mode_prefix "$2") $(workload_cmd "$1" "$root") 2>"$B/stderr") ;;
    esac || die "$1 under $2 failed: $(head -c 600 "$B/stderr")"
    [ ! -s "$B/stderr" ] || die "$1 under $2 wrote to stderr: $(head -c 600 "$B/stderr")"
    read -r ns what <<<"$out"
    [ "$what" = "$(expected "$1")" ] || die "$1 under $2: got \"$out\", wanted NS $(expected "$1")"
    echo "$ns"
}

# A mode that cannot run here is reported and left out.
usable=()
for m in "${modes[@]}"; do
    case $m in
        bindfs)
            command -v bindfs >/dev/null || { echo "skip bindfs: bindfs is not installed"; continue; }
            # The guest has no udev to load fuse when /dev/fuse is first opened.
            [ -e /dev/fuse ] || modprobe fuse 2>"$B/probe" ||
                { echo "skip bindfs: modprobe fuse: $(head -c 300 "$B/probe")"; continue; }
            ;;
        bwrap) command -v bwrap >/dev/null || { echo "skip bwrap: bubblewrap is not installed"; continue; } ;;
        firejail)
            command -v firejail >/dev/null || { echo "skip firejail: firejail is not installed"; continue; }
            firejail --quiet --noprofile -- /bin/true >"$B/probe" 2>&1 ||
                { echo "skip firejail: $(head -c 300 "$B/probe" | tr '\n' ' ')"; continue; }
            ;;
    esac
    usable+=("$m")
done

stage
echo "kernel $(uname -r)"
for run in $(seq 0 "$runs"); do
    for m in "${usable[@]}"; do
        mode_up "$m"
        for w in "${workloads[@]}"; do
            ns=$(timed "$w" "$m")
            [ "$run" = 0 ] || echo "result $w $m $run $ns"
        done
        mode_down "$m"
    done
    if [ "$run" = 0 ]; then
        # After the warm-up: a write to a directory (a cache a first run creates) drops the
        # listing overlay keeps of it.
        $stagepy hold "$B"/trace.* >"$B/held" &
        dir_holder=$!
        # The next run starts once the holder is idle.
        until [ -s "$B/held" ]; do
            kill -0 "$dir_holder" 2>/dev/null || die "stage.py hold ended before it held the directories"
            sleep 0.1
        done
    fi
done
kill "$dir_holder"

# --- scale and cost -------------------------------------------------------------------------

# hook_cost BACKEND WORKLOAD WHERE COMMAND...: each of our programs' mean run time over
# COMMAND.
hook_cost() {
    local backend=$1 workload=$2 where=$3
    shift 3
    $cost stats "$B/before"
    "$@" >/dev/null 2>"$B/stderr" || die "the $workload workload $where a $backend sandbox: $(head -c 600 "$B/stderr")"
    $cost stats "$B/after"
    $cost per-call "$B/before" "$B/after" | while read -r prog calls ns; do
        echo "hook $backend $workload $where $prog $calls $ns"
    done
}
if [ "$scale" = scale ]; then
    for backend in maps c; do
        [[ " ${usable[*]} " = *" $backend "* ]] || continue
        held=0
        for n in 0 1 10 100; do
            while [ $held -lt $n ]; do
                hold "scale-$held" "$tools/$backend.o"
                held=$((held + 1))
            done
            echo "memory $backend $n $($cost memory "$hold_cg")"
            for run in $(seq 0 "$runs"); do
                ns=$(timed open native)
                [ "$run" = 0 ] || echo "outside $backend $n $run $ns"
            done
        done
        release
        for run in $(seq 0 "$runs"); do
            read -r ns what <<<"$("$tools/bench_io" run "$bin/bwrun" --quiet "$tools/$backend.o" -- /bin/true)"
            [ "$what" = 0 ] || die "bwrun $backend.o -- /bin/true: status $what"
            [ "$run" = 0 ] || echo "startup $backend $run $ns"
            release
        done
        sysctl -qw kernel.bpf_stats_enabled=1
        hold "hook-$backend" "$tools/$backend.o"
        for w in open walk; do
            # shellcheck disable=SC2046 # the command is a word list
            hook_cost "$backend" "$w" inside "$bin/bwrun" --quiet "$tools/$backend.o" -- $(workload_cmd "$w" "$work")
            # shellcheck disable=SC2046
            hook_cost "$backend" "$w" outside $(workload_cmd "$w" "$work")
        done
        release
        sysctl -qw kernel.bpf_stats_enabled=0
    done
fi
echo guest-done
