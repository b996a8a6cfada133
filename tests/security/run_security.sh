#!/usr/bin/env bash
# Security suite: escape attempts from a sandbox, in a real kernel with the BPF LSM. Runs
# as root inside scripts/bwvm (tests/run_tests.sh boots one VM per kernel and backend).
#
# usage: run_security.sh BIN_DIR [maps|c]
# Each test is one attempt under policies/permissive.bwp (everything allowed), and asserts
# that it failed, checked from outside the sandbox where there is state to check, and that
# its control succeeded: the same operation where the policy allows it (inside the sandbox,
# or under policies/unsafe-all.bwp). Prints "ok NAME" or "not ok NAME: why" per test, then
# "security-done". BW_SEC_ONLY="name ..." runs only those tests. The path attempts run under
# policies/files.bwp (allowed/ against secret/), the network ones under policies/net.bwp.
#
# Each known hole of the seed prototype (design.md §6) and the tests proving it is closed:
#   paths over 95 bytes checked against stale buffers: path_over_path_max, deep_tree,
#     unicode_newline_names; e2e denied_path_over_96_bytes, path_over_4000_bytes_denied,
#     path_beyond_path_max_fails_closed
#   only file_open hooked:
#     unlink: e2e unlink_rmdir_denied; mkdir: e2e mkdir_mknod_symlink_denied
#     rename: rename_file_into_allowed, rename_denied_dir_out, io_uring_renameat
#     link: hardlink_of_secret, io_uring_linkat
#     chmod: chmod_denied; truncate: o_trunc_keeps_content; xattr: xattr_set_denied;
#     utimes: utimes_denied; stat: e2e stat_denied
#     exec: memfd_fexecve, ld_so_denied_binary; mmap: mmap_exec_denied, mprotect_exec_denied
#     O_CREAT creating files before the denial: o_creat_leaves_no_file
#   no read/write distinction: o_trunc_keeps_content; e2e read_only_tree, write_denied
#   a root sandbox rewriting its own policy: bpffs_pins, bumblewrap_state
#   ... leaving its cgroup through cgroup.procs: cgroup_procs_of_parent, cgroup_mkdir,
#     nest_outside_process (a nesting request naming an outside process)
#   ... loading BPF: bpf_map_create, perf_event_open; mounting: mount_tmpfs, bind_mount,
#     unshare_mount, chroot, pivot_root; ptrace: ptrace_attach_outside,
#     process_vm_writev_outside, proc_mem_outside; signalling its supervisor: kill_supervisor
#   kill denied but not tkill, tgkill, pidfd_send_signal: tkill_outside, tgkill_outside,
#     pidfd_send_signal_outside, setuid_root_signal_outside
#   syscall filtering by kprobes on every process: e2e outside_unaffected, run_syscalls.sh
#   rule paths through symlinks never matching: unit test "a rule through a symlink on this
#     machine is reported with the resolved path"; symlink_made_outside, symlink_made_inside
#   the setuid wrapper trusting the caller's PATH: e2e run_setuid_hostile_environment
#   a killed supervisor leaving the sandbox unconfined: kill_supervisor; e2e
#     run_sigkill_fails_closed, run_orphan_stays_confined_until_collected
# And namespaces inside the sandbox (user namespaces refused unless `unsafe namespaces`;
# with it, mounts in its own namespaces rename nothing, under policies/namespaces.bwp):
#   userns_refused, userns_bind_secret, userns_pivot_root, userns_chroot,
#   userns_move_mount, userns_mount_outside_own_ns, userns_new_proc_sysctl, bubblewrap_inside,
#   userns_overlay, fsmount_tmpfs, covered_name
set -u

bin=$(cd "${1:?usage: run_security.sh BIN_DIR [maps|c]}" && pwd)
backend=${2:-maps}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/tmp/bw-sec
# A tmpfs tree beside the overlay one: file handles, trusted xattrs and, from 6.2, the paths
# of executable mappings need a file system that is not overlayfs.
S=/dev/shm/bw-sec
out=$W/out
esc="/usr/bin/python3 $here/escape.py"
# The same tool where policies/files.bwp and net.bwp let the sandbox read it.
tool="/usr/bin/python3 $W/tools/escape.py"
export LC_ALL=C

