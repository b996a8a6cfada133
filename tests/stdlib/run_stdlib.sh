#!/usr/bin/env bash
# The standard library (stdlib-policies/) under real programs, with no false denial: each
# test compiles a policy that includes one library policy (and `coreutils`, for the shell
# that starts the program), runs a representative program under it with --audit, and
# asserts exit status 0, the program's output and an empty audit file; then that the same
# policy still denies what lies next to what it grants. base, coreutils, python3, gcc, git
# and deny-secrets carry the workloads suite too (tests/workloads). Runs as root inside
# scripts/bwvm, like tests/e2e/run_e2e.sh.
#
# usage: run_stdlib.sh BIN_DIR [maps|c]
# Prints one line per test, "ok NAME" or "not ok NAME: why", then "stdlib-done".
set -u

bin=$(cd "${1:?usage: run_stdlib.sh BIN_DIR [maps|c]}" && pwd)
backend=${2:-maps}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/tmp/bw-stdlib
home=$W/home
startdir=$W/start
out=$W/out
runtime=/run/user/0
display=:7
export LC_ALL=C

. "$here/../lib/vm_suite.sh"

# policy NAME INCLUDES RULES...: compiles a policy of `default deny`, `include "coreutils"`,
# an include of each name in INCLUDES (space-separated), a read of the folder the program
# starts in (python lists it to import from it) and RULES, to $W/NAME.o. (Not NAME.bwp:
# an include looks in the including file's folder first.)
policy() {
    local name=$1 includes=$2 i r
    shift 2
    {
        printf 'policy "stdlib-%s" {\n    default deny\n    include "coreutils"\n' "$name"
        for i in $includes; do printf '    include "%s"\n' "$i"; done
        printf '    allow read %s/\n' "$startdir"
        for r in "$@"; do printf '    %s\n' "$r"; done
        printf '}\n'
    } >"$W/test-$name.bwp"
    "$bin/bwc" -D HOME="$home" --backend="$backend" "$W/test-$name.bwp" -o "$W/$name.o" 2>"$out/bwc-$name.err" ||
        fail "bwc $name: $(cat "$out/bwc-$name.err")"
}

# sandbox POLICY RUN ARGS...: ARGS under $W/POLICY.o, in $startdir, with a login session's
# HOME, SHELL, XDG_RUNTIME_DIR and DISPLAY, and XDG_CACHE_HOME in that HOME (Mesa finds
# its cache there, or else in the passwd entry's home, which is not this test's); stdout,
# stderr, status and the audit file in $out/RUN.*.
sandbox() {
    local policy=$1 run=$2
    shift 2
    rm -f "$out/$run.audit"
    "$bin/bwrun" --audit "$out/$run.audit" --cwd "$startdir" --setenv HOME="$home" --setenv SHELL=/bin/bash \
        --setenv XDG_RUNTIME_DIR="$runtime" --setenv DISPLAY="$display" \
        --setenv XDG_CACHE_HOME="$home/.cache" "$W/$policy.o" -- "$@" \
        >"$out/$run.stdout" 2>"$out/$run.stderr"
    echo $? >"$out/$run.status"
}

# expect_clean RUN PATTERN: the program exited 0, its output matched the extended regular
# expression PATTERN, and bwrun recorded no denial.
expect_clean() {
    local run=$1 pattern=$2
    [ "$(cat "$out/$run.status")" = 0 ] ||
        fail "$run: status $(cat "$out/$run.status"); stderr: $(head -c 1500 "$out/$run.stderr")"
    grep -Eq "$pattern" "$out/$run.stdout" || fail "$run: output: $(head -c 600 "$out/$run.stdout"); wanted: $pattern"
    [ ! -s "$out/$run.audit" ] || fail "$run: $(wc -l <"$out/$run.audit") denials: $(denials "$out/$run.audit")"
}

# expect_denied RUN WHAT: the program failed, and the audit file holds a denial whose
# access and object read WHAT (`"access":"read","path":"/x"`, `"access":"net","net":"connect tcp ...`).
expect_denied() {
    local run=$1 what=$2
    [ "$(cat "$out/$run.status")" != 0 ] || fail "$run: the command succeeded"
    grep -qF "$what" "$out/$run.audit" 2>/dev/null || fail "$run: no denial $what: $(denials "$out/$run.audit" 2>/dev/null)"
}

setup() {
    rm -rf "$W" "$runtime"
    mkdir -p "$W" "$out" "$startdir" "$home/.ssh" "$home/.cache" "$home/docs" "$home/Documents" "$home/.config" \
        "$runtime/pulse"
    chmod 700 "$runtime"
    echo "PRIVATE KEY" >"$home/.ssh/id_ed25519"
    echo "notes of the user" >"$home/notes.txt"
    echo "a document" >"$home/docs/a.txt"
    printf 'XDG_DOCUMENTS_DIR="$HOME/Documents"\n' >"$home/.config/user-dirs.dirs"
    ip link set lo up
}

