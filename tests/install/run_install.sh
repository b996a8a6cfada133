#!/usr/bin/env bash
# Installing bumblewrap, on the host: `cmake --install` into a temporary prefix, with the
# layout it makes and the installed programs finding their stdlib, clang module and VM
# runner from there; then the .deb that `cpack -G DEB` makes, installed with dpkg (as
# root), the tools working from /usr (versions, the installed stdlib, the man pages, the
# completions), and purged without a trace. Boots no VM: bwrun --vm is run where bwvm
# stops at its first host check, which is enough to show that bwrun found it.
#
# usage: run_install.sh BUILD_DIR
# Prints one line per check, "ok NAME" or "not ok NAME: why", then "install-done".
set -u

build=$(cd "${1:?usage: run_install.sh BUILD_DIR}" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
tmp=$(mktemp -d /tmp/bw-install.XXXXXX)
chmod 755 "$tmp" # bwrun --vm runs as nobody, who reads its artifact here
prefix=$tmp/prefix
installed_deb=
trap 'if [ -n "$installed_deb" ]; then dpkg --purge bumblewrap >/dev/null 2>&1; fi; rm -rf "$tmp"' EXIT

ok() { echo "ok $*"; }
not_ok() { echo "not ok $*"; }

# expect NAME COMMAND...: COMMAND exits 0; otherwise its output says why.
expect() {
    local name=$1
    shift
    if "$@" >"$tmp/out" 2>&1; then ok "$name"; else not_ok "$name: status $?: $(head -c 600 "$tmp/out")"; fi
}

# Every file an installation holds, relative to its prefix: the programs, the clang module
# and the VM runner, the stdlib, the man pages and the completions.
expected_files() {
    printf '%s\n' bin/bwc bin/bwrun bin/bwctl lib/bumblewrap/bumblewrap-clang.so lib/bumblewrap/bwvm \
        lib/bumblewrap/bwvm-init.sh share/man/man1/bwc.1 share/man/man1/bwrun.1 share/man/man1/bwctl.1 \
        share/man/man5/bwp.5
    local f
    for f in "$root"/stdlib-policies/*.bwp; do
        echo "share/bumblewrap/stdlib-policies/${f##*/}"
    done
    for f in bwc bwrun bwctl; do
        echo "share/bash-completion/completions/$f"
        echo "share/zsh/vendor-completions/_$f"
    done
}

# compiles_with_stdlib NAME PREFIX: PREFIX/bin/bwc compiles a policy that includes "base",
# in a folder with no base.bwp and no BWC_PATH, and takes base from PREFIX's stdlib.
compiles_with_stdlib() {
    local name=$1 dir=$tmp/include-$RANDOM
    mkdir -p "$dir"
    printf 'policy "uses-base" {\n    include "base"\n    default deny\n}\n' >"$dir/uses-base.bwp"
    (cd "$dir" && env -u BWC_PATH "$2/bin/bwc" uses-base.bwp -o uses-base.o) >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" != 0 ]; then
        not_ok "$name: status $rc: $(head -c 600 "$tmp/out")"
    elif "$2/bin/bwc" inspect "$dir/uses-base.o" |
        grep -q "^source: *[0-9a-f]*  $2/share/bumblewrap/stdlib-policies/base.bwp$"; then
        ok "$name"
    else
        not_ok "$name: base.bwp came from elsewhere: $("$2/bin/bwc" inspect "$dir/uses-base.o" | grep '^source:')"
    fi
}

# finds_bwvm NAME PREFIX: PREFIX/bin/bwrun --vm, run as nobody (so that it takes the VM
# path whatever this kernel supports), runs PREFIX's bwvm; with no qemu on PATH, bwvm
# stops at once, naming the package, before it boots anything.
finds_bwvm() {
    local name=$1 path=$tmp/path
    mkdir -p "$path"
    ln -sf "$(command -v bash)" "$(command -v env)" "$(command -v dirname)" "$path/"
    cp "$tmp/true.o" "$tmp/true-vm.o" && chmod 644 "$tmp/true-vm.o"
    setpriv --reuid=65534 --regid=65534 --clear-groups env PATH="$path" "$2/bin/bwrun" --vm "$tmp/true-vm.o" -- true \
        >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" = 125 ] && grep -qF "running in the VM ($2/lib/bumblewrap/bwvm)" "$tmp/out" &&
        grep -q "qemu-system-x86" "$tmp/out"; then
        ok "$name"
    else
        not_ok "$name: status $rc: $(head -c 600 "$tmp/out")"
    fi
}

