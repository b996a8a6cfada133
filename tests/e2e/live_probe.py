"""A program that runs inside a sandbox and tries accesses on request, for the live-edit
tests: each line on stdin is `read PATH`, `write PATH`, `exec PATH`, `connect HOST:PORT`
(TCP), `signal self` (kill(2) of itself with signal 0) or `socketpair unix` (socketpair(2),
which reaches the kernel's socket_create hook as socket(2) does), and each answer on
stdout is `ok` or the errno's name. stdin and stdout are pipes
that bwrun's caller made, so the probe needs no path of its own to talk."""
import errno
import os
import socket
import sys


def attempt(kind, path):
    try:
        if kind == "read":
            with open(path, "rb") as f:
                f.read(1)
        elif kind == "write":
            # Opened for writing only, neither appending nor truncating: the write access kind.
            os.close(os.open(path, os.O_WRONLY))
        elif kind == "exec":
            pid = os.fork()
            if pid == 0:
                try:
                    os.execv(path, [path])
                except OSError as e:
                    os._exit(100 + e.errno)
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            if code >= 100:
                return errno.errorcode.get(code - 100, str(code - 100))
        elif kind == "connect":
            host, _, port = path.rpartition(":")
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.connect((host, int(port)))
        elif kind == "signal":
            os.kill(os.getpid(), 0)
        elif kind == "socketpair":
            for s in socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM):
                s.close()
        else:
            return "unknown-command"
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def main():
    for line in sys.stdin:
        kind, _, path = line.rstrip("\n").partition(" ")
        if kind == "quit":
            break
        print(attempt(kind, path), flush=True)


if __name__ == "__main__":
    main()