setup() {
    rm -rf "$W" "$S"
    mkdir -p "$W/mnt" "$W/newroot/old" "$W/nsroot" "$out" "$W/tools" "$W/suid" || return 1
    setup_files "$W" && setup_files "$S" || return 1
    cp "$here/escape.py" "$here/../e2e/map_exec.py" "$W/tools/" || return 1
    cc -O2 -o "$W/suid/reader" "$here/suid_reader.c" && chmod 4755 "$W/suid/reader" || return 1
    ip link set lo up || return 1
    for p in permissive unsafe-all files net namespaces; do
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

# setup_files ROOT: the trees policies/files.bwp is about.
setup_files() {
    mkdir -p "$1/allowed/mnt" "$1/secret/dir" "$1/readonly" "$1/noexec" || return 1
    echo "public content" >"$1/allowed/file"
    echo "SECRET content" >"$1/secret/file"
    echo "SECRET content" >"$1/secret/dir/file"
    echo "read only" >"$1/readonly/file"
    cp /usr/bin/true "$1/noexec/true"
}

. "$here/../lib/vm_suite.sh"

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
# denied KIND PATH: the attempt failed, bwrun did not, and bwrun reported the path's denial.
denied() {
    [ "$(status)" != 0 ] || fail "the attempt succeeded: $(head -c 400 "$out/stdout")"
    [ "$(status)" != 125 ] || fail "bwrun failed: $(head -c 600 "$out/stderr")"
    grep -qF "denied $1 $2" "$out/stderr" || fail "no denial of $1 $2 reported: $(head -c 600 "$out/stderr")"
}
# no_secret: whatever the attempt did, the secret's content never reached the sandbox.
no_secret() {
    ! grep -q SECRET "$out/stdout" || fail "the secret was read: $(head -c 400 "$out/stdout")"
}
# reads TEXT: the control's output is the allowed file's content.
reads() {
    grep -qF "$1" "$out/stdout" || fail "control: read $(head -c 400 "$out/stdout" "$out/stderr")"
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

test_nest_outside_process() {
    # A nesting request names an outside process: the broker must not move it into a sandbox.
    start_outside
    local before
    before=$(cat "/proc/$outside/cgroup")
    sandbox permissive $esc nest-request "$outside" "$W/permissive.o"
    [ "$(status)" = 1 ] && grep -qF "refused: the program to nest is not in the sandbox" "$out/stdout" ||
        fail "the request was not refused: $(head -c 600 "$out/stdout" "$out/stderr")"
    [ "$(cat "/proc/$outside/cgroup")" = "$before" ] || fail "the outside process moved: $(cat "/proc/$outside/cgroup")"
    survives
    sandbox permissive $esc nest-request child "$W/permissive.o"
    allowed "nest a child of the sandbox"
    grep -q "^granted permissive-[0-9]* 0::/bumblewrap/permissive-[0-9]*/permissive-[0-9]*$" "$out/stdout" ||
        fail "control: the child is not in a nested cgroup: $(cat "$out/stdout")"
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

# User namespaces are refused unless the policy says `unsafe namespaces`. With it, the
# sandbox may mount in the mount namespaces its user namespaces own (policies/namespaces.bwp),
# but a file keeps the names it has in the sandbox's own namespace: a bind mount, a new
# root or a move cannot rename the secret into an allowed path.
test_userns_refused() {
    sandbox permissive unshare -U true
    refused namespaces
    sandbox unsafe-all unshare -U true
    allowed "unshare -U under unsafe namespaces"
}

test_userns_bind_secret() {
    sandbox namespaces unshare -Urm sh -c "mount --bind $W/secret $W/allowed/mnt && cat $W/allowed/mnt/file"
    denied read "$W/secret/file"
    no_secret
    sandbox namespaces unshare -Urm sh -c "mount --bind $W/readonly $W/allowed/mnt && cat $W/allowed/mnt/file"
    allowed "a bind mount of a readable folder, read through" && reads "read only"
    sandbox namespaces unshare -Urm sh -c "mount --bind $W/readonly $W/allowed/mnt && echo x >$W/allowed/mnt/file"
    denied write "$W/readonly/file"
}

# userns_new_root pivot|chroot: into a tmpfs root with secret/ (then allowed/) bound at /data.
userns_new_root() {
    sandbox namespaces $tool ns-root "$1" "$W/nsroot" "$W/secret"
    denied read "$W/secret/file"
    no_secret
    sandbox namespaces $tool ns-root "$1" "$W/nsroot" "$W/allowed"
    allowed "$1 into a root of the sandbox's own" && reads "public content"
}
test_userns_pivot_root() { userns_new_root pivot; }
test_userns_chroot() { userns_new_root chroot; }

test_userns_move_mount() {
    # The source of a move needs read: refused at the move, before any read through it.
    sandbox namespaces $tool move-tree "$W/secret" "$W/allowed/mnt"
    denied read "$W/secret"
    grep -q "errno EACCES" "$out/stdout" || fail "the move itself was not refused: $(cat "$out/stdout")"
    no_secret
    sandbox namespaces $tool move-tree "$W/readonly" "$W/allowed/mnt"
    allowed "a detached copy of a readable folder, attached" && reads "read only"
}

test_userns_mount_outside_own_ns() {
    # unshare -m alone: a mount namespace that the sandbox's own user namespace owns.
    sandbox namespaces unshare -m sh -c "mount -t tmpfs none $W/mnt"
    refused mount
    sandbox namespaces unshare -Urm sh -c "mount -t tmpfs none $W/mnt && echo hi >$W/mnt/in-ns && cat $W/mnt/in-ns"
    allowed "a tmpfs in a mount namespace of the sandbox's own" && reads hi
    [ ! -e "$W/mnt/in-ns" ] || fail "the mount leaked out of its namespace"
    # A file system of the sandbox's own has no name in the policy: nothing on it runs.
    sandbox namespaces unshare -Urm sh -c "mount -t tmpfs none $W/mnt && cp /usr/bin/true $W/mnt/t && $W/mnt/t"
    [ "$(status)" != 0 ] || fail "a binary on the sandbox's own tmpfs ran"
    grep -qF "denied exec" "$out/stderr" || fail "no exec denial: $(head -c 600 "$out/stderr")"
}

test_userns_overlay() {
    # An overlay opens its layers through kernel-internal mounts, where no name is decided.
    sandbox namespaces unshare -Urm sh -c "mount -t overlay overlay -o lowerdir=$S/secret:$S/readonly $W/allowed/mnt && cat $W/allowed/mnt/file"
    refused mount
    grep -qF "a new overlay file system" "$out/stderr" || fail "not refused as a new file system: $(head -c 600 "$out/stderr")"
    no_secret
    sandbox namespaces unshare -Urm sh -c "mount -t tmpfs none $W/allowed/mnt && echo made >$W/allowed/mnt/f && cat $W/allowed/mnt/f"
    allowed "a tmpfs at the same place" && reads made
}

test_fsmount_tmpfs() {
    # fsopen and fsmount make a detached file system without mount(2): a mount all the same.
    sandbox permissive $esc fsmount-tmpfs
    refused mount
    grep -qF "a new tmpfs file system" "$out/stderr" || fail "not refused as a new file system: $(head -c 600 "$out/stderr")"
    sandbox unsafe-all $esc fsmount-tmpfs
    allowed "fsmount under unsafe mount" && reads made
}

test_covered_name() {
    # A copy of a tree without its submounts shows what a mount hides in the sandbox's own
    # namespace; the file's name there leads to the mount instead, so it names nothing.
    # (In a user namespace the kernel refuses such a copy: the mounts it copied are locked.)
    mkdir -p "$S/allowed/cover" && echo "SECRET under a mount" >"$S/allowed/cover/hidden" &&
        mount -t tmpfs none "$S/allowed/cover" || {
        fail "setup: cannot mount over $S/allowed/cover"
        return
    }
    sandbox files $tool tree-read "$S/allowed" cover/hidden
    [ "$(status)" != 0 ] || fail "the attempt succeeded: $(head -c 400 "$out/stdout")"
    grep -qF "no name in the sandbox's mount namespace" "$out/stderr" || fail "no denial of the hidden name: $(head -c 600 "$out/stderr")"
    no_secret
    sandbox files $tool tree-read "$S/allowed" file
    umount "$S/allowed/cover"
    allowed "a file beside the mount point, read through the copy" && reads "public content"
}

test_userns_new_proc_sysctl() {
    # A proc instance of the sandbox's own is named under /proc, wherever it is mounted.
    local before
    before=$(cat /proc/sys/kernel/domainname)
    sandbox namespaces unshare -Urpf --mount-proc sh -c "echo bw-escape >/proc/sys/kernel/domainname"
    refused sysctl
    grep -qF "denied write /proc/sys/kernel/domainname" "$out/stderr" || fail "not named under /proc: $(head -c 600 "$out/stderr")"
    [ "$(cat /proc/sys/kernel/domainname)" = "$before" ] || fail "the domain name changed"
    sandbox namespaces unshare -Urmpf sh -c "mkdir -p $W/allowed/p && mount -t proc proc $W/allowed/p && echo bw-escape >$W/allowed/p/sys/kernel/domainname"
    refused sysctl
    [ "$(cat /proc/sys/kernel/domainname)" = "$before" ] || fail "the domain name changed"
    sandbox unsafe-all unshare -Urpf --mount-proc sh -c "echo bw-escape >/proc/sys/kernel/domainname"
    allowed "the same write under unsafe sysctl"
    echo "$before" >/proc/sys/kernel/domainname
}

test_bubblewrap_inside() {
    command -v bwrap >/dev/null || {
        fail "bwrap is not installed (scripts/install-deps.sh installs bubblewrap)"
        return
    }
    # As root, bwrap makes a user namespace only when asked.
    local bw=(bwrap --unshare-user --ro-bind / / --dev /dev --proc /proc --unshare-pid)
    # bwrap looks at the secret before it binds it: any access to it is refused.
    sandbox namespaces "${bw[@]}" --bind "$W/secret" /mnt cat /mnt/file
    [ "$(status)" != 0 ] || fail "the attempt succeeded: $(head -c 400 "$out/stdout")"
    grep -qE "denied [a-z]+ $W/secret" "$out/stderr" || fail "no denial on secret/: $(head -c 600 "$out/stderr")"
    no_secret
    # readonly/ may be read, not written, under whatever name bwrap gives it.
    sandbox namespaces "${bw[@]}" --bind "$W/readonly" /mnt sh -c "echo x >/mnt/file"
    denied write "$W/readonly/file"
    sandbox namespaces "${bw[@]}" --bind "$W/readonly" /mnt cat /mnt/file
    allowed "bubblewrap inside the sandbox" && reads "read only"
    sandbox permissive "${bw[@]}" true
    refused namespaces
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

# TIOCSTI on the sandbox's terminal queues input for the shell that reads it after the
# sandbox ends. The terminal is a pty made outside (escape.py tty-session), which then
# reads what waits in its input; the sandbox runs as root, so TIOCSTI needs no controlling
# terminal and works on 6.12 too.
test_tiocsti_injection() {
    $esc tty-session "$W/injected" "$bin/bwrun" "$W/permissive.o" -- $esc tty-inject 'id
' >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
    refused tty
    [ ! -s "$W/injected" ] || fail "input reached the terminal: $(head -c 100 "$W/injected")"
    grep -q "winsize ok" "$out/stdout" || fail "the terminal's other ioctls were denied: $(cat "$out/stdout")"
    grep -q "errno EPERM" "$out/stdout" || fail "not EPERM: $(cat "$out/stdout")"
    $esc tty-session "$W/injected" "$bin/bwrun" "$W/unsafe-all.o" -- $esc tty-inject 'id
' >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
    allowed "TIOCSTI under unsafe tty"
    [ "$(cat "$W/injected")" = id ] || fail "control: the terminal got $(od -c "$W/injected" | head -n 2)"
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

# --- path tricks (policies/files.bwp) ------------------------------------------------------

test_symlink_made_outside() {
    ln -s "$W/secret/file" "$W/allowed/link-out"
    sandbox files cat "$W/allowed/link-out"
    denied read "$W/secret/file"
    no_secret
    ln -s "$W/allowed/file" "$W/allowed/link-ok"
    sandbox files cat "$W/allowed/link-ok"
    allowed "read through a symlink to an allowed file" && reads "public content"
}

test_symlink_made_inside() {
    sandbox files sh -c "ln -s ../secret/file $W/allowed/link-in && cat $W/allowed/link-in"
    denied read "$W/secret/file"
    no_secret
    sandbox files sh -c "ln -s file $W/allowed/link-in-ok && cat $W/allowed/link-in-ok"
    allowed "make and follow a symlink to an allowed file" && reads "public content"
}

test_hardlink_of_secret() {
    sandbox files ln "$W/secret/file" "$W/allowed/hard"
    denied link "$W/secret/file"
    [ ! -e "$W/allowed/hard" ] || fail "the link was made"
    sandbox files ln "$W/allowed/file" "$W/allowed/hard-ok"
    allowed "hard link an allowed file" && [ "$W/allowed/hard-ok" -ef "$W/allowed/file" ] || fail "control: no link"
}

test_rename_file_into_allowed() {
    sandbox files mv "$W/secret/file" "$W/allowed/stolen"
    denied rename "$W/secret/file"
    [ -f "$W/secret/file" ] && [ ! -e "$W/allowed/stolen" ] || fail "renamed anyway"
    echo moving >"$W/allowed/move-me"
    sandbox files mv "$W/allowed/move-me" "$W/allowed/moved"
    allowed "rename within allowed/" && [ -f "$W/allowed/moved" ] || fail "control: not renamed"
}

test_rename_denied_dir_out() {
    # The whole denied directory, moved under an allowed one.
    sandbox files mv "$W/secret" "$W/allowed/secret"
    denied rename "$W/secret"
    [ -f "$W/secret/file" ] && [ ! -e "$W/allowed/secret" ] || fail "the denied directory moved"
    mkdir -p "$W/allowed/subdir"
    sandbox files mv "$W/allowed/subdir" "$W/allowed/subdir-moved"
    allowed "rename a directory within allowed/" && [ -d "$W/allowed/subdir-moved" ] || fail "control: not moved"
}

test_dotdot_traversal() {
    mkdir -p "$W/allowed/sub"
    sandbox files cat "$W/allowed/sub/../../secret/file"
    denied read "$W/secret/file"
    no_secret
    sandbox files cat "$W/allowed/sub/../file"
    allowed "read allowed/sub/../file" && reads "public content"
}

test_proc_self_root() {
    sandbox files cat "/proc/self/root$W/secret/file"
    denied read "$W/secret/file"
    no_secret
    sandbox files cat "/proc/self/root$W/allowed/file"
    allowed "read through /proc/self/root" && reads "public content"
}

test_proc_pid_cwd() {
    # A process in the sandbox whose working directory is the denied one, then one outside.
    sandbox files sh -c "(cd $W/secret && exec sleep 30) & sleep 1; cat /proc/\$!/cwd/file; r=\$?; kill \$!; exit \$r"
    denied read "$W/secret/file"
    no_secret
    (cd "$W/secret" && exec sleep 300) &
    local pid=$!
    sandbox files cat "/proc/$pid/cwd/file"
    kill "$pid"
    wait "$pid" 2>/dev/null
    [ "$(status)" != 0 ] || fail "read through an outside process's cwd"
    [ "$(status)" != 125 ] || fail "bwrun failed: $(head -c 600 "$out/stderr")"
    no_secret
    sandbox files sh -c "(cd $W/allowed && exec sleep 30) & sleep 1; cat /proc/\$!/cwd/file; r=\$?; kill \$!; exit \$r"
    allowed "read through /proc/PID/cwd of an allowed directory" && reads "public content"
}

# --- handles and descriptors --------------------------------------------------------------

test_opath_reopen() {
    sandbox files $tool opath-reopen "$W/secret/file"
    denied read "$W/secret/file"
    no_secret
    sandbox files $tool opath-reopen "$W/allowed/file"
    allowed "reopen an O_PATH descriptor of an allowed file" && reads "public content"
}

# serve_fd PATH read|path: hands a descriptor opened outside to the sandbox's first client.
serve_fd() {
    rm -f "$W/allowed/fd.sock"
    $esc fd-serve "$W/allowed/fd.sock" "$1" "$2" >"$out/serve" &
    server=$!
    local i
    for i in $(seq 300); do
        [ -S "$W/allowed/fd.sock" ] && return 0
        sleep 0.1
    done
    fail "the descriptor server did not start: $(cat "$out/serve")"
}

test_scm_rights_open_fd_keeps_access() {
    # Documented (docs/bwrun.md, "Security model"): a descriptor opened outside keeps the
    # access it was opened with, as an inherited one does. The sandbox still cannot open
    # the file by its name.
    serve_fd "$W/secret/file" read || return
    sandbox files $tool fd-read "$W/allowed/fd.sock"
    wait "$server"
    allowed "read a descriptor passed in" && reads "SECRET content"
    sandbox files cat "$W/secret/file"
    denied read "$W/secret/file"
    no_secret
}

test_scm_rights_dir_fd_no_path_access() {
    serve_fd "$W/secret" path || return
    sandbox files $tool fd-openat "$W/allowed/fd.sock" file
    wait "$server"
    [ "$(status)" != 0 ] || fail "openat on a passed-in directory read the secret: $(head -c 400 "$out/stdout")"
    [ "$(status)" != 125 ] || fail "bwrun failed: $(head -c 600 "$out/stderr")"
    grep -qF "denied read $W/secret/file" "$out/stderr" || fail "no denial reported: $(head -c 600 "$out/stderr")"
    no_secret
    serve_fd "$W/allowed" path || return
    sandbox files $tool fd-openat "$W/allowed/fd.sock" file
    wait "$server"
    allowed "openat on a passed-in allowed directory" && reads "public content"
}

test_open_by_handle_at() {
    $esc handle-save "$S/secret/file" "$W/secret-handle" >/dev/null || { fail "name_to_handle_at outside"; return; }
    $esc handle-save "$S/allowed/file" "$W/allowed-handle" >/dev/null || { fail "name_to_handle_at outside"; return; }
    cp "$W/secret-handle" "$W/allowed-handle" "$W/tools/"
    sandbox files $tool handle-open "$S/allowed" "$W/tools/secret-handle"
    denied read "$S/secret/file"
    no_secret
    sandbox files $tool handle-open "$S/allowed" "$W/tools/allowed-handle"
    allowed "open_by_handle_at of an allowed file" && reads "public content"
}

test_io_uring_openat() {
    sandbox files $tool uring-openat "$W/secret/file"
    denied read "$W/secret/file"
    no_secret
    sandbox files $tool uring-openat "$W/allowed/file"
    allowed "io_uring openat of an allowed file" && reads "public content"
}

test_io_uring_renameat() {
    sandbox files $tool uring-renameat "$W/secret/file" "$W/allowed/uring-stolen"
    denied rename "$W/secret/file"
    [ -f "$W/secret/file" ] && [ ! -e "$W/allowed/uring-stolen" ] || fail "renamed anyway"
    echo x >"$W/allowed/uring-a"
    sandbox files $tool uring-renameat "$W/allowed/uring-a" "$W/allowed/uring-b"
    allowed "io_uring renameat within allowed/" && [ -f "$W/allowed/uring-b" ] || fail "control: not renamed"
}

test_io_uring_linkat() {
    sandbox files $tool uring-linkat "$W/secret/file" "$W/allowed/uring-hard"
    denied link "$W/secret/file"
    [ ! -e "$W/allowed/uring-hard" ] || fail "linked anyway"
    sandbox files $tool uring-linkat "$W/allowed/file" "$W/allowed/uring-hard-ok"
    allowed "io_uring linkat within allowed/" && [ "$W/allowed/uring-hard-ok" -ef "$W/allowed/file" ] ||
        fail "control: not linked"
}

# --- exec and mapping ---------------------------------------------------------------------

test_memfd_fexecve() {
    # A binary the sandbox may read but not run, copied into an anonymous memory file.
    sandbox files $tool memfd-exec "$W/noexec/true"
    [ "$(status)" != 0 ] || fail "the memfd copy ran"
    [ "$(status)" != 125 ] || fail "bwrun failed: $(head -c 600 "$out/stderr")"
    grep -qF "denied exec" "$out/stderr" || fail "no exec denial reported: $(head -c 600 "$out/stderr")"
    sandbox files $tool fd-exec /usr/bin/true
    allowed "fexecve of an allowed binary"
}

test_ld_so_denied_binary() {
    sandbox files /lib64/ld-linux-x86-64.so.2 "$S/noexec/true"
    denied exec "$S/noexec/true"
    sandbox files /lib64/ld-linux-x86-64.so.2 /usr/bin/true
    allowed "ld.so runs an allowed binary"
}

test_mmap_exec_denied() {
    sandbox files /usr/bin/python3 "$W/tools/map_exec.py" mmap "$S/noexec/true"
    denied exec "$S/noexec/true"
    sandbox files /usr/bin/python3 "$W/tools/map_exec.py" mmap /usr/bin/true
    allowed "map an allowed binary executable"
}

test_mprotect_exec_denied() {
    sandbox files /usr/bin/python3 "$W/tools/map_exec.py" mprotect "$S/noexec/true"
    denied exec "$S/noexec/true"
    sandbox files /usr/bin/python3 "$W/tools/map_exec.py" mprotect /usr/bin/true
    allowed "mprotect an allowed binary's mapping executable"
}

# --- path shapes --------------------------------------------------------------------------

# deep_pair ROOT DEPTH NAME_LEN: secret.txt and public.txt at the bottom of a chain made outside.
deep_pair() {
    $esc deep create "$@" secret.txt "SECRET content" && $esc deep create "$@" public.txt "public content" ||
        fail "cannot build the chain under $1"
}

test_path_over_path_max() {
    # Chains of 200-byte names walked with openat(): 19 levels under allowed/ (3830 bytes,
    # decided on the whole path) and 21 (4250 bytes, beyond PATH_MAX: fails closed).
    deep_pair "$W/allowed" 19 200 && deep_pair "$W/allowed" 21 200 || return
    sandbox files $tool deep open "$W/allowed" 19 200 secret.txt
    [ "$(status)" = 1 ] && grep -q "errno EACCES" "$out/stdout" || fail "19 levels: $(head -c 300 "$out/stdout")"
    no_secret
    sandbox files $tool deep open "$W/allowed" 21 200 secret.txt
    [ "$(status)" = 1 ] && grep -q "errno EACCES" "$out/stdout" || fail "21 levels: $(head -c 300 "$out/stdout")"
    no_secret
    sandbox files $tool deep open "$W/allowed" 19 200 public.txt
    allowed "read public.txt 19 levels down" && reads "public content"
}

test_deep_tree() {
    # 1500 one-letter levels: many components for the kernel-side walker, within PATH_MAX.
    deep_pair "$W/allowed" 1500 1 || return
    sandbox files $tool deep open "$W/allowed" 1500 1 secret.txt
    [ "$(status)" = 1 ] && grep -q "errno EACCES" "$out/stdout" || fail "$(head -c 300 "$out/stdout" "$out/stderr")"
    no_secret
    sandbox files $tool deep open "$W/allowed" 1500 1 public.txt
    allowed "read public.txt 1500 levels down" && reads "public content"
}

test_unicode_newline_names() {
    local name=$'caf\xc3\xa9\nline \xe2\x98\x83'
    mkdir -p "$W/secret/$name" "$W/allowed/$name"
    echo "SECRET content" >"$W/secret/$name/$name"
    echo "public content" >"$W/allowed/$name/$name"
    sandbox files cat "$W/secret/$name/$name"
    [ "$(status)" != 0 ] && [ "$(status)" != 125 ] || fail "status $(status): $(head -c 300 "$out/stderr")"
    grep -qF "denied read $W/secret/" "$out/stderr" || fail "no denial reported: $(head -c 600 "$out/stderr")"
    no_secret
    sandbox files cat "$W/allowed/$name/$name"
    allowed "read an allowed file with unicode and a newline in its name" && reads "public content"
}

# --- races --------------------------------------------------------------------------------

test_rename_open_race() {
    # Outside, a directory moves between allowed/ and secret/ as fast as it can; inside,
    # 10,000 rounds open its secret.txt (denied wherever it is) and public.txt (allowed
    # while under allowed/).
    mkdir -p "$W/allowed/race"
    echo "SECRET content" >"$W/allowed/race/secret.txt"
    echo "public content" >"$W/allowed/race/public.txt"
    rm -f "$W/race-stop"
    $esc race-rename "$W/allowed/race" "$W/secret/race" "$W/race-stop" &
    local renamer=$!
    sandbox files $tool race-open "$W/allowed/race/secret.txt" "$W/allowed/race/public.txt" 10000
    touch "$W/race-stop"
    wait "$renamer" || fail "the renamer failed"
    allowed "the race ran"
    grep -q "^secret-reads 0 " "$out/stdout" || fail "the secret was read: $(cat "$out/stdout")"
    grep -q "public-reads [1-9]" "$out/stdout" || fail "control: public.txt never read: $(cat "$out/stdout")"
}

# --- file changes that must stay denied ---------------------------------------------------

test_o_creat_leaves_no_file() {
    sandbox files sh -c "echo x >$W/secret/created"
    denied create "$W/secret/created"
    [ ! -e "$W/secret/created" ] || fail "a denied O_CREAT left a file"
    sandbox files sh -c "echo x >$W/allowed/created"
    allowed "create in allowed/" && [ -f "$W/allowed/created" ] || fail "control: no file"
}

test_o_trunc_keeps_content() {
    sandbox files sh -c ": >$W/readonly/file"
    denied write "$W/readonly/file"
    [ "$(cat "$W/readonly/file")" = "read only" ] || fail "truncated"
    echo x >"$W/allowed/trunc"
    sandbox files sh -c ": >$W/allowed/trunc"
    allowed "truncate in allowed/" && [ ! -s "$W/allowed/trunc" ] || fail "control: not truncated"
}

test_chmod_denied() {
    chmod 644 "$W/readonly/file"
    sandbox files chmod 666 "$W/readonly/file"
    denied attr "$W/readonly/file"
    [ "$(stat -c %a "$W/readonly/file")" = 644 ] || fail "mode changed to $(stat -c %a "$W/readonly/file")"
    sandbox files chmod 600 "$W/allowed/file"
    allowed "chmod in allowed/" && [ "$(stat -c %a "$W/allowed/file")" = 600 ] || fail "control: mode not changed"
}

# chattr +i through a descriptor opened with O_ACCMODE 3, which asks for neither read nor
# write: setting an inode's flags needs attr (tmpfs has them from 6.0).
test_chattr_immutable_denied() {
    sandbox files $tool chattr +i "$S/readonly/file"
    denied attr "$S/readonly/file"
    [ "$($esc chattr -i "$S/readonly/file")" = mutable ] || fail "the file was made immutable"
    sandbox files $tool chattr +i "$S/allowed/file"
    allowed "chattr +i in allowed/" && [ "$(cat "$out/stdout")" = immutable ] || fail "control: $(cat "$out/stdout")"
    $esc chattr -i "$S/allowed/file" >/dev/null
}

test_xattr_set_denied() {
    sandbox files $tool setxattr "$S/readonly/file"
    denied attr "$S/readonly/file"
    ! /usr/bin/python3 -c 'import os, sys; os.getxattr(sys.argv[1], "trusted.bw-escape")' "$S/readonly/file" \
            2>/dev/null || fail "the xattr was set"
    sandbox files $tool setxattr "$S/allowed/file"
    allowed "set an xattr in allowed/"
}

test_utimes_denied() {
    local before
    before=$(stat -c %Y "$W/readonly/file")
    sandbox files $tool utime "$W/readonly/file"
    denied attr "$W/readonly/file"
    [ "$(stat -c %Y "$W/readonly/file")" = "$before" ] || fail "mtime changed"
    sandbox files $tool utime "$W/allowed/file"
    allowed "utimes in allowed/" && [ "$(stat -c %Y "$W/allowed/file")" = 0 ] || fail "control: mtime not set"
}

# --- network (policies/net.bwp) -----------------------------------------------------------

test_socket_family_denied() {
    sandbox net $tool socket packet
    [ "$(status)" != 0 ] && [ "$(status)" != 125 ] || fail "status $(status): $(head -c 300 "$out/stderr")"
    grep -qF "denied create socket packet" "$out/stderr" || fail "no denial reported: $(head -c 600 "$out/stderr")"
    sandbox net $tool socket netlink
    grep -qF "denied create socket netlink" "$out/stderr" || fail "netlink: no denial: $(head -c 600 "$out/stderr")"
    sandbox net $tool socket unix
    allowed "a unix socket"
}

# listen_on PORT|PATH: a listener outside the sandbox, TCP on 127.0.0.1:PORT or a unix
# socket at PATH, that logs each connection to $W/PORT.log or PATH.log.
listen_on() {
    local log=$W/$1.log
    [[ $1 == /* ]] && log=$1.log
    rm -f "$log"
    $esc listen "$1" "$log" >"$log.ready" &
    listeners+=("$!")
    local i
    for i in $(seq 300); do
        grep -q listening "$log.ready" 2>/dev/null && return 0
        sleep 0.1
    done
    fail "the listener on $1 did not start"
}
listeners=()
stop_listeners() {
    kill "${listeners[@]}" 2>/dev/null
    wait "${listeners[@]}" 2>/dev/null
    listeners=()
}

test_connect_denied_address() {
    listen_on 47502 && listen_on 47501 || { stop_listeners; return 1; }
    sandbox net $tool connect 47502
    [ "$(status)" != 0 ] && [ "$(status)" != 125 ] || fail "status $(status): $(head -c 300 "$out/stderr")"
    grep -qF "denied connect tcp 127.0.0.1:47502 by \`net deny all\`" "$out/stderr" || fail "no denial reported: $(head -c 600 "$out/stderr")"
    sandbox net $tool connect 47501
    allowed "connect to 127.0.0.1:47501"
    sleep 0.3
    [ ! -s "$W/47502.log" ] || fail "the denied listener saw a connection"
    [ -s "$W/47501.log" ] || fail "control: the allowed listener saw nothing"
    stop_listeners
}

test_unix_socket_outside_denied() {
    # `net allow family unix` reaches no socket file the path rules deny (a docker.sock).
    listen_on "$W/secret/daemon.sock" && listen_on "$W/allowed/ctl.sock" || { stop_listeners; return 1; }
    sandbox files $tool connect "$W/secret/daemon.sock"
    denied write "$W/secret/daemon.sock"
    sandbox files $tool connect "$W/allowed/ctl.sock"
    allowed "connect to allowed/ctl.sock"
    sleep 0.3
    [ ! -s "$W/secret/daemon.sock.log" ] || fail "the denied socket saw a connection"
    [ -s "$W/allowed/ctl.sock.log" ] || fail "control: the allowed socket saw nothing"
    stop_listeners
}

test_bind_denied_port() {
    sandbox net $tool bind 47520
    [ "$(status)" != 0 ] && [ "$(status)" != 125 ] || fail "status $(status): $(head -c 300 "$out/stderr")"
    grep -qF "denied bind tcp 127.0.0.1:47520 by \`net deny all\`" "$out/stderr" || fail "no denial reported: $(head -c 600 "$out/stderr")"
    sandbox net $tool bind 47510
    allowed "bind 127.0.0.1:47510"
}

# --- privilege ----------------------------------------------------------------------------

test_setuid_root_read_denied() {
    # The sandbox runs as nobody; the helper is setuid root (made so outside).
    sandbox_as_nobody "$W/suid/reader" read "$W/secret/file"
    denied read "$W/secret/file"
    grep -q "^euid 0" "$out/stdout" || fail "the helper did not run as root: $(head -c 300 "$out/stdout")"
    no_secret
    install -m 600 -o root /dev/null "$W/allowed/root-only"
    echo "root only" >"$W/allowed/root-only"
    sandbox_as_nobody "$W/suid/reader" read "$W/allowed/root-only"
    allowed "the setuid helper reads a root-only allowed file" && reads "root only"
}

test_setuid_root_signal_outside() {
    start_outside
    sandbox_as_nobody "$W/suid/reader" kill "$outside"
    refused signal
    grep -q "^euid 0" "$out/stdout" || fail "the helper did not run as root: $(head -c 300 "$out/stdout")"
    survives
    sandbox_as_nobody sh -c "sleep 30 & $W/suid/reader kill \$!"
    allowed "the setuid helper signals a process in the sandbox"
}

sandbox_as_nobody() {
    "$bin/bwrun" --uid 65534 "$W/files.o" -- "$@" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
}

if ! setup; then
    current=setup
    fail "policies did not compile, or no module to load"
    echo "security-done"
    exit 1
fi
for t in ${BW_SEC_ONLY:-cgroup_procs_of_parent cgroup_mkdir nest_outside_process bpf_map_create bpffs_pins sysctl_write finit_module \
    init_module mount_tmpfs bind_mount unshare_mount chroot pivot_root userns_refused userns_bind_secret \
    userns_pivot_root userns_chroot userns_move_mount userns_mount_outside_own_ns userns_new_proc_sysctl \
    userns_overlay fsmount_tmpfs covered_name \
    bubblewrap_inside mknod_block_device dev_mem tiocsti_injection kill_outside \
    tkill_outside tgkill_outside pidfd_send_signal_outside kill_supervisor ptrace_attach_outside \
    process_vm_writev_outside proc_mem_outside bumblewrap_state perf_event_open \
    symlink_made_outside symlink_made_inside hardlink_of_secret rename_file_into_allowed rename_denied_dir_out \
    dotdot_traversal proc_self_root proc_pid_cwd opath_reopen scm_rights_open_fd_keeps_access \
    scm_rights_dir_fd_no_path_access open_by_handle_at io_uring_openat io_uring_renameat io_uring_linkat \
    memfd_fexecve ld_so_denied_binary mmap_exec_denied mprotect_exec_denied path_over_path_max deep_tree \
    unicode_newline_names rename_open_race o_creat_leaves_no_file o_trunc_keeps_content chmod_denied \
    chattr_immutable_denied xattr_set_denied utimes_denied \
    socket_family_denied connect_denied_address unix_socket_outside_denied bind_denied_port \
    setuid_root_read_denied setuid_root_signal_outside}; do
    run "$t"
done
echo "security-done"
[ "$failures" = 0 ]
