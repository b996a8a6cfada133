# Sourced by the VM suites: test_nothing_left_behind asserts that the sandboxes the suite
# ran left nothing behind (pins, programs, cgroups, registry records, live policies and
# logs). Uses the suite's fail.

test_nothing_left_behind() {
    # The last sandbox's watchdog unloads the program after it lingered (rt::kLinger, 10 s);
    # detaching every hook takes a few seconds more under emulation, and a sandbox that a
    # live edit moved to the generic program leaves two programs to detach, one after the other.
    local n=0
    while { [ -e /sys/fs/bpf/bumblewrap ] || bpftool prog show 2>/dev/null | grep -q bw_file_open; } && [ $n -lt 1200 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    [ ! -e /sys/fs/bpf/bumblewrap ] || fail "pins left: $(ls -R /sys/fs/bpf/bumblewrap)"
    [ ! -e /sys/fs/cgroup/bumblewrap ] || fail "cgroups left: $(ls /sys/fs/cgroup/bumblewrap)"
    [ -z "$(ls /run/bumblewrap/sandboxes 2>/dev/null)" ] || fail "registry left: $(ls /run/bumblewrap/sandboxes)"
    [ -z "$(find /run/bumblewrap/live /run/bumblewrap/log -type f 2>/dev/null)" ] ||
        fail "live policies or logs left: $(find /run/bumblewrap/live /run/bumblewrap/log -type f)"
    ! bpftool prog show 2>/dev/null | grep -q bw_file_open || fail "program still loaded"
}
