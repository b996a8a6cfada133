"""The python workload: standard-library modules, files in the current directory and a
child process. Prints a summary that run_workloads.sh compares with what it must be."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

with open("data.json", "w") as f:
    json.dump({"items": [3, 1, 2]}, f)
with open("data.json") as f:
    items = json.load(f)["items"]

db = sqlite3.connect("items.db")
db.execute("create table t (n integer)")
db.executemany("insert into t values (?)", [(n,) for n in items])
db.commit()
total = db.execute("select sum(n) from t").fetchone()[0]
db.close()

with tempfile.TemporaryDirectory(dir=".") as tmp:
    path = os.path.join(tmp, "numbers.txt")
    with open(path, "w") as f:
        f.write("\n".join(str(n) for n in items) + "\n")
    child = subprocess.run(["sort", "-n", path], capture_output=True, text=True, check=True)
    sorted_items = child.stdout.split()

py_child = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True, check=True)
print(f"sum {total} sorted {','.join(sorted_items)} child {py_child.stdout.strip()}")
