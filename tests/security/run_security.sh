#!/usr/bin/env bash
# Security suite: escape attempts from a sandbox, in a real kernel with the BPF LSM. Runs
# as root inside scripts/bwvm (tests/run_tests.sh boots one VM per kernel and backend).
#
# usage: run_security.sh BIN_DIR [maps|c]
# Each test is one attempt under policies/permissive.bwp (everything allowed), and asserts
# that it failed, checked from outside the sandbox where there is state to check, and that
# its control succeeded: the same operation where the policy allows it (inside the sandbox,
# or under policies/unsafe-all.bwp). Prints "ok NAME" or "not ok NAME: why" per test, then
# "security-done". BW_SEC_ONLY="name ..." runs only those tests.
set -u

bin=$(cd "${1:?usage: run_security.sh BIN_DIR [maps|c]}" && pwd)
backend=${2:-maps}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/tmp/bw-sec
out=$W/out
esc="python3 $here/escape.py"
export LC_ALL=C

setup() {
    rm -rf "$W"
    mkdir -p "$W/mnt" "$W/newroot/old" "$out"
    for p in permissive unsafe-all; do
        "$bin/bwc" "$here/policies/$p.bwp" --backend="$backend" -o "$W/$p.o" 2>/dev/null || return 1
    done
    # A kernel module of the running kernel, uncompressed (6.12 ships .ko.xz).
    local ko
    ko=$(find "/lib/modules/$(uname -r)/kernel/lib" -name 'crc-itu-t.ko*' | head -n 1)
    [ -n "$ko" ] || return 1
    case $ko in
    *.xz) xz -dc "$ko" >"$W/module.ko" ;;
    *) cp "$ko" "$W/module.ko" ;;
    esac
    grep -q '^crc_itu_t ' /proc/modules && rmmod crc_itu_t
    return 0
}

failures=0
current=
fail() {
    echo "not ok $current: $*"
    failures=$((failures + 1))
    return 1
}

run() {
    current=$1
    local before=$failures
    if "test_$1" && [ "$failures" = "$before" ]; then
        echo "ok $1"
    elif [ "$failures" = "$before" ]; then
        fail "returned non-zero"
    fi
}

# sandbox POLICY CMD...: runs CMD under bwrun; stdout, stderr and status land in $out.
sandbox() {
    local policy=$1
    shift
    "$bin/bwrun" "$W/$policy.o" -- "$@" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
}
status() { cat "$out/status"; }
# refused: the attempt failed inside and bwrun reported the invariant (and never failed itself).
refused() { # INVARIANT
    [ "$(status)" != 0 ] || fail "the attempt succeeded: $(head -c 400 "$out/stdout")"
    [ "$(status)" != 125 ] || fail "bwrun failed: $(head -c 600 "$out/stderr")"
    grep -qF "by invariant $1" "$out/stderr" || fail "no denial by invariant $1: $(head -c 600 "$out/stderr")"
}
allowed() { # WHAT
    [ "$(status)" = 0 ] || fail "control ($1) failed: status $(status): $(head -c 600 "$out/stdout" "$out/stderr")"
}

# An outside process to aim at; survives() checks it is still there.
outside=
start_outside() {
    sleep 300 &
    outside=$!
}
survives() {
    kill -0 "$outside" 2>/dev/null || fail "the outside process $outside was killed"
    kill "$outside" 2>/dev/null
    wait "$outside" 2>/dev/null
    return 0
}

test_cgroup_procs_of_parent() {
    # The sandbox's own cgroup, as the sandbox sees it, and its parent's cgroup.procs.
    sandbox permissive sh -c 'c=$(sed -n "s/^0:://p" /proc/self/cgroup); p=$(dirname "$c");
        echo $$ >"/sys/fs/cgroup${p%/}/cgroup.procs"; r=$?; sed -n "s/^0:://p" /proc/self/cgroup; exit $r'
    refused cgroup
    case $(cat "$out/stdout") in
    /bumblewrap*|*bw*) ;;
    *) fail "the process left its cgroup: $(cat "$out/stdout")" ;;
    esac
    sandbox permissive sh -c 'cat "/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)/cgroup.procs"'
    allowed "read its own cgroup.procs"
}

test_cgroup_mkdir() {
    sandbox permissive sh -c 'c=$(sed -n "s/^0:://p" /proc/self/cgroup); echo "$c" >'"$W/cg"';
        mkdir "/sys/fs/cgroup$c/escape"'
    refused cgroup
    [ ! -e "/sys/fs/cgroup$(cat "$W/cg")/escape" ] || fail "a cgroup was created"
    sandbox permissive mkdir "$W/plain-dir"
    allowed "mkdir outside cgroup2" && [ -d "$W/plain-dir" ] || fail "no directory made"
}

