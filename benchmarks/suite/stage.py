#!/usr/bin/python3
"""Copies the host files that the benchmark's workloads read into the guest (its guest.sh).

usage: stage.py up TRACE...    copies up every file, symlink and directory that the strace
                               outputs TRACE... name
       stage.py hold TRACE...  keeps each directory they list open, its listing read,
                               until killed; prints "held N" once it does

The guest's root is an overlay of the host's root over 9p, and every request that reaches
the 9p share idles the guest while the host answers it: in icount mode the clock then jumps
to the next timer (up to 4 ms), so one such request in a timed run can add more than the
run takes. 9p caches neither symlink bodies nor a missing name, and opens the host's file at
every open; overlay copies a file or directory up to its guest tmpfs when its mode is set
to what it already is, and a symlink when its owner is.
"""
import os
import re
import signal
import stat
import sys

QUOTED = re.compile(r'"(/[^"]*)"')
SKIP = ("/bench/", "/proc/", "/sys/", "/dev/", "/tmp/")


def copy_up(path):
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        os.chown(path, st.st_uid, st.st_gid, follow_symlinks=False)
    else:
        # Not chown: it would clear a set-user-ID bit.
        os.chmod(path, stat.S_IMODE(st.st_mode))


def resolve(path):
    """Copies up each symlink that resolving PATH meets; returns where it leads."""
    current, rest, hops = "/", [p for p in path.split("/") if p], 0
    while rest:
        name = rest.pop(0)
        if name == ".":
            continue
        if name == "..":
            current = os.path.dirname(current)
            continue
        step = os.path.join(current, name)
        if not os.path.islink(step):
            current = step
            continue
        hops += 1
        if hops > 40:
            return None
        copy_up(step)
        target = os.readlink(step)
        if target.startswith("/"):
            current = "/"
        rest = [p for p in target.split("/") if p] + rest
    return current


def names(traces, only_listed=False):
    """The absolute names in the traces (with ONLY_LISTED, of directories opened to list)."""
    found = set()
    for trace in traces:
        with open(trace, errors="replace") as f:
            for line in f:
                if not only_listed or "O_DIRECTORY" in line:
                    found.update(p for p in QUOTED.findall(line) if not p.startswith(SKIP))
    return found


def up(traces):
    paths = names(traces)
    staged = 0
    for path in sorted(paths):
        try:
            real = resolve(path)
            if real is not None and os.path.lexists(real):
                copy_up(real)
                staged += 1
        except OSError:
            # A name the workload probed and did not find, or a file it cannot read: 9p
            # has nothing to stage for it.
            continue
    print(f"stage.py: {staged} of {len(paths)} names staged")


def hold(traces):
    # Overlay keeps a copied-up directory's merged listing while one opener of it has read
    # it, so the timed runs' listings of it are served from memory instead of the 9p share.
    held = []
    for d in sorted(names(traces, only_listed=True)):
        if not os.path.isdir(d):
            continue
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        os.listdir(fd)
        held.append(fd)
    print(f"held {len(held)}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        signal.pause()


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("up", "hold"):
        sys.exit(__doc__)
    (up if sys.argv[1] == "up" else hold)(sys.argv[2:])


if __name__ == "__main__":
    main()
