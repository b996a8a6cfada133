#!/usr/bin/env python3
"""Socket probes for tests/e2e/run_net.sh.

  net_probe.py create FAMILY                   socket(FAMILY, SOCK_DGRAM or SOCK_RAW)
  net_probe.py connect tcp|udp HOST PORT       connect() (a TCP connect completes)
  net_probe.py bind tcp|udp HOST PORT          bind()
  net_probe.py sendto HOST PORT TEXT           one datagram from an unconnected UDP socket
  net_probe.py send HOST PORT TEXT             connect() a datagram socket, then send one
  net_probe.py listen tcp|udp HOST PORT LOG    outside the sandbox: one line in LOG per
                                               connection or datagram; LOG.ready once bound

A HOST that starts with "/" is a unix socket's path, with "@" an abstract unix socket's
name (the PORT is then ignored): tcp is then a stream socket and udp a datagram socket.

A probe prints "ok" or "errno N" (the failing call's errno) and exits 0 or 1.
"""
import errno
import os
import socket
import sys

FAMILIES = {"unix": socket.AF_UNIX, "netlink": socket.AF_NETLINK, "inet": socket.AF_INET,
            "inet6": socket.AF_INET6}


def family_of(host):
    if host[0] in "/@":
        return socket.AF_UNIX
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def address(host, port):
    if host[0] == "/":
        return host
    if host[0] == "@":
        return "\0" + host[1:]
    return (host, port)


def kind_of(proto):
    return socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM


def probe(args):
    op = args[0]
    if op == "create":
        family = FAMILIES[args[1]]
        kind = socket.SOCK_RAW if family == socket.AF_NETLINK else socket.SOCK_DGRAM
        socket.socket(family, kind).close()
    elif op in ("connect", "bind"):
        proto, host, port = args[1], args[2], int(args[3])
        with socket.socket(family_of(host), kind_of(proto)) as s:
            getattr(s, op)(address(host, port))
    elif op == "sendto":
        host, port, text = args[1], int(args[2]), args[3]
        with socket.socket(family_of(host), socket.SOCK_DGRAM) as s:
            s.sendto(text.encode(), address(host, port))
    elif op == "send":
        host, port, text = args[1], int(args[2]), args[3]
        with socket.socket(family_of(host), socket.SOCK_DGRAM) as s:
            s.connect(address(host, port))
            s.send(text.encode())
    else:
        raise SystemExit("unknown probe " + op)


def listen(proto, host, port, log):
    s = socket.socket(family_of(host), kind_of(proto))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(address(host, int(port)))
    if proto == "tcp":
        s.listen(16)
    open(log + ".ready", "w").close()
    while True:
        if proto == "tcp":
            conn, peer = s.accept()
            line = "connection from %s" % (peer[0] if isinstance(peer, tuple) else "unix",)
            conn.close()
        else:
            data, peer = s.recvfrom(4096)
            line = "datagram %s" % data.decode(errors="replace")
        with open(log, "a") as f:
            f.write(line + "\n")


def main():
    if sys.argv[1] == "listen":
        listen(*sys.argv[2:6])
        return 0
    try:
        probe(sys.argv[1:])
    except OSError as e:
        print("errno %d (%s)" % (e.errno, errno.errorcode.get(e.errno, "?")))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
