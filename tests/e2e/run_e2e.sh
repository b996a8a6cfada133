#!/usr/bin/env bash
# End-to-end suite: real sandboxes in a real kernel with the BPF LSM. Runs as root inside
# scripts/bwvm (tests/run_tests.sh boots one VM per kernel for the whole suite).
#
# usage: run_e2e.sh BIN_DIR [maps|c [ARTIFACT_DIR [--verifier-pass-only]]]
# The policies are compiled with the given backend (maps by default); every test must pass
# under both. Each artifact in ARTIFACT_DIR (compiled on the host) must then load: the
# kernel's verifier accepts it and its hooks attach. --verifier-pass-only runs that pass
# alone. Prints one line per test, "ok NAME" or "not ok NAME: why", then "e2e-done".
set -u

bin=$(cd "${1:?usage: run_e2e.sh BIN_DIR [maps|c]}" && pwd)
backend=${2:-maps}
artifacts=${3:-}
verifier_pass_only=${4:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/left_behind.sh"
W=/tmp/bw-e2e
out=$W/out
long_dir=$W/allowed/$(printf 'x%.0s' {1..100})
export LC_ALL=C

bwc() { "$bin/bwc" "$@"; }
bwrun() { "$bin/bwrun" "$@"; }
bwctl() { "$bin/bwctl" "$@"; }

setup() {
    rm -rf "$W"
    mkdir -p "$W/allowed" "$W/denied/bin" "$W/shared" "$W/readonly" "$W/log" "$long_dir" "$out"
    echo "allowed content" >"$W/allowed/file"
    echo "secret content" >"$W/secret"
    echo "denied content" >"$W/denied/file"
    echo "long secret" >"$long_dir/secret.txt"
    echo "long neighbour" >"$long_dir/neighbour.txt"
    echo "read only" >"$W/readonly/file"
    echo "first" >"$W/log/app.log"
    echo "key" >"$W/allowed/server.key"
    cp /usr/bin/true "$W/allowed/true"
    echo "a" >"$W/a"
    echo "b" >"$W/b"
    cp /usr/bin/true "$W/denied/bin/true"
    cp "$here/deep_path.py" "$W/shared/deep_path.py"
    setup_paths || return 1
    setup_conditions || return 1
    setup_exe || return 1
    setup_audit || return 1
    setup_nesting || return 1
    for p in base only-a only-b paths conditions devices exe audit; do
        bwc "$here/policies/$p.bwp" --backend="$backend" -o "$W/$p.o" || return 1
    done
    for p in nest-outer nest-inner; do
        bwc "$W/$p.bwp" --backend="$backend" -o "$W/$p.o" || return 1
    done
    # A policy that denies nothing: the specialised program then has no hook at all.
    printf 'policy "allow-all" {\n    default allow\n}\n' >"$W/allow-all.bwp"
    bwc "$W/allow-all.bwp" --backend="$backend" -o "$W/allow-all.o" 2>/dev/null || return 1
}

. "$here/../lib/vm_suite.sh"

# sandbox POLICY CMD...: runs CMD under bwrun; stdout, stderr and status land in $out.
sandbox() {
    local policy=$1
    shift
    bwrun "$W/$policy.o" -- "$@" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
}
status() { cat "$out/status"; }
expect_status() {
    [ "$(status)" = "$1" ] || fail "status $(status), wanted $1; stderr: $(head -c 600 "$out/stderr")"
}
expect_denial() {
    # bwrun names the path and the deciding rule
    grep -qF "denied read $1 by \`$2\`" "$out/stderr" ||
        fail "no denial of $1 by \`$2\` reported; stderr: $(head -c 600 "$out/stderr")"
}

test_read_allowed() {
    sandbox base cat "$W/allowed/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = "allowed content" ] || fail "wrong output: $(cat "$out/stdout")"
}

test_read_denied() {
    sandbox base cat "$W/secret"
    expect_status 1 || return
    grep -q "Permission denied" "$out/stderr" || fail "cat did not see EACCES"
    expect_denial "$W/secret" "deny all /tmp/bw-e2e/secret"
    [ ! -s "$out/stdout" ] || fail "secret leaked: $(cat "$out/stdout")"
}

test_default_deny() {
    sandbox base cat /etc/hostname
    expect_status 1 && expect_denial /etc/hostname "default deny"
}

test_write_allowed() {
    sandbox base sh -c "echo written >$W/allowed/new"
    expect_status 0 && [ "$(cat "$W/allowed/new")" = "written" ] || fail "file not written"
}

test_write_denied() {
    sandbox base sh -c "echo overwritten >$W/denied/file"
    expect_status 2 || return
    [ "$(cat "$W/denied/file")" = "denied content" ] || fail "denied file changed"
    grep -qF "denied write $W/denied/file by \`deny all /tmp/bw-e2e/denied/\`" "$out/stderr" ||
        fail "no write denial reported: $(cat "$out/stderr")"
}

test_exec_allowed() {
    sandbox base /usr/bin/true
    expect_status 0
}

test_exec_denied() {
    sandbox base "$W/denied/bin/true"
    expect_status 126 && grep -q "Permission denied" "$out/stderr" || fail "exec not refused: $(cat "$out/stderr")"
}

test_dotdot_traversal() {
    sandbox base cat "$W/allowed/../secret"
    expect_status 1 && expect_denial "$W/secret" "deny all /tmp/bw-e2e/secret"
}

test_symlink_made_inside() {
    sandbox base sh -c "ln -s $W/secret $W/allowed/link && cat $W/allowed/link"
    expect_status 1 || return
    [ -L "$W/allowed/link" ] || fail "symlink was not created (the test did not run)"
    expect_denial "$W/secret" "deny all /tmp/bw-e2e/secret"
}

test_denied_path_over_96_bytes() {
    [ ${#long_dir} -gt 96 ] || fail "test path too short"
    sandbox base cat "$long_dir/secret.txt"
    expect_status 1 || return
    expect_denial "$long_dir/secret.txt" "deny all $long_dir/secret.txt"
    sandbox base cat "$long_dir/neighbour.txt"
    expect_status 0
}

# 20 levels of 200-byte names: a path of 4044 bytes, within PATH_MAX.
long_path() { # ROOT
    /usr/bin/python3 "$here/deep_path.py" create "$1" 20 200 >/dev/null || return 1
    local p=$1
    for _ in $(seq 20); do p="$p/$(printf 'd%.0s' {1..200})"; done
    echo "$p/leaf"
}

test_path_over_4000_bytes_allowed() {
    local p
    p=$(long_path "$W/allowed") || { fail "cannot build the tree"; return; }
    [ ${#p} -gt 4000 ] || fail "path only ${#p} bytes"
    sandbox base cat "$p"
    expect_status 0 && [ "$(cat "$out/stdout")" = "deep" ] || fail "long allowed path not read"
}

test_path_over_4000_bytes_denied() {
    local p
    p=$(long_path "$W/denied") || { fail "cannot build the tree"; return; }
    sandbox base cat "$p"
    expect_status 1 && grep -qF "by \`deny all /tmp/bw-e2e/denied/\`" "$out/stderr" ||
        fail "long denied path not denied: $(head -c 300 "$out/stderr")"
}

test_path_beyond_path_max_fails_closed() {
    # 21 levels: 4245 bytes, which d_path() cannot produce. Under an allowed tree, the
    # open must still be denied rather than decided on a partial path.
    /usr/bin/python3 "$here/deep_path.py" create "$W/allowed" 21 200 >/dev/null || { fail "cannot build"; return; }
    sandbox base /usr/bin/python3 "$W/shared/deep_path.py" open "$W/allowed" 21 200
    expect_status 13 || return
    grep -q "could not resolve" "$out/stderr" || fail "denial not reported: $(head -c 300 "$out/stderr")"
}

test_read_only_tree() {
    sandbox base cat "$W/readonly/file"
    expect_status 0 || return
    sandbox base sh -c "echo more >>$W/readonly/file"
    expect_status 2 || return
    grep -qF "denied append $W/readonly/file by \`default deny\`" "$out/stderr" || fail "append not denied: $(cat "$out/stderr")"
    sandbox base sh -c "echo new >$W/readonly/file"
    expect_status 2 && [ "$(cat "$W/readonly/file")" = "read only" ] || fail "read-only file changed"
}

test_append_only_log() {
    sandbox base sh -c "echo second >>$W/log/app.log"
    expect_status 0 || return
    sandbox base sh -c "echo replaced >$W/log/app.log"
    expect_status 2 || return
    [ "$(cat "$W/log/app.log")" = "$(printf 'first\nsecond')" ] || fail "log is $(cat "$W/log/app.log")"
    grep -qF "denied write $W/log/app.log" "$out/stderr" || fail "truncating write not reported"
}

test_exec_is_its_own_access() {
    # The allowed tree grants read and write but not exec: a copied binary reads, never runs.
    sandbox base cat "$W/allowed/true"
    expect_status 0 || return
    sandbox base "$W/allowed/true"
    expect_status 126 || return
    grep -qF "denied exec $W/allowed/true by \`default deny\`" "$out/stderr" || fail "exec denial not reported"
}

test_glob_deny_inside_allow() {
    sandbox base cat "$W/allowed/server.key"
    expect_status 1 && expect_denial "$W/allowed/server.key" "deny read /tmp/bw-e2e/allowed/*.key"
    sandbox base cat "$W/allowed/file"
    expect_status 0
}

test_policy_that_denies_nothing() {
    sandbox allow-all cat "$W/secret"
    expect_status 0 && [ "$(cat "$out/stdout")" = "secret content" ] || fail "not allowed: $(cat "$out/stderr")"
    # The invariants hold all the same: a process outside the sandbox cannot be signalled.
    sleep 60 &
    local outside=$!
    sandbox allow-all kill -TERM "$outside"
    kill -0 "$outside" 2>/dev/null || fail "the sandbox killed an outside process"
    kill "$outside"
    wait "$outside" 2>/dev/null
    expect_status 1
    grep -qF "by invariant signal" "$out/stderr" || fail "no invariant denial reported: $(cat "$out/stderr")"
}

test_outside_unaffected() {
    # While a sandbox runs, processes outside it are not confined.
    bwrun "$W/base.o" -- sh -c "while [ ! -e $W/shared/stop ]; do sleep 0.05; done" 2>/dev/null &
    local pid=$!
    sleep 0.5
    cat "$W/secret" >/dev/null || fail "outside process was denied"
    touch "$W/shared/stop"
    wait $pid || fail "sandbox failed"
    rm -f "$W/shared/stop"
}

test_two_sandboxes_at_once() {
    rm -f "$W/shared/"{a,b}-up "$W/shared/listed"
    # SELF OTHER: each reads its own file, fails on the other's, and stays until listed.
    local script='s=$1 o=$2 d=$3; touch $d/shared/$s-up; while [ ! -e $d/shared/$o-up ]; do sleep 0.05; done;
        cat $d/$s && ! cat $d/$o 2>/dev/null; r=$?;
        while [ ! -e $d/shared/listed ]; do sleep 0.05; done; exit $r'
    bwrun --name sb-a "$W/only-a.o" -- sh -c "$script" sh a b "$W" >"$out/a.out" 2>"$out/a.err" &
    local pa=$!
    bwrun --name sb-b "$W/only-b.o" -- sh -c "$script" sh b a "$W" >"$out/b.out" 2>"$out/b.err" &
    local pb=$!
    local n=0
    until [ -e "$W/shared/a-up" ] && [ -e "$W/shared/b-up" ]; do
        sleep 0.05
        n=$((n + 1))
        [ $n -lt 400 ] || { fail "sandboxes did not start"; kill $pa $pb; return; }
    done
    bwctl list >"$out/list"
    touch "$W/shared/listed"
    grep -q "^sb-a .* running *only-a" "$out/list" && grep -q "^sb-b .* running *only-b" "$out/list" ||
        fail "bwctl list does not show both: $(cat "$out/list")"
    wait $pa
    local ra=$?
    wait $pb
    local rb=$?
    [ $ra = 0 ] && [ "$(cat "$out/a.out")" = "a" ] || fail "sandbox a: status $ra, $(cat "$out/a.err")"
    [ $rb = 0 ] && [ "$(cat "$out/b.out")" = "b" ] || fail "sandbox b: status $rb, $(cat "$out/b.err")"
    grep -qF "denied read $W/b by \`default deny\` (" "$out/a.err" || fail "a's denial not reported: $(cat "$out/a.err")"
    grep -qF "denied read $W/a by \`default deny\` (" "$out/b.err" || fail "b's denial not reported: $(cat "$out/b.err")"
}

test_bwctl_list_shows_sandbox() {
    bwrun --name lister "$W/base.o" -- sh -c "touch $W/shared/up; while [ ! -e $W/shared/stop ]; do sleep 0.05; done" \
        2>/dev/null &
    local pid=$!
    until [ -e "$W/shared/up" ]; do sleep 0.05; done
    bwctl list >"$out/list"
    touch "$W/shared/stop"
    wait $pid
    rm -f "$W/shared/up" "$W/shared/stop"
    head -n 1 "$out/list" | grep -q "NAME *PID *PROCS *STATE *POLICY *SHA256 *VERSION *DENIALS *UPTIME *CGROUP" ||
        fail "no header: $(cat "$out/list")"
    # One process (the shell; its sleeps come and go), the policy's hash, version 0, no denial.
    grep -Eq "^lister +[0-9]+ +[0-9]+ +running +e2e-base +[0-9a-f]{12} +0 +0 .*/sys/fs/cgroup/bumblewrap/lister$" \
        "$out/list" || fail "sandbox missing: $(cat "$out/list")"
}

test_bwctl_stop_ends_sandbox() {
    bwrun --name stopme "$W/base.o" -- sh -c "sleep 1000 & touch $W/shared/stop-up; sleep 1000" \
        >"$out/stdout" 2>"$out/stderr" &
    local pid=$! procs rc p
    wait_for "$W/shared/stop-up" || { fail "the sandbox did not start: $(cat "$out/stderr")"; kill $pid; return; }
    rm -f "$W/shared/stop-up"
    procs=$(cat /sys/fs/cgroup/bumblewrap/stopme/cgroup.procs)
    bwctl stop stopme >"$out/stop.out" 2>"$out/stop.err"
    rc=$?
    [ $rc = 0 ] && [ "$(cat "$out/stop.out")" = "stopped stopme" ] ||
        fail "bwctl stop: status $rc, $(cat "$out/stop.out" "$out/stop.err")"
    wait $pid
    rc=$?
    [ $rc = 137 ] || fail "bwrun's status $rc, wanted 137 (its program killed); stderr: $(head -c 600 "$out/stderr")"
    for p in $procs; do
        gone "$p" || fail "process $p of the stopped sandbox still runs"
    done
    [ ! -e /sys/fs/cgroup/bumblewrap/stopme ] || fail "the stopped sandbox's cgroup is left"
    bwctl list >"$out/list"
    ! grep -q "^stopme " "$out/list" || fail "the stopped sandbox is still listed: $(cat "$out/list")"
    test_nothing_left_behind
}

test_bwctl_stop_unknown_sandbox() {
    bwctl stop no-such-sandbox >"$out/stdout" 2>"$out/stderr"
    local rc=$?
    [ $rc = 1 ] && grep -qF "no sandbox named \`no-such-sandbox\` is running" "$out/stderr" ||
        fail "status $rc, stderr: $(cat "$out/stderr")"
    bwctl stop >"$out/stdout" 2>"$out/stderr"
    rc=$?
    [ $rc = 2 ] && grep -q "bwctl stop NAME" "$out/stderr" || fail "no usage without a name: status $rc, $(cat "$out/stderr")"
}

test_bwctl_stop_unreachable_from_inside() {
    # A policy that allows everything it may: only the invariants stand between the program,
    # root in its sandbox, and bumblewrap's state and cgroup.
    bwrun --name selfstop "$W/allow-all.o" -- sh -c "$bin/bwctl stop selfstop >$W/shared/inside.out 2>&1
        echo \$? >$W/shared/inside.rc
        echo 1 2>>$W/shared/inside.out >/sys/fs/cgroup/bumblewrap/selfstop/cgroup.kill
        exit 5" >"$out/stdout" 2>"$out/stderr"
    local rc=$?
    [ $rc = 5 ] || fail "the sandbox did not run to its end (status $rc): $(cat "$W/shared/inside.out")"
    [ "$(cat "$W/shared/inside.rc")" = 1 ] || fail "bwctl in the sandbox: status $(cat "$W/shared/inside.rc"), wanted 1"
    grep -q "bwctl: cannot .*/run/bumblewrap.*: Permission denied" "$W/shared/inside.out" ||
        fail "bwctl in the sandbox was not refused bumblewrap's state: $(cat "$W/shared/inside.out")"
    grep -q "cgroup.kill: Operation not permitted" "$W/shared/inside.out" ||
        fail "the sandbox's cgroup.kill was not refused: $(cat "$W/shared/inside.out")"
    rm -f "$W/shared/inside.out" "$W/shared/inside.rc"
}

test_exit_status_0() {
    sandbox base sh -c 'exit 0'
    expect_status 0
}

test_exit_status_3() {
    sandbox base sh -c 'exit 3'
    expect_status 3
}

test_exit_status_sigkill() {
    sandbox base sh -c 'kill -9 $$'
    expect_status 137
}

test_background_children_killed() {
    # The sandbox ends with its main program: nothing keeps running, confined or not.
    sandbox base sh -c "sleep 1000 & echo \$! >$W/allowed/bgpid"
    expect_status 0 || return
    local bg
    bg=$(cat "$W/allowed/bgpid")
    if kill -0 "$bg" 2>/dev/null; then
        fail "background process $bg survived its sandbox"
    fi
}

test_bad_artifact() {
    echo 'policy "x" {}' >"$W/not-an-artifact.o"
    bwrun "$W/not-an-artifact.o" -- true >"$out/stdout" 2>"$out/stderr"
    local rc=$?
    [ $rc = 125 ] || fail "status $rc"
    grep -q "not a policy artifact" "$out/stderr" || fail "unclear message: $(cat "$out/stderr")"
}

test_program_not_found() {
    sandbox base /usr/bin/does-not-exist
    expect_status 127 && grep -q "cannot run /usr/bin/does-not-exist" "$out/stderr" || fail "$(cat "$out/stderr")"
}

# --- bwrun: options, audit, signals, fail-closed, setuid ------------------------------

# wait_for FILE [TENTHS]: waits until FILE exists (default 10 s).
wait_for() {
    local n=0
    until [ -e "$1" ]; do
        sleep 0.1
        n=$((n + 1))
        [ $n -lt "${2:-100}" ] || return 1
    done
}
gone() { ! kill -0 "$1" 2>/dev/null; }

test_run_usage_errors() {
    local args
    for args in "--uid abc $W/base.o true" "--gid -1 $W/base.o true" "--setenv NOVALUE $W/base.o true" \
        "--unsetenv A=B $W/base.o true" "--cwd" "--user root --uid 0 $W/base.o true" "--bogus $W/base.o true" ""; do
        # shellcheck disable=SC2086
        bwrun $args >"$out/stdout" 2>"$out/stderr"
        local rc=$?
        [ $rc = 2 ] && [ "$(wc -l <"$out/stderr")" -le 3 ] && grep -q "^bwrun: " "$out/stderr" ||
            fail "bwrun $args: status $rc, stderr $(cat "$out/stderr")"
    done
}

test_run_uid_gid() {
    bwrun --uid 65534 --gid 65534 "$W/base.o" -- sh -c 'echo $(id -u) $(id -g) $(id -G)' >"$out/stdout" 2>"$out/stderr"
    [ $? = 0 ] && [ "$(cat "$out/stdout")" = "65534 65534 65534" ] || fail "ids: $(cat "$out/stdout" "$out/stderr")"
    # The dropped program is still confined, and cannot read what root could.
    bwrun --uid 65534 --gid 65534 "$W/base.o" -- cat "$W/secret" >"$out/stdout" 2>"$out/stderr"
    [ $? = 1 ] && [ ! -s "$out/stdout" ] || fail "secret read as 65534: $(cat "$out/stdout")"
}

test_run_sudo_default_user() {
    SUDO_UID=65534 SUDO_GID=65534 bwrun "$W/base.o" -- id -u >"$out/stdout" 2>"$out/stderr"
    [ "$(cat "$out/stdout")" = 65534 ] || fail "under sudo ran as $(cat "$out/stdout" "$out/stderr")"
    SUDO_UID=65534 SUDO_GID=65534 bwrun --user root "$W/base.o" -- id -u >"$out/stdout" 2>"$out/stderr"
    [ "$(cat "$out/stdout")" = 0 ] || fail "--user root ran as $(cat "$out/stdout" "$out/stderr")"
    bwrun --user nobody "$W/base.o" -- id -u >"$out/stdout" 2>"$out/stderr"
    [ "$(cat "$out/stdout")" = 65534 ] || fail "--user nobody ran as $(cat "$out/stdout" "$out/stderr")"
    bwrun --user no-such-user "$W/base.o" -- id -u >"$out/stdout" 2>"$out/stderr"
    [ $? = 125 ] && grep -q "no user \`no-such-user\`" "$out/stderr" || fail "unknown user: $(cat "$out/stderr")"
}

test_run_cwd() {
    bwrun --cwd "$W/allowed" "$W/base.o" -- cat file >"$out/stdout" 2>"$out/stderr"
    [ $? = 0 ] && [ "$(cat "$out/stdout")" = "allowed content" ] || fail "--cwd: $(cat "$out/stdout" "$out/stderr")"
    bwrun --cwd "$W/no-such-dir" "$W/base.o" -- true >"$out/stdout" 2>"$out/stderr"
    [ $? = 125 ] && grep -q "cannot enter the working directory $W/no-such-dir" "$out/stderr" ||
        fail "bad --cwd: $(cat "$out/stderr")"
}

test_run_env_rules() {
    A=outer bwrun --clearenv --setenv A=1 --setenv PATH=/usr/bin --unsetenv A --setenv B=x=y "$W/base.o" -- \
        /usr/bin/env >"$out/stdout" 2>"$out/stderr"
    # The nesting broker's variable is set after the rules, so that a nested bwrun finds it.
    [ "$(grep -v '^BWRUN_BROKER=[0-9]*$' "$out/stdout")" = "$(printf 'PATH=/usr/bin\nB=x=y')" ] &&
        [ "$(grep -c '^BWRUN_BROKER=' "$out/stdout")" = 1 ] || fail "env: $(cat "$out/stdout" "$out/stderr")"
    bwrun --no-nesting --clearenv "$W/base.o" -- /usr/bin/env >"$out/stdout" 2>"$out/stderr"
    [ ! -s "$out/stdout" ] || fail "env with --no-nesting --clearenv: $(cat "$out/stdout" "$out/stderr")"
    KEEP=kept DROP=dropped bwrun --unsetenv DROP --setenv KEEP=changed "$W/base.o" -- /usr/bin/env >"$out/stdout"
    grep -qx KEEP=changed "$out/stdout" && ! grep -q DROP "$out/stdout" && grep -q '^PATH=' "$out/stdout" ||
        fail "env kept: $(cat "$out/stdout")"
}

test_run_no_program_starts_shell() {
    echo 'exit 5' | SHELL=/usr/bin/dash bwrun "$W/base.o" >"$out/stdout" 2>"$out/stderr"
    [ $? = 5 ] || fail "\$SHELL not run: $(cat "$out/stderr")"
    # Without $SHELL: root's passwd entry names bash.
    echo 'echo "$BASH_VERSION"; exit 6' | env -u SHELL "$bin/bwrun" "$W/base.o" >"$out/stdout" 2>"$out/stderr"
    [ $? = 6 ] && [ -n "$(cat "$out/stdout")" ] || fail "passwd shell not run: $(cat "$out/stdout" "$out/stderr")"
}

test_run_audit_all_stderr_limited() {
    rm -f "$W/log/audit.jsonl"
    local start=$SECONDS
    # Bursts of 25 with pauses, so that the ring buffer never fills: this is about stderr.
    bwrun --name audited --audit "$W/log/audit.jsonl" "$W/base.o" -- sh -c "i=0; while [ \$i -lt 1000 ]; do
        true <$W/secret 2>/dev/null; i=\$((i + 1)); [ \$((i % 25)) = 0 ] && sleep 0.02; done; exit 0" \
        >"$out/stdout" 2>"$out/stderr"
    local rc=$? secs=$((SECONDS - start + 1))
    [ $rc = 0 ] || fail "status $rc: $(head -c 300 "$out/stderr")"
    local shown
    shown=$(grep -c "denied read $W/secret" "$out/stderr")
    [ "$shown" -ge 1 ] && [ "$shown" -le $((20 * secs)) ] || fail "$shown denial lines on stderr in ${secs}s"
    grep -q "more reports not shown (over 20 a second); the audit file has them all" "$out/stderr" ||
        fail "no suppression line: $(tail -n 3 "$out/stderr")"
    grep -q "^bwrun: 1000 accesses denied in sandbox audited$" "$out/stderr" || fail "summary: $(tail -n 1 "$out/stderr")"
    /usr/bin/python3 - "$W/log/audit.jsonl" "$W" "$here/policies/base.bwp" <<'EOF' || fail "audit file wrong"
import json, re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == 1000, len(lines)
for line in lines:
    e = json.loads(line)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", e["time"]), e
    assert e["sandbox"] == "audited" and e["policy"] == "e2e-base", e
    assert re.fullmatch(r"[0-9a-f]{64}", e["policy_sha256"]), e
    assert e["comm"] == "sh" and e["access"] == "read" and e["pid"] > 0, e
    assert e["path"] == sys.argv[2] + "/secret", e
    assert e["rule"] == "deny all /tmp/bw-e2e/secret" and e["rule_file"].endswith("base.bwp"), e
    with open(sys.argv[3]) as f:
        assert f.read().splitlines()[e["rule_line"] - 1].strip() == e["rule"], e
EOF
}

test_run_denial_burst_counted() {
    # 500 denials as fast as one process makes them: each event takes its path's length in
    # the sandbox's 64 KiB ring, so all of them fit even if bwrun reads none until the end.
    bwrun --name burst "$W/base.o" -- /usr/bin/python3 -c "
import os
for _ in range(500):
    try:
        os.close(os.open('$W/secret', os.O_RDONLY))
    except PermissionError:
        pass
" >"$out/stdout" 2>"$out/stderr"
    local rc=$?
    [ $rc = 0 ] || { fail "status $rc: $(head -c 300 "$out/stderr")"; return; }
    grep -q "^bwrun: 500 accesses denied in sandbox burst$" "$out/stderr" ||
        fail "summary: $(tail -n 2 "$out/stderr")"
}

test_run_audit_unresolvable_path() {
    rm -f "$W/log/audit2.jsonl"
    /usr/bin/python3 "$here/deep_path.py" create "$W/allowed" 21 200 >/dev/null || { fail "cannot build"; return; }
    bwrun --audit "$W/log/audit2.jsonl" "$W/base.o" -- /usr/bin/python3 "$W/shared/deep_path.py" open "$W/allowed" 21 200 \
        >"$out/stdout" 2>"$out/stderr"
    /usr/bin/python3 -c '
import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
assert len(e) == 1 and "path" not in e[0] and e[0]["path_error"], e
' "$W/log/audit2.jsonl" || fail "path error not audited: $(cat "$W/log/audit2.jsonl")"
}

test_run_signals_forwarded() {
    rm -f "$W/shared/"{up,usr1,term}
    "$bin/bwrun" --name signalled "$W/base.o" -- sh -c "trap 'touch $W/shared/usr1' USR1;
        trap 'touch $W/shared/term; exit 42' TERM; touch $W/shared/up; while :; do sleep 0.05; done" \
        >"$out/stdout" 2>"$out/stderr" &
    local pid=$!
    wait_for "$W/shared/up" || { fail "sandbox did not start"; kill -9 $pid; return; }
    kill -USR1 $pid
    wait_for "$W/shared/usr1" 50 || fail "USR1 not passed on"
    kill -TERM $pid
    wait $pid
    local rc=$?
    [ $rc = 42 ] && [ -e "$W/shared/term" ] || fail "TERM: status $rc, trap ran: $(ls "$W/shared")"
    "$bin/bwrun" --name sleeper "$W/base.o" -- sleep 1000 >"$out/stdout" 2>"$out/stderr" &
    pid=$!
    wait_for /run/bumblewrap/sandboxes/sleeper || { fail "sleeper did not start"; kill -9 $pid; return; }
    kill -TERM $pid
    wait $pid
    rc=$?
    [ $rc = 143 ] || fail "killed by TERM: status $rc, $(cat "$out/stderr")"
    [ ! -e /sys/fs/cgroup/bumblewrap/sleeper ] && [ ! -e /run/bumblewrap/sandboxes/sleeper ] ||
        fail "sandbox left behind"
}

# fail_closed_loop NAME: starts a sandbox that keeps trying to read the secret; sets $pid
# (bwrun) and $loop (the program).
fail_closed_loop() {
    rm -f "$W/shared/"{loop.pid,leaked,beat}
    "$bin/bwrun" --quiet --name "$1" "$W/base.o" -- sh -c "echo \$\$ >$W/shared/loop.pid; while :; do
        if cat $W/secret >/dev/null 2>&1; then touch $W/shared/leaked; fi; touch $W/shared/beat; done" \
        >"$out/stdout" 2>"$out/stderr" &
    pid=$!
    # The program may have to be loaded again first: seconds under emulation, more on a busy host.
    wait_for "$W/shared/beat" 600 || return 1
    loop=$(cat "$W/shared/loop.pid")
}

test_run_sigkill_fails_closed() {
    local pid loop
    fail_closed_loop failclosed || { fail "loop did not start"; return; }
    sleep 0.3
    kill -KILL $pid
    wait $pid 2>/dev/null
    local n=0
    until gone "$loop"; do
        sleep 0.1
        n=$((n + 1))
        [ $n -lt 50 ] || { fail "sandboxed loop still runs 5 s after bwrun was killed"; kill -9 "$loop"; return; }
    done
    n=0
    until [ ! -e /run/bumblewrap/sandboxes/failclosed ]; do
        sleep 0.1
        n=$((n + 1))
        [ $n -lt 100 ] || { fail "watchdog did not clean up"; return; }
    done
    [ ! -e "$W/shared/leaked" ] || fail "the secret was read after bwrun died"
    test_nothing_left_behind
}

test_run_orphan_stays_confined_until_collected() {
    local pid loop
    fail_closed_loop orphan || { fail "loop did not start"; return; }
    # Kill the watchdog too: the sandbox must stay confined, and bwctl list ends it.
    local w
    for w in $(ps -o pid= --ppid "$pid"); do
        [ "$w" = "$loop" ] || kill -KILL "$w"
    done
    kill -KILL $pid
    wait $pid 2>/dev/null
    rm -f "$W/shared/beat"
    wait_for "$W/shared/beat" 50 || fail "the orphan stopped running on its own"
    sleep 0.5
    [ ! -e "$W/shared/leaked" ] || fail "the orphan read the secret"
    bwctl list >"$out/list" 2>&1
    gone "$loop" || fail "bwctl list left the orphan running: $(cat "$out/list")"
    ! grep -q "^orphan " "$out/list" || fail "orphan still listed: $(cat "$out/list")"
    [ ! -e "$W/shared/leaked" ] || fail "the secret was read"
    test_nothing_left_behind
}

# setuid_setup: a setuid-root copy of bwrun, a folder anyone may write, and a library that
# leaves a marker (owned by whoever loaded it) when loaded.
setuid_setup() {
    mkdir -p "$W/suid" "$W/evil" "$W/markers"
    chmod 1777 "$W/markers"
    install -m 4755 -o root -g root "$bin/bwrun" "$W/suid/bwrun" || return 1
    printf '#include <fcntl.h>\n#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void mark(void) {
    char p[256]; snprintf(p, sizeof p, "%s/markers/lib-%%d", "%s", (int)getpid()); close(open(p, O_CREAT | O_WRONLY, 0644)); }\n' \
        "$W" >"$W/evil/mark.c"
    gcc -shared -fPIC -o "$W/evil/libmark.so" "$W/evil/mark.c" || return 1
    local tool
    for tool in sh bash bwvm modprobe mount umount cat id ls true bpftool mkdir rm kmod env qemu-system-x86_64 clang; do
        printf '#!/bin/sh\ntouch %s/markers/path-%s-$$\n' "$W" "$tool" >"$W/evil/$tool"
        chmod 755 "$W/evil/$tool"
    done
}
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

test_run_setuid_confines_as_caller() {
    setuid_setup || { fail "setup failed"; return; }
    as_nobody "$W/suid/bwrun" "$W/base.o" -- sh -c 'id -u; cat /tmp/bw-e2e/secret' >"$out/stdout" 2>"$out/stderr"
    local rc=$?
    [ $rc = 1 ] && [ "$(cat "$out/stdout")" = 65534 ] || fail "status $rc, $(cat "$out/stdout" "$out/stderr")"
    expect_denial "$W/secret" "deny all /tmp/bw-e2e/secret"
    as_nobody "$W/suid/bwrun" --user root "$W/base.o" -- id -u >"$out/stdout" 2>"$out/stderr"
    [ $? = 125 ] && [ ! -s "$out/stdout" ] && grep -q "cannot name anyone else" "$out/stderr" ||
        fail "--user root accepted: $(cat "$out/stdout" "$out/stderr")"
    as_nobody "$W/suid/bwrun" --vm "$W/base.o" -- true >"$out/stdout" 2>"$out/stderr"
    [ $? = 125 ] && grep -q -- "--vm is refused" "$out/stderr" || fail "--vm accepted: $(cat "$out/stderr")"
}

test_run_setuid_hostile_environment() {
    setuid_setup || { fail "setup failed"; return; }
    rm -f "$W/markers/"*
    # The library works: loaded by an unprivileged program, it leaves a marker.
    as_nobody env LD_PRELOAD="$W/evil/libmark.so" /usr/bin/true
    [ -n "$(ls "$W/markers")" ] || { fail "the marker library does not work"; return; }
    rm -f "$W/markers/"*
    as_nobody env PATH="$W/evil:/usr/bin" LD_PRELOAD="$W/evil/libmark.so" LD_LIBRARY_PATH="$W/evil" \
        /usr/bin/bash -c "exec -a $W/evil/bwvm $W/suid/bwrun $W/base.o -- /usr/bin/cat $W/allowed/file" \
        >"$out/stdout" 2>"$out/stderr"
    local rc=$?
    [ $rc = 0 ] && [ "$(cat "$out/stdout")" = "allowed content" ] || fail "status $rc: $(cat "$out/stderr")"
    local root_marks
    root_marks=$(find "$W/markers" -mindepth 1 -user 0)
    [ -z "$root_marks" ] || fail "code chosen by the caller ran as root: $root_marks"
}

test_run_setuid_refuses_writable_artifact() {
    setuid_setup || { fail "setup failed"; return; }
    mkdir -p "$W/userdir"
    cp "$W/base.o" "$W/userdir/user.o"
    chown 65534 "$W/userdir/user.o"
    as_nobody "$W/suid/bwrun" "$W/userdir/user.o" -- true >"$out/stdout" 2>"$out/stderr"
    [ $? = 125 ] && grep -q "refusing $W/userdir/user.o (owner uid 65534" "$out/stderr" ||
        fail "user-owned artifact: $(cat "$out/stderr")"
    cp "$W/base.o" "$W/markers/root.o"
    as_nobody "$W/suid/bwrun" "$W/markers/root.o" -- true >"$out/stdout" 2>"$out/stderr"
    [ $? = 125 ] && grep -q "refusing folder $W/markers" "$out/stderr" ||
        fail "artifact in a world-writable folder: $(cat "$out/stderr")"
    # Root itself may use any artifact.
    bwrun "$W/userdir/user.o" -- true || fail "root refused"
}

# --- path hooks: every access kind, decided on the resolved path (policies/paths.bwp) ----
P=$W/paths

setup_paths() {
    mkdir -p "$P/open" "$P/closed/dir" "$P/nostat" "$P/noioctl" "$P/noexec" || return 1
    for d in open closed; do
        echo "$d content" >"$P/$d/file"
        echo "$d victim" >"$P/$d/victim"
        mkdir -p "$P/$d/victimdir"
        chmod 644 "$P/$d/file"
    done
    echo "hidden" >"$P/nostat/file"
    echo "no ioctl" >"$P/noioctl/file"
    cp /usr/bin/true "$P/noexec/true"
    # Off overlayfs: from 6.2 an overlay file's mapping has the layer's pathless backing file.
    rm -rf /dev/shm/bw-e2e && mkdir -p /dev/shm/bw-e2e/noexec && cp /usr/bin/true /dev/shm/bw-e2e/noexec/true
    cp "$here/map_exec.py" "$P/open/map_exec.py"
    cp "$here/attr_ops.py" "$P/open/attr_ops.py"
}

# expect_denied KIND PATH: bwrun reported the denial of KIND on PATH by the default.
expect_denied() {
    grep -qF "denied $1 $2 by \`default deny\`" "$out/stderr" ||
        fail "no denial of $1 $2 reported; stderr: $(head -c 600 "$out/stderr")"
}

test_create_by_open_allowed() {
    sandbox paths sh -c "echo new >$P/open/created"
    expect_status 0 && [ "$(cat "$P/open/created")" = "new" ] || fail "file not created"
}

test_create_by_open_denied() {
    sandbox paths sh -c "echo new >$P/closed/created"
    expect_status 2 || return
    [ ! -e "$P/closed/created" ] || fail "a denied O_CREAT left a file behind"
    expect_denied create "$P/closed/created"
}

test_mkdir_mknod_symlink_allowed() {
    sandbox paths sh -c "mkdir $P/open/d && mkfifo $P/open/fifo && ln -s file $P/open/sym"
    expect_status 0 && [ -d "$P/open/d" ] && [ -p "$P/open/fifo" ] && [ -L "$P/open/sym" ] || fail "not created"
}

test_mkdir_mknod_symlink_denied() {
    local what
    for what in "mkdir $P/closed/d" "mkfifo $P/closed/fifo" "ln -s file $P/closed/sym"; do
        sandbox paths sh -c "$what"
        expect_status 1 || return
        expect_denied create "$P/closed/${what##*/}"
        [ ! -e "$P/closed/${what##*/}" ] && [ ! -L "$P/closed/${what##*/}" ] || fail "$what created it"
    done
}

test_unlink_rmdir_allowed() {
    sandbox paths sh -c "rm $P/open/victim && rmdir $P/open/victimdir"
    expect_status 0 && [ ! -e "$P/open/victim" ] && [ ! -e "$P/open/victimdir" ] || fail "not deleted"
}

test_unlink_rmdir_denied() {
    sandbox paths rm "$P/closed/victim"
    expect_status 1 && expect_denied delete "$P/closed/victim" || return
    sandbox paths rmdir "$P/closed/victimdir"
    expect_status 1 && expect_denied delete "$P/closed/victimdir" || return
    [ -f "$P/closed/victim" ] && [ -d "$P/closed/victimdir" ] || fail "deleted anyway"
}

test_rename_allowed() {
    echo moving >"$P/open/move-me"
    sandbox paths mv "$P/open/move-me" "$P/open/moved"
    expect_status 0 && [ "$(cat "$P/open/moved")" = moving ] && [ ! -e "$P/open/move-me" ] || fail "not renamed"
}

test_rename_out_of_denied_dir() {
    sandbox paths mv "$P/closed/file" "$P/open/stolen"
    expect_status 1 && expect_denied rename "$P/closed/file" || return
    [ -f "$P/closed/file" ] && [ ! -e "$P/open/stolen" ] || fail "renamed anyway"
}

test_rename_into_denied_dir() {
    echo planted >"$P/open/plant"
    sandbox paths mv "$P/open/plant" "$P/closed/plant"
    expect_status 1 && expect_denied create "$P/closed/plant" || return
    [ -f "$P/open/plant" ] && [ ! -e "$P/closed/plant" ] || fail "renamed anyway"
}

test_hard_link_allowed() {
    sandbox paths ln "$P/open/file" "$P/open/hard"
    expect_status 0 && [ "$P/open/hard" -ef "$P/open/file" ] || fail "not linked"
}

test_hard_link_of_denied_file() {
    sandbox paths ln "$P/closed/file" "$P/open/hard-closed"
    expect_status 1 && expect_denied link "$P/closed/file" || return
    [ ! -e "$P/open/hard-closed" ] || fail "linked anyway"
}

test_chmod_chown_truncate_allowed() {
    sandbox paths sh -c "chmod 600 $P/open/file && chown 1:1 $P/open/file &&
        /usr/bin/python3 -c 'import os, sys; os.truncate(sys.argv[1], 0)' $P/open/file"
    expect_status 0 || return
    [ "$(stat -c '%a %u %g %s' "$P/open/file")" = "600 1 1 0" ] || fail "got $(stat -c '%a %u %g %s' "$P/open/file")"
}

test_chmod_chown_truncate_denied() {
    sandbox paths chmod 600 "$P/closed/file"
    expect_status 1 && expect_denied attr "$P/closed/file" || return
    sandbox paths chown 1:1 "$P/closed/file"
    expect_status 1 && expect_denied attr "$P/closed/file" || return
    sandbox paths /usr/bin/python3 -c 'import os, sys; os.truncate(sys.argv[1], 0)' "$P/closed/file"
    expect_status 1 && expect_denied write "$P/closed/file" || return
    [ "$(stat -c '%a %u %g' "$P/closed/file")" = "644 0 0" ] && [ "$(cat "$P/closed/file")" = "closed content" ] ||
        fail "changed: $(stat -c '%a %u %g %s' "$P/closed/file")"
}

# attr_op OP FILE: attr_ops.py in the paths sandbox (exits with the errno of a refusal).
attr_op() { sandbox paths /usr/bin/python3 "$P/open/attr_ops.py" "$@"; }
# xattr_of FILE [NAME]: the attribute as seen from outside the sandbox, or the errno's name.
xattr_of() {
    /usr/bin/python3 -c 'import errno, os, sys
try:
    print(os.getxattr(sys.argv[1], sys.argv[2]).hex())
except OSError as e:
    print(errno.errorcode[e.errno])' "$1" "${2:-trusted.bw-e2e}"
}
set_xattr() { /usr/bin/python3 -c 'import os, sys; os.setxattr(sys.argv[1], "trusted.bw-e2e", b"1")' "$1"; }
mtime_of() { stat -c %Y "$1"; }

test_xattr_allowed() {
    echo xattr >"$P/open/xattr"
    attr_op setxattr "$P/open/xattr"
    expect_status 0 && [ "$(xattr_of "$P/open/xattr")" = 31 ] || fail "not set: $(xattr_of "$P/open/xattr")"
    attr_op removexattr "$P/open/xattr"
    expect_status 0 && [ "$(xattr_of "$P/open/xattr")" = ENODATA ] || fail "not removed: $(xattr_of "$P/open/xattr")"
}

test_xattr_denied() {
    echo xattr >"$P/closed/xattr"
    attr_op setxattr "$P/closed/xattr"
    expect_status 13 && expect_denied attr "$P/closed/xattr" || return
    [ "$(xattr_of "$P/closed/xattr")" = ENODATA ] || fail "set anyway: $(xattr_of "$P/closed/xattr")"
    set_xattr "$P/closed/xattr"
    attr_op removexattr "$P/closed/xattr"
    expect_status 13 && expect_denied attr "$P/closed/xattr" || return
    [ "$(xattr_of "$P/closed/xattr")" = 31 ] || fail "removed anyway: $(xattr_of "$P/closed/xattr")"
}

test_acl_allowed_and_denied() {
    echo acl >"$P/open/acl" && echo acl >"$P/closed/acl"
    attr_op setacl "$P/closed/acl"
    expect_status 13 && expect_denied attr "$P/closed/acl" || return
    [ "$(xattr_of "$P/closed/acl" system.posix_acl_access)" = ENODATA ] || fail "ACL set anyway"
    attr_op setacl "$P/open/acl"
    expect_status 0 && [ "$(xattr_of "$P/open/acl" system.posix_acl_access)" != ENODATA ] || fail "ACL not set"
}

test_utime_allowed() {
    echo times >"$P/open/times"
    attr_op utime "$P/open/times"
    expect_status 0 && [ "$(mtime_of "$P/open/times")" = 1 ] || fail "mtime $(mtime_of "$P/open/times")"
    attr_op touch "$P/open/times"
    expect_status 0 && [ "$(mtime_of "$P/open/times")" -gt 1 ] || fail "not touched: $(mtime_of "$P/open/times")"
}

# Explicit times need attr; times set to now are a write.
test_utime_denied() {
    echo times >"$P/closed/times" && touch -d @1000 "$P/closed/times"
    attr_op utime "$P/closed/times"
    expect_status 13 && expect_denied attr "$P/closed/times" || return
    attr_op touch "$P/closed/times"
    expect_status 13 && expect_denied write "$P/closed/times" || return
    [ "$(mtime_of "$P/closed/times")" = 1000 ] || fail "mtime changed: $(mtime_of "$P/closed/times")"
}

test_fd_attr_on_read_only_fd() {
    echo fd >"$P/closed/fd" && touch -d @1000 "$P/closed/fd" && echo fd >"$P/open/fd"
    attr_op fd-utime "$P/closed/fd"
    expect_status 13 && expect_denied attr "$P/closed/fd" || return
    attr_op fd-setxattr "$P/closed/fd"
    expect_status 13 && expect_denied attr "$P/closed/fd" || return
    [ "$(mtime_of "$P/closed/fd")" = 1000 ] && [ "$(xattr_of "$P/closed/fd")" = ENODATA ] ||
        fail "changed: mtime $(mtime_of "$P/closed/fd"), xattr $(xattr_of "$P/closed/fd")"
    attr_op fd-utime "$P/open/fd"
    expect_status 0 && [ "$(mtime_of "$P/open/fd")" = 1 ] || fail "allowed fd-utime: mtime $(mtime_of "$P/open/fd")"
}

# A bind mount made outside gives closed/ a second name under open/: the denied name wins.
test_bind_mount_second_name_denied() {
    echo bound >"$P/closed/bound" && echo bound >"$P/open/bound-control"
    mkdir -p "$P/open/bound" && mount --bind "$P/closed" "$P/open/bound" || return
    bind_mount_checks
    local rc=$?
    umount "$P/open/bound" || fail "cannot unmount $P/open/bound"
    return $rc
}

bind_mount_checks() {
    attr_op setxattr "$P/open/bound/bound"
    expect_status 13 && expect_denied attr "$P/closed/bound" || return
    [ "$(xattr_of "$P/closed/bound")" = ENODATA ] || fail "set anyway through the bind mount"
    attr_op setxattr "$P/open/bound-control"
    expect_status 0 && [ "$(xattr_of "$P/open/bound-control")" = 31 ] || fail "control not set"
}

test_stat_allowed() {
    sandbox paths stat -c %s "$P/closed/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = 15 ] || fail "stat printed $(cat "$out/stdout")"
}

test_stat_denied() {
    sandbox paths stat -c %s "$P/nostat/file"
    expect_status 1 || return
    grep -qF "denied metadata $P/nostat/file by \`deny metadata /tmp/bw-e2e/paths/nostat/\`" "$out/stderr" ||
        fail "no metadata denial reported: $(head -c 600 "$out/stderr")"
    [ ! -s "$out/stdout" ] || fail "stat printed $(cat "$out/stdout")"
    # Reading is a different access, still allowed (the shell reads without fstat, cat would not).
    sandbox paths sh -c "read -r line <$P/nostat/file && echo \$line"
    expect_status 0 && [ "$(cat "$out/stdout")" = hidden ] || fail "read printed $(cat "$out/stdout")"
}

# ioctl_probe PATH: opens PATH for reading, sets close-on-exec with FIOCLEX, then prints
# what FIONREAD says is left to read.
ioctl_probe() {
    sandbox paths /usr/bin/python3 -c '
import fcntl, os, struct, sys, termios
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.ioctl(fd, termios.FIOCLEX)
print("FIOCLEX", flush=True)
print(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, bytes(4)))[0])' "$1"
}

test_ioctl_by_path() {
    ioctl_probe "$P/noioctl/file"
    expect_status 1 || return
    grep -qF "denied ioctl $P/noioctl/file by \`deny ioctl /tmp/bw-e2e/paths/noioctl/\`" "$out/stderr" ||
        fail "no ioctl denial reported: $(head -c 600 "$out/stderr")"
    # FIOCLEX only sets the descriptor's flag, as fcntl would: not an access to the file.
    [ "$(cat "$out/stdout")" = FIOCLEX ] || fail "FIOCLEX: $(cat "$out/stdout")"
    ioctl_probe "$P/closed/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = "$(printf 'FIOCLEX\n15')" ] ||
        fail "control: $(cat "$out/stdout" "$out/stderr" | head -c 600)"
}

test_ld_so_runs_allowed_binary() {
    sandbox paths /lib64/ld-linux-x86-64.so.2 /usr/bin/true
    expect_status 0
}

test_ld_so_runs_denied_binary() {
    sandbox paths /lib64/ld-linux-x86-64.so.2 "$P/noexec/true"
    expect_status 127 && expect_denied exec "$P/noexec/true"
}

test_exec_mapping_allowed() {
    sandbox paths /usr/bin/python3 "$P/open/map_exec.py" mmap /usr/bin/true
    expect_status 0 || return
    sandbox paths /usr/bin/python3 "$P/open/map_exec.py" mprotect /usr/bin/true
    expect_status 0
}

test_exec_mapping_denied() {
    sandbox paths /usr/bin/python3 "$P/open/map_exec.py" mmap "$P/noexec/true"
    expect_status 13 && expect_denied exec "$P/noexec/true" || return
    sandbox paths /usr/bin/python3 "$P/open/map_exec.py" mprotect /dev/shm/bw-e2e/noexec/true
    expect_status 13 && expect_denied exec /dev/shm/bw-e2e/noexec/true
}

# --- conditional rules: uid, gid, owner and open flags (policies/conditions.bwp) --------
C=$W/conditions

setup_conditions() {
    mkdir -p "$C/team" "$C/group" "$C/owned" "$C/trunc" || return 1
    # The unprivileged uids of these tests must reach the files.
    chmod 755 "$W" "$C" "$C/team" "$C/group" "$C/owned" "$C/trunc"
    echo "team content" >"$C/team/file"
    echo "group content" >"$C/group/file"
    echo "mine" >"$C/owned/mine"
    echo "roots" >"$C/owned/roots"
    chown 1000:1000 "$C/owned/mine"
    echo "keep this" >"$C/trunc/file"
    chmod 644 "$C/team/file" "$C/group/file"
    chmod 666 "$C/owned/mine" "$C/owned/roots" "$C/trunc/file"
}

# sandbox_as UID GID POLICY CMD...: sandbox, with the program running as UID:GID.
sandbox_as() {
    local uid=$1 gid=$2 policy=$3
    shift 3
    bwrun --uid "$uid" --gid "$gid" "$W/$policy.o" -- "$@" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
}

# expect_denied_by KIND PATH RULE: bwrun reported the denial and the rule that made it.
expect_denied_by() {
    grep -qF "denied $1 $2 by \`$3\`" "$out/stderr" ||
        fail "no denial of $1 $2 by \`$3\`; stderr: $(head -c 600 "$out/stderr")"
}

test_condition_uid_range_allows_inside() {
    sandbox_as 1000 1000 conditions cat "$C/team/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = "team content" ] || fail "read printed $(cat "$out/stdout")"
    sandbox_as 1999 1000 conditions cat "$C/team/file"
    expect_status 0
}

test_condition_uid_range_denies_outside() {
    sandbox_as 2000 1000 conditions cat "$C/team/file"
    expect_status 1 && expect_denied_by read "$C/team/file" "default deny" || return
    # bwrun run by root without --uid: the program runs as root, outside the range.
    sandbox conditions cat "$C/team/file"
    expect_status 1 && expect_denied_by read "$C/team/file" "default deny"
}

test_condition_gid() {
    sandbox_as 1000 100 conditions cat "$C/group/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = "group content" ] || fail "read printed $(cat "$out/stdout")"
    sandbox_as 1000 1000 conditions cat "$C/group/file"
    expect_status 1 && expect_denied_by read "$C/group/file" "default deny"
}

test_condition_owner_writes_own_file() {
    sandbox_as 1000 1000 conditions sh -c "echo changed >$C/owned/mine"
    expect_status 0 && [ "$(cat "$C/owned/mine")" = changed ] || fail "own file not written: $(cat "$C/owned/mine")"
}

test_condition_owner_denies_others_file() {
    sandbox_as 1000 1000 conditions sh -c "echo changed >$C/owned/roots"
    expect_status 2 || return
    [ "$(cat "$C/owned/roots")" = roots ] || fail "root's file changed"
    expect_denied_by write "$C/owned/roots" "default deny"
}

test_condition_flags_deny_truncating_open() {
    sandbox conditions sh -c "echo gone >$C/trunc/file"
    expect_status 2 || return
    [ "$(cat "$C/trunc/file")" = "keep this" ] || fail "file truncated: $(cat "$C/trunc/file")"
    expect_denied_by write "$C/trunc/file" "deny write /tmp/bw-e2e/conditions/trunc/ flags O_TRUNC"
}

test_condition_flags_allow_plain_write() {
    sandbox conditions dd if=/dev/null of="$C/trunc/file" conv=notrunc status=none
    expect_status 0 && [ "$(cat "$C/trunc/file")" = "keep this" ] || fail "plain write: $(cat "$C/trunc/file")"
    sandbox conditions sh -c "printf K | dd of=$C/trunc/file conv=notrunc status=none"
    expect_status 0 && [ "$(cat "$C/trunc/file")" = "Keep this" ] || fail "file reads $(cat "$C/trunc/file")"
}

# --- device rules (policies/devices.bwp) ---

# --- `when exe`: rules for one executable, switched at exec (policies/exe.bwp) ----------
X=$W/exe

setup_exe() {
    mkdir -p "$X/data" "$X/secret" "$X/bin" || return 1
    echo "cat's data" >"$X/data/file"
    echo "not for python" >"$X/secret/file"
    printf '#!/usr/bin/python3\nprint(open("%s").read(), end="")\n' "$X/secret/file" >"$X/bin/read-secret.py"
    printf '#!/bin/sh\nexec cat "$1"\n' >"$X/bin/cat-it"
    chmod 755 "$X/bin/read-secret.py" "$X/bin/cat-it"
}

test_exe_rule_allows_only_its_program() {
    sandbox exe cat "$X/data/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = "cat's data" ] || { fail "cat read $(cat "$out/stdout")"; return; }
    sandbox exe head -n 1 "$X/data/file"
    expect_status 1 && expect_denied_by read "$X/data/file" "default deny" || return
    # A script's executable is its interpreter; the cat it execs reads.
    sandbox exe "$X/bin/cat-it" "$X/data/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = "cat's data" ] || fail "cat-it printed $(cat "$out/stdout")"
}

test_exe_rule_denies_its_program_and_its_forks() {
    sandbox exe cat "$X/secret/file"
    expect_status 0 && [ "$(cat "$out/stdout")" = "not for python" ] || { fail "cat read $(cat "$out/stdout")"; return; }
    # The process, a forked child and a thread are python3: denied.
    sandbox exe /usr/bin/python3 -c "
import os, sys, threading
def attempt(who):
    try:
        open('$X/secret/file').read()
        print(who, 'read')
    except PermissionError:
        print(who, 'denied')
attempt('process')
t = threading.Thread(target=attempt, args=('thread',))
t.start(); t.join()
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    attempt('child')
    os._exit(0)
os.waitpid(pid, 0)
"
    expect_status 0 || return
    [ "$(tr '\n' ' ' <"$out/stdout")" = "process denied thread denied child denied " ] ||
        { fail "python3 printed: $(cat "$out/stdout")"; return; }
    expect_denied_by read "$X/secret/file" "deny read /tmp/bw-e2e/exe/secret/" || return
    # A script run by python3 is python3.
    sandbox exe "$X/bin/read-secret.py"
    expect_status 1 && expect_denied_by read "$X/secret/file" "deny read /tmp/bw-e2e/exe/secret/"
}

test_exe_rule_switches_at_exec() {
    # python3's child execs cat, which is no longer python3 and reads the file.
    sandbox exe /usr/bin/python3 -c "
import os
pid = os.fork()
if pid == 0:
    os.execv('/usr/bin/cat', ['cat', '$X/secret/file', '$X/data/file'])
print('exit', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"
    expect_status 0 || return
    [ "$(tr '\n' ' ' <"$out/stdout")" = "not for python cat's data exit 0 " ] ||
        fail "cat after python3 printed: $(cat "$out/stdout")"
}

# --- audit rules: allowed accesses recorded, never decided (policies/audit.bwp) ----------
AU=$W/audit

setup_audit() {
    mkdir -p "$AU/logged/special" "$AU/plain" "$AU/secret" "$AU/shared" "$AU/bin" || return 1
    cp /usr/bin/true "$AU/bin/true"
    for f in logged/file logged/special/file plain/file secret/file shared/file; do echo "$f" >"$AU/$f"; done
    # uid 1000 writes here.
    chmod 755 "$W" "$AU"
    chmod 777 "$AU/shared"
    chmod 666 "$AU/shared/file"
}

# expect_recorded KIND PATH RULE: bwrun reported an audit record of the access by RULE.
expect_recorded() {
    grep -qF "audit $1 $2 by \`$3\`" "$out/stderr" ||
        fail "no audit record of $1 $2 by \`$3\`; stderr: $(head -c 600 "$out/stderr")"
}

expect_no_record() {
    ! grep -q "^bwrun: audit \|recorded by audit rules" "$out/stderr" ||
        fail "audit record where none was due: $(grep "audit" "$out/stderr" | head -c 600)"
}

test_audit_records_allowed_access() {
    rm -f "$W/log/audit-rules.jsonl"
    bwrun --name audit-rules --audit "$W/log/audit-rules.jsonl" "$W/audit.o" -- cat "$AU/logged/file" \
        >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
    expect_status 0 && [ "$(cat "$out/stdout")" = logged/file ] || return
    expect_recorded read "$AU/logged/file" "audit read /tmp/bw-e2e/audit/logged/" || return
    grep -q "^bwrun: 1 access recorded by audit rules in sandbox audit-rules$" "$out/stderr" ||
        { fail "summary: $(tail -n 2 "$out/stderr")"; return; }
    ! grep -q "denied" "$out/stderr" || { fail "a denial: $(cat "$out/stderr")"; return; }
    /usr/bin/python3 - "$W/log/audit-rules.jsonl" "$AU/logged/file" <<'PY' || fail "audit file: $(cat "$W/log/audit-rules.jsonl")"
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == 1, lines
e = json.loads(lines[0])
assert e["event"] == "audit" and e["access"] == "read" and e["path"] == sys.argv[2], e
assert e["rule"] == "audit read /tmp/bw-e2e/audit/logged/" and e["rule_line"] == 15 and e["comm"] == "cat", e
PY
    # A file no audit rule names is read without a record.
    sandbox audit cat "$AU/plain/file"
    expect_status 0 && expect_no_record
}

test_audit_most_specific_rule_records() {
    sandbox audit sh -c "cat $AU/logged/special/file && echo more >>$AU/logged/special/file"
    # The policy denies the append: a denial, and only the read is recorded.
    expect_status 2 || return
    expect_recorded read "$AU/logged/special/file" "audit read, write /tmp/bw-e2e/audit/logged/special/**" || return
    expect_denied_by append "$AU/logged/special/file" "default deny" || return
    [ "$(grep -c "^bwrun: audit " "$out/stderr")" = 1 ] || fail "records: $(grep "audit" "$out/stderr")"
}

test_audit_conditional_rule() {
    sandbox_as 1000 1000 audit sh -c "echo one >$AU/shared/file"
    expect_status 0 && expect_recorded write "$AU/shared/file" "audit write /tmp/bw-e2e/audit/shared/" || return
    # `write` covers appends, for uid 1000 only.
    sandbox_as 1000 1000 audit sh -c "echo two >>$AU/shared/file"
    expect_status 0 && expect_recorded append "$AU/shared/file" "audit write /tmp/bw-e2e/audit/shared/" || return
    sandbox_as 2000 2000 audit sh -c "echo three >>$AU/shared/file"
    expect_status 0 && expect_no_record || return
    [ "$(tr '\n' ' ' <"$AU/shared/file")" = "one two three " ] || fail "shared/file: $(cat "$AU/shared/file")"
}

test_audit_one_record_per_operation() {
    # An execve opens, checks and maps its binary: one record per run. Two runs, two
    # records; one process reading a file twice in a row, one record.
    sandbox audit /usr/bin/python3 -c "
import subprocess
for _ in range(2):
    subprocess.run(['$AU/bin/true'], check=True)
for _ in range(2):
    open('$AU/logged/file').read()
"
    expect_status 0 || return
    [ "$(grep -c "^bwrun: audit exec $AU/bin/true by \`audit exec /tmp/bw-e2e/audit/bin/\`" "$out/stderr")" = 2 ] &&
        [ "$(grep -c "^bwrun: audit read $AU/logged/file by" "$out/stderr")" = 1 ] &&
        grep -q "^bwrun: 3 accesses recorded by audit rules" "$out/stderr" ||
        fail "records: $(grep "audit" "$out/stderr" | head -c 800)"
}

test_audit_of_denied_access_is_a_denial() {
    sandbox audit cat "$AU/secret/file"
    expect_status 1 && expect_denied_by read "$AU/secret/file" "deny read /tmp/bw-e2e/audit/secret/" || return
    expect_no_record
}

# ioctl_errno PATH CMD: opens PATH read-write, then prints ioctl CMD's errno (0 when it worked).
ioctl_errno() {
    sandbox devices /usr/bin/python3 -c '
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)
try:
    fcntl.ioctl(fd, int(sys.argv[2], 0), bytes(64))
    print(0)
except OSError as e:
    print(e.errno)' "$1" "$2"
}

expect_device_denial() {
    grep -qF "denied $1 (device $2) by \`$3\`" "$out/stderr" ||
        fail "no denial of $1 (device $2) by \`$3\` reported; stderr: $(head -c 600 "$out/stderr")"
}

test_device_rule_by_number() {
    sandbox devices sh -c 'echo x >/dev/null && cat /dev/null'
    expect_status 0 || return
    sandbox devices head -c 4 /dev/zero
    expect_status 1 && expect_device_denial "read /dev/zero" 1:5 "device deny read char 1:5" || return
    [ ! -s "$out/stdout" ] || fail "read /dev/zero anyway"
}

test_device_ioctl_allowlist() {
    # TIOCGPTN is listed for /dev/ptmx; TCGETS is not.
    ioctl_errno /dev/ptmx 0x80045430
    expect_status 0 && [ "$(cat "$out/stdout")" = 0 ] || fail "TIOCGPTN: errno $(cat "$out/stdout")"
    ioctl_errno /dev/ptmx 0x5401
    expect_status 0 && [ "$(cat "$out/stdout")" = 13 ] || fail "TCGETS: errno $(cat "$out/stdout")"
    expect_device_denial "ioctl 0x5401 on /dev/ptmx" 5:2 \
        "device allow read, write char 5:2 ioctl 0x80045430, 0x40045431"
}

test_device_ioctl_any() {
    # Unlock a pty's other end through /dev/ptmx, then TCGETS on it: `ioctl any` allows it.
    sandbox devices /usr/bin/python3 -c '
import fcntl, os, struct, termios
m = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
fcntl.ioctl(m, 0x40045431, struct.pack("i", 0))
n = struct.unpack("I", fcntl.ioctl(m, 0x80045430, bytes(4)))[0]
s = os.open("/dev/pts/%d" % n, os.O_RDWR | os.O_NOCTTY)
termios.tcgetattr(s)
print("ok")'
    expect_status 0 && [ "$(cat "$out/stdout")" = ok ] || fail "pts: $(head -c 600 "$out/stderr")"
}

test_device_rule_without_ioctl_denies_all() {
    ioctl_errno /dev/null 0x5401
    expect_status 0 && [ "$(cat "$out/stdout")" = 13 ] || fail "TCGETS on /dev/null: errno $(cat "$out/stdout")"
    expect_device_denial "ioctl 0x5401 on /dev/null" 1:3 "device allow read, write char 1:3"
}

test_device_mknod() {
    rm -rf "$W/dev" && mkdir -p "$W/dev" || return
    # c 1:7 where no path rule allows creating; c 1:8 where one does.
    sandbox devices /usr/bin/python3 -c 'import os, sys; os.mknod(sys.argv[1], 0o20600, os.makedev(1, 7))' "$W/full"
    expect_status 0 && [ -c "$W/full" ] || fail "mknod c 1:7: $(head -c 600 "$out/stderr")"
    rm -f "$W/full"
    sandbox devices /usr/bin/python3 -c 'import os, sys; os.mknod(sys.argv[1], 0o20600, os.makedev(1, 8))' "$W/dev/random"
    [ "$(status)" != 0 ] && [ ! -e "$W/dev/random" ] || fail "mknod c 1:8 made $W/dev/random"
    expect_device_denial "create $W/dev/random" 1:8 "device deny create char 1:8"
}

# The sandbox printed four zero bytes, as `head -c 4` of /dev/zero's device does.
read_zeros() { [ "$(od -An -tx1 "$out/stdout" | tr -d ' \n')" = 00000000 ]; }

test_device_rule_by_pattern() {
    local d=$W/devpat
    rm -rf "$d" && mkdir -p "$d" && mknod "$d/pat-zero" c 1 5 && mknod "$d/other-zero" c 1 5 &&
        mknod "$d/pat-null" c 1 3 && mknod "$d/io-null" c 1 3 && echo plain >"$d/pat-file" || return
    # pat-zero matches the pattern, which decides over `device deny read char 1:5`; the same
    # device by another name does not.
    sandbox devices head -c 4 "$d/pat-zero"
    expect_status 0 && read_zeros || fail "read pat-zero: $(head -c 600 "$out/stderr")" || return
    sandbox devices head -c 4 "$d/other-zero"
    expect_status 1 && expect_device_denial "read $d/other-zero" 1:5 "device deny read char 1:5" || return
    # A pattern's denial names it, while /dev/null (the same device) stays writable.
    sandbox devices /usr/bin/python3 -c 'import os, sys; os.open(sys.argv[1], os.O_WRONLY)' "$d/pat-null"
    [ "$(status)" != 0 ] && expect_device_denial "write $d/pat-null" 1:3 "device deny write $d/pat-*" || return
    sandbox devices sh -c 'echo x >/dev/null'
    expect_status 0 || return
    # A file that is no device node is decided by the path rules alone.
    sandbox devices cat "$d/pat-file"
    expect_status 0 && [ "$(cat "$out/stdout")" = plain ] || fail "read pat-file: $(head -c 600 "$out/stderr")" || return
    # io-null's one ioctl reaches the driver (ENOTTY, 25); /dev/null allows none (EACCES).
    ioctl_errno "$d/io-null" 0x541b
    expect_status 0 && [ "$(cat "$out/stdout")" = 25 ] || fail "FIONREAD on io-null: errno $(cat "$out/stdout")" || return
    ioctl_errno "$d/io-null" 0x5401
    expect_status 0 && [ "$(cat "$out/stdout")" = 13 ] || fail "TCGETS on io-null: errno $(cat "$out/stdout")" || return
    expect_device_denial "ioctl 0x5401 on $d/io-null" 1:3 "device allow read, write $d/io-* ioctl 0x541b" || return
    ioctl_errno /dev/null 0x541b
    expect_status 0 && [ "$(cat "$out/stdout")" = 13 ] || fail "FIONREAD on /dev/null: errno $(cat "$out/stdout")" || return
    # mknod names the node before it exists: made-* may be c 1:8, which no other name may.
    sandbox devices /usr/bin/python3 -c 'import os, sys; os.mknod(sys.argv[1], 0o20600, os.makedev(1, 8))' "$d/made-random"
    expect_status 0 && [ -c "$d/made-random" ] || fail "mknod made-random: $(head -c 600 "$out/stderr")" || return
    sandbox devices /usr/bin/python3 -c 'import os, sys; os.mknod(sys.argv[1], 0o20600, os.makedev(1, 8))' "$d/random"
    [ "$(status)" != 0 ] && [ ! -e "$d/random" ] || fail "mknod c 1:8 made $d/random"
}

test_device_rule_with_conditions() {
    local d=$W/devcond
    rm -rf "$d" && mkdir -p "$d" && mknod -m 0444 "$d/root-zero" c 1 5 && mknod -m 0444 "$d/head-zero" c 1 5 || return
    # `when uid 0`: root reads root-zero; uid 65534 gets the rule by number's denial.
    sandbox devices head -c 4 "$d/root-zero"
    expect_status 0 && read_zeros || fail "root reads root-zero: $(head -c 600 "$out/stderr")" || return
    bwrun --uid 65534 --gid 65534 "$W/devices.o" -- head -c 4 "$d/root-zero" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
    expect_status 1 && expect_device_denial "read $d/root-zero" 1:5 "device deny read char 1:5" || return
    # `when exe /usr/bin/head`: head reads head-zero, cat does not.
    sandbox devices head -c 4 "$d/head-zero"
    expect_status 0 && read_zeros || fail "head reads head-zero: $(head -c 600 "$out/stderr")" || return
    sandbox devices cat "$d/head-zero"
    expect_status 1 && expect_device_denial "read $d/head-zero" 1:5 "device deny read char 1:5"
}

test_device_rule_keeps_dev_mem_closed() {
    sandbox devices head -c 1 /dev/mem
    expect_status 1 && grep -qF "by invariant devices" "$out/stderr" ||
        fail "/dev/mem not denied by the invariant: $(head -c 600 "$out/stderr")"
}

# --- nesting: bwrun inside a sandbox ---

# The outer policy runs bwrun; the inner one is narrower in one place and wider in another.
setup_nesting() {
    mkdir -p "$W/nest"
    echo "both content" >"$W/nest/both"
    echo "inner-denied content" >"$W/nest/inner-denied"
    echo "outer-denied content" >"$W/nest/outer-denied"
    local common
    common="    allow read, exec /usr/
    allow read, exec $bin/
    allow read /etc/ld.so.cache
    allow read /etc/passwd
    allow read /etc/group
    allow read /etc/nsswitch.conf
    allow read, write /dev/null
    allow metadata, ioctl /
    allow read, write, create $W/shared/
    allow read /proc/
    net allow family unix"
    printf 'policy "nest-outer" {\n    default deny\n%s\n    allow read %s/\n    deny all %s/secret\n    deny read %s/nest/outer-denied\n}\n' \
        "$common" "$W" "$W" "$W" >"$W/nest-outer.bwp"
    printf 'policy "nest-inner" {\n    default deny\n%s\n    allow read %s/nest/\n    allow read %s/nest-inner.o\n    deny read %s/nest/inner-denied\n}\n' \
        "$common" "$W" "$W" "$W" >"$W/nest-inner.bwp"
}

# nested_reads OUTER-NAME: in sandbox OUTER-NAME, a nested bwrun reads the three files and
# exits 7; its stderr lands in $W/shared/inner.err.
nested_reads() {
    bwrun --name "$1" "$W/nest-outer.o" -- sh -c "$bin/bwrun --name $1-in $W/nest-inner.o -- sh -c \
        'cat $W/nest/both; cat $W/nest/inner-denied; cat $W/nest/outer-denied; exit 7' 2>$W/shared/inner.err" \
        >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
}

test_nested_sandbox_is_the_intersection() {
    nested_reads nest
    expect_status 7 || return
    [ "$(cat "$out/stdout")" = "both content" ] || fail "reads under both policies: $(cat "$out/stdout")"
    grep -qF "denied read $W/nest/inner-denied by \`deny read $W/nest/inner-denied\`" "$W/shared/inner.err" ||
        fail "the nested bwrun did not report its policy's denial: $(head -c 600 "$W/shared/inner.err")"
    grep -qF "1 access denied in sandbox nest-in" "$W/shared/inner.err" ||
        fail "the nested bwrun counted its denials wrong: $(head -c 600 "$W/shared/inner.err")"
    grep -qF "denied read $W/nest/outer-denied by \`deny read $W/nest/outer-denied\`" "$out/stderr" ||
        fail "the outer bwrun did not report its policy's denial: $(head -c 600 "$out/stderr")"
    ! grep -qF "inner-denied" "$out/stderr" || fail "the outer policy denied what it allows: $(cat "$out/stderr")"
}

test_nested_two_levels() {
    bwrun --name nest2 "$W/nest-outer.o" -- sh -c "$bin/bwrun --name nest2-a $W/nest-inner.o -- \
        $bin/bwrun --name nest2-b $W/nest-inner.o -- sh -c \
        'cat $W/nest/both; cat $W/nest/inner-denied; cat $W/nest/outer-denied; \
         cat /proc/self/cgroup >$W/shared/cgroup; exit 5' 2>$W/shared/inner.err" >"$out/stdout" 2>"$out/stderr"
    local rc=$?
    [ $rc = 5 ] || fail "status $rc: $(head -c 600 "$out/stderr")"
    [ "$(cat "$out/stdout")" = "both content" ] || fail "reads two levels down: $(cat "$out/stdout")"
    grep -q "^0::/bumblewrap/nest2/nest2-a/nest2-b$" "$W/shared/cgroup" ||
        fail "not in the innermost cgroup: $(cat "$W/shared/cgroup")"
    grep -qF "denied read $W/nest/inner-denied" "$W/shared/inner.err" ||
        fail "no nested bwrun reported the inner denial: $(head -c 600 "$W/shared/inner.err")"
    grep -qF "denied read $W/nest/outer-denied by \`deny read $W/nest/outer-denied\`" "$out/stderr" ||
        fail "the outer policy did not decide two levels down: $(head -c 600 "$out/stderr")"
}

test_nested_sandbox_listed_and_removed() {
    rm -f "$W/shared/up" "$W/shared/stop"
    bwrun --name nestl "$W/nest-outer.o" -- "$bin/bwrun" --name nestl-in "$W/nest-inner.o" -- \
        sh -c "touch $W/shared/up; while [ ! -e $W/shared/stop ]; do sleep 0.05; done" >"$out/stdout" 2>"$out/stderr" &
    local pid=$!
    wait_for "$W/shared/up" 600 || { fail "nested sandbox did not start: $(cat "$out/stderr")"; kill $pid; return; }
    bwctl list >"$out/list"
    touch "$W/shared/stop"
    wait $pid || fail "status $?: $(head -c 600 "$out/stderr")"
    grep -q "^nestl-in .* running *nest-inner .*/sys/fs/cgroup/bumblewrap/nestl/nestl-in$" "$out/list" ||
        fail "nested sandbox not listed: $(cat "$out/list")"
    test_nothing_left_behind
}

# nested_loop NAME: an outer sandbox whose nested sandbox keeps trying to read the file the
# inner policy denies; sets $pid (the outer bwrun), $inner (the nested bwrun) and $loop.
nested_loop() {
    rm -f "$W/shared/"{loop.pid,inner.pid,leaked,beat}
    "$bin/bwrun" --quiet --name "$1" "$W/nest-outer.o" -- sh -c "$bin/bwrun --quiet $W/nest-inner.o -- sh -c \
        'echo \$\$ >$W/shared/loop.pid; while :; do if cat $W/nest/inner-denied >/dev/null 2>&1; then
        touch $W/shared/leaked; fi; touch $W/shared/beat; sleep 0.01; done' & b=\$!; echo \$b >$W/shared/inner.pid; wait \$b" \
        >"$out/stdout" 2>"$out/stderr" &
    pid=$!
    wait_for "$W/shared/beat" 600 || return 1
    loop=$(cat "$W/shared/loop.pid")
    inner=$(cat "$W/shared/inner.pid")
}

test_nested_bwrun_killed_ends_its_sandbox() {
    local pid inner loop
    nested_loop nestk || { fail "nested loop did not start: $(cat "$out/stderr")"; kill $pid; return; }
    kill -KILL "$inner"
    local n=0
    until gone "$loop" && ! ls /run/bumblewrap/sandboxes | grep -q '^nest-inner-'; do
        sleep 0.1
        n=$((n + 1))
        [ $n -lt 100 ] || { fail "the nested sandbox outlived its bwrun by 10 s"; kill -9 "$loop" $pid; return; }
    done
    [ ! -e "$W/shared/leaked" ] || fail "the nested program read what its policy denies"
    ! ls /sys/fs/cgroup/bumblewrap/nestk 2>/dev/null | grep -q '^nest-inner-' ||
        fail "nested cgroup left: $(ls /sys/fs/cgroup/bumblewrap/nestk)"
    wait $pid
    local rc=$?
    [ $rc = 137 ] || fail "outer status $rc, wanted 137 (its program's child was killed): $(head -c 600 "$out/stderr")"
    test_nothing_left_behind
}

test_nested_outer_killed_fails_closed() {
    local pid inner loop
    nested_loop nesto || { fail "nested loop did not start: $(cat "$out/stderr")"; kill $pid; return; }
    kill -KILL $pid
    wait $pid 2>/dev/null
    local n=0
    until gone "$loop" && gone "$inner"; do
        sleep 0.1
        n=$((n + 1))
        [ $n -lt 100 ] || { fail "the nested sandbox outlived the outer bwrun by 10 s"; kill -9 "$loop" "$inner"; return; }
    done
    [ ! -e "$W/shared/leaked" ] || fail "the nested program read what its policy denies"
    test_nothing_left_behind
}

test_nested_bwrun_without_broker() {
    sandbox nest-outer env -u BWRUN_BROKER "$bin/bwrun" "$W/nest-inner.o" -- true
    expect_status 125 && grep -qF "bwrun runs inside sandbox nest-outer-" "$out/stderr" &&
        grep -qF "BWRUN_BROKER is not set" "$out/stderr" || fail "unclear refusal: $(head -c 600 "$out/stderr")"
    sandbox nest-outer env BWRUN_BROKER=0 "$bin/bwrun" "$W/nest-inner.o" -- true
    expect_status 125 && grep -qF "BWRUN_BROKER=0 names no nesting broker's socket" "$out/stderr" ||
        fail "a bad BWRUN_BROKER was not refused: $(head -c 600 "$out/stderr")"
}

echo "kernel $(uname -r), LSMs $(cat /sys/kernel/security/lsm), backend $backend"
if [ "$verifier_pass_only" = --verifier-pass-only ]; then
    mkdir -p "$out"
elif [ -n "$verifier_pass_only" ]; then
    echo "not ok usage: unknown option $verifier_pass_only"
    echo "e2e-done"
    exit 2
elif ! setup; then
    echo "not ok setup: policies did not compile"
    echo "e2e-done"
    exit 1
fi
# bwrun's own behaviour (options, audit, signals, fail-closed, setuid) is the same whichever
# backend compiled the policy: it runs once per kernel, with the map backend.
if [ "$backend" = maps ]; then
    runtime_tests="run_usage_errors run_uid_gid run_sudo_default_user run_cwd run_env_rules \
        run_no_program_starts_shell run_audit_all_stderr_limited run_denial_burst_counted run_audit_unresolvable_path run_signals_forwarded \
        run_sigkill_fails_closed run_orphan_stays_confined_until_collected run_setuid_confines_as_caller \
        run_setuid_hostile_environment run_setuid_refuses_writable_artifact nested_bwrun_killed_ends_its_sandbox \
        nested_outer_killed_fails_closed nested_bwrun_without_broker"
fi
[ -n "$verifier_pass_only" ] || for t in ${BW_E2E_ONLY:-read_allowed read_denied default_deny write_allowed write_denied exec_allowed exec_denied \
    dotdot_traversal symlink_made_inside read_only_tree append_only_log exec_is_its_own_access \
    glob_deny_inside_allow policy_that_denies_nothing denied_path_over_96_bytes path_over_4000_bytes_allowed \
    path_over_4000_bytes_denied path_beyond_path_max_fails_closed outside_unaffected \
    two_sandboxes_at_once bwctl_list_shows_sandbox bwctl_stop_ends_sandbox bwctl_stop_unknown_sandbox \
    bwctl_stop_unreachable_from_inside exit_status_0 exit_status_3 exit_status_sigkill \
    background_children_killed bad_artifact program_not_found ${runtime_tests:-} \
    create_by_open_allowed create_by_open_denied mkdir_mknod_symlink_allowed mkdir_mknod_symlink_denied \
    unlink_rmdir_allowed unlink_rmdir_denied rename_allowed rename_out_of_denied_dir rename_into_denied_dir \
    hard_link_allowed hard_link_of_denied_file chmod_chown_truncate_allowed chmod_chown_truncate_denied \
    xattr_allowed xattr_denied acl_allowed_and_denied utime_allowed utime_denied fd_attr_on_read_only_fd \
    bind_mount_second_name_denied \
    stat_allowed stat_denied ioctl_by_path ld_so_runs_allowed_binary ld_so_runs_denied_binary exec_mapping_allowed \
    exec_mapping_denied condition_uid_range_allows_inside condition_uid_range_denies_outside condition_gid \
    condition_owner_writes_own_file condition_owner_denies_others_file condition_flags_deny_truncating_open \
    condition_flags_allow_plain_write exe_rule_allows_only_its_program exe_rule_denies_its_program_and_its_forks \
    exe_rule_switches_at_exec audit_records_allowed_access audit_most_specific_rule_records audit_conditional_rule \
    audit_one_record_per_operation audit_of_denied_access_is_a_denial device_rule_by_number device_ioctl_allowlist device_ioctl_any \
    device_rule_without_ioctl_denies_all device_mknod device_rule_by_pattern device_rule_with_conditions device_rule_keeps_dev_mem_closed nested_sandbox_is_the_intersection nested_two_levels \
    nested_sandbox_listed_and_removed nothing_left_behind}; do
    run "$t"
done
# bwrun's own failures exit 125; the program's status (denied or not) is beside the point.
for artifact in ${artifacts:+"$artifacts"/*.o}; do
    current="verifier accepts $(basename "$artifact")"
    bwrun "$artifact" -- /usr/bin/true >"$out/stdout" 2>"$out/stderr"
    rc=$?
    if [ "$rc" = 125 ]; then fail "status 125: $(head -c 600 "$out/stderr")"; else echo "ok $current"; fi
done
if [ -n "$artifacts" ]; then
    current="nothing left behind after the verifier pass"
    test_nothing_left_behind && echo "ok $current"
fi
echo "e2e-done"
[ "$failures" = 0 ]
