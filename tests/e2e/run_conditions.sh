#!/usr/bin/env bash
# Conditional rules in a real kernel: `when uid`, `when gid`, `owner` and `flags` decide
# by the process and the access at the time of the check. Runs as root inside
# scripts/bwvm, like run_e2e.sh (tests/run_tests.sh runs it on each kernel and backend).
#
# usage: run_conditions.sh BIN_DIR [maps|c]
# Prints one line per test, "ok NAME" or "not ok NAME: why", then "conditions-done".
set -u

bin=$(cd "${1:?usage: run_conditions.sh BIN_DIR [maps|c]}" && pwd)
backend=${2:-maps}
W=/tmp/bw-conditions
out=$W/out
export LC_ALL=C

bwc() { "$bin/bwc" "$@"; }
bwrun() { "$bin/bwrun" "$@"; }

setup() {
    rm -rf "$W"
    mkdir -p "$W/team" "$W/group" "$W/owned" "$W/trunc" "$out"
    chmod 755 "$W" "$W/team" "$W/group" "$W/owned" "$W/trunc"
    echo "team content" >"$W/team/file"
    echo "group content" >"$W/group/file"
    echo "mine" >"$W/owned/mine"
    echo "roots" >"$W/owned/roots"
    chown 1000:1000 "$W/owned/mine"
    echo "keep this" >"$W/trunc/file"
    chmod 644 "$W/team/file" "$W/group/file"
    chmod 666 "$W/owned/mine" "$W/owned/roots" "$W/trunc/file"
    cat >"$W/conditions.bwp" <<POLICY
policy "conditions" {
    default deny
    allow read, exec /usr/
    allow read /etc/ld.so.cache
    allow read, write /dev/null
    allow metadata /
    when uid 1000-1999 {
        allow read $W/team/
    }
    when gid 100 {
        allow read $W/group/
    }
    allow read $W/owned/
    allow write owner $W/owned/
    allow read, write $W/trunc/
    deny write $W/trunc/ flags O_TRUNC
}
POLICY
    bwc "$W/conditions.bwp" --backend="$backend" -o "$W/conditions.o"
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

# sandbox [BWRUN OPTIONS] -- CMD...: stdout, stderr and status land in $out.
sandbox() {
    local opts=()
    while [ "$1" != -- ]; do
        opts+=("$1")
        shift
    done
    shift
    bwrun "${opts[@]}" "$W/conditions.o" -- "$@" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
}
status() { cat "$out/status"; }
expect_status() {
    [ "$(status)" = "$1" ] || fail "status $(status), wanted $1; stderr: $(head -c 600 "$out/stderr")"
}
# expect_denied ACCESS PATH RULE: bwrun reported the denial and the rule that made it.
expect_denied() {
    grep -qF "denied $1 $2 by \`$3\`" "$out/stderr" ||
        fail "no denial of $1 $2 by \`$3\`; stderr: $(head -c 600 "$out/stderr")"
}

test_uid_range_allows_inside() {
    sandbox --uid 1000 --gid 1000 -- cat "$W/team/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = "team content" ] || fail "read printed $(cat "$out/stdout")"
    sandbox --uid 1999 --gid 1000 -- cat "$W/team/file"
    expect_status 0
}

test_uid_range_denies_outside() {
    sandbox --uid 2000 --gid 1000 -- cat "$W/team/file"
    expect_status 1 && expect_denied read "$W/team/file" "default deny" || return
    # bwrun run by root without --uid: the program runs as root, outside the range.
    sandbox -- cat "$W/team/file"
    expect_status 1 && expect_denied read "$W/team/file" "default deny"
}

test_gid_condition() {
    sandbox --uid 1000 --gid 100 -- cat "$W/group/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = "group content" ] || fail "read printed $(cat "$out/stdout")"
    sandbox --uid 1000 --gid 1000 -- cat "$W/group/file"
    expect_status 1 && expect_denied read "$W/group/file" "default deny"
}

test_owner_writes_own_file() {
    sandbox --uid 1000 --gid 1000 -- sh -c "echo changed >$W/owned/mine"
    expect_status 0 && [ "$(cat "$W/owned/mine")" = changed ] || fail "own file not written: $(cat "$W/owned/mine")"
}

test_owner_denies_others_file() {
    sandbox --uid 1000 --gid 1000 -- sh -c "echo changed >$W/owned/roots"
    expect_status 2 || return
    [ "$(cat "$W/owned/roots")" = roots ] || fail "root's file changed"
    expect_denied write "$W/owned/roots" "default deny"
}

test_flags_deny_truncating_open() {
    sandbox -- sh -c "echo gone >$W/trunc/file"
    expect_status 2 || return
    [ "$(cat "$W/trunc/file")" = "keep this" ] || fail "file truncated: $(cat "$W/trunc/file")"
    expect_denied write "$W/trunc/file" "deny write /tmp/bw-conditions/trunc/ flags O_TRUNC"
}

test_flags_allow_plain_write() {
    sandbox -- dd if=/dev/null of="$W/trunc/file" conv=notrunc status=none
    expect_status 0 && [ "$(cat "$W/trunc/file")" = "keep this" ] || fail "plain write: $(cat "$W/trunc/file")"
    sandbox -- sh -c "printf K | dd of=$W/trunc/file conv=notrunc status=none"
    expect_status 0 && [ "$(cat "$W/trunc/file")" = "Keep this" ] || fail "file reads $(cat "$W/trunc/file")"
}

echo "kernel $(uname -r), backend $backend"
if ! setup; then
    echo "not ok setup: the policy did not compile"
    echo "conditions-done"
    exit 1
fi
for t in ${BW_E2E_ONLY:-uid_range_allows_inside uid_range_denies_outside gid_condition owner_writes_own_file \
    owner_denies_others_file flags_deny_truncating_open flags_allow_plain_write}; do
    run "$t"
done
echo "conditions-done"
[ "$failures" = 0 ]
