#!/usr/bin/env bash
# End-to-end live-edit suite: bwctl changes the policy of a running sandbox, and the kernel
# decides the next access by the new policy. Runs as root inside scripts/bwvm, like
# run_e2e.sh. A probe (live_probe.py) runs in the sandbox and tries accesses on request
# through pipes, so every answer is the kernel's decision at that moment.
#
# usage: run_live.sh BIN_DIR [maps|c]
# Prints one line per test, "ok NAME" or "not ok NAME: why", then "live-done".
set -u

bin=$(cd "${1:?usage: run_live.sh BIN_DIR [maps|c]}" && pwd)
backend=${2:-maps}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/tmp/bw-live
out=$W/out
export LC_ALL=C

bwc() { "$bin/bwc" "$@"; }
bwrun() { "$bin/bwrun" "$@"; }
bwctl() { "$bin/bwctl" "$@"; }

setup() {
    rm -rf "$W"
    # The network tests connect over loopback, which the VM does not bring up.
    ip link set lo up || return 1
    mkdir -p "$W/probe" "$W/files/open" "$W/files/closed/sub" "$W/files/other" "$out"
    cp "$here/live_probe.py" "$W/probe/"
    for f in open/file open/secret closed/file closed/sub/file other/file other/file2 other/file3; do
        echo "content of $f" >"$W/files/$f"
    done
    bwc "$here/policies/live.bwp" --backend="$backend" -o "$W/live.o" || return 1
    bwc "$here/policies/live-reloaded.bwp" --backend="$backend" -o "$W/reloaded.o" || return 1
    printf 'policy "live-seccomp" {\n    default allow\n    syscalls deny ptrace\n}\n' >"$W/seccomp.bwp"
    bwc "$W/seccomp.bwp" --backend="$backend" -o "$W/seccomp.o" 2>/dev/null || return 1
    printf 'policy "allow-all" {\n    default allow\n}\n' >"$W/allow-all.bwp"
    bwc "$W/allow-all.bwp" --backend="$backend" -o "$W/allow-all.o" 2>/dev/null || return 1
    # kill and socket are decided by LSM hooks (live), ptrace by the seccomp filter.
    printf 'policy "live-syscalls" {\n    default allow\n    syscalls deny kill, ptrace\n}\n' >"$W/syscalls.bwp"
    bwc "$W/syscalls.bwp" --backend="$backend" -o "$W/syscalls.o" 2>/dev/null || return 1
    sed 's/deny kill, ptrace/deny ptrace, socket/' "$W/syscalls.bwp" >"$W/syscalls-reloaded.bwp"
    bwc "$W/syscalls-reloaded.bwp" --backend="$backend" -o "$W/syscalls-reloaded.o" 2>/dev/null || return 1
}

. "$here/../lib/vm_suite.sh"
. "$here/left_behind.sh"

# start NAME [POLICY [OUTER]]: the probe in sandbox NAME (nested in sandbox OUTER, under
# the allow-all policy, when given); ask talks to it through fds 3 and 4.
start() {
    local outer=()
    [ -n "${3:-}" ] && outer=("$bin/bwrun" --name "$3" "$W/allow-all.o" --)
    rm -f "$W/cmd" "$W/ans"
    mkfifo "$W/cmd" "$W/ans"
    "${outer[@]}" "$bin/bwrun" --name "$1" "${2:-$W/live.o}" -- /usr/bin/python3 "$W/probe/live_probe.py" \
        <"$W/cmd" >"$W/ans" 2>"$out/$1.stderr" &
    probe_pid=$!
    exec 3>"$W/cmd" 4<"$W/ans"
    # The first answer comes once python runs inside the sandbox.
    [ "$(ask read "$W/files/open/file")" = ok ] || { fail "the probe did not start: $(cat "$out/$1.stderr")"; return 1; }
}
# ask read|write|exec PATH: the probe's answer, "ok" or an errno name.
ask() {
    local answer
    echo "$1 $2" >&3
    read -r -t 120 answer <&4 || answer="no answer"
    echo "$answer"
}
# finish: ends the probe; its bwrun's status in $status, stderr in $out/NAME.stderr.
finish() {
    echo quit >&3
    exec 3>&- 4<&-
    wait "$probe_pid"
    status=$?
}
# expect ANSWER KIND PATH WHAT
expect() {
    local got
    got=$(ask "$2" "$3")
    [ "$got" = "$1" ] || fail "$4: $2 $3 answered $got, wanted $1"
}
# wait_until_denied KIND PATH: asks again every 0.2 s, for up to 20 s, while the probe is
# allowed (a grant expiring).
wait_until_denied() {
    local n=0
    while [ "$(ask "$1" "$2")" = ok ] && [ $n -lt 100 ]; do
        sleep 0.2
        n=$((n + 1))
    done
}
# edit ARGS...: bwctl ARGS, which must succeed; its output in $out/edit.
edit() {
    bwctl "$@" >"$out/edit" 2>&1 || fail "bwctl $*: status $?: $(cat "$out/edit")"
}

