# Stands in for an agent's session: each `try` is one command an agent might run; the
# files .granted and .expired say when the person watching has changed the policy.
try() {
    if "$@" >/dev/null 2>&1; then echo "ok: $*"; else echo "refused: $*"; fi
}
connect() {
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $1)).close()"
}
wait_for() {
    until [ -e "$1" ]; do sleep 0.1; done
}
try sh -c 'echo "print(42)" >tool.py && python3 tool.py'
try sh -c 'echo "alias ls=evil" >>"$HOME/.bashrc"'
try cat "$HOME/.ssh/id_ed25519"
try connect 8080
try connect 9090
try cat "$DOCS/api.md"
echo waiting >.agent-state
wait_for .granted
try cat "$DOCS/api.md"
echo read >.agent-state
wait_for .expired
try cat "$DOCS/api.md"
