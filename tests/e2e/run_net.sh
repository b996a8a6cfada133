#!/usr/bin/env bash
# End-to-end network suite: socket rules enforced by the kernel. Runs as root inside
# scripts/bwvm, like run_e2e.sh (same conventions). Listeners on loopback run outside the
# sandbox; each test checks a denied case (errno EACCES, nothing reached the listener, a
# denial naming the rule) and its allowed control.
#
# usage: run_net.sh BIN_DIR [maps|c]
# Prints one line per test, "ok NAME" or "not ok NAME: why", then "net-done".
set -u

bin=$(cd "${1:?usage: run_net.sh BIN_DIR [maps|c]}" && pwd)
backend=${2:-maps}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/tmp/bw-net
out=$W/out
S=$W/sock
export LC_ALL=C
listeners=()

bwc() { "$bin/bwc" "$@"; }
bwrun() { "$bin/bwrun" "$@"; }

# listen tcp|udp HOST PORT NAME: a listener outside the sandbox logging to $W/NAME.log.
listen() {
    local log=$W/$4.log
    /usr/bin/python3 "$W/net_probe.py" listen "$1" "$2" "$3" "$log" 2>"$log.err" &
    listeners+=($!)
    # Python starts slowly under emulation on a busy host.
    for _ in $(seq 600); do
        [ -e "$log.ready" ] && return 0
        sleep 0.05
    done
    echo "not ok setup: listener $1 $2:$3 did not start: $(tail -n 3 "$log.err")"
    return 1
}

setup() {
    rm -rf "$W"
    mkdir -p "$W" "$out" "$S"
    cp "$here/net_probe.py" "$W/net_probe.py"
    # The VM boots with loopback down.
    ip link set lo up || return 1
    bwc "$here/policies/net.bwp" --backend="$backend" -o "$W/net.o" 2>"$out/bwc.err" || return 1
    # No net statement: the net default follows `default deny`.
    printf 'policy "no-net" {\n    default deny\n    allow read, exec /usr/\n    allow read /etc/ld.so.cache\n    allow read /tmp/bw-net/\n    allow metadata, ioctl /\n}\n' >"$W/no-net.bwp"
    bwc "$W/no-net.bwp" --backend="$backend" -o "$W/no-net.o" 2>/dev/null || return 1
    bwc "$here/policies/net-conditions.bwp" --backend="$backend" -o "$W/net-conditions.o" 2>"$out/bwc.err" ||
        return 1
    listen tcp 127.0.0.1 47001 tcp-allowed && listen tcp 127.0.0.1 47002 tcp-denied &&
        listen tcp ::1 47001 tcp6-allowed && listen tcp ::1 47002 tcp6-denied &&
        listen udp 127.0.0.1 47201 udp-allowed && listen udp 127.0.0.1 47202 udp-denied &&
        listen tcp 0.0.0.0 47300 cidr &&
        listen tcp "$S/allowed.sock" 0 unix-allowed && listen tcp "$S/denied.sock" 0 unix-denied &&
        listen udp "$S/allowed.dgram" 0 unixgram-allowed && listen udp "$S/denied.dgram" 0 unixgram-denied &&
        listen tcp @bw-net-abstract 0 unix-abstract
}

. "$here/../lib/vm_suite.sh"

# probe POLICY ARGS...: net_probe.py ARGS in a sandbox; stdout, stderr and status in $out.
probe() {
    local policy=$1
    shift
    bwrun "$W/$policy.o" -- /usr/bin/python3 "$W/net_probe.py" "$@" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/status"
}
expect_ok() {
    [ "$(cat "$out/status")" = 0 ] && [ "$(cat "$out/stdout")" = ok ] ||
        fail "allowed probe failed: status $(cat "$out/status"), $(cat "$out/stdout"); stderr: $(head -c 600 "$out/stderr")"
}
expect_eacces() {
    [ "$(cat "$out/status")" = 1 ] && [ "$(cat "$out/stdout")" = "errno 13 (EACCES)" ] ||
        fail "denied probe: status $(cat "$out/status"), $(cat "$out/stdout"); stderr: $(head -c 600 "$out/stderr")"
}
# expect_denial TEXT RULE: bwrun reported "denied TEXT by `RULE`".
expect_denial() {
    grep -qF "denied $1 by \`$2\`" "$out/stderr" ||
        fail "no denial of $1 by \`$2\`; stderr: $(head -c 600 "$out/stderr")"
}
# lines NAME: how many connections or datagrams the listener NAME saw.
lines() {
    sleep 0.3 # a datagram in flight
    if [ -e "$W/$1.log" ]; then wc -l <"$W/$1.log"; else echo 0; fi
}