test_allow_then_remove() {
    start allow1 || return
    expect EACCES read "$W/files/closed/file" "before the edit"
    edit allow allow1 "$W/files/closed/" --access read
    grep -q "sandbox allow1: policy version 1: \`allow read \"$W/files/closed/\"\` as rule #" "$out/edit" ||
        fail "bwctl allow said: $(cat "$out/edit")"
    expect ok read "$W/files/closed/file" "after allow"
    expect ok read "$W/files/closed/sub/file" "a trailing / allows the tree"
    expect EACCES write "$W/files/closed/file" "allow read grants no write"
    bwctl show allow1 >"$out/show"
    grep -q "allow read \"$W/files/closed/\*\*\"  (live edit at .* by uid 0)" "$out/show" ||
        fail "bwctl show does not name the live rule's origin: $(cat "$out/show")"
    grep -q "allow read \"$W/files/open/\*\*\"  (.*live.bwp:10)" "$out/show" ||
        fail "bwctl show does not name the file rule's line: $(cat "$out/show")"
    bwctl list >"$out/list"
    grep -q "^allow1 .* e2e-live .* 1 " "$out/list" || fail "bwctl list does not show version 1: $(cat "$out/list")"
    edit remove allow1 "$W/files/closed/"
    expect EACCES read "$W/files/closed/file" "after remove"
    finish
    [ "$status" = 0 ] || fail "bwrun's status $status"
    grep -q "policy version 1: \`allow read" "$out/allow1.stderr" || fail "bwrun did not report the change"
    grep -q "denied read $W/files/closed/file by \`default deny\`" "$out/allow1.stderr" ||
        fail "bwrun did not report the denial: $(cat "$out/allow1.stderr")"
}

test_deny_inside_allow_names_live_rule() {
    start deny1 || return
    expect ok read "$W/files/open/secret" "before the edit"
    edit deny deny1 "$W/files/open/secret" --access read,write
    expect EACCES read "$W/files/open/secret" "after deny"
    expect ok read "$W/files/open/file" "the rest of the allowed tree"
    local id
    id=$(sed -n 's/.* as rule #\([0-9]*\).*/\1/p' "$out/edit")
    [ -n "$id" ] || fail "no rule id in: $(cat "$out/edit")"
    edit remove deny1 "#$id"
    expect ok read "$W/files/open/secret" "after removing the rule by id"
    # A file rule can go too: the policy in force is edited, not only the live rules.
    edit remove deny1 "$W/files/open/"
    expect EACCES read "$W/files/open/file" "after removing the file's rule"
    finish
    grep -q "denied read $W/files/open/secret by \`deny read, write \"$W/files/open/secret\"\` (live edit at [0-9TZ:-]* by uid 0)" \
        "$out/deny1.stderr" || fail "the denial does not name the live rule: $(cat "$out/deny1.stderr")"
}

