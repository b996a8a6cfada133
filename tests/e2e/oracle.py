#!/usr/bin/python3
"""Differential test: both backends, in the real kernel, against the reference evaluator.

usage: oracle.py prepare BIN_DIR WORKDIR [--seed N] [--policies K] [--queries Q]
       oracle.py run BIN_DIR WORKDIR [--backend maps|c]

prepare (on the host) describes a small file tree under ROOT, with device nodes among its
files, generates K seeded random policies over it (path rules, audit rules, and device
rules by pattern and by number, some under `when uid`), checks and compiles each with
both backends into WORKDIR, draws Q (access, path) queries per policy and asks `bwc
query` (the oracle) for each verdict, deciding rule and recording audit rule; everything
lands in WORKDIR/oracle.json.

run (as root in the VM, scripts/bwvm) creates the tree, runs one sandbox per policy and
backend (or per policy, under the one backend given) whose probe performs every query, and
compares the kernel's verdicts, the rules bwrun names for its denials and the audit records it reports with the oracle's. Prints one line per policy and
backend, "ok oracle ..." or "not ok oracle ...: first mismatches", then "oracle-done".

Run `run` with /usr/bin/python3: a python3 found on PATH may be a wrapper (pyenv's shim
takes ~13 s to start in the emulated VM).
"""
import argparse
import collections
import concurrent.futures
import json
import os
import random
import re
import shutil
import stat
import string
import subprocess
import sys

ROOT = "/tmp/bw-oracle/t"
ACCESSES = ("read", "write", "append", "exec", "ioctl")
# The last policy has this many more rules, each deciding a state of its own: more than the
# 2,048 ranges of states that the specialised backend writes as code, so that it keeps
# its decisions in a map (prepare says so if that stops being the case).
BULK = 2500
BACKENDS = ("maps", "c")
# The probe's interpreter: /usr/ is allowed by every policy. -I keeps the working directory
# off sys.path, -S skips site, -B writes no .pyc: python then opens nothing outside /usr.
PYTHON = ("/usr/bin/python3", "-I", "-S", "-B")

# Names chosen for globs: shared prefixes, one-character differences, dots, .key/.txt
# suffixes, hidden files, and long names (paths of up to ~300 bytes). All plain files are copies
# of /usr/bin/true, so that any of them can be executed.
LONG = "component_with_a_long_shared_prefix_" + "0123456789" * 3
TREE_FILES = (
    "a/b/c.txt", "a/b/c.key", "a/b/cc.txt", "a/b/d.txt",
    "a/bb/c.txt", "a/bb/.hidden.key", "a/b.txt", "a/ab.key",
    "ab/x.txt", "ab/x.key", "ab/xy.txt", "ab/.dot",
    "data.txt", "data.key", "datb.txt", "data.txt.bak",
    "d1/run", "d1/d2/ran", "d1/d2/d3/leaf.txt", "d1/d2/d3/leaf.key", "d1/d2/d3/run",
    "bin/run", "bin/runner", "bin/run.sh", "bin/ran",
    ".config/app.key", ".config/app.txt", "x.y.z", "key", "txt/a.txt", "a/B.txt", "ab/x-y.txt",
    "big/f0000", "big/f0001", "big/f1024", "big/f2047", "big/f2048", "big/f2499", "big/f2500", "big/g0000",
    "ab/cafe.txt", "ab/caf\u00e9.txt", "ab/caf\u00e9s.txt",
    f"{LONG}/{LONG}1.txt", f"{LONG}/{LONG}2.key", f"{LONG}x/{LONG}1.txt", f"{LONG}x/{LONG}/{LONG}/{LONG}2.txt",
)
# Device nodes in the tree: path under ROOT -> (type, major, minor). /dev/null, /dev/zero and
# /dev/full's numbers, which the devices invariant leaves to the rules; some share a
# directory with plain files, so that path patterns reach them too.
DEVICES = {
    "dev/null0": ("c", 1, 3), "dev/null.key": ("c", 1, 3), "dev/zero0": ("c", 1, 5), "dev/zero1": ("c", 1, 5),
    "dev/full0": ("c", 1, 7), "a/b/zero.txt": ("c", 1, 5), "ab/null.key": ("c", 1, 3),
}
DEVICE_ACCESSES = ("read", "write", "append", "ioctl")
DEVICE_NUMBERS = ("1:3", "1:5", "1:7", "1:*", "1:3-5", "1:5-7", "*:*")
# The ioctl command the probe asks (FIONREAD), and lists that hold it or not.
IOCTL_LISTS = ("ioctl 0x541b", "ioctl 0x5401, 0x541b", "ioctl 0x5401", "ioctl any", "")
# The probe prints results as JSON without importing json (importing it costs ~0.3 s per
# sandbox in the emulated VM): names must need no escaping.
assert all(re.fullmatch(r"[\w./-]+", f) for f in TREE_FILES + tuple(DEVICES))

