#!/usr/bin/python3
"""What bumblewrap's BPF objects cost the kernel (the benchmark guest).

usage: bpf_cost.py memory CGROUP           prints KERNEL PROCESS, in bytes
       bpf_cost.py stats FILE              saves each program's run count and time to FILE
       bpf_cost.py per-call BEFORE AFTER   prints "PROG CALLS NS" for each program that ran

Memory is what the kernel charges to CGROUP, where the held bwruns run: they create the
programs and maps (per-sandbox tables and ring buffers among them), so the memory cgroup
sees each allocation as the kernel makes it. KERNEL is memory.stat's kernel memory, and
PROCESS the part of it that is the bwrun processes' own stacks and page tables.
bytes_memlock is no source: before 6.5 it counts a ring buffer as 0 bytes. Ours are the
programs named bw_*; a program's run count and time need kernel.bpf_stats_enabled=1; NS is
the mean time per run between the two files.
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


def memory(cgroup):
    with open(f"{cgroup}/memory.stat") as f:
        stat = {k: int(v) for k, v in (line.split() for line in f)}
    # "kernel" (5.18 and later, so on every kernel bwvm boots) sums every kind of kernel memory.
    if "kernel" not in stat:
        sys.exit(f"bpf_cost.py: {cgroup}/memory.stat has no kernel field (Linux 5.18 or later has it)")
    process = stat.get("kernel_stack", 0) + stat.get("pagetables", 0) + stat.get("sec_pagetables", 0)
    print(stat["kernel"], process)


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
    if len(args) == 2 and args[0] == "memory":
        memory(args[1])
    elif len(args) == 2 and args[0] == "stats":
        stats(args[1])
    elif len(args) == 3 and args[0] == "per-call":
        per_call(args[1], args[2])
    else:
        sys.exit(__doc__.split("\n\n")[1])


if __name__ == "__main__":
    main()
