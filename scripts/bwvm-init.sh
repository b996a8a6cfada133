#!/bin/busybox sh
# PID 1 of the bwvm guest (packed into its initramfs). Mounts the host root read-only over
# 9p with a tmpfs overlay for writes, mounts the kernel filesystems bumblewrap needs, runs
# the command that bwvm wrote, and reports its status on the console.
bb=/bin/busybox
$bb mount -t proc proc /proc
$bb mount -t sysfs sys /sys
$bb mount -t devtmpfs dev /dev

console=/dev/ttyS0
fail() {
    echo "BWVM-FAIL:$*" >$console
    $bb reboot -f
}

for m in /modules/*.ko; do
    [ -e "$m" ] || continue
    $bb insmod "$m" || fail "insmod $m"
done

run=
modules=
for word in $($bb cat /proc/cmdline); do
    case "$word" in
        bwvm.run=*) run="${word#bwvm.run=}" ;;
        bwvm.modules=*) modules="${word#bwvm.modules=}" ;;
    esac
done
[ -n "$run" ] || fail "no bwvm.run= on the kernel command line"

$bb mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /lower ||
    fail "cannot mount the host root over 9p"
$bb mount -t tmpfs -o mode=755 rw /rw || fail "tmpfs"
$bb mkdir -p /rw/upper /rw/work
$bb mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
    fail "cannot mount the overlay over the host root"

r=/newroot
$bb mount -t proc proc $r/proc || fail "proc"
$bb mount -t sysfs sys $r/sys || fail "sysfs"
$bb mount -t devtmpfs dev $r/dev || fail "devtmpfs"
$bb mkdir -p $r/dev/pts $r/dev/shm
$bb mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $r/dev/pts
$bb mount -t tmpfs -o mode=1777 shm $r/dev/shm
$bb mount -t tmpfs -o mode=755 run $r/run
$bb mount -t cgroup2 cgroup2 $r/sys/fs/cgroup || fail "cgroup2"
$bb mount -t bpf bpf $r/sys/fs/bpf || fail "bpffs"
$bb mount -t securityfs securityfs $r/sys/kernel/security || fail "securityfs"
$bb mount -t tracefs tracefs $r/sys/kernel/tracing || fail "tracefs"
$bb mount -t debugfs debugfs $r/sys/kernel/debug
# The host's unpacked kernel modules, so that modprobe works in the guest.
if [ -n "$modules" ] && [ -d "$r$modules" ]; then
    kver=$($bb uname -r)
    $bb mkdir -p $r/lib/modules/$kver
    $bb mount --bind "$r$modules" $r/lib/modules/$kver
fi
$bb hostname bwvm

for tty in /dev/ttyS1 /dev/ttyS2; do
    $bb stty -F $tty raw -echo
done

# The command writes to pipes, as it would under a host pipeline, not to the serial
# ttys that carry its output (programs would otherwise colour it and buffer differently).
$bb mkdir -p /pipes
$bb mkfifo /pipes/out /pipes/err
$bb cat /pipes/out >/dev/ttyS1 &
out_pid=$!
$bb cat /pipes/err >/dev/ttyS2 &
err_pid=$!
echo "BWVM-START" >$console
# Moved onto / (switch_root's way: the initramfs cannot be pivoted away), the new root
# is the root of the mount namespace, so paths named from it, as the BPF hooks name
# them, are the host's paths rather than /newroot/...
(cd $r && $bb mount --move . / && exec $bb chroot . /bin/bash "$run/cmd.sh") </dev/null >/pipes/out 2>/pipes/err
status=$?
# Background processes left by the command may keep the pipes open: give the output a
# moment to drain, then end everything.
running() { # a pid that has not exited (an unreaped zombie counts as exited)
    read -r _ _ state _ 2>/dev/null </proc/$1/stat && [ "$state" != Z ]
}
for _ in $($bb seq 100); do
    running $out_pid || running $err_pid || break
    $bb sleep 0.05
done
$bb kill -9 -1 2>/dev/null
echo "BWVM-EXIT:$status" >$console
$bb sync
$bb reboot -f