# Queries arrive on stdin as "ACCESS\tPATH" lines, UTF-8 bytes whatever the locale.
# ioctl opens with O_ACCMODE 3, which asks for neither read nor write, then asks FIONREAD:
# a device whose driver has no such command answers ENOTTY, past every check.
PROBE = r'''
import errno, fcntl, os, sys, termios
FLAGS = {b"read": os.O_RDONLY, b"write": os.O_WRONLY, b"append": os.O_WRONLY | os.O_APPEND}
def attempt(access, path):
    try:
        if access == b"exec":
            code = os.waitstatus_to_exitcode(os.waitpid(os.posix_spawn(path, [path], {}), 0)[1])
            return "allow" if code == 0 else "error: exit status %d" % code
        if access == b"ioctl":
            fd = os.open(path, 3 | os.O_CLOEXEC)
            try:
                fcntl.ioctl(fd, termios.FIONREAD, bytes(4))
            finally:
                os.close(fd)
            return "allow"
        os.close(os.open(path, FLAGS[access] | os.O_CLOEXEC))
        return "allow"
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EPERM):
            return "deny"
        if access == b"ioctl" and e.errno == errno.ENOTTY:
            return "allow"
        return "error: " + errno.errorcode.get(e.errno, str(e.errno))
for line in sys.stdin.buffer:
    access, path = line.rstrip(b"\n").split(b"\t")
    got = attempt(access, path).encode()
    sys.stdout.buffer.write(b'{"access": "%s", "path": "%s", "got": "%s"}\n' % (access, path, got))
    sys.stdout.buffer.flush()
'''

# Appended to the probe on the host: lists what the interpreter opened or mapped, which every
# policy must allow.
CENSUS = r'''
paths = {("read", os.path.realpath(sys.executable)), ("exec", os.path.realpath(sys.executable))}
for line in open("/proc/self/maps"):
    mapped = line.split(maxsplit=5)[5:]
    if mapped and mapped[0].startswith("/"):
        paths |= {("read", mapped[0].strip()), ("exec", mapped[0].strip())}
for module in list(sys.modules.values()):
    for f in (getattr(module, "__file__", None), getattr(module, "__cached__", None)):
        if f:
            paths |= {("read", f), ("read", os.path.dirname(f))}
paths |= {("read", d) for d in sys.path if os.path.isdir(d)}
# Read by libc while python starts, and by the probe's exec'd copies of true.
paths |= {("read", "/etc/ld.so.cache"), ("read", "/etc/localtime"), ("read", "/usr/share/locale/locale.alias")}
for access, path in sorted(paths):
    print(access + "\t" + os.path.realpath(path))
'''


def tree_nodes():
    """Directories and files of the tree, as absolute paths (the root included); device
    nodes are not among the files."""
    dirs, files = {ROOT}, []
    for f in TREE_FILES + tuple(DEVICES):
        if f in TREE_FILES:
            files.append(f"{ROOT}/{f}")
        parts = f.split("/")
        for i in range(1, len(parts)):
            dirs.add(ROOT + "/" + "/".join(parts[:i]))
    return sorted(dirs), files


def device_nodes():
    """Absolute path -> (type, major, minor)."""
    return {f"{ROOT}/{d}": number for d, number in DEVICES.items()}


# --- policy generation ------------------------------------------------------------------