test_grant_expires_by_itself() {
    start grant1 || return
    edit allow grant1 "$W/files/closed/file" --access read --for 2s
    grep -q "until 20" "$out/edit" || fail "bwctl does not say when the grant ends: $(cat "$out/edit")"
    expect ok read "$W/files/closed/file" "during the grant"
    wait_until_denied read "$W/files/closed/file"
    expect EACCES read "$W/files/closed/file" "after the grant expired (no bwctl running)"
    bwctl show grant1 >"$out/show"
    ! grep -q "^#[0-9]* *allow read \"$W/files/closed/file\"" "$out/show" ||
        fail "the expired rule is still shown: $(cat "$out/show")"
    finish
    grep -q "policy version 2: grant expired: #[0-9]* \`allow read" "$out/grant1.stderr" ||
        fail "bwrun did not report the expiry: $(cat "$out/grant1.stderr")"
}

test_reload_swaps_whole_policy() {
    start reload1 || return
    edit allow reload1 "$W/files/closed/" --access read
    expect EACCES read "$W/files/other/file" "before the reload"
    edit reload reload1 "$W/reloaded.o"
    expect ok read "$W/files/other/file" "the reloaded policy's rule"
    expect EACCES read "$W/files/open/file" "the old policy's rule is gone"
    expect EACCES read "$W/files/closed/file" "the live edit went with the old policy"
    bwctl reload reload1 "$W/seccomp.o" >"$out/bad" 2>&1
    local rc=$?
    [ $rc = 1 ] && grep -q "other syscall rules .* for syscalls no LSM hook covers: they are a seccomp filter, fixed when the sandbox started" "$out/bad" ||
        fail "a reload that changes syscall rules: status $rc: $(cat "$out/bad")"
    expect ok read "$W/files/other/file" "a refused reload changes nothing"
    finish
    grep -q "policy version 2: reloaded from $W/reloaded.o" "$out/reload1.stderr" ||
        fail "bwrun did not report the reload: $(cat "$out/reload1.stderr")"
}

test_errors_change_nothing() {
    start errors1 || return
    local rc
    bwctl allow no-such-sandbox "$W/files/closed/" --access read >"$out/e" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "no sandbox named \`no-such-sandbox\` is running" "$out/e" || fail "unknown sandbox: $rc $(cat "$out/e")"
    bwctl allow errors1 "files/closed/" --access read >"$out/e" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "error: path \`files/closed/\` is not absolute \[BW3001\]" "$out/e" && grep -q "\^\^\^" "$out/e" ||
        fail "relative pattern: $rc $(cat "$out/e")"
    bwctl allow errors1 "$W/files/[" --access read >"$out/e" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "\[BW3008\]" "$out/e" && grep -q "hint:" "$out/e" || fail "bad glob: $rc $(cat "$out/e")"
    bwctl deny errors1 "$W/files/open/" --access raed >"$out/e" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "found \`raed\` \[BW1002\]" "$out/e" || fail "bad access kind: $rc $(cat "$out/e")"
    bwctl allow errors1 "$W/files/closed/" --access read --for soon >"$out/e" 2>&1
    rc=$?
    [ $rc = 2 ] && grep -q "\`soon\` is not a duration" "$out/e" || fail "bad duration: $rc $(cat "$out/e")"
    bwctl allow errors1 "$W/files/closed/" >"$out/e" 2>&1
    rc=$?
    [ $rc = 2 ] && grep -q "usage:" "$out/e" || fail "no --access: $rc $(cat "$out/e")"
    bwctl remove errors1 "#9999" >"$out/e" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "has no rule #9999" "$out/e" || fail "unknown rule id: $rc $(cat "$out/e")"
    bwctl reload errors1 "$W/live.bwp" >"$out/e" 2>&1
    rc=$?
    [ $rc = 1 ] || fail "reload of policy text, not an artifact: $rc $(cat "$out/e")"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$bin/bwctl" allow errors1 "$W/files/closed/" --access read \
        >"$out/e" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "root-only" "$out/e" || fail "as nobody: $rc $(cat "$out/e")"
    bwctl show errors1 >"$out/show"
    grep -q "version 0" "$out/show" || fail "a refused edit made a version: $(head -n 1 "$out/show")"
    expect EACCES read "$W/files/closed/file" "after the refused edits"
    finish
}

