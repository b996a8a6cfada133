#!/usr/bin/python3
"""Stress test of live edits: random `bwctl allow|deny|remove` and `bwctl syscall allow|deny`
edits of a running sandbox, each followed by accesses from inside the sandbox, every one
compared with the reference evaluator (`bwc query`) for the policy version in force. The
syscalls edited are decided by LSM hooks: kill(2), which the probe makes with signal 0 on
itself, and socketpair(2).

usage: live_stress.py prepare BIN_DIR WORKDIR [--edits N] [--queries Q] [--seed S]
       live_stress.py run BIN_DIR WORKDIR --backend maps|c

prepare (on the host) draws N seeded random edits over a small file tree. It keeps the
policy each edit leaves in force as policy text (the base policy's rules plus the live
ones: rules decide by precedence, not by order, so that text means what the sandbox
holds), and asks `bwc query --batch` for the verdicts of Q accesses after each edit: some
drawn at random, one on a file the edit's pattern matches or the syscall it names. Everything lands in
WORKDIR/stress.json.

run (as root in the VM, scripts/bwvm) makes the tree, starts the probe (live_probe.py) in
a sandbox under the base policy, and for each edit runs bwctl, checks its answer, then has
the probe try each access and compares the kernel's verdict with the oracle's. Prints
"ok live_stress ..." with the counts and bwctl's times, or "not ok live_stress ..." with
the first mismatches, then "live-stress-done".

Run `run` with /usr/bin/python3 (see oracle.py).
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

ROOT = "/tmp/bw-stress/t"
HERE = os.path.dirname(os.path.abspath(__file__))
DIRS = ("a", "a/b", "a/bb", "c", "c/d")
FILES = tuple(f"{d}/{n}" for d in DIRS for n in ("f1", "f2", "g1", "x.key"))
KINDS = ("read", "write")
# The live syscalls edited, and the probe's request that makes each.
SYSCALLS = {"kill": ("signal", "self"), "socketpair": ("socketpair", "unix")}
SYSCALL_OF = {probe: name for name, probe in SYSCALLS.items()}
BASE_RULES = (
    ("allow", ("read",), f"{ROOT}/a/**"),
    ("deny", ("read",), f"{ROOT}/a/bb/**"),
    ("allow", ("read", "write"), f"{ROOT}/c/d/**"),
)
# What the probe itself needs: the interpreter and its libraries, and its own script.
BASE_TEXT = """policy "live-stress" {{
    default deny
    allow read, exec /usr/
    allow read /etc/ld.so.cache
    allow read, write /dev/null
    allow metadata, ioctl /
    allow read /tmp/bw-stress/probe/
    net allow family unix
{rules}}}
"""
PYTHON = ("/usr/bin/python3", "-I", "-S", "-B")


def rule_text(rule):
    decision, kinds, pattern = rule
    return f'{decision} {", ".join(kinds)} "{pattern}"'


def policy_text(rules, syscall_rules):
    """bwctl syscall allow|deny leaves one rule naming the syscall, of the decision asked."""
    return BASE_TEXT.format(rules="".join(f"    {rule_text(r)}\n" for r in rules) +
                            "".join(f"    syscalls {d} {name}\n" for name, d in sorted(syscall_rules.items())))


def random_pattern(rng):
    d = rng.choice(DIRS)
    return rng.choice((
        f"{ROOT}/{rng.choice(FILES)}",
        f"{ROOT}/{d}/**",
        f"{ROOT}/{d}/*",
        f"{ROOT}/{d}/f?",
        f"{ROOT}/{d}/*.key",
        f"{ROOT}/**/{rng.choice(('f1', 'g1', 'x.key'))}",
    ))


def matching_file(pattern, rng):
    """A file of the tree that the pattern matches, for a query that sees the edit."""
    import fnmatch
    candidates = []
    for f in FILES:
        path = f"{ROOT}/{f}"
        if pattern.endswith("/**") and path.startswith(pattern[:-2]):
            candidates.append(path)
        elif "/**/" in pattern and path.endswith("/" + pattern.rsplit("/", 1)[1]):
            candidates.append(path)
        elif "**" not in pattern and fnmatch.fnmatchcase(path, pattern) and \
                path.count("/") == pattern.count("/"):
            candidates.append(path)
    return rng.choice(candidates) if candidates else f"{ROOT}/{rng.choice(FILES)}"


def bwc(bin_dir, *args):
    return subprocess.run([os.path.join(bin_dir, "bwc"), *args], capture_output=True, text=True)


def prepare(args):
    rng = random.Random(args.seed)
    os.makedirs(args.workdir, exist_ok=True)
    rules = list(BASE_RULES)
    syscall_rules = {}
    base = os.path.join(args.workdir, "base.bwp")
    with open(base, "w") as f:
        f.write(policy_text(rules, syscall_rules))
    for backend in ("maps", "c"):
        r = bwc(args.bin_dir, base, f"--backend={backend}", "-o", os.path.join(args.workdir, f"base-{backend}.o"))
        if r.returncode != 0:
            raise SystemExit(f"live_stress.py: bwc {base} --backend={backend}: {r.stderr}")
    model = os.path.join(args.workdir, "model.bwp")
    batch = os.path.join(args.workdir, "batch.txt")
    steps = []
    for _ in range(args.edits):
        live = [r for r in rules]
        queries = [(rng.choice(KINDS), f"{ROOT}/{rng.choice(FILES)}") for _ in range(args.queries - 1)]
        draw = rng.random()
        if draw < 0.15:
            syscall, decision = rng.choice(sorted(SYSCALLS)), rng.choice(("allow", "deny"))
            edit = ["syscall", decision, syscall]
            if syscall_rules.get(syscall, "allow") == decision:
                edit.append("already")
            else:
                syscall_rules[syscall] = decision
            queries.append(SYSCALLS[syscall])
        elif draw < 0.45 and len(rules) > 1:
            pattern = rng.choice(rules)[2]
            edit = ["remove", pattern]
            rules = [r for r in rules if r[2] != pattern]
        else:
            decision = rng.choice(("allow", "deny"))
            kinds = tuple(k for k in KINDS if rng.random() < 0.6) or (rng.choice(KINDS),)
            pattern = random_pattern(rng)
            edit = [decision, pattern, "--access", ",".join(kinds)]
            rule = (decision, kinds, pattern)
            if rule in live:
                edit.append("already")
            else:
                rules.append(rule)
        if edit[0] != "syscall":
            queries.append((rng.choice(KINDS), matching_file(pattern, rng)))
        if rng.random() < 0.3:
            queries.append(SYSCALLS[rng.choice(sorted(SYSCALLS))])
        with open(model, "w") as f:
            f.write(policy_text(rules, syscall_rules))
        with open(batch, "w") as f:
            f.writelines(f"syscall {SYSCALL_OF[(kind, path)]}\n" if (kind, path) in SYSCALL_OF else f"{kind} {path}\n"
                         for kind, path in queries)
        r = bwc(args.bin_dir, "query", model, "--batch", batch)
        verdicts = [line.split()[0] for line in r.stdout.splitlines() if line.startswith(("allow ", "deny "))]
        if r.returncode != 0 or len(verdicts) != len(queries):
            raise SystemExit(f"live_stress.py: bwc query {model}: status {r.returncode}: {r.stdout}{r.stderr}")
        steps.append({"edit": edit, "queries": [[k, p, v] for (k, p), v in zip(queries, verdicts)]})
    with open(os.path.join(args.workdir, "stress.json"), "w") as f:
        json.dump({"files": FILES, "steps": steps}, f)
    print(f"prepared {len(steps)} edits, {sum(len(s['queries']) for s in steps)} queries")


class Probe:
    """live_probe.py in a sandbox, talking through pipes."""

    def __init__(self, bin_dir, artifact, name):
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "bwrun"), "--name", name, "--quiet", artifact, "--", *PYTHON,
             "/tmp/bw-stress/probe/live_probe.py"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ask(self, kind, path):
        self.proc.stdin.write(f"{kind} {path}\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def finish(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        err = self.proc.stderr.read()
        return self.proc.wait(), err


def run(args):
    with open(os.path.join(args.workdir, "stress.json")) as f:
        plan = json.load(f)
    shutil.rmtree("/tmp/bw-stress", ignore_errors=True)
    os.makedirs("/tmp/bw-stress/probe")
    shutil.copy(os.path.join(HERE, "live_probe.py"), "/tmp/bw-stress/probe/")
    for f in plan["files"]:
        os.makedirs(os.path.dirname(f"{ROOT}/{f}"), exist_ok=True)
        with open(f"{ROOT}/{f}", "w") as out:
            out.write(f + "\n")
    name = f"stress-{args.backend}"
    probe = Probe(args.bin_dir, os.path.join(args.workdir, f"base-{args.backend}.o"), name)
    bwctl = os.path.join(args.bin_dir, "bwctl")
    wrong, checked, times = [], 0, []
    label = f"live_stress ({args.backend} backend)"
    if probe.ask("read", "/tmp/bw-stress/probe/live_probe.py") != "ok":
        print(f"not ok {label}: the probe did not start: {probe.finish()}")
        return
    for i, step in enumerate(plan["steps"]):
        edit = step["edit"]
        already = edit[-1] == "already"
        words = edit[:-1] if already else edit
        # `bwctl allow NAME PATTERN ...`, `bwctl syscall deny NAME SYSCALL`
        cmd = [bwctl, *words[:2], name, *words[2:]] if words[0] == "syscall" else [bwctl, words[0], name, *words[1:]]
        t = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.monotonic() - t)
        said = r.stdout + r.stderr
        if r.returncode != 0 or ("already" in said) != already:
            wrong.append(f"edit {i} `{' '.join(cmd[1:])}`: status {r.returncode}: {said.strip()}")
            break
        for kind, path, want in step["queries"]:
            got = probe.ask(kind, path)
            checked += 1
            # A path rule denies with EACCES, a syscall rule with EPERM.
            denied = "EPERM" if (kind, path) in SYSCALL_OF else "EACCES"
            verdict = "allow" if got == "ok" else "deny" if got == denied else got
            if verdict != want:
                wrong.append(f"after edit {i} `{' '.join(cmd[1:])}`: {kind} {path}: kernel {got}, oracle {want}")
        if len(wrong) >= 5:
            break
    status, err = probe.finish()
    if status != 0:
        wrong.append(f"bwrun's status {status}: {err[-600:]}")
    times.sort()
    summary = (f"{len(times)} edits, {checked} accesses checked, {len(wrong)} wrong; bwctl per edit: "
               f"median {statistics.median(times) * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms" if times else "")
    if wrong:
        print(f"not ok {label}: {summary}: " + " | ".join(wrong[:5]))
    else:
        print(f"ok {label}: {summary}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=("prepare", "run"))
    p.add_argument("bin_dir")
    p.add_argument("workdir")
    p.add_argument("--edits", type=int, default=1000)
    p.add_argument("--queries", type=int, default=4)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--backend", choices=("maps", "c"), default="maps")
    args = p.parse_args()
    args.bin_dir = os.path.abspath(args.bin_dir)
    args.workdir = os.path.abspath(args.workdir)
    if args.command == "prepare":
        prepare(args)
    else:
        print(f"kernel {os.uname().release}, backend {args.backend}")
        run(args)
        print("live-stress-done")


if __name__ == "__main__":
    main()