def one_char_off(rng, name):
    i = rng.randrange(len(name))
    return name[:i] + rng.choice([c for c in "abcdxyz019._" if c != name[i]]) + name[i + 1:]


def char_class(rng, c):
    """A class that usually holds C, sometimes not."""
    pool = [x for x in "abcdekrtxyzB0123._" if x != c]
    kind = rng.randrange(4)
    if kind == 0:
        return "[" + "".join(rng.sample([c] + rng.sample(pool, 2), 3)) + "]"
    if kind == 1:
        return "[!" + "".join(rng.sample(pool, 2)) + "]"
    if kind == 2 and c.isalnum():
        alphabet = string.ascii_lowercase if c.islower() else string.ascii_uppercase if c.isupper() else string.digits
        lo, hi = sorted(rng.sample(alphabet, 2))
        return f"[{lo}-{hi}]"
    return "[!" + c + rng.choice(pool) + "]"


def glob_component(rng, name, neighbours, depth=0):
    """A glob for one component, built from NAME, which it usually (not always) matches."""
    kind = rng.choice(["star", "prefix", "suffix", "suffix", "question", "class", "class", "alt", "alt"])
    if kind == "star" or len(name) < 2:
        return "*"
    k = rng.randrange(1, len(name))
    if kind == "prefix":
        return name[:k] + "*"
    if kind == "suffix":
        dot = name.rfind(".")
        return "*" + (name[dot:] if dot > 0 and rng.random() < 0.6 else name[k:])
    if kind == "question":
        return name[:k] + "?" + name[k + 1:]
    if kind == "class":
        return name[:k] + char_class(rng, name[k]) + name[k + 1:]
    alternatives = {name if rng.random() < 0.8 else one_char_off(rng, name)}
    for _ in range(rng.randint(1, 2)):
        other = rng.choice(neighbours) if neighbours and rng.random() < 0.6 else one_char_off(rng, name)
        alternatives.add(other if depth > 0 or rng.random() < 0.7 else glob_component(rng, other, [], depth + 1))
    alternatives = sorted(alternatives)
    rng.shuffle(alternatives)
    if len(alternatives) > 2 and rng.random() < 0.3:  # nested braces
        return "{" + alternatives[0] + ",{" + ",".join(alternatives[1:]) + "}}"
    return "{" + ",".join(alternatives) + "}" if len(alternatives) > 1 else alternatives[0]


def make_pattern(rng, target, is_dir, children):
    """A pattern under ROOT built from TARGET's components, with random globs."""
    comps = target[len(ROOT) + 1:].split("/") if target != ROOT else []
    out, parent = [], ROOT
    for comp in comps:
        neighbours = [c for c in children[parent] if c != comp]
        out.append(glob_component(rng, comp, neighbours) if rng.random() < 0.35 else comp)
        parent = f"{parent}/{comp}"
    if rng.random() < 0.3:
        i = rng.randint(0, len(out))
        out[i:rng.randint(i, min(len(out), i + 2))] = ["**"]
    pattern = "/".join([ROOT] + out)
    if is_dir and not pattern.endswith("**"):
        pattern += rng.choice(["/", "/", "/**", "/*", "/*.txt", "/*.key", ""])
    return pattern