# --- cmake --install into a temporary prefix ------------------------------------------------

printf 'policy "true" {\n    default allow\n}\n' >"$tmp/true.bwp"
"$build/bin/bwc" "$tmp/true.bwp" -o "$tmp/true.o" >"$tmp/out" 2>&1 ||
    not_ok "bwc compiles a trivial policy: $(head -c 600 "$tmp/out")"

if cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    ok "cmake --install into a temporary prefix"
    (cd "$prefix" && find . -type f -o -type l) | sed 's,^\./,,' | sort >"$tmp/layout"
    expected_files | sort >"$tmp/expected"
    if cmp -s "$tmp/layout" "$tmp/expected"; then
        ok "cmake --install: the layout, and nothing else ($(wc -l <"$tmp/layout") files)"
    else
        not_ok "cmake --install: the layout differs (< installed, > expected): $(diff "$tmp/layout" "$tmp/expected" | grep '^[<>]' | head -c 600)"
    fi
    missing_x=
    for f in bin/bwc bin/bwrun bin/bwctl lib/bumblewrap/bwvm lib/bumblewrap/bwvm-init.sh; do
        [ -x "$prefix/$f" ] || missing_x+=" $f"
    done
    if [ -z "$missing_x" ]; then ok "cmake --install: programs and scripts are executable"; else
        not_ok "cmake --install: not executable:$missing_x"
    fi
    compiles_with_stdlib "installed bwc finds its stdlib under its own prefix (include \"base\")" "$prefix"
    expect "installed bwc --backend=c loads the clang module under its own prefix" \
        "$prefix/bin/bwc" --backend=c "$tmp/true.bwp" -o "$tmp/true-c.o"
    finds_bwvm "installed bwrun --vm runs the bwvm under its own prefix" "$prefix"
else
    not_ok "cmake --install into a temporary prefix: $(tail -c 600 "$tmp/install.log")"
fi

# --- the .deb --------------------------------------------------------------------------------

deb=$tmp/deb/bumblewrap_${version}_amd64.deb
if (cd "$build" && cpack -G DEB -B "$tmp/deb") >"$tmp/cpack.log" 2>&1 && [ -f "$deb" ]; then
    ok "cpack -G DEB makes bumblewrap_${version}_amd64.deb ($(du -k "$deb" | cut -f1) KiB)"
else
    not_ok "cpack -G DEB: no $deb: $(tail -c 600 "$tmp/cpack.log")"
    echo install-done
    exit 0
fi
depends=$(dpkg-deb -f "$deb" Depends)
if [[ $depends == *libbpf1* && $depends == *libfmt9* && $depends == *libc6* ]] &&
    [[ $(dpkg-deb -f "$deb" Recommends) == *qemu-system-x86* ]] &&
    [ -n "$(dpkg-deb -f "$deb" Maintainer)" ] && [ -n "$(dpkg-deb -f "$deb" Description)" ]; then
    ok "the .deb depends on the shared libraries it links (${depends:0:80}...), recommends qemu, has a maintainer and a description"
else
    not_ok "the .deb's control fields: $(dpkg-deb -f "$deb" Depends Recommends Maintainer Description | head -c 600)"
fi

if [ "$(id -u)" != 0 ]; then
    not_ok "dpkg -i: installing the .deb needs root"
    echo install-done
    exit 0
fi
# Never over an installation this test did not make: it purges what it installs.
if dpkg-query -W -f='${Status}' bumblewrap 2>/dev/null | grep -q 'ok installed' ||
    [ -e /usr/bin/bwc ] || [ -e /usr/bin/bwrun ] || [ -e /usr/bin/bwctl ]; then
    not_ok "dpkg -i: bumblewrap is already installed in /usr; remove it (dpkg --purge bumblewrap) to run this test"
    echo install-done
    exit 0
fi
if dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1; then
    installed_deb=1
    ok "dpkg -i: its dependencies are met on this machine"
else
    installed_deb=1
    not_ok "dpkg -i: $(tail -c 600 "$tmp/dpkg.log")"
fi
dpkg -L bumblewrap 2>/dev/null | sort >"$tmp/owned"