test_bpf_map_create() {
    sandbox permissive $esc bpf-map-create
    refused bpf
    grep -q "errno EPERM" "$out/stdout" || fail "not EPERM: $(cat "$out/stdout")"
    sandbox unsafe-all $esc bpf-map-create
    allowed "bpf() under unsafe bpf"
}

test_bpffs_pins() {
    sandbox permissive ls /sys/fs/bpf
    refused bpf
    # bumblewrap's own pins fall under the more specific rule of their own invariant.
    sandbox permissive ls /sys/fs/bpf/bumblewrap
    refused bumblewrap
    sandbox unsafe-all ls /sys/fs/bpf/bumblewrap
    [ "$(status)" != 0 ] || fail "bumblewrap's pins listed under unsafe bpf"
    grep -qF "by invariant bumblewrap" "$out/stderr" || fail "no denial by invariant bumblewrap: $(cat "$out/stderr")"
    sandbox unsafe-all ls /sys/fs/bpf
    allowed "list bpffs under unsafe bpf"
}

test_sysctl_write() {
    local before
    before=$(cat /proc/sys/kernel/domainname)
    sandbox permissive sh -c 'echo escaped >/proc/sys/kernel/domainname'
    refused sysctl
    [ "$(cat /proc/sys/kernel/domainname)" = "$before" ] || fail "domainname changed"
    sandbox permissive cat /proc/sys/kernel/domainname
    allowed "read a sysctl"
}

test_finit_module() {
    sandbox permissive $esc finit-module "$W/module.ko"
    refused modules
    ! grep -q '^crc_itu_t ' /proc/modules || fail "the module was loaded"
    sandbox unsafe-all $esc finit-module "$W/module.ko"
    allowed "finit_module under unsafe modules"
    grep -q '^crc_itu_t ' /proc/modules || fail "control: module not loaded"
    rmmod crc_itu_t 2>/dev/null
    return 0
}

test_init_module() {
    sandbox permissive $esc init-module "$W/module.ko"
    refused modules
    ! grep -q '^crc_itu_t ' /proc/modules || fail "the module was loaded"
    sandbox unsafe-all $esc init-module "$W/module.ko"
    allowed "init_module under unsafe modules"
    rmmod crc_itu_t 2>/dev/null
    return 0
}

test_mount_tmpfs() {
    sandbox permissive mount -t tmpfs none "$W/mnt"
    refused mount
    ! mountpoint -q "$W/mnt" || fail "tmpfs mounted"
    sandbox unsafe-all mount -t tmpfs none "$W/mnt"
    allowed "mount under unsafe mount"
    umount "$W/mnt" 2>/dev/null
    return 0
}

test_bind_mount() {
    sandbox permissive mount --bind /etc "$W/mnt"
    refused mount
    ! mountpoint -q "$W/mnt" || fail "bind mount made"
    sandbox unsafe-all mount --bind /etc "$W/mnt"
    allowed "bind mount under unsafe mount"
    umount "$W/mnt" 2>/dev/null
    return 0
}

test_unshare_mount() {
    sandbox permissive unshare -m sh -c "mount -t tmpfs none $W/mnt && touch $W/mnt/in-ns"
    refused mount
    sandbox unsafe-all unshare -m sh -c "mount -t tmpfs none $W/mnt && touch $W/mnt/in-ns"
    allowed "unshare -m and mount under unsafe mount"
    [ ! -e "$W/mnt/in-ns" ] || fail "the control's mount leaked out of its namespace"
}

test_chroot() {
    # chroot(1) exits 125 when chroot(2) fails, as bwrun does for its own failures.
    sandbox permissive sh -c 'chroot / /bin/true || exit 1'
    refused mount
    sandbox unsafe-all sh -c 'chroot / /bin/true || exit 1'
    allowed "chroot under unsafe mount"
}

test_pivot_root() {
    # The kernel asks the LSM before checking the mounts: EPERM is ours; the kernel's own
    # answer (EINVAL or EBUSY: the folder is no mount point) is another.
    sandbox permissive $esc pivot-root "$W/newroot" "$W/newroot/old"
    refused mount
    grep -q "errno EPERM" "$out/stdout" || fail "not EPERM: $(cat "$out/stdout")"
    [ "$(readlink /proc/1/root)" = / ] || fail "the root moved"
    sandbox unsafe-all $esc pivot-root "$W/newroot" "$W/newroot/old"
    grep -q "^errno E" "$out/stdout" && ! grep -q "errno EPERM" "$out/stdout" ||
        fail "control: not the kernel's own answer: $(cat "$out/stdout")"
    ! grep -qF "by invariant" "$out/stderr" || fail "control: denied under unsafe mount: $(cat "$out/stderr")"
}