def make_policy(rng, name, bulk):
    """Returns (text, default, targets): the policy and the nodes its rules were built from.
    BULK more rules name ROOT/big/f0000, f0001, ... one each."""
    dirs, files = tree_nodes()
    devices = sorted(device_nodes())
    children = collections.defaultdict(list)
    for node in dirs[1:] + files + devices:
        parent, base = node.rsplit("/", 1)
        children[parent].append(base)
    default = rng.choice(["allow", "deny"])
    lines = ["# generated by tests/e2e/oracle.py", f'policy "{name}" {{', '    include "base"', f"    default {default}"]
    if default == "deny":
        lines.append("    allow read, exec /usr/  # the probe's interpreter")
    targets, patterns = [], []
    for _ in range(rng.randint(4, 9)):
        if patterns and rng.random() < 0.15:  # the same pattern again: ties, deny over allow
            pattern = rng.choice(patterns)
        else:
            is_dir = rng.random() < 0.45
            target = rng.choice(dirs if is_dir else files)
            targets.append(target)
            pattern = make_pattern(rng, target, is_dir, children)
        patterns.append(pattern)
        n = rng.choices([1, 2, 3, 4], weights=[5, 3, 1, 1])[0]
        accesses = "all" if n == 4 and rng.random() < 0.5 else ", ".join(sorted(rng.sample(ACCESSES, n), key=ACCESSES.index))
        quoted = f'"{pattern}"' if rng.random() < 0.25 else pattern
        lines.append(f"    {rng.choice(['allow', 'deny'])} {accesses} {quoted}")
    # Audit rules record what the rules above allow; they decide nothing.
    for _ in range(rng.randint(1, 4)):
        is_dir = rng.random() < 0.6
        target = rng.choice(dirs if is_dir else files)
        targets.append(target)
        accesses = ", ".join(sorted(rng.sample(ACCESSES, rng.randint(2, 4)), key=ACCESSES.index))
        lines.append(f"    audit {accesses} {make_pattern(rng, target, is_dir, children)}")
    # Device rules decide device nodes before the path rules: by pattern (built from a node's
    # path) or by number, with or without an ioctl list, some only for uid 0 (the probe's)
    # or uid 1000 (never the probe's).
    for _ in range(rng.randint(1, 6)):
        decision = rng.choice(["allow", "deny"])
        n = rng.choices([1, 2, 3], weights=[4, 2, 1])[0]
        accesses = "all" if rng.random() < 0.15 else ", ".join(
            sorted(rng.sample(DEVICE_ACCESSES, n), key=DEVICE_ACCESSES.index))
        if rng.random() < 0.5:
            target = rng.choice(devices)
            targets.append(target)
            names = make_pattern(rng, target, False, children)
        else:
            names = f"char {rng.choice(DEVICE_NUMBERS)}"
        ioctls = rng.choice(IOCTL_LISTS) if decision == "allow" else ""
        rule = f"device {decision} {accesses} {names} {ioctls}".rstrip()
        condition = rng.choices(["", "0", "1000"], weights=[6, 2, 1])[0]
        lines.append(f"    when uid {condition} {{ {rule} }}" if condition else f"    {rule}")
    for i in range(bulk):
        lines.append(f"    {rng.choice(['allow', 'deny'])} {rng.choice(ACCESSES)} {ROOT}/big/f{i:04d}")
    if bulk:
        targets += [f for f in files if f.startswith(f"{ROOT}/big/")]
    lines.append("}")
    return "\n".join(lines) + "\n", default, targets


def draw_queries(rng, count, targets):
    """COUNT distinct (access, path) pairs, half of them at or under the rules' targets, one
    in four on a device node."""
    dirs, files = tree_nodes()
    devices = sorted(device_nodes())
    pairs = ({(a, p) for a in ACCESSES for p in files} | {("read", d) for d in dirs}
             | {(a, p) for a in DEVICE_ACCESSES for p in devices})
    count = min(count, len(pairs))
    chosen = []
    while len(chosen) < count:
        access = rng.choice(ACCESSES)
        if rng.random() < 0.25:
            access, path = rng.choice(DEVICE_ACCESSES), rng.choice(devices)
        elif rng.random() < 0.5 and targets:
            target = rng.choice(targets)
            near = [p for p in files + dirs + devices if p == target or p.startswith(target + "/")]
            path = rng.choice(near)
        else:
            path = rng.choice(files + dirs if access == "read" else files)
        if (access, path) in pairs and (access, path) not in chosen:
            chosen.append((access, path))
    return chosen


# --- the oracle ---------------------------------------------------------------------------


def bwc(bin_dir, *args):
    return subprocess.run([os.path.join(bin_dir, "bwc"), *args], capture_output=True, encoding="utf-8", errors="replace")


