# Sourced by the examples' run.sh scripts: finds bwc, bwrun and bwctl (BW_BIN's, the
# build tree's, or the installed ones on PATH), and says what each step showed.
# shellcheck shell=bash
examples=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${BW_BIN:-$examples/../build/bin}
if [ ! -x "$bin/bwrun" ]; then
    bin=$(dirname "$(command -v bwrun 2>/dev/null || echo /usr/bin/bwrun)")
fi
[ -x "$bin/bwc" ] && [ -x "$bin/bwrun" ] || { echo "bwc and bwrun not found: build the tree or install bumblewrap" >&2; exit 2; }
export LC_ALL=C

# need_root: bwrun loads BPF programs and creates cgroups.
need_root() {
    [ "$(id -u)" = 0 ] || { echo "run this example as root: bwrun loads BPF programs" >&2; exit 2; }
}

# step TEXT: says what comes next.
step() { printf '\n== %s\n' "$*"; }
# check TEXT CONDITION...: says whether the example behaved as its README says; a miss
# makes the script fail at the end.
misses=0
check() {
    local text=$1
    shift
    if "$@"; then echo "   as expected: $text"; else echo "   NOT as expected: $text"; misses=$((misses + 1)); fi
}
# done_example: the script's status, 0 when every check held.
done_example() {
    echo
    if [ "$misses" = 0 ]; then echo "example ok"; else echo "example failed: $misses checks missed"; fi
    [ "$misses" = 0 ]
}