test_mknod_block_device() {
    sandbox permissive mknod "$W/disk" b 8 0
    refused devices
    [ ! -e "$W/disk" ] || fail "a block device node was made"
    sandbox permissive mknod "$W/null" c 1 3
    allowed "mknod of /dev/null's number" && [ -c "$W/null" ] || fail "no character device made"
}

test_dev_mem() {
    sandbox permissive head -c 1 /dev/mem
    refused devices
    # A copy made outside, under another name, is the same device.
    mknod "$W/mem-copy" c 1 1
    sandbox permissive head -c 1 "$W/mem-copy"
    refused devices
    sandbox permissive sh -c 'head -c 1 /dev/zero >/dev/null'
    allowed "read /dev/zero"
}

test_kill_outside() {
    start_outside
    sandbox permissive kill -TERM "$outside"
    refused signal
    survives
    sandbox permissive sh -c 'sleep 300 & kill $!; wait $!; [ $? = 143 ]'
    allowed "kill a process in the sandbox"
}

test_tkill_outside() {
    start_outside
    sandbox permissive $esc tkill "$outside"
    refused signal
    survives
    sandbox permissive $esc child tkill
    allowed "tkill a child in the sandbox"
}

test_tgkill_outside() {
    start_outside
    sandbox permissive $esc tgkill "$outside"
    refused signal
    survives
}

test_pidfd_send_signal_outside() {
    start_outside
    sandbox permissive $esc pidfd-send-signal "$outside"
    refused signal
    survives
    start_outside
    sandbox unsafe-all $esc pidfd-send-signal "$outside"
    allowed "pidfd_send_signal under unsafe signal"
    wait "$outside" 2>/dev/null
    ! kill -0 "$outside" 2>/dev/null || fail "control: the outside process lives on"
}

test_kill_supervisor() {
    sandbox permissive sh -c 'kill -KILL $PPID; r=$?; echo still; exit $r'
    refused signal
    [ "$(cat "$out/stdout")" = still ] || fail "the sandbox did not run on"
}

test_ptrace_attach_outside() {
    start_outside
    sandbox permissive $esc ptrace-attach "$outside"
    refused ptrace
    grep -q "errno EPERM" "$out/stdout" || fail "not EPERM: $(cat "$out/stdout")"
    [ "$(awk '/^TracerPid/ {print $2}' "/proc/$outside/status")" = 0 ] || fail "the outside process is traced"
    survives
    sandbox permissive $esc child ptrace-attach
    allowed "ptrace a child in the sandbox"
}

test_process_vm_writev_outside() {
    start_outside
    sandbox permissive $esc process-vm-writev "$outside"
    refused ptrace
    grep -q "errno EPERM" "$out/stdout" || fail "not EPERM: $(cat "$out/stdout")"
    survives
    sandbox permissive $esc child process-vm-writev
    allowed "process_vm_writev to a child in the sandbox"
}

test_proc_mem_outside() {
    start_outside
    sandbox permissive sh -c "exec 3<>/proc/$outside/mem"
    refused ptrace
    survives
    sandbox permissive sh -c 'exec 3<>/proc/self/mem'
    allowed "open its own /proc/self/mem"
}

test_bumblewrap_state() {
    # bwrun's registry entry of the running sandbox, written from inside it.
    sandbox permissive sh -c 'for f in $(find /run/bumblewrap -type f); do echo x >>"$f" && exit 0; done; exit 1'
    [ "$(status)" != 0 ] || fail "bumblewrap's state was written"
    grep -qF "by invariant bumblewrap" "$out/stderr" || fail "no denial by invariant bumblewrap: $(cat "$out/stderr")"
    sandbox unsafe-all sh -c 'for f in $(find /run/bumblewrap -type f); do echo x >>"$f" && exit 0; done; exit 1'
    [ "$(status)" != 0 ] || fail "bumblewrap's state was written under unsafe-all"
    sandbox permissive sh -c "echo x >$W/state-like"
    allowed "write a file elsewhere"
}

test_perf_event_open() {
    sandbox permissive $esc perf-event-open
    refused perf
    sandbox unsafe-all $esc perf-event-open
    allowed "perf_event_open under unsafe perf"
}

if ! setup; then
    current=setup
    fail "policies did not compile, or no module to load"
    echo "security-done"
    exit 1
fi
for t in ${BW_SEC_ONLY:-cgroup_procs_of_parent cgroup_mkdir bpf_map_create bpffs_pins sysctl_write finit_module \
    init_module mount_tmpfs bind_mount unshare_mount chroot pivot_root mknod_block_device dev_mem kill_outside \
    tkill_outside tgkill_outside pidfd_send_signal_outside kill_supervisor ptrace_attach_outside \
    process_vm_writev_outside proc_mem_outside bumblewrap_state perf_event_open}; do
    run "$t"
done
echo "security-done"
[ "$failures" = 0 ]