def oracle(bin_dir, policy, access, path):
    """The reference evaluator's verdict: {"expect", "rule", "origin", "audit"}; "rule" is the
    rule's text as bwrun names it (`default deny` for the default); "audit", the text of the
    audit rule that records the access (an allowed one), or None."""
    device = device_nodes().get(path)
    extra = ["--device", "{}:{}:{}".format(*device), "--ioctl", "0x541b"] if device else []
    r = bwc(bin_dir, "query", policy, access, path, *extra)
    lines = r.stdout.splitlines()
    m = re.fullmatch(r"(allow|deny) (\w+) (\S+)", lines[0]) if r.returncode == 0 and lines else None
    if not m or m.group(2, 3) != (access, path) or len(lines) < 2:
        raise SystemExit(f"oracle.py: bwc query {policy} {access} {path}: status {r.returncode}: {r.stdout}{r.stderr}")
    by = re.fullmatch(r"  by `(.*)` \((.*)\), rule #\d+", lines[1])
    default = re.fullmatch(r"  by the default \((.*)\)", lines[1])
    if not by and not default:
        raise SystemExit(f"oracle.py: bwc query {policy} {access} {path}: unexpected output: {r.stdout}")
    audit = None
    if "recorded" in lines:
        recorded = re.fullmatch(r"  by `(.*)` \((.*)\), rule #\d+", lines[lines.index("recorded") + 1])
        if not recorded:
            raise SystemExit(f"oracle.py: bwc query {policy} {access} {path}: unexpected output: {r.stdout}")
        audit = recorded.group(1)
    if by:
        return {"expect": m.group(1), "rule": by.group(1), "origin": by.group(2), "audit": audit}
    return {"expect": m.group(1), "rule": f"default {m.group(1)}", "origin": default.group(1), "audit": audit}


def census():
    """(access, path) pairs the probe's interpreter needs, measured on the host."""
    r = subprocess.run([*PYTHON, "-c", PROBE + CENSUS], input="", capture_output=True, encoding="utf-8", check=True)
    return [tuple(line.split("\t")) for line in r.stdout.splitlines()]


def prepare(args):
    bin_dir, work = os.path.abspath(args.bin_dir), os.path.abspath(args.workdir)
    if work == ROOT or work.startswith(ROOT + "/"):
        raise SystemExit(f"oracle.py: WORKDIR must be outside {ROOT}, which `run` recreates")
    os.makedirs(work, exist_ok=True)
    needs = census()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    for round_ in range(20):
        policies = []
        for i in range(args.policies):
            name = f"p{i:02d}"
            path = os.path.join(work, name + ".bwp")
            for attempt in range(20):
                rng = random.Random(f"{args.seed}/{round_}/{i}/{attempt}")
                text, default, targets = make_policy(rng, name, BULK if i == args.policies - 1 else 0)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                checked = bwc(bin_dir, "check", path)
                if checked.returncode != 0:
                    errors = [line for line in checked.stderr.splitlines() if ": error: " in line]
                    print(f"oracle.py: note: {name} (attempt {attempt}) has errors, drawing another: " + " | ".join(errors),
                          file=sys.stderr)
                    continue
                denied = [(a, p) for (a, p), v in zip(needs, pool.map(lambda q: oracle(bin_dir, path, *q), needs))
                          if v["expect"] != "allow"]
                if denied:
                    print(f"oracle.py: note: {name} (attempt {attempt}) denies the probe's {denied[0]}, drawing another",
                          file=sys.stderr)
                    continue
                break
            else:
                raise SystemExit(f"oracle.py: no usable policy {name} in 20 attempts")
            queries = draw_queries(rng, args.queries, targets)
            verdicts = pool.map(lambda q: oracle(bin_dir, path, *q), queries)
            policies.append({"name": name, "source": path, "default": default, "text": text,
                             "queries": [{"access": a, "path": p, **v} for (a, p), v in zip(queries, verdicts)]})
        seen = {(q["access"], q["expect"]) for p in policies for q in p["queries"]}
        missing = [f"{d} {a}" for a in ACCESSES for d in ("allow", "deny") if (a, d) not in seen]
        if not missing:
            break
        print(f"oracle.py: note: round {round_} never sees {', '.join(missing)}; drawing again", file=sys.stderr)
    else:
        raise SystemExit("oracle.py: 20 rounds without both outcomes for every access")
    # A policy that passes `bwc check` and does not compile is a bwc bug: `run` reports it
    # as that backend's failure rather than drawing a policy that avoids it.
    for p in policies:
        p["objects"], p["compile_errors"] = {}, {}
        for backend in BACKENDS:
            out = os.path.join(work, f"{p['name']}.{backend}.o")
            r = bwc(bin_dir, p["source"], "-o", out, f"--backend={backend}")
            if r.returncode == 0:
                p["objects"][backend] = out
            else:
                errors = [line for line in r.stderr.splitlines() if "error" in line]
                p["compile_errors"][backend] = " | ".join(errors)[:400]
                print(f"oracle.py: note: {p['name']} does not compile with --backend={backend}: "
                      + " | ".join(errors[:2]), file=sys.stderr)
    if "#define BW_POLICY_INLINE_DECISIONS 0" not in bwc(bin_dir, policies[-1]["source"], "--emit=c").stdout:
        print(f"oracle.py: note: the c backend inlines all decisions of {policies[-1]['name']}: raise BULK",
              file=sys.stderr)
    dirs, files = tree_nodes()
    with open(os.path.join(work, "oracle.json"), "w") as f:
        json.dump({"seed": args.seed, "round": round_, "root": ROOT, "dirs": dirs, "files": files,
                   "devices": device_nodes(),
                   "probe_needs": needs, "policies": policies}, f, indent=1)
    counts = collections.Counter((q["access"], q["expect"]) for p in policies for q in p["queries"])
    recorded = sum(q["audit"] is not None and q["expect"] == "allow" for p in policies for q in p["queries"])
    nodes = device_nodes()
    on_devices = collections.Counter(q["expect"] for p in policies for q in p["queries"] if q["path"] in nodes)
    by_device_rules = sum(q["path"] in nodes and q["rule"].startswith("device ") for p in policies for q in p["queries"])
    print(f"prepared {len(policies)} policies, {sum(counts.values())} queries in {work} (seed {args.seed}, round {round_}): "
          + ", ".join(f"{a} {counts[a, 'allow']}/{counts[a, 'deny']}" for a in ACCESSES) + " allowed/denied, "
          + f"{recorded} recorded by audit rules; on device nodes {on_devices['allow']}/{on_devices['deny']} "
          + f"allowed/denied, {by_device_rules} decided by device rules")


