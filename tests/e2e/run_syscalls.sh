#!/usr/bin/env bash
# End-to-end tests of `syscalls` rules: the seccomp filter bwrun installs before exec, its actions, the
# precedence of a name over a group and its architecture check; and the syscalls LSM hooks decide. Runs as root inside scripts/bwvm, like
# run_e2e.sh, whose conventions it follows.
#
# usage: run_syscalls.sh BIN_DIR [maps|c]
# Prints one line per test, "ok NAME" or "not ok NAME: why", then "syscalls-done".
set -u

bin=$(cd "${1:?usage: run_syscalls.sh BIN_DIR [maps|c]}" && pwd)
backend=${2:-maps}
W=/tmp/bw-syscalls
out=$W/out
export LC_ALL=C
. "$(dirname "${BASH_SOURCE[0]}")/left_behind.sh"

bwc() { "$bin/bwc" "$@"; }
bwrun() { "$bin/bwrun" "$@"; }

# policy NAME BODY: compiles a policy that allows every path, plus BODY, to $W/NAME.o.
policy() {
    printf 'policy "%s" {\n    default allow\n%s\n}\n' "$1" "$2" >"$W/$1.bwp"
    bwc "$W/$1.bwp" --backend="$backend" -o "$W/$1.o" 2>"$out/bwc-$1.err" ||
        { echo "bwc failed on $1: $(cat "$out/bwc-$1.err")"; return 1; }
}

setup() {
    rm -rf "$W"
    mkdir -p "$W" "$out"
    echo data >"$W/file"
    policy allow-all '' &&
        policy deny-uname '    syscalls deny uname' &&
        policy uname-enosys '    syscalls deny uname action errno(ENOSYS)' &&
        policy uname-kill '    syscalls deny uname action kill' &&
        policy sync-group '    syscalls deny @sync
    syscalls allow fsync' &&
        policy allow-uname '    syscalls allow uname' &&
        policy deny-kill '    syscalls deny kill' &&
        policy socket-eacces '    syscalls deny socket action errno(EACCES)' &&
        policy kill-kill '    syscalls deny kill action kill' || return 1
    # int 0x80 from 64-bit code: the kernel runs i386 getpid (20), which seccomp sees as AUDIT_ARCH_I386.
    printf '%s\n' 'int main(void) { long r = 20; __asm__ volatile("int $0x80" : "+a"(r) : : "memory");' \
        '  return r > 0 ? 0 : 1; }' >"$W/int80.c"
    gcc -O1 -o "$W/int80" "$W/int80.c" 2>"$out/gcc.err" || { echo "gcc failed: $(cat "$out/gcc.err")"; return 1; }
}

. "$(dirname "${BASH_SOURCE[0]}")/../lib/vm_suite.sh"

sandbox() {
    local policy=$1
    shift
    bwrun "$W/$policy.o" "$@" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
}
status() { cat "$out/status"; }
expect_status() {
    [ "$(status)" = "$1" ] || fail "status $(status), wanted $1; stderr: $(head -c 600 "$out/stderr")"
}

test_uname_allowed_without_rules() {
    sandbox allow-all -- uname -s
    expect_status 0 && [ "$(cat "$out/stdout")" = Linux ] || fail "uname printed $(cat "$out/stdout")"
}

test_uname_denied_eperm() {
    sandbox deny-uname -- uname -s
    expect_status 1 && grep -q "Operation not permitted" "$out/stderr" ||
        fail "uname did not fail with EPERM: $(cat "$out/stderr")"
}

test_uname_denied_chosen_errno() {
    sandbox uname-enosys -- uname -s
    expect_status 1 && grep -q "Function not implemented" "$out/stderr" ||
        fail "uname did not fail with ENOSYS: $(cat "$out/stderr")"
}

test_action_kill() {
    # 159 = 128 + SIGSYS: the whole program is killed at the syscall.
    sandbox uname-kill -- sh -c 'uname -s; echo survived'
    expect_status 0 || return
    [ "$(cat "$out/stdout")" = survived ] || fail "stdout: $(cat "$out/stdout")"
    sandbox uname-kill -- uname -s
    expect_status 159
}