test_log_text_and_json() {
    start log1 || return
    expect EACCES read "$W/files/closed/file" "a denial to log"
    edit allow log1 "$W/files/closed/" --access read
    bwctl log log1 >"$out/log"
    grep -q "denied read $W/files/closed/file by \`default deny\`" "$out/log" || fail "text log: $(cat "$out/log")"
    grep -q "policy version 1: \`allow read" "$out/log" || fail "the change is not logged: $(cat "$out/log")"
    bwctl log --json log1 >"$out/log.json"
    python3 - "$out/log.json" "$W/files/closed/file" <<'EOF' || fail "json log: $(cat "$out/log.json")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
denial = [l for l in lines if l["event"] == "denial" and l.get("path") == sys.argv[2]]
change = [l for l in lines if l["event"] == "policy"]
assert denial and denial[0]["policy_version"] == 0 and denial[0]["rule_id"] == 1, denial
assert denial[0]["exe"].startswith("/usr/bin/python3") and denial[0]["comm"].startswith("python3"), denial
assert change and change[0]["policy_version"] == 1, change
assert lines[-1]["denials"] >= 1
EOF
    bwctl log -f log1 >"$out/follow" 2>&1 &
    local follower=$!
    expect EACCES write "$W/files/closed/file" "a denial while following"
    finish
    local n=0
    while kill -0 $follower 2>/dev/null && [ $n -lt 100 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    if kill -0 $follower 2>/dev/null; then
        kill $follower
        fail "bwctl log -f did not end with the sandbox"
    fi
    grep -q "denied write $W/files/closed/file" "$out/follow" || fail "log -f missed a denial: $(cat "$out/follow")"
}

test_net_rule_live() {
    # Nothing listens on the port, so an allowed connect is refused by TCP (ECONNREFUSED),
    # a denied one by the policy (EACCES).
    start net1 || return
    expect EACCES connect 127.0.0.1:47999 "the policy's net default"
    edit net allow net1 tcp connect 127.0.0.1:47999
    grep -q "\`net allow tcp connect 127.0.0.1:47999\` as rule #" "$out/edit" || fail "bwctl net said: $(cat "$out/edit")"
    expect ECONNREFUSED connect 127.0.0.1:47999 "after net allow"
    expect EACCES connect 127.0.0.1:47998 "another port"
    local id
    id=$(sed -n 's/.* as rule #\([0-9]*\).*/\1/p' "$out/edit")
    edit remove net1 "$id"
    expect EACCES connect 127.0.0.1:47999 "after removing the net rule"
    bwctl net allow net1 tcp connect 127.0.0.1:99999 >"$out/e" 2>&1
    [ $? = 1 ] && grep -q "BW[0-9]*\]" "$out/e" || fail "a bad endpoint: $(cat "$out/e")"
    finish
}

test_syscall_verbs_say_what_can_change() {
    start sys1 "$W/seccomp.o" || return
    local rc
    bwctl syscall list sys1 >"$out/s" 2>&1
    grep -q "deny ptrace  (.*seccomp.bwp:3; seccomp filter, fixed when the sandbox started)" "$out/s" ||
        fail "syscall list: $(cat "$out/s")"
    bwctl syscall allow sys1 ptrace >"$out/s" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "seccomp filter .* cannot change while it runs; put \`syscalls allow ptrace\` in the policy and start a new sandbox" "$out/s" ||
        fail "syscall allow of a seccomp-decided syscall: $rc $(cat "$out/s")"
    bwctl syscall deny sys1 ptrace >"$out/s" 2>&1
    rc=$?
    [ $rc = 0 ] && grep -q "ptrace is denied already" "$out/s" || fail "syscall deny of a denied one: $rc $(cat "$out/s")"
    bwctl syscall deny sys1 ptarce >"$out/s" 2>&1
    rc=$?
    [ $rc = 1 ] && grep -q "did you mean \`ptrace\`" "$out/s" || fail "a misspelt syscall: $rc $(cat "$out/s")"
    bwctl syscall deny no-such-sandbox ptrace >"$out/s" 2>&1
    [ $? = 1 ] && grep -q "no sandbox named" "$out/s" || fail "unknown sandbox: $(cat "$out/s")"
    finish
}

test_syscalls_change_live() {
    start sys2 "$W/allow-all.o" || return
    expect ok signal self "before any syscall rule"
    edit syscall deny sys2 kill
    grep -q "sandbox sys2: policy version 1: \`syscalls deny kill\` as rule #[0-9]*$" "$out/edit" ||
        fail "bwctl syscall deny said: $(cat "$out/edit")"
    local id
    id=$(sed -n 's/.* as rule #\([0-9]*\)$/\1/p' "$out/edit")
    expect EPERM signal self "after syscall deny kill"
    expect ok socketpair unix "a syscall the edit did not name"
    bwctl syscall list sys2 >"$out/s" 2>&1
    grep -q "^#$id *deny kill  (live edit at .* by uid 0; LSM hook task_kill, changeable live)" "$out/s" ||
        fail "syscall list: $(cat "$out/s")"
    edit syscall deny sys2 socket
    expect EPERM connect 127.0.0.1:1 "socket(2) after syscall deny socket"
    expect ok socketpair unix "socketpair(2) reaches the same hook and is not denied"
    edit remove sys2 "#$id"
    expect ok signal self "after removing the kill rule"
    edit syscall allow sys2 socket
    grep -q "\`syscalls allow socket\` as rule #[0-9]*, replacing rule #[0-9]* for socket" "$out/edit" ||
        fail "bwctl syscall allow said: $(cat "$out/edit")"
    expect ECONNREFUSED connect 127.0.0.1:1 "after syscall allow socket (nothing listens on port 1)"
    finish
    grep -q "denied syscall kill by \`syscalls deny kill\` (live edit at .* by uid 0) \[pid [0-9]* python3\]" \
        "$out/sys2.stderr" || fail "bwrun's denial line: $(cat "$out/sys2.stderr")"
}

test_file_syscall_rules_change_live() {
    start sys3 "$W/syscalls.o" || return
    expect EPERM signal self "the policy's syscalls deny kill"
    edit syscall allow sys3 kill
    grep -q "\`syscalls allow kill\` as rule #[0-9]*, replacing rule #[0-9]* for kill" "$out/edit" ||
        fail "bwctl syscall allow said: $(cat "$out/edit")"
    expect ok signal self "after syscall allow kill"
    bwctl syscall allow sys3 ptrace >"$out/s" 2>&1
    [ $? = 1 ] && grep -q "decided by the seccomp filter" "$out/s" || fail "ptrace allowed live: $(cat "$out/s")"
    edit syscall deny sys3 kill
    expect EPERM signal self "denied again"
    # The reloaded policy differs in live syscalls only: kill allowed, socket denied.
    edit reload sys3 "$W/syscalls-reloaded.o"
    expect ok signal self "after the reload"
    expect EPERM connect 127.0.0.1:1 "the reloaded policy's syscalls deny socket"
    bwctl reload sys3 "$W/allow-all.o" >"$out/s" 2>&1
    [ $? = 1 ] && grep -q "for syscalls no LSM hook covers" "$out/s" || fail "a reload dropping ptrace: $(cat "$out/s")"
    finish
    grep -q "denied syscall kill by \`syscalls deny kill, ptrace\` (.*syscalls.bwp:3)" "$out/sys3.stderr" ||
        fail "bwrun's denial line for the file's rule: $(cat "$out/sys3.stderr")"
}

test_nested_sandbox_edited_and_grant_expires() {
    start inner1 "$W/live.o" outer1 || return
    expect EACCES read "$W/files/closed/file" "before the edit"
    edit allow inner1 "$W/files/closed/file" --access read --for 2s
    expect ok read "$W/files/closed/file" "the nested sandbox's grant"
    wait_until_denied read "$W/files/closed/file"
    expect EACCES read "$W/files/closed/file" "after the nested sandbox's grant expired"
    bwctl show inner1 >"$out/show"
    grep -q "version 2" "$out/show" && grep -q "last change: grant expired" "$out/show" ||
        fail "the expiry is not the nested sandbox's version 2: $(head -n 2 "$out/show")"
    # The enclosing sandbox decides too: loosening the nested one cannot pass what it denies.
    edit deny outer1 "$W/files/open/secret" --access read
    edit allow inner1 "$W/files/open/secret" --access read
    expect EACCES read "$W/files/open/secret" "the enclosing sandbox's live deny"
    finish
    [ "$status" = 0 ] || fail "bwrun's status $status: $(cat "$out/inner1.stderr")"
}

# The program learn mode watches: a shell that reads, lists, writes a tree of its own and
# runs python, whose imports read many files of one folder.
learn_program() {
    /bin/sh -c "cat /etc/hostname $W/files/other/* >/dev/null; ls /usr/share/doc >/dev/null; mkdir -p $W/learned-out;
        echo result >$W/learned-out/file; /usr/bin/python3 -c 'import json, email.parser, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((\"127.0.0.1\", 9))
print(1)'"
}

# connect_udp PORT: a UDP connect to 127.0.0.1:PORT (nothing is sent).
connect_udp() {
    /usr/bin/python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(('127.0.0.1', $1))"
}

test_learn_round_trip() {
    local rc
    bwrun --learn "$W/learned.bwp" -- bash -c "$(declare -f learn_program); W=$W; learn_program" \
        >"$out/learn.out" 2>"$out/learn.err"
    rc=$?
    [ $rc = 0 ] && grep -q "learned policy written to $W/learned.bwp" "$out/learn.err" ||
        { fail "bwrun --learn: status $rc: $(tail -n 5 "$out/learn.err")"; return; }
    bwc check "$W/learned.bwp" >"$out/check" 2>&1 || fail "bwc check: $(cat "$out/check")"
    bwc fmt --check "$W/learned.bwp" >"$out/fmt" 2>&1 || fail "bwc fmt --check: $(cat "$out/fmt")"
    grep -q "^    include \"" "$W/learned.bwp" || fail "no stdlib include: $(cat "$W/learned.bwp")"
    grep -q "^    allow read[a-z, ]* \"$W/files/other/\*\"  # 3 files" "$W/learned.bwp" ||
        fail "the folder read whole is not folded into a glob: $(cat "$W/learned.bwp")"
    grep -q "\"$W/learned-out/file\"" "$W/learned.bwp" || fail "the written file is missing: $(cat "$W/learned.bwp")"
    grep -q "^    net allow udp connect 127.0.0.1:9  # 1 time" "$W/learned.bwp" ||
        fail "the UDP connect is not learned: $(cat "$W/learned.bwp")"
    bwc "$W/learned.bwp" --backend="$backend" -o "$W/learned.o" 2>"$out/bwc" || { fail "bwc: $(cat "$out/bwc")"; return; }
    rm -rf "$W/learned-out"
    bwrun "$W/learned.o" -- bash -c "$(declare -f learn_program); W=$W; learn_program" >"$out/rerun.out" 2>"$out/rerun.err"
    rc=$?
    [ $rc = 0 ] || fail "the program under its learned policy: status $rc: $(tail -n 5 "$out/rerun.err")"
    ! grep -q "denied" "$out/rerun.err" || fail "denials under the learned policy: $(grep denied "$out/rerun.err" | head -n 5)"
    [ "$(cat "$out/rerun.out")" = 1 ] || fail "the program's output: $(cat "$out/rerun.out")"
}

test_learn_denies_untouched_secret() {
    [ -e "$W/learned.o" ] || { fail "needs learn_round_trip's policy"; return; }
    mkdir -p /root/.ssh
    echo "not a key" >/root/.ssh/id_bw_test
    bwrun "$W/learned.o" -- cat /root/.ssh/id_bw_test /etc/shadow >"$out/secret.out" 2>"$out/secret.err"
    local rc=$?
    rm -f /root/.ssh/id_bw_test
    [ $rc = 1 ] && grep -q "/root/.ssh/id_bw_test: Permission denied" "$out/secret.err" &&
        grep -q "/etc/shadow: Permission denied" "$out/secret.err" ||
        fail "secrets the program never touched: status $rc: $(cat "$out/secret.err")"
    bwrun "$W/learned.o" -- bash -c "$(declare -f connect_udp); connect_udp 9 && connect_udp 10" >"$out/port.out" 2>"$out/port.err"
    rc=$?
    [ $rc = 1 ] && grep -q "PermissionError" "$out/port.err" && grep -q "denied connect udp 127.0.0.1:10 " "$out/port.err" &&
        ! grep -q "127.0.0.1:9 " "$out/port.err" || fail "a port the program never used: status $rc: $(cat "$out/port.err")"
    bwrun "$W/live.o" --learn "$W/x.bwp" -- true >"$out/e" 2>&1
    rc=$?
    [ $rc = 2 ] && grep -q "learn runs without a policy artifact" "$out/e" || fail "--learn with an artifact: $rc $(cat "$out/e")"
    bwrun --learn "$W/x.bwp" >"$out/e" 2>&1
    rc=$?
    [ $rc = 2 ] && grep -q "learn needs a program" "$out/e" || fail "--learn without a program: $rc $(cat "$out/e")"
}

test_denial_flood_drops_counted() {
    # bwrun stopped, the program floods its ring with denials: they are dropped, the program
    # runs on at full speed, and bwrun counts and reports the loss once it reads again.
    rm -f "$W/files/open/go"
    "$bin/bwrun" --name flood1 "$W/live.o" -- /usr/bin/python3 -c "
import os, time
while not os.path.exists('$W/files/open/go'):
    time.sleep(0.05)
for _ in range(3000):
    try:
        open('$W/files/closed/file')
    except PermissionError:
        pass
print('done', flush=True)" >"$out/flood.out" 2>"$out/flood.err" &
    local pid=$! n=0
    until bwctl list 2>/dev/null | grep -q "^flood1 "; do
        sleep 0.1
        n=$((n + 1))
        [ $n -lt 300 ] || { fail "the sandbox did not start"; kill $pid; return; }
    done
    kill -STOP $pid
    touch "$W/files/open/go"
    n=0
    until grep -q done "$out/flood.out" 2>/dev/null; do
        sleep 0.1
        n=$((n + 1))
        [ $n -lt 600 ] || break
    done
    grep -q done "$out/flood.out" || fail "the program did not finish its flood while bwrun was stopped"
    kill -CONT $pid
    wait $pid || fail "bwrun's status $?: $(tail -n 5 "$out/flood.err")"
    local lost
    lost=$(sed -n 's/^bwrun: \([0-9]*\) events not reported in sandbox flood1: its denial ring buffer was full$/\1/p' \
        "$out/flood.err")
    [ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "no count of dropped events: $(tail -n 5 "$out/flood.err")"
    local shown
    shown=$(sed -n 's/^bwrun: \([0-9]*\) accesses denied in sandbox flood1$/\1/p' "$out/flood.err")
    [ $((shown + lost)) -ge 3000 ] || fail "$shown reported and $lost dropped of 3000 or more denials"
}

test_sandbox_cannot_edit_itself() {
    bwrun --name self1 "$W/allow-all.o" -- "$bin/bwctl" allow self1 / --access all >"$out/self" 2>&1
    local rc=$?
    [ $rc = 1 ] && grep -q "bwctl: cannot .*/run/bumblewrap.*: Permission denied" "$out/self" ||
        fail "bwctl inside its sandbox: status $rc: $(cat "$out/self")"
    bwrun --name self2 "$W/allow-all.o" -- sh -c "cat /run/bumblewrap/live/self2; ls /sys/fs/bpf/bumblewrap" \
        >"$out/self" 2>&1
    grep -q "/run/bumblewrap/live/self2: Permission denied" "$out/self" &&
        grep -q "/sys/fs/bpf/bumblewrap.*Permission denied" "$out/self" ||
        fail "the sandbox reached bwctl's state: $(cat "$out/self")"
}

test_concurrent_edits_serialised() {
    start conc1 || return
    local i pids=()
    for i in 1 2 3 4 5 6; do
        mkdir -p "$W/files/closed/c$i"
        echo "c$i" >"$W/files/closed/c$i/file"
        bwctl allow conc1 "$W/files/closed/c$i/" --access read >"$out/conc$i" 2>&1 &
        pids+=($!)
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || fail "a concurrent bwctl failed: $(cat "$out/conc$((i + 1))")"
    done
    for i in 1 2 3 4 5 6; do
        expect ok read "$W/files/closed/c$i/file" "edit $i of 6 concurrent ones"
    done
    bwctl show conc1 >"$out/show"
    grep -q "version 6" "$out/show" || fail "six edits did not make six versions: $(head -n 1 "$out/show")"
    finish
}

test_sandbox_ends_mid_edit() {
    bwrun --name ending1 "$W/live.o" -- /usr/bin/sleep 1 >"$out/ending.out" 2>&1 &
    local pid=$! rc n=0 ok=0
    while kill -0 $pid 2>/dev/null && [ $n -lt 400 ]; do
        bwctl allow ending1 "$W/files/closed/e$n" --access read >"$out/e" 2>&1
        rc=$?
        case "$rc:$(cat "$out/e")" in
            0:*"policy version"*) ok=$((ok + 1)) ;;
            1:*"no sandbox named"* | 1:*"no longer holds"*) ;;
            *) fail "an edit racing the sandbox's end: status $rc: $(cat "$out/e")" ;;
        esac
        n=$((n + 1))
    done
    wait $pid || fail "bwrun's status $?: $(cat "$out/ending.out")"
    [ $ok -gt 0 ] || fail "no edit landed while the sandbox ran"
    test_nothing_left_behind
}