# --- in the VM ----------------------------------------------------------------------------

def make_tree(data):
    shutil.rmtree(data["root"], ignore_errors=True)
    for d in data["dirs"]:
        os.makedirs(d, exist_ok=True)
    for f in data["files"]:
        shutil.copyfile("/usr/bin/true", f)
        os.chmod(f, 0o755)
    for path, (kind, major, minor) in data["devices"].items():
        os.mknod(path, 0o666 | (stat.S_IFCHR if kind == "c" else stat.S_IFBLK), os.makedev(major, minor))


def check_one(bin_dir, policy, backend):
    """Runs POLICY's queries in one sandbox; returns (mismatches, counts)."""
    queries = policy["queries"]
    if backend in policy["compile_errors"]:
        return [f"bwc {policy['source']} --backend={backend} failed: {policy['compile_errors'][backend]}"], None
    # Every denial is in the audit file; stderr shows at most 20 a second.
    audit = policy["objects"][backend] + ".audit.jsonl"
    if os.path.exists(audit):
        os.unlink(audit)
    r = subprocess.run([os.path.join(bin_dir, "bwrun"), "--audit", audit, policy["objects"][backend], "--",
                        *PYTHON, "-c", PROBE],
                       input="".join(f"{q['access']}\t{q['path']}\n" for q in queries),
                       capture_output=True, encoding="utf-8", errors="replace", timeout=300)
    try:
        results = [json.loads(line) for line in r.stdout.splitlines()]
    except ValueError:
        results = []
    if r.returncode != 0 or len(results) != len(queries):
        return [f"bwrun status {r.returncode}, {len(results)} of {len(queries)} results; "
                f"stdout: {r.stdout[-300:].strip()}; stderr: {r.stderr[-600:].strip()}"], None
    reported, records, repeated = {}, {}, []
    with open(audit, encoding="utf-8") as f:
        for event in map(json.loads, f):
            if "path" not in event or "rule" not in event:
                continue
            key = event["access"], event["path"]
            if event["event"] == "audit":
                if key in records:
                    repeated.append(key)
                records[key] = event["rule"]
            else:
                reported[key] = (event["rule"], f"{event['rule_file']}:{event['rule_line']}")
    mismatches = []
    for q, res in zip(queries, results):
        key = (q["access"], q["path"])
        said = f"oracle: {q['expect']} by `{q['rule']}` ({q['origin']})"
        denial = reported.pop(key, None)
        if (res["access"], res["path"]) != key:
            mismatches.append(f"probe answered {res['access']} {res['path']} for {q['access']} {q['path']}")
        elif res["got"] != q["expect"]:
            mismatches.append(f"{q['access']} {q['path']} expected {q['expect']} got {res['got']} ({said})")
        elif res["got"] == "deny" and denial != (q["rule"], q["origin"]):
            got = f"`{denial[0]}` ({denial[1]})" if denial else "nothing"
            mismatches.append(f"{q['access']} {q['path']} denied, bwrun names {got} ({said})")
        elif res["got"] == "allow" and denial:
            mismatches.append(f"{q['access']} {q['path']} allowed, yet bwrun reports a denial by `{denial[0]}`")
        record = records.pop(key, None)
        expected = q["audit"] if q["expect"] == "allow" else None
        if record != expected:
            mismatches.append(f"{q['access']} {q['path']}: recorded by `{record}`, oracle: by `{expected}`")
    for access, path in repeated:
        mismatches.append(f"{access} {path} recorded more than once")
    for (access, path), rule in records.items():
        mismatches.append(f"{access} {path} recorded by `{rule}` outside the queries")
    # Denials of what the probe's interpreter needed: the oracle must agree, and prepare
    # made sure it allows all of that.
    for (access, path), (rule, origin) in reported.items():
        v = oracle(bin_dir, policy["source"], access, path)
        mismatches.append(f"{access} {path} denied outside the queries by `{rule}` ({origin}) "
                          f"(oracle: {v['expect']} by `{v['rule']}` ({v['origin']}))")
    allowed = sum(res["got"] == "allow" for res in results)
    recorded = sum(q["audit"] is not None and q["expect"] == "allow" for q in queries)
    return mismatches, (len(results), allowed, len(results) - allowed, recorded)


