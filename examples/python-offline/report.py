"""Sums the amounts in ~/expenses.csv, then tries what an untrusted script might: send
the data away, change the user's files, read a key. Prints what happened to each."""
import csv
import os
import socket
import urllib.request

home = os.environ["HOME"]
with open(os.path.join(home, "expenses.csv"), newline="") as f:
    total = sum(float(row["amount"]) for row in csv.DictReader(f))
print(f"total {total:.2f}")


def attempt(what, action):
    try:
        action()
        print(f"{what}: allowed")
    except OSError as e:
        print(f"{what}: {e.strerror or e}")


attempt("upload", lambda: urllib.request.urlopen("http://127.0.0.1:8000/", timeout=5))
attempt("dns socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect(("127.0.0.1", 53)))
attempt("write home", lambda: open(os.path.join(home, "expenses.csv"), "a").write("1,x\n"))
attempt("read key", lambda: open(os.path.join(home, ".ssh", "id_ed25519")).read())
