#!/usr/bin/env python3
"""Kernel cost of the path walk: open()+close() of one file, N times, in a VM under
`scripts/bwvm --icount` (guest time counts guest instructions, so runs repeat), without any
BPF program, outside a sandbox while the program is attached, and inside sandboxes, for
paths of 2 to 128 components and 20 to 4,000 bytes and for policies of 3 to 10,000 rules.
Also reports the DFA's size per policy (`bwc --stats`). Prints Markdown tables and writes
them, with the raw per-repetition numbers, under BUILD/bench-results/.

usage: benchmarks/path-walk/run.py [--build DIR] [--kernel 6.1|6.12]... [--repeat N]
           [--iterations N] [--sizes 10,100,...] [--bwc-arg ARG]... [--out FILE.md]
Extra bwc arguments (a future `--backend=c`, say) come from --bwc-arg or the BWC_FLAGS
environment variable (split like a shell would); they are appended to every compile.
"""
import argparse
import importlib.util
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# (components, bytes): length at fixed depth (8: 20-1,000 B; 32: 200-4,000 B) and depth at
# fixed length (200 B: 2-32; 1,000 B: 8-128; 4,000 B: 32-128). Two components cannot
# reach much beyond 250 bytes (NAME_MAX is 255).
PATHS = [(2, 20), (2, 200), (8, 20), (8, 200), (8, 1000), (32, 200), (32, 1000),
         (32, 4000), (128, 1000), (128, 4000)]
# The paths measured for every policy size.
RULE_PATHS = [(8, 200), (8, 1000)]
# The walk reaches the absorbing state of `allow read /a/` after these bytes: "/a/".
ABSORB_AFTER = 3

# The rules every benchmark policy has: open_loop may run, /a/ is a tree decided at its
# root (absorbing after "/a/"), and under /w/ only the last component's suffix decides, so
# the walk runs to the end of the path.
BENCH_RULES = ["allow read, exec /pw/open_loop", "allow read /a/", "allow read /w/**/*.txt"]
HOLD_POLICY = """policy "hold" {
    default deny
    allow read, exec /usr/
    allow read /etc/ld.so.cache
}
"""


def die(msg):
    sys.exit(f"path-walk: {msg}")