test_family_denied() {
    probe net create netlink
    expect_eacces || return
    expect_denial "create socket netlink type 3 protocol 0" "net deny all"
    probe net create unix
    expect_ok
}

test_net_default_follows_default_deny() {
    probe no-net create inet
    expect_eacces || return
    expect_denial "create socket inet type 2 protocol 0" "default deny"
}

test_connect_denied_port() {
    probe net connect tcp 127.0.0.1 47002
    expect_eacces || return
    [ "$(lines tcp-denied)" = 0 ] || fail "the connection reached the listener"
    expect_denial "connect tcp 127.0.0.1:47002" "net deny all"
    probe net connect tcp 127.0.0.1 47001
    expect_ok && [ "$(lines tcp-allowed)" = 1 ] || fail "the allowed connection did not arrive"
}

test_ipv6_loopback() {
    probe net connect tcp ::1 47002
    expect_eacces || return
    [ "$(lines tcp6-denied)" = 0 ] || fail "the connection reached the listener"
    expect_denial "connect tcp [::1]:47002" "net deny all"
    probe net connect tcp ::1 47001
    expect_ok && [ "$(lines tcp6-allowed)" = 1 ] || fail "the allowed connection did not arrive"
}

test_ipv4_mapped_is_ipv4() {
    # ::ffff:127.0.0.1 reaches the IPv4 listener: decided as 127.0.0.1.
    probe net connect tcp ::ffff:127.0.0.1 47002
    expect_eacces || return
    [ "$(lines tcp-denied)" = 0 ] || fail "the connection reached the listener"
    expect_denial "connect tcp 127.0.0.1:47002" "net deny all"
}

test_bind_denied_port() {
    probe net bind tcp 127.0.0.1 47050
    expect_eacces || return
    expect_denial "bind tcp 127.0.0.1:47050" "net deny all"
    probe net bind tcp 127.0.0.1 47150
    expect_ok
}

test_udp_sendto_denied() {
    probe net sendto 127.0.0.1 47202 secret
    expect_eacces || return
    [ "$(lines udp-denied)" = 0 ] || fail "the datagram arrived: $(cat "$W/udp-denied.log")"
    expect_denial "send udp 127.0.0.1:47202" "net deny all"
    probe net sendto 127.0.0.1 47201 hello
    expect_ok && [ "$(cat "$W/udp-allowed.log" 2>/dev/null)" = "datagram hello" ] ||
        fail "the allowed datagram did not arrive"
}

test_cidr_precedence() {
    probe net connect tcp 127.0.0.3 47300
    expect_eacces || return
    [ "$(lines cidr)" = 0 ] || fail "the connection reached the listener"
    expect_denial "connect tcp 127.0.0.3:47300" "net deny tcp connect 127.0.0.0/8:47300"
    probe net connect tcp 127.0.0.2 47300
    expect_ok && [ "$(lines cidr)" = 1 ] || fail "the /32 allow did not win"
}

test_unix_connect_needs_write_on_the_socket() {
    # `net allow family unix` does not reach a socket file the path rules deny.
    probe net connect tcp "$S/denied.sock" 0
    expect_eacces || return
    [ "$(lines unix-denied)" = 0 ] || fail "the connection reached the listener"
    expect_denial "write $S/denied.sock" "default deny"
    probe net connect tcp "$S/allowed.sock" 0
    expect_ok && [ "$(lines unix-allowed)" = 1 ] || fail "the allowed connection did not arrive"
}