# serve_unix PATH: a server on the unix socket PATH that answers "hello" to whoever connects.
serve_unix() {
    /usr/bin/python3 -c "
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(4)
print('listening', flush=True)
while True:
    c, _ = s.accept()
    c.recv(64)
    c.sendall(b'hello')
    c.close()" "$1" >"$out/serve-$(basename "$1").log" 2>&1 &
    servers+=($!)
    local n=0
    until [ -S "$1" ] || [ $n -ge 100 ]; do sleep 0.1; n=$((n + 1)); done
}
servers=()

# A client's first message on a unix socket, as a program of that kind sends it; prints
# the server's answer.
unix_client() {
    /usr/bin/python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(bytes.fromhex(sys.argv[2]))
print(sys.argv[1], s.recv(64).decode())" "$@"
}

test_network_client() {
    policy net "python3 network-client" || return
    /usr/bin/python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', 443))
s.listen(4)
while True:
    c, _ = s.accept()
    c.sendall(c.recv(64))
    c.close()" >"$out/serve-443.log" 2>&1 &
    servers+=($!)
    local n=0
    until (exec 3<>/dev/tcp/127.0.0.1/443) 2>/dev/null || [ $n -ge 100 ]; do sleep 0.1; n=$((n + 1)); done
    # Names resolved through nsswitch and /etc/hosts, the CA bundle loaded, HTTPS's port
    # reached, a DNS server's port connected.
    sandbox net net /usr/bin/python3 -c "
import socket, ssl
ctx = ssl.create_default_context(cafile=ssl.get_default_verify_paths().cafile)
host = socket.getaddrinfo('localhost', 443, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
s = socket.create_connection((host, 443))
s.sendall(b'ping')
d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
d.connect(('127.0.0.1', 53))
print('certs', len(ctx.get_ca_certs()) > 0, host, s.recv(4).decode())"
    expect_clean net "^certs True 127.0.0.1 ping$"
    sandbox net net-80 /usr/bin/python3 -c "
import socket
socket.create_connection(('127.0.0.1', 80))"
    expect_denied net-80 '"net":"connect tcp 127.0.0.1:80"'
}

test_gpu() {
    # No GPU in the VM: Mesa's software drivers (lavapipe for Vulkan, llvmpipe for GL
    # through GLX on an Xvfb server) go through the same loaders, manifests and driver
    # libraries; the device rules are not exercised by a driver here. vulkaninfo lists the
    # devices without a display.
    policy gpu "gpu x11" || return
    sandbox gpu vulkan env -u DISPLAY vulkaninfo --summary
    expect_clean vulkan "deviceName += llvmpipe"
    sandbox gpu glx glxinfo.x86_64-linux-gnu -B
    expect_clean glx "OpenGL renderer string: llvmpipe"
    sandbox gpu gpu-secret cat "$home/.ssh/id_ed25519"
    expect_denied gpu-secret "\"access\":\"read\",\"path\":\"$home/.ssh/id_ed25519\""
}

test_x11() {
    policy x11 "x11" || return
    sandbox x11 xdpyinfo xdpyinfo
    expect_clean xdpyinfo "^number of screens: +1$"
    sandbox x11 x11-bus cat /etc/shadow
    expect_denied x11-bus '"access":"read","path":"/etc/shadow"'
}

test_wayland() {
    # No compositor runs in the VM: a stand-in answers on the compositor's socket, and the
    # client sends what a Wayland client sends first (wl_display.get_registry).
    policy wayland "python3 wayland" || return
    serve_unix "$runtime/wayland-0"
    serve_unix "$runtime/bus"
    sandbox wayland wayland bash -c "$(declare -f unix_client); unix_client $runtime/wayland-0 010000000100 0c0002000000"
    expect_clean wayland "^$runtime/wayland-0 hello$"
    sandbox wayland wayland-bus bash -c "$(declare -f unix_client); unix_client $runtime/bus 00"
    expect_denied wayland-bus "\"access\":\"write\",\"path\":\"$runtime/bus\""
}

test_audio() {
    # No sound server runs in the VM: stand-ins answer on PipeWire's and PulseAudio's
    # sockets, and the client connects as pw-cli and pactl do.
    policy audio "python3 audio" || return
    serve_unix "$runtime/pipewire-0"
    serve_unix "$runtime/pulse/native"
    sandbox audio audio bash -c "$(declare -f unix_client); unix_client $runtime/pipewire-0 00 &&
        unix_client $runtime/pulse/native 00 && cat /usr/share/alsa/alsa.conf >/dev/null"
    expect_clean audio "^$runtime/pulse/native hello$"
    sandbox audio audio-snd sh -c 'cat /dev/snd/controlC0 /etc/shadow'
    expect_denied audio-snd '"access":"read","path":"/etc/shadow"'
}

test_fonts() {
    # The system's cache up to date, as Debian's font packages leave it (the VM's root is
    # the host's, whose cache may predate a font installed since).
    fc-cache -s >/dev/null 2>&1
    policy fonts "fonts" || return
    sandbox fonts fonts sh -c 'fc-list : family | grep -c . && fc-match sans'
    expect_clean fonts '^DejaVuSans\.ttf: "DejaVu Sans" "Book"$'
    sandbox fonts fonts-write sh -c "echo x >/usr/share/fonts/new"
    expect_denied fonts-write '"access":"create","path":"/usr/share/fonts/new"'
}

test_home_readonly() {
    policy home "home-readonly" || return
    sandbox home home sh -c "ls $home && cat $home/notes.txt $home/docs/a.txt"
    expect_clean home "^a document$"
    sandbox home home-key cat "$home/.ssh/id_ed25519"
    expect_denied home-key "\"access\":\"read\",\"path\":\"$home/.ssh/id_ed25519\""
    sandbox home home-write sh -c "echo x >>$home/notes.txt"
    expect_denied home-write "\"path\":\"$home/notes.txt\""
}

test_xdg_dirs() {
    policy xdg "xdg-dirs" || return
    sandbox xdg xdg sh -c "cat $home/.config/user-dirs.dirs >/dev/null && cd $home/Documents &&
        echo draft >report.txt && mv report.txt final.txt && mkdir old && mv final.txt old/ && cat old/final.txt"
    expect_clean xdg "^draft$"
    sandbox xdg xdg-outside sh -c "echo x >$home/outside.txt"
    expect_denied xdg-outside "\"access\":\"create\",\"path\":\"$home/outside.txt\""
}

test_workspace() {
    local ws=/tmp/workspace-0
    rm -rf "$ws"
    mkdir -m 700 "$ws"
    policy workspace "workspace" || return
    sandbox workspace workspace sh -c "cd $ws && echo a >f && mv f g && ln g h && chmod 600 h && mkdir d &&
        mv h d/ && cat d/h && rm -r d g"
    expect_clean workspace "^a$"
    [ -z "$(ls -A "$ws")" ] || fail "the workspace is not empty: $(ls -A "$ws")"
    sandbox workspace workspace-tmp sh -c "echo x >/tmp/elsewhere"
    expect_denied workspace-tmp '"access":"create","path":"/tmp/elsewhere"'
    rm -rf "$ws"
}

test_toolchain() {
    # A CMake project built with clang and make, writing only its own tree.
    local src=$W/cproj
    mkdir -p "$src"
    printf 'cmake_minimum_required(VERSION 3.20)\nproject(hello C)\nadd_executable(hello main.c)\n' >"$src/CMakeLists.txt"
    printf '#include <stdio.h>\nint main(void) { puts("hello from cmake"); return 0; }\n' >"$src/main.c"
    policy toolchain "gcc" "allow read, write, create, delete, rename, attr, exec $src/" || return
    sandbox toolchain toolchain sh -c "cd $src && export CC=clang TMPDIR=$src && cmake -S . -B build >/dev/null &&
        cmake --build build >/dev/null && ./build/hello"
    expect_clean toolchain "^hello from cmake$"
    sandbox toolchain toolchain-out sh -c "cd $src && TMPDIR=$src clang -o $W/elsewhere main.c"
    expect_denied toolchain-out "\"path\":\"$W/elsewhere\""
}

echo "kernel $(uname -r), LSMs $(cat /sys/kernel/security/lsm), backend $backend"
if ! setup >"$W.setup.log" 2>&1; then
    echo "not ok setup: $(tail -n 5 "$W.setup.log")"
    echo "stdlib-done"
    exit 1
fi
# -noreset: else the server resets when the readiness probe below disconnects, and a client
# that connects meanwhile fails (XCB error 1).
Xvfb "$display" -nolisten tcp -noreset >"$out/xvfb.log" 2>&1 &
servers+=($!)
n=0
until xdpyinfo -display "$display" >/dev/null 2>&1 || [ $n -ge 300 ]; do sleep 0.2; n=$((n + 1)); done
for t in ${BW_STDLIB_ONLY:-network_client gpu x11 wayland audio fonts home_readonly xdg_dirs workspace toolchain}; do
    run "$t"
done
kill "${servers[@]}" 2>/dev/null
echo "stdlib-done"
