"""One escape attempt (or its control) per call, through raw system calls.

usage: escape.py OPERATION ARGS...
Exits 0 when the operation succeeded; otherwise prints "errno NAME" and exits 1.
"""
import ctypes
import errno
import os
import struct
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# x86_64 system call numbers
SYS = {"tkill": 200, "tgkill": 234, "pidfd_send_signal": 424, "pidfd_open": 434, "bpf": 321,
       "perf_event_open": 298, "init_module": 175, "finit_module": 313, "pivot_root": 155,
       "process_vm_readv": 310, "process_vm_writev": 311, "ptrace": 101}
PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def syscall(name, *args):
    r = libc.syscall(SYS[name], *args)
    if r < 0:
        e = ctypes.get_errno()
        print(f"errno {errno.errorcode.get(e, e)}")
        sys.exit(1)
    return r


def bpf_map_create():
    # union bpf_attr for BPF_MAP_CREATE: map_type, key_size, value_size, max_entries
    attr = ctypes.create_string_buffer(struct.pack("IIII", 2, 4, 4, 1), 128)  # BPF_MAP_TYPE_ARRAY
    os.close(syscall("bpf", 0, attr, 128))


def perf_event_open():
    # struct perf_event_attr: type PERF_TYPE_SOFTWARE, size, config PERF_COUNT_SW_CPU_CLOCK
    attr = ctypes.create_string_buffer(struct.pack("IIQ", 1, 128, 0), 128)
    os.close(syscall("perf_event_open", attr, 0, -1, -1, 0))


def iovec(buf):
    return struct.pack("QQ", ctypes.addressof(buf), len(buf))


def process_vm(op, pid):
    """Reads or writes one word of `pid` at the address of our own buffer: a child forked
    from us has the same layout; for another process the permission check comes first."""
    local = ctypes.create_string_buffer(8)
    liov = ctypes.create_string_buffer(iovec(local), 16)
    riov = ctypes.create_string_buffer(iovec(local), 16)
    syscall("process_vm_" + op, int(pid), liov, 1, riov, 1, 0)


def ptrace_attach(pid):
    syscall("ptrace", PTRACE_ATTACH, int(pid), 0, 0)
    os.waitpid(int(pid), 0)
    syscall("ptrace", PTRACE_DETACH, int(pid), 0, 0)


def with_child(operation):
    """Runs `operation(pid)` on a child of ours that sleeps: the in-sandbox control."""
    pid = os.fork()
    if pid == 0:
        while True:
            os.pause()
    try:
        operation(str(pid))
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


def main():
    op, args = sys.argv[1], sys.argv[2:]
    if op == "bpf-map-create":
        bpf_map_create()
    elif op == "perf-event-open":
        perf_event_open()
    elif op == "finit-module":
        fd = os.open(args[0], os.O_RDONLY)
        syscall("finit_module", fd, b"", 0)
    elif op == "init-module":
        image = open(args[0], "rb").read()
        syscall("init_module", image, len(image), b"")
    elif op == "pivot-root":
        syscall("pivot_root", args[0].encode(), args[1].encode())
    elif op == "tkill":
        syscall("tkill", int(args[0]), 15)
    elif op == "tgkill":
        syscall("tgkill", int(args[0]), int(args[0]), 15)
    elif op == "pidfd-send-signal":
        fd = syscall("pidfd_open", int(args[0]), 0)
        syscall("pidfd_send_signal", fd, 15, None, 0)
    elif op == "ptrace-attach":
        ptrace_attach(args[0])
    elif op in ("process-vm-readv", "process-vm-writev"):
        process_vm(op.split("-")[-1], args[0])
    elif op == "child":
        # child OPERATION: the operation on a sleeping child of ours
        name = args[0]
        ops = {"ptrace-attach": ptrace_attach, "tkill": lambda p: syscall("tkill", int(p), 15),
               "process-vm-readv": lambda p: process_vm("readv", p),
               "process-vm-writev": lambda p: process_vm("writev", p)}
        with_child(ops[name])
    else:
        sys.exit(f"unknown operation {op}")


if __name__ == "__main__":
    main()