test_unix_datagram_needs_write_on_the_socket() {
    probe net sendto "$S/denied.dgram" 0 secret
    expect_eacces || return
    expect_denial "write $S/denied.dgram" "default deny"
    probe net send "$S/denied.dgram" 0 secret
    expect_eacces || return
    [ "$(lines unixgram-denied)" = 0 ] || fail "a datagram arrived: $(cat "$W/unixgram-denied.log")"
    probe net sendto "$S/allowed.dgram" 0 one
    expect_ok || return
    probe net send "$S/allowed.dgram" 0 two
    expect_ok && [ "$(cat "$W/unixgram-allowed.log" 2>/dev/null)" = "datagram one
datagram two" ] || fail "the allowed datagrams did not arrive: $(cat "$W/unixgram-allowed.log" 2>/dev/null)"
}

test_unix_abstract_by_family() {
    # An abstract socket has no file: the family rule alone decides, and it allows.
    probe net connect tcp @bw-net-abstract 0
    expect_ok && [ "$(lines unix-abstract)" = 1 ] || fail "the abstract connection did not arrive"
    probe no-net connect tcp @bw-net-abstract 0
    expect_eacces && expect_denial "create socket unix type 1 protocol 0" "default deny"
}

# probe_as UID POLICY ARGS...: probe, with the program running as UID.
probe_as() {
    local uid=$1 policy=$2
    shift 2
    bwrun --uid "$uid" --gid "$uid" "$W/$policy.o" -- /usr/bin/python3 "$W/net_probe.py" "$@" >"$out/stdout" \
        2>"$out/stderr"
    echo $? >"$out/status"
}

test_condition_uid_on_endpoint() {
    probe_as 65534 net-conditions connect tcp 127.0.0.1 47001
    expect_eacces || return
    expect_denial "connect tcp 127.0.0.1:47001" "net deny tcp connect 127.0.0.1:47001"
    local before
    before=$(lines tcp-allowed)
    probe_as 0 net-conditions connect tcp 127.0.0.1 47001
    expect_ok && [ "$(lines tcp-allowed)" = $((before + 1)) ] || fail "root's connection did not arrive"
}

test_condition_uid_on_family() {
    probe_as 0 net-conditions create netlink
    expect_eacces || return
    expect_denial "create socket netlink type 3 protocol 0" "net deny all"
    probe_as 65534 net-conditions create netlink
    expect_ok
}

test_condition_exe_on_endpoint() {
    # Only python3 may connect to 47002; bash's /dev/tcp is another program.
    local before
    before=$(lines tcp-denied)
    bwrun "$W/net-conditions.o" -- /usr/bin/bash -c 'exec 3<>/dev/tcp/127.0.0.1/47002' >"$out/stdout" 2>"$out/stderr"
    [ $? != 0 ] && grep -q "Permission denied" "$out/stderr" || fail "bash connected: $(head -c 600 "$out/stderr")"
    expect_denial "connect tcp 127.0.0.1:47002" "net deny all" || return
    [ "$(lines tcp-denied)" = "$before" ] || fail "bash's connection reached the listener"
    probe net-conditions connect tcp 127.0.0.1 47002
    expect_ok && [ "$(lines tcp-denied)" = $((before + 1)) ] || fail "python3's connection did not arrive"
}

echo "kernel $(uname -r), LSMs $(cat /sys/kernel/security/lsm), backend $backend"
if ! setup; then
    echo "not ok setup: policies or listeners"
    kill "${listeners[@]}" 2>/dev/null
    echo "net-done"
    exit 1
fi
for t in ${BW_NET_ONLY:-family_denied net_default_follows_default_deny connect_denied_port ipv6_loopback \
    ipv4_mapped_is_ipv4 bind_denied_port udp_sendto_denied cidr_precedence unix_connect_needs_write_on_the_socket \
    unix_datagram_needs_write_on_the_socket unix_abstract_by_family condition_uid_on_endpoint \
    condition_uid_on_family condition_exe_on_endpoint}; do
    run "$t"
done
kill "${listeners[@]}" 2>/dev/null
wait 2>/dev/null
echo "net-done"
[ "$failures" = 0 ]