def make_path(root, depth, length):
    """A path of `depth` components and exactly `length` bytes under /ROOT, ending in .txt:
    the directories below /ROOT share their bytes evenly; the file gets an equal share, and
    at least one byte before ".txt"."""
    dirs = depth - 2
    names = length - 2 - (depth - 1)  # name bytes after "/ROOT", slashes excluded
    file_len = max(5, names // (dirs + 1)) if depth >= 2 else 0
    dir_bytes = names - file_len
    if depth < 2 or file_len > 255 or not dirs <= dir_bytes <= 255 * dirs:
        die(f"no path of {depth} components and {length} bytes")
    letters = "bcdefghijklmnopqrsuvyz"
    comps = [letters[i % len(letters)] * (dir_bytes // dirs + (i < dir_bytes % dirs)) for i in range(dirs)]
    comps.append("m" * (file_len - 4) + ".txt")
    path = f"/{root}/" + "/".join(comps)
    assert len(path) == length and path.count("/") == depth, (path, depth, length)
    return path


def generated_policy(n):
    """The compile benchmark's policy of n rules, plus the benchmark's own rules."""
    sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
    spec = importlib.util.spec_from_file_location("compile_bench", os.path.join(ROOT, "benchmarks/compile/run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = mod.policy(n).rstrip()
    assert text.endswith("}")
    return text[:-1] + "".join(f"    {r}\n" for r in BENCH_RULES) + "}\n"


def bench_policy():
    return 'policy "path-walk" {\n    default deny\n' + "".join(f"    {r}\n" for r in BENCH_RULES) + "}\n"


def compile_policy(bwc, bwc_args, src, out):
    """Compiles src to out; returns the DFA's size as reported by --stats."""
    cmd = [bwc, src, "--stats", "-o", out, "--no-symlink-check"] + bwc_args
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"bwc failed on {os.path.basename(src)} (status {r.returncode}): {r.stderr[-800:]}")
    stats = {}
    m = re.search(r"^automaton:\s+(\d+) states, (\d+) byte classes, (\d+) transitions", r.stdout, re.M)
    if m:
        stats.update(states=int(m[1]), classes=int(m[2]), transitions=int(m[3]))
    m = re.search(r"^table bytes:\s+(\d+)", r.stdout, re.M)
    if m:
        stats["bytes"] = int(m[1])
    return stats


def run_vm(kernel, tmp, bin_dir, repeat, iterations, log):
    cmd = [os.path.join(ROOT, "scripts/bwvm"), "--kernel", kernel, "--icount",
           # bwvm boots with nohz=off already; the benchmark depends on it, so it says so.
           "--kernel-arg", "nohz=off", "--timeout", "7200", "--",
           "bash", os.path.join(HERE, "guest.sh"), tmp, bin_dir, str(repeat), str(iterations)]
    start = time.monotonic()
    with open(log, "w") as err:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, cwd=ROOT)
    wall = time.monotonic() - start
    if r.returncode != 0 or "guest-done" not in r.stdout.split("\n"):
        with open(log) as f:
            tail = f.read()[-2000:]
        die(f"the VM run on {kernel} failed (status {r.returncode}); its stderr ({log}) ends:\n{tail}")
    release = None
    results = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if parts[:1] == ["kernel"]:
            release = parts[1]
        elif parts[:1] == ["result"]:
            results.setdefault(parts[1], []).append(float(parts[3]))
    return release, results, wall


def spread(values):
    """(max - min) / median, in percent."""
    return (max(values) - min(values)) / statistics.median(values) * 100


def tables(kernel, release, results, plan_ids, stats, args, bwc_args, wall):
    med = {k: statistics.median(v) for k, v in results.items()}

    def row_spread(*keys):
        return max(spread(results[plan_ids[k]]) for k in keys)

    per_byte = []
    out = [f"### Linux {release} (`--kernel {kernel}`)", "",
           f"qemu TCG, `-icount shift=0,align=off,sleep=off` (1 guest ns = 1 guest instruction), "
           f"1 vCPU, `nohz=off`; median of {args.repeat} runs of {args.iterations} open()+close() "
           f"pairs each (after {max(args.iterations // 10, 100)} untimed); spread is (max - min) / "
           f"median of a row's runs, its worst case; bwc flags: "
           f"{' '.join(bwc_args) if bwc_args else '(none)'}; VM wall time {wall:.0f} s.", "",
           "Path length and depth (policy of 3 rules). *absorbed*: under `allow read /a/`, the "
           "walk stops after 3 bytes; *walked*: under `allow read /w/**/*.txt`, every byte is "
           "walked. Overhead is over *no program*; per byte is (walked - absorbed) / (bytes - 3).", "",
           "| components | bytes | no program ns | outside, program attached ns | absorbed ns "
           "| walked ns | overhead absorbed ns | overhead walked ns (%) | walk ns/byte | spread % |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for depth, length in PATHS:
        key = f"{depth}x{length}"
        keys = [("none", key), ("outside", key), ("absorb", "paths", key), ("walk", "paths", key)]
        none, outside, absorb, walk = (med[plan_ids[k]] for k in keys)
        byte = (walk - absorb) / (length - ABSORB_AFTER)
        if length >= 200:
            per_byte.append(byte)
        out.append(f"| {depth} | {length} | {none:.0f} | {outside:.0f} | {absorb:.0f} | {walk:.0f} "
                   f"| {absorb - none:.0f} | {walk - none:.0f} ({(walk - none) / none * 100:.0f}%) "
                   f"| {byte:.1f} | {row_spread(*keys):.2f} |")
    out += ["", "Policy size (the compile benchmark's generated rules plus the 3 above; the paths "
            "have 8 components). DFA size from `bwc --stats` on the host.", "",
            "| rules | DFA states | byte classes | table bytes "
            + "".join(f"| walked {l} B ns | absorbed {l} B ns " for _, l in RULE_PATHS)
            + f"| walk ns/byte at {RULE_PATHS[-1][1]} B | spread % |",
            "|---:|---:|---:|---:|" + "---:|---:|" * len(RULE_PATHS) + "---:|---:|"]
    for name, rules in [("paths", 3)] + [(f"gen{n}", n + 3) for n in args.sizes]:
        s = stats[name]
        row = f"| {rules} | {s.get('states', '?')} | {s.get('classes', '?')} | {s.get('bytes', '?')} "
        keys = []
        for depth, length in RULE_PATHS:
            key = f"{depth}x{length}"
            keys += [("walk", name, key), ("absorb", name, key)]
            row += f"| {med[plan_ids[keys[-2]]]:.0f} | {med[plan_ids[keys[-1]]]:.0f} "
        length = RULE_PATHS[-1][1]
        byte = (med[plan_ids[keys[-2]]] - med[plan_ids[keys[-1]]]) / (length - ABSORB_AFTER)
        per_byte.append(byte)
        out.append(row + f"| {byte:.1f} | {row_spread(*keys):.2f} |")
    out += ["", f"Walk cost per byte over all rows of 200 bytes or more: {min(per_byte):.1f} to "
            f"{max(per_byte):.1f} ns; largest spread of any case: "
            f"{max(spread(v) for v in results.values()):.2f}%."]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--kernel", action="append", choices=["6.1", "6.12"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--sizes", default="10,100,1000,10000")
    ap.add_argument("--bwc-arg", action="append", default=[])
    ap.add_argument("--out")
    args = ap.parse_args()
    args.kernel = args.kernel or ["6.1", "6.12"]
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.repeat < 1 or args.iterations < 1:
        die("--repeat and --iterations must be at least 1")
    bwc_args = shlex.split(os.environ.get("BWC_FLAGS", "")) + args.bwc_arg

    bin_dir = os.path.join(os.path.abspath(args.build), "bin")
    for tool in ("bwc", "bwrun", "open_loop"):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            die(f"{bin_dir}/{tool} is missing: build first (cmake -S . -B build && cmake --build build -j2)")
    out_dir = os.path.join(os.path.abspath(args.build), "bench-results")
    os.makedirs(out_dir, exist_ok=True)
    out_md = args.out or os.path.join(out_dir, "path-walk.md")

    start = time.monotonic()
    # Under /tmp: the guest reads the host's root over 9p, this folder included.
    with tempfile.TemporaryDirectory(prefix="bw-path-walk.") as tmp:
        os.chmod(tmp, 0o755)
        shutil.copy(os.path.join(bin_dir, "open_loop"), tmp)
        policies = {"paths": bench_policy()}
        for n in args.sizes:
            policies[f"gen{n}"] = generated_policy(n)
        stats = {}
        for name, text in policies.items():
            src = os.path.join(tmp, f"{name}.bwp")
            with open(src, "w") as f:
                f.write(text)
            stats[name] = compile_policy(os.path.join(bin_dir, "bwc"), bwc_args, src, os.path.join(tmp, f"{name}.o"))
        with open(os.path.join(tmp, "hold.bwp"), "w") as f:
            f.write(HOLD_POLICY)
        compile_policy(os.path.join(bin_dir, "bwc"), bwc_args, os.path.join(tmp, "hold.bwp"), os.path.join(tmp, "hold.o"))

        # The plan: one line per measured case; the guest repeats each.
        plan, plan_ids, paths = [], {}, set()

        def add(key, mode, policy, path):
            plan_ids[key] = str(len(plan))
            plan.append(f"{len(plan)} {mode} {policy} {path}")
            paths.add(path)

        for depth, length in PATHS:
            key = f"{depth}x{length}"
            walked, absorbed = make_path("w", depth, length), make_path("a", depth, length)
            add(("none", key), "none", "-", walked)
            add(("outside", key), "outside", "-", walked)
            add(("absorb", "paths", key), "sandbox", "paths.o", absorbed)
            add(("walk", "paths", key), "sandbox", "paths.o", walked)
        for n in args.sizes:
            for depth, length in RULE_PATHS:
                key = f"{depth}x{length}"
                add(("absorb", f"gen{n}", key), "sandbox", f"gen{n}.o", make_path("a", depth, length))
                add(("walk", f"gen{n}", key), "sandbox", f"gen{n}.o", make_path("w", depth, length))
        with open(os.path.join(tmp, "plan.txt"), "w") as f:
            f.write("\n".join(plan) + "\n")
        with open(os.path.join(tmp, "paths.txt"), "w") as f:
            f.write("\n".join(sorted(paths)) + "\n")

        sections, raw = [], ["kernel\tcase\tmode\tpolicy\ttree\tpath_bytes\tns_per_open_close"]
        for kernel in args.kernel:
            log = os.path.join(out_dir, f"path-walk-{kernel}.log")
            print(f"path-walk: running on Linux {kernel} (log: {log})", file=sys.stderr)
            release, results, wall = run_vm(kernel, tmp, bin_dir, args.repeat, args.iterations, log)
            missing = [line for line in plan if line.split()[0] not in results]
            if missing:
                die(f"the guest on {kernel} reported no result for: {missing[:3]}")
            sections.append(tables(kernel, release, results, plan_ids, stats, args, bwc_args, wall))
            for line in plan:
                case, mode, policy, path = line.split()
                for v in results[case]:
                    raw.append(f"{release}\t{case}\t{mode}\t{policy}\t{path[1]}\t{len(path)}\t{v}")

    text = "\n".join(sections) + f"\nTotal wall time: {time.monotonic() - start:.0f} s.\n"
    print(text, end="")
    with open(out_md, "w") as f:
        f.write(text)
    with open(os.path.splitext(out_md)[0] + "-raw.tsv", "w") as f:
        f.write("\n".join(raw) + "\n")
    print(f"path-walk: wrote {out_md}", file=sys.stderr)


if __name__ == "__main__":
    main()
