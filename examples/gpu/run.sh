#!/usr/bin/env bash
# Vulkan and OpenGL programs on the host's drivers, in a sandbox (see README.md).
# usage: run.sh   (as root, on a kernel with the BPF LSM; scripts/bwvm runs it elsewhere)
# Needs vulkaninfo (vulkan-tools) and glxinfo (mesa-utils); without an X display it
# starts Xvfb (xvfb, with xdpyinfo from x11-utils to see it ready) for the GL part.
set -u
. "$(dirname "$0")/../common.sh"
need_root
work=$(mktemp -d /tmp/bw-example-gpu.XXXXXX)
xvfb=
trap '[ -n "$xvfb" ] && kill "$xvfb"; rm -rf "$work"' EXIT
# A scratch home: Mesa keeps its shader cache in XDG_CACHE_HOME, which the policy grants
# under this HOME.
mkdir -p "$work/home/.cache"
cd "$work"
if [ -z "${DISPLAY:-}" ]; then
    export DISPLAY=:9
    # -noreset: else the server resets when xdpyinfo below disconnects, and a program that
    # connects meanwhile fails.
    Xvfb "$DISPLAY" -nolisten tcp -noreset >/dev/null 2>&1 &
    xvfb=$!
    n=0
    until xdpyinfo >/dev/null 2>&1 || [ $n -ge 300 ]; do sleep 0.2; n=$((n + 1)); done
fi
glxinfo=$(command -v glxinfo || command -v glxinfo.x86_64-linux-gnu)

step "compile the policy"
"$bin/bwc" -D HOME="$work/home" "$examples/gpu/policy.bwp" -o "$work/gpu.o"

step "vulkaninfo --summary in the sandbox"
"$bin/bwrun" --setenv HOME="$work/home" --setenv XDG_CACHE_HOME="$work/home/.cache" "$work/gpu.o" -- vulkaninfo --summary >"$work/vk.out" 2>"$work/vk.err"
vk=$?
grep -E "deviceName|driverName" "$work/vk.out"
[ "$vk" = 0 ] || tail -n 5 "$work/vk.err"
check "vulkaninfo ran (status $vk) and found a device" test "$vk" = 0 -a -n "$(grep deviceName "$work/vk.out")"
check "no access was denied" sh -c "! grep denied '$work/vk.err'"

step "glxinfo -B in the sandbox, on display $DISPLAY"
"$bin/bwrun" --setenv HOME="$work/home" --setenv XDG_CACHE_HOME="$work/home/.cache" --setenv DISPLAY="$DISPLAY" \
    "$work/gpu.o" -- "$glxinfo" -B \
    >"$work/gl.out" 2>"$work/gl.err"
gl=$?
grep "OpenGL renderer" "$work/gl.out"
[ "$gl" = 0 ] || tail -n 5 "$work/gl.err"
check "glxinfo ran (status $gl) and named a renderer" test "$gl" = 0 -a -n "$(grep "OpenGL renderer" "$work/gl.out")"
check "no access was denied" sh -c "! grep denied '$work/gl.err'"
grep denied "$work/vk.err" "$work/gl.err" | head -n 20
done_example