test_name_beats_group() {
    # fsync is allowed by name, fdatasync denied through @sync.
    sandbox sync-group -- /usr/bin/python3 -c "
import os
fd = os.open('$W/file', os.O_RDONLY)
os.fsync(fd)
print('fsync ok')
try:
    os.fdatasync(fd)
    print('fdatasync ok')
except OSError as e:
    print('fdatasync errno', e.errno)
"
    expect_status 0 && [ "$(cat "$out/stdout")" = "fsync ok
fdatasync errno 1" ] || fail "stdout: $(cat "$out/stdout")"
}

test_filter_survives_drop_without_no_new_privs() {
    # Installed as root, kept after the drop to the program's user, and no_new_privs left unset so that setuid
    # programs the policy allows keep working.
    sandbox deny-uname --uid 65534 --gid 65534 -- sh -c 'id -u; grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status; uname -s'
    expect_status 1 || return
    [ "$(tr -s '\t ' ' ' <"$out/stdout")" = "65534
NoNewPrivs: 0
Seccomp: 2" ] || fail "stdout: $(cat "$out/stdout")"
    grep -q "Operation not permitted" "$out/stderr" || fail "uname not denied after the drop: $(cat "$out/stderr")"
}

test_i386_syscall_killed() {
    sandbox allow-all -- "$W/int80"
    expect_status 0 || { fail "control: int 0x80 getpid failed without a filter"; return; }
    # Any syscall rule installs the filter, and its architecture check kills i386 syscalls.
    sandbox allow-uname -- "$W/int80"
    expect_status 159
}

# kill, socket: syscalls an LSM hook sees on every call, which the hooks decide (and bwctl can change)
# while the seccomp filter lets them through. Only the hooks report a denial.
test_live_syscall_denied_by_hook() {
    sandbox deny-kill -- /usr/bin/python3 -c '
import os
try:
    os.kill(os.getpid(), 0)
except PermissionError:
    print("EPERM")
'
    expect_status 0 && [ "$(cat "$out/stdout")" = EPERM ] || fail "stdout: $(cat "$out/stdout")"
    grep -q 'denied syscall kill by `syscalls deny kill` (.*deny-kill.bwp:3) \[pid [0-9]* python3\]' "$out/stderr" ||
        fail "no denial line from the hook: $(cat "$out/stderr")"
}

test_live_syscall_chosen_errno_and_number() {
    # socketpair(2) reaches the same hook (socket_create) as socket(2), but is another syscall.
    sandbox socket-eacces -- /usr/bin/python3 -c '
import socket
a, b = socket.socketpair()
print("socketpair ok")
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
except OSError as e:
    print("socket errno", e.errno)
'
    expect_status 0 && [ "$(cat "$out/stdout")" = "socketpair ok
socket errno 13" ] || fail "stdout: $(cat "$out/stdout")"
}

test_live_syscall_action_kill() {
    # The hook cannot send seccomp's SIGSYS; it sends SIGKILL: 137 = 128 + 9.
    sandbox kill-kill -- /usr/bin/python3 -c 'import os; os.kill(os.getpid(), 0); print("survived")'
    expect_status 137 || return
    [ ! -s "$out/stdout" ] || fail "the program ran on: $(cat "$out/stdout")"
}

test_inspect_counts_instructions() {
    bwc inspect "$W/deny-uname.o" >"$out/stdout" 2>"$out/stderr" || fail "inspect failed: $(cat "$out/stderr")"
    grep -Eq '^seccomp: +x86_64, [0-9]+ instructions$' "$out/stdout" &&
        grep -Eq '^seccomp: +aarch64, [0-9]+ instructions$' "$out/stdout" ||
        fail "inspect: $(grep seccomp "$out/stdout")"
    bwc inspect "$W/allow-all.o" | grep -q '^seccomp: *none' || fail "allow-all claims a filter"
}

echo "kernel $(uname -r), backend $backend"
current=setup
if setup; then
    for t in ${BW_SYSCALLS_ONLY:-uname_allowed_without_rules uname_denied_eperm uname_denied_chosen_errno \
        action_kill name_beats_group filter_survives_drop_without_no_new_privs i386_syscall_killed \
        live_syscall_denied_by_hook live_syscall_chosen_errno_and_number live_syscall_action_kill \
        inspect_counts_instructions nothing_left_behind}; do
        run "$t"
    done
else
    fail "setup failed"
fi
echo "syscalls-done"
[ "$failures" = 0 ]