def run(args):
    bin_dir = os.path.abspath(args.bin_dir)
    with open(os.path.join(os.path.abspath(args.workdir), "oracle.json")) as f:
        data = json.load(f)
    with open("/sys/kernel/security/lsm") as f:
        print(f"kernel {os.uname().release}, LSMs {f.read().strip()}, {len(data['policies'])} policies, seed {data['seed']}")
    make_tree(data)
    failures = 0
    # One backend after the other: the map backend's generic program then loads once, not
    # once per policy (a specialised program takes its place in between).
    for backend in [args.backend] if args.backend else BACKENDS:
        for policy in data["policies"]:
            try:
                mismatches, counts = check_one(bin_dir, policy, backend)
            except subprocess.TimeoutExpired:
                mismatches, counts = ["the sandbox ran past 300 s"], None
            if mismatches:
                failures += 1
                more = f"; and {len(mismatches) - 3} more" if len(mismatches) > 3 else ""
                print(f"not ok oracle {policy['name']} {backend}: " + "; ".join(mismatches[:3]) + more, flush=True)
            else:
                print(f"ok oracle {policy['name']} {backend} ({counts[0]} queries: {counts[1]} allowed, {counts[2]} denied, "
                      f"{counts[3]} recorded)", flush=True)
    print("oracle-done")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("prepare", help="on the host: generate, check and compile policies, ask the oracle")
    p.add_argument("bin_dir")
    p.add_argument("workdir")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--policies", type=int, default=12)
    p.add_argument("--queries", type=int, default=40)
    r = sub.add_parser("run", help="in the VM, as root: run the queries in sandboxes and compare")
    r.add_argument("bin_dir")
    r.add_argument("workdir")
    r.add_argument("--backend", choices=BACKENDS, help="run this backend's sandboxes alone (default: both)")
    args = parser.parse_args()
    if args.mode == "prepare":
        prepare(args)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
