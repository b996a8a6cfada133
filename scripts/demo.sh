#!/usr/bin/env bash
# The README's quick start: installs what is missing, builds, compiles examples/demo.bwp
# and runs a short script under it, inside scripts/bwvm when this kernel cannot load BPF
# LSM programs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
build/bin/bwc examples/demo.bwp -o build/demo.o
echo "compiled examples/demo.bwp -> build/demo.o"

lsms=$(cat /sys/kernel/security/lsm 2>/dev/null || true)
if [[ ",$lsms," == *",bpf,"* ]]; then
    exec bash examples/demo-run.sh build/bin build/demo.o
fi
echo "this kernel does not run BPF LSM programs: running the demo in the VM (scripts/bwvm)"
exec scripts/bwvm -- bash examples/demo-run.sh build/bin build/demo.o
