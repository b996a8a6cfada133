#!/usr/bin/python3
"""What bumblewrap's BPF objects cost the kernel, read with bpftool (the benchmark guest).

usage: bpf_cost.py memory                  prints MAP_BYTES PROG_BYTES
       bpf_cost.py stats FILE              saves each program's run count and time to FILE
       bpf_cost.py per-call BEFORE AFTER   prints "PROG CALLS NS" for each program that ran

Ours are the programs named bw_*, the maps they use (.rodata and the like among them) and
the maps named bw_* (the per-sandbox tables and ring buffers that bwrun creates). Memory
is the kernel's own charge for each object (bytes_memlock). A program's run count and time
need kernel.bpf_stats_enabled=1; NS is the mean time per run between the two files.
"""
import json
import subprocess
import sys


def bpftool(kind):
    r = subprocess.run(["bpftool", "--json", kind, "show"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"bpf_cost.py: bpftool {kind} show: {r.stderr.strip()}")
    return json.loads(r.stdout or "[]")


def our_programs():
    return [p for p in bpftool("prog") if p.get("name", "").startswith("bw_")]


def memory():
    progs = our_programs()
    used = {m for p in progs for m in p.get("map_ids", [])}
    maps = [m for m in bpftool("map") if m["id"] in used or m.get("name", "").startswith("bw_")]
    print(sum(m.get("bytes_memlock", 0) for m in maps), sum(p.get("bytes_memlock", 0) for p in progs))


def stats(path):
    # One program name can be loaded more than once (two policies' specialised programs).
    totals = {}
    for p in our_programs():
        cnt, ns = totals.get(p["name"], (0, 0))
        totals[p["name"]] = (cnt + p.get("run_cnt", 0), ns + p.get("run_time_ns", 0))
    with open(path, "w") as f:
        json.dump(totals, f)


def per_call(before_path, after_path):
    with open(before_path) as f:
        before = json.load(f)
    with open(after_path) as f:
        after = json.load(f)
    for name, (cnt, ns) in sorted(after.items()):
        cnt0, ns0 = before.get(name, (0, 0))
        if cnt > cnt0:
            print(name, cnt - cnt0, round((ns - ns0) / (cnt - cnt0)))


def main():
    args = sys.argv[1:]
    if args == ["memory"]:
        memory()
    elif len(args) == 2 and args[0] == "stats":
        stats(args[1])
    elif len(args) == 3 and args[0] == "per-call":
        per_call(args[1], args[2])
    else:
        sys.exit(__doc__.split("\n\n")[1])


if __name__ == "__main__":
    main()
