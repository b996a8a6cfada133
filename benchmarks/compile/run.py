#!/usr/bin/env python3
"""Compile-time benchmark of bwc: generated policies of 10 to 10,000 path rules mixing
literal paths, `*`, `**` and `{a,b}` alternatives, each compiled REPEAT times; reports the
median wall time (including ~1 ms to start GNU time), peak memory (max RSS, from GNU
time) and artifact size, as a Markdown table, for both backends (maps: the generic program
and the tables; c: a specialised program compiled by clang in a child process).

usage: benchmarks/compile/run.py [BWC] [--repeat N] [--backend maps|c] [--out FILE.md]
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

SIZES = (10, 100, 1000, 10000)
WORDS = ["usr", "lib", "share", "etc", "home", "user", "project", "src", "build", "cache",
         "doc", "bin", "include", "local", "opt", "var", "log", "tmp", "data", "config"]
ACTIONS = ["allow read", "allow read, write", "deny write", "allow read, exec"]


def policy(n, seed=1):
    rng = random.Random(seed)
    lines = [f'policy "gen{n}" {{', "    default deny"]
    for _ in range(n):
        comps = [rng.choice(WORDS) + str(rng.randint(0, 50)) for _ in range(rng.randint(2, 5))]
        r = rng.random()
        if r < 0.5:
            pattern = "/" + "/".join(comps)
        elif r < 0.7:
            pattern = "/" + "/".join(comps[:-1]) + "/*." + rng.choice(["c", "h", "so", "txt"])
        elif r < 0.9:
            pattern = "/" + "/".join(comps) + "/**"
        else:
            pattern = "/" + "/".join(comps[:-1]) + "/{%s,%sx}" % (comps[-1], comps[-1])
        lines.append(f"    {rng.choice(ACTIONS)} {pattern}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def run_once(bwc, src, out, backend):
    # GNU time measures its own child: a child of this interpreter would count the
    # interpreter's pages in its peak RSS (they are its memory until exec).
    # Its own %e has 10 ms steps, so the wall time is taken here.
    start = time.monotonic()
    result = subprocess.run(["/usr/bin/time", "-f", "%M", bwc, src, "-o", out, "--no-symlink-check",
                             f"--backend={backend}"],
                            capture_output=True, text=True)
    elapsed = time.monotonic() - start
    if result.returncode != 0:
        sys.exit(f"bwc failed on {src}: {result.stderr[-500:]}")
    return elapsed, int(result.stderr.strip().splitlines()[-1])  # seconds, KiB


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser()
    ap.add_argument("bwc", nargs="?", default=os.path.join(root, "build/bin/bwc"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--backend", choices=["maps", "c"], action="append",
                    help="the backends to measure (default: both)")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for backend, n in [(b, n) for b in args.backend or ["maps", "c"] for n in SIZES]:
            src = os.path.join(tmp, f"gen{n}.bwp")
            out = os.path.join(tmp, f"gen{n}.o")
            with open(src, "w") as f:
                f.write(policy(n))
            runs = [run_once(args.bwc, src, out, backend) for _ in range(args.repeat)]
            times = sorted(t for t, _ in runs)
            stats = subprocess.run([args.bwc, src, "--stats", "--no-symlink-check"], capture_output=True,
                                   text=True, check=True).stdout
            states = next(l.split()[1] for l in stats.splitlines() if l.startswith("automaton:"))
            rows.append((backend, n, statistics.median(times), times[0], times[-1], max(m for _, m in runs),
                         os.path.getsize(out), states))
    lines = ["| backend | rules | median s | min s | max s | peak MiB | artifact KiB | DFA states |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for backend, n, med, lo, hi, rss, size, states in rows:
        lines.append(f"| {backend} | {n} | {med:.3f} | {lo:.3f} | {hi:.3f} | {rss / 1024:.1f} | {size / 1024:.0f} "
                     f"| {states} |")
    table = "\n".join(lines) + "\n"
    print(table, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(table)


if __name__ == "__main__":
    main()
