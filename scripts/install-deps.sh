#!/usr/bin/env bash
# Installs every Debian package that building, testing, the demo and the VM runner need.
# Idempotent: packages already present are not reinstalled, and apt is not touched at all
# when nothing is missing.
set -euo pipefail

packages=(
    build-essential cmake pkg-config git python3
    clang-19 llvm-19 llvm-19-dev libclang-cpp19-dev libclang-19-dev lld-19 libclang-rt-19-dev
    libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev
    antlr4 libantlr4-runtime-dev
    libfmt-dev catch2
    linux-libc-dev linux-libc-dev-arm64-cross
    qemu-system-x86 busybox-static cpio xz-utils kmod time
    bubblewrap
    # the man pages (docs/man, rendered by scdoc); zsh, which checks the zsh completions
    scdoc zsh
    # programs the standard library's tests and the examples run (tests/stdlib, examples/)
    vulkan-tools mesa-vulkan-drivers mesa-utils-bin xvfb xauth x11-utils fontconfig fonts-dejavu-core
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}" >&2
    echo "install-deps: run this script as root to install them" >&2
    exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