test_edit_latency() {
    start latency1 || return
    local i t0 t1 times=()
    for i in $(seq 1 10); do
        t0=$(date +%s%N)
        edit allow latency1 "$W/files/closed/l$i" --access read
        t1=$(date +%s%N)
        times+=($(((t1 - t0) / 1000000)))
        echo "l$i" >"$W/files/closed/l$i"
        # Enforced by the time bwctl returns: the very next access sees the new rule.
        expect ok read "$W/files/closed/l$i" "right after bwctl returned (edit $i)"
    done
    finish
    echo "# bwctl allow, wall time from start to return ($backend backend): $(printf '%s\n' "${times[@]}" | sort -n |
        awk '{ a[NR] = $1 } END { printf "min %d ms, median %d ms, max %d ms", a[1], a[int((NR + 1) / 2)], a[NR] }')"
}

echo "kernel $(uname -r), LSMs $(cat /sys/kernel/security/lsm), backend $backend"
if ! setup >/tmp/bw-live-setup.log 2>&1; then
    echo "not ok setup: $(tail -n 20 /tmp/bw-live-setup.log)"
    exit 1
fi
for t in ${BW_LIVE_ONLY:-allow_then_remove deny_inside_allow_names_live_rule grant_expires_by_itself \
    reload_swaps_whole_policy errors_change_nothing log_text_and_json net_rule_live \
    syscall_verbs_say_what_can_change syscalls_change_live file_syscall_rules_change_live \
    nested_sandbox_edited_and_grant_expires denial_flood_drops_counted \
    sandbox_cannot_edit_itself \
    concurrent_edits_serialised edit_latency learn_round_trip learn_denies_untouched_secret sandbox_ends_mid_edit}; do
    run "$t"
done
echo "live-done"
