#!/usr/bin/env bash
# An AI coding agent's shell under a policy, with a live grant that expires (README.md).
# usage: run.sh   (as root, on a kernel with the BPF LSM; scripts/bwvm runs it elsewhere)
set -u
. "$(dirname "$0")/../common.sh"
need_root
work=$(mktemp -d /tmp/bw-example-agent.XXXXXX)
servers=()
trap 'kill "${servers[@]}" 2>/dev/null; rm -rf "$work"' EXIT
project=$work/project home=$work/home docs=$work/docs
mkdir -p "$project" "$home/.ssh" "$docs"
echo "PRIVATE KEY" >"$home/.ssh/id_ed25519"
touch "$home/.bashrc"
echo "# The API" >"$docs/api.md"
cp "$examples/agent-shell/agent.sh" "$project/"
# Two local servers: the allowed endpoint and another one.
ip link show lo | grep -q "state UNKNOWN\|state UP" || ip link set lo up
for port in 8080 9090; do
    /usr/bin/python3 -c "
import socket
s = socket.create_server(('127.0.0.1', $port))
while True:
    s.accept()[0].close()" &
    servers+=($!)
    n=0
    until (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null || [ $n -ge 100 ]; do sleep 0.1; n=$((n + 1)); done
done

step "compile the policy for this project"
cd "$project"
"$bin/bwc" -D HOME="$home" "$examples/agent-shell/policy.bwp" -o "$work/agent.o"

step "the agent's session, in sandbox agent-example"
"$bin/bwrun" --name agent-example --setenv HOME="$home" --setenv DOCS="$docs" --setenv PATH=/usr/bin:/bin \
    "$work/agent.o" -- bash agent.sh >"$work/out" 2>"$work/err" &
session=$!
until grep -qx waiting .agent-state 2>/dev/null || ! kill -0 $session 2>/dev/null; do sleep 0.1; done
step "bwctl grants the docs for 3 seconds"
"$bin/bwctl" allow agent-example "$docs/" --access read --for 3s
touch .granted
until grep -qx read .agent-state 2>/dev/null || ! kill -0 $session 2>/dev/null; do sleep 0.1; done
# bwrun ends the grant by itself when it expires; bwctl show then no longer lists it.
n=0
while "$bin/bwctl" show agent-example | grep -qF "$docs/" && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
"$bin/bwctl" show agent-example | sed -n '1,3p'
touch .expired
wait $session
cat "$work/out"
echo "-- what bwrun reported:"
cat "$work/err"
check "it wrote and ran a file in the project" grep -q "^ok: sh -c echo \"print(42)\"" "$work/out"
check "it could not change ~/.bashrc" grep -q "^refused: sh -c echo \"alias" "$work/out"
check "~/.bashrc is unchanged" test ! -s "$home/.bashrc"
check "it could not read the key" grep -q "^refused: cat $home/.ssh/id_ed25519" "$work/out"
check "it reached the allowed endpoint" grep -qx "ok: connect 8080" "$work/out"
check "it could not reach another port" grep -qx "refused: connect 9090" "$work/out"
check "bwrun named the refused connect" grep -q "denied connect tcp 127.0.0.1:9090" "$work/err"
check "the docs: refused, then granted, then refused again" \
    test "$(grep -c "cat $docs/api.md" "$work/out")" = 3 -a \
    "$(grep "cat $docs/api.md" "$work/out" | cut -d: -f1 | paste -sd,)" = "refused,ok,refused"
done_example