for program in bwc bwrun; do
    want=$("$build/bin/$program" --version)
    got=$(/usr/bin/$program --version 2>&1)
    if [[ $got =~ ^$program\ ${version//./\\.}\ \([0-9a-f]{7,}(-dirty)?\)$ ]] && [ "$got" = "$want" ]; then
        ok "/usr/bin/$program --version names the version and the commit ($got)"
    else
        not_ok "/usr/bin/$program --version: \`$got\`, wanted \`$want\` (version $version and a commit)"
    fi
done
expect "/usr/bin/bwc compiles /usr/share/bumblewrap/stdlib-policies/python3.bwp" \
    /usr/bin/bwc /usr/share/bumblewrap/stdlib-policies/python3.bwp -o "$tmp/python3.o"
compiles_with_stdlib "/usr/bin/bwc finds /usr/share/bumblewrap/stdlib-policies (include \"base\")" /usr
expect "/usr/bin/bwc --backend=c loads /usr/lib/bumblewrap/bumblewrap-clang.so" \
    /usr/bin/bwc --backend=c "$tmp/true.bwp" -o "$tmp/true-c.o"
finds_bwvm "/usr/bin/bwrun --vm runs /usr/lib/bumblewrap/bwvm" /usr
expect "/usr/bin/bwctl --version" /usr/bin/bwctl --version

pages=
for page in 1:bwc 1:bwrun 1:bwctl 5:bwp; do
    if command -v man >/dev/null; then
        found=$(man -w "${page%%:*}" "${page#*:}" 2>/dev/null)
    else
        found=$(ls /usr/share/man/man"${page%%:*}/${page#*:}.${page%%:*}"* 2>/dev/null)
    fi
    [[ $found == /usr/share/man/man${page%%:*}/${page#*:}.${page%%:*}* ]] || pages+=" ${page#*:}(${page%%:*})"
done
if [ -z "$pages" ]; then ok "man finds bwc(1), bwrun(1), bwctl(1) and bwp(5) in /usr/share/man"; else
    not_ok "man does not find:$pages"
fi

syntax=
for program in bwc bwrun bwctl; do
    f=/usr/share/bash-completion/completions/$program
    bash -n "$f" 2>>"$tmp/syntax" || syntax+=" $f"
    # Sourced, it registers the completion of its program.
    bash -c ". '$f' && complete -p $program" >/dev/null 2>>"$tmp/syntax" || syntax+=" $f(complete)"
done
if [ -z "$syntax" ]; then ok "bash completions: bash -n, and each registers its program"; else
    not_ok "bash completions:$syntax: $(head -c 400 "$tmp/syntax")"
fi
if command -v zsh >/dev/null; then
    syntax=
    for program in bwc bwrun bwctl; do
        zsh -n "/usr/share/zsh/vendor-completions/_$program" 2>>"$tmp/syntax" || syntax+=" _$program"
    done
    if ! zsh -fc 'print -rl -- $fpath' | grep -qx /usr/share/zsh/vendor-completions; then
        syntax+=" (zsh does not search /usr/share/zsh/vendor-completions)"
    fi
    if [ -z "$syntax" ]; then ok "zsh completions: zsh -n, in a folder of zsh's fpath"; else
        not_ok "zsh completions:$syntax: $(head -c 400 "$tmp/syntax")"
    fi
else
    ok "zsh completions: not checked, zsh is not installed (scripts/install-deps.sh installs it)"
fi

# --- purged without a trace ------------------------------------------------------------------

if dpkg --purge bumblewrap >"$tmp/dpkg.log" 2>&1; then
    installed_deb=
    left=
    while read -r f; do
        [ -d "$f" ] || [ ! -e "$f" ] || left+=" $f"
    done <"$tmp/owned"
    for d in /usr/share/bumblewrap /usr/lib/bumblewrap; do
        [ ! -e "$d" ] || left+=" $d"
    done
    if [ "$(wc -l <"$tmp/owned")" -gt 10 ] && [ -z "$left" ] && ! dpkg-query -W bumblewrap >/dev/null 2>&1; then
        ok "dpkg --purge bumblewrap leaves nothing of it in /usr"
    else
        not_ok "dpkg --purge bumblewrap left:${left:- its dpkg record}"
    fi
else
    not_ok "dpkg --purge bumblewrap: $(tail -c 600 "$tmp/dpkg.log")"
fi

echo install-done
