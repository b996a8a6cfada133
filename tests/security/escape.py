"""One escape attempt (or its control) per call, through raw system calls.

usage: escape.py OPERATION ARGS...
Exits 0 when the operation succeeded; otherwise prints "errno NAME" and exits 1.
"""
import array
import ctypes
import errno
import fcntl
import mmap
import os
import pty
import socket
import struct
import subprocess
import sys
import termios
import tty

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# x86_64 system call numbers
SYS = {"tkill": 200, "tgkill": 234, "pidfd_send_signal": 424, "pidfd_open": 434, "bpf": 321,
       "perf_event_open": 298, "init_module": 175, "finit_module": 313, "pivot_root": 155,
       "process_vm_readv": 310, "process_vm_writev": 311, "ptrace": 101, "memfd_create": 319,
       "name_to_handle_at": 303, "open_by_handle_at": 304, "io_uring_setup": 425, "io_uring_enter": 426,
       "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432}
PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def syscall(name, *args):
    # syscall(2) is variadic: a Python int would go as a C int, leaving the register's
    # upper half to chance, so each goes as a long.
    args = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = libc.syscall(SYS[name], *args)
    if r < 0:
        e = ctypes.get_errno()
        print(f"errno {errno.errorcode.get(e, e)}")
        sys.exit(1)
    return r


CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_BIND, MNT_DETACH, AT_FDCWD = 4096, 2, -100
OPEN_TREE_CLONE, MOVE_MOUNT_F_EMPTY_PATH = 1, 4


def libc_call(name, *args):
    if getattr(libc, name)(*args) != 0:
        e = ctypes.get_errno()
        print(f"errno {errno.errorcode.get(e, e)}")
        sys.exit(1)


def own_namespaces():
    """A user namespace and a mount namespace of our own, with our ids mapped to root."""
    uid, gid = os.getuid(), os.getgid()
    libc_call("unshare", CLONE_NEWUSER | CLONE_NEWNS)
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def mount(source, target, fstype, flags):
    libc_call("mount", source.encode(), target.encode(), fstype.encode() if fstype else None, flags, None)


def ns_root(how, newroot, exposed):
    """In namespaces of our own: a tmpfs at `newroot` with `exposed` bound at data/, then
    pivot_root or chroot into it, and a read of /data/file there."""
    own_namespaces()
    mount("none", newroot, "tmpfs", 0)
    os.mkdir(f"{newroot}/data")
    os.mkdir(f"{newroot}/old")
    mount(exposed, f"{newroot}/data", None, MS_BIND)
    if how == "pivot":
        os.chdir(newroot)
        syscall("pivot_root", b".", b"old")
        os.chdir("/")
        libc_call("umount2", b"/old", MNT_DETACH)
    else:
        os.chroot(newroot)
        os.chdir("/")
    show(oserror(os.open, "/data/file", os.O_RDONLY))


def move_tree(source, target):
    """In namespaces of our own: a detached copy of `source` (open_tree) attached at
    `target` (move_mount), and a read of target/file."""
    own_namespaces()
    tree = syscall("open_tree", AT_FDCWD, source.encode(), OPEN_TREE_CLONE)
    syscall("move_mount", tree, b"", AT_FDCWD, target.encode(), MOVE_MOUNT_F_EMPTY_PATH)
    show(oserror(os.open, f"{target}/file", os.O_RDONLY))


def tree_read(source, name):
    """A detached copy of `source` without its submounts (open_tree), and a read of `name`
    through it."""
    tree = syscall("open_tree", AT_FDCWD, source.encode(), OPEN_TREE_CLONE)
    show(oserror(os.open, name, os.O_RDONLY, dir_fd=tree))


def fsmount_tmpfs():
    """A tmpfs made with fsopen and fsmount, which never pass mount(2): a file written and
    read back through the detached mount."""
    fs = syscall("fsopen", b"tmpfs", 0)
    syscall("fsconfig", fs, 6, None, None, 0)  # FSCONFIG_CMD_CREATE
    mnt = syscall("fsmount", fs, 0, 0)
    fd = os.open("made", os.O_CREAT | os.O_RDWR, 0o600, dir_fd=mnt)
    os.write(fd, b"made\n")
    print(os.pread(fd, 16, 0).decode(), end="")


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


def show(fd):
    """Prints what fd reads: the suite looks for the secret's content in stdout."""
    sys.stdout.write(os.read(fd, 4096).decode(errors="replace"))
    sys.stdout.flush()


def oserror(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except OSError as e:
        print(f"errno {errno.errorcode.get(e.errno, e.errno)}")
        sys.exit(1)


def opath_reopen(path):
    """An O_PATH descriptor opens nothing; reopening it through /proc/self/fd does."""
    fd = oserror(os.open, path, os.O_PATH)
    show(oserror(os.open, f"/proc/self/fd/{fd}", os.O_RDONLY))


def fd_serve(sock_path, path, flags):
    """Outside the sandbox: opens path, hands the descriptor to the first client, exits."""
    fd = os.open(path, os.O_PATH if flags == "path" else os.O_RDONLY)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    srv.listen(1)
    print("listening", flush=True)
    conn, _ = srv.accept()
    conn.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    conn.close()


def fd_receive(sock_path):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    oserror(c.connect, sock_path)
    _, anc, _, _ = c.recvmsg(1, socket.CMSG_SPACE(4))
    return array.array("i", anc[0][2][:4])[0]


def handle_save(path, out):
    """Outside the sandbox: the file handle of path (struct file_handle), to a file."""
    fh = ctypes.create_string_buffer(struct.pack("Ii", 128, 0), 8 + 128)
    mount_id = ctypes.c_int()
    syscall("name_to_handle_at", -100, path.encode(), fh, ctypes.byref(mount_id), 0)
    size = struct.unpack_from("I", fh, 0)[0]
    with open(out, "wb") as f:
        f.write(fh.raw[:8 + size])


def handle_open(mount_path, handle_file):
    data = open(handle_file, "rb").read()
    mount_fd = oserror(os.open, mount_path, os.O_RDONLY | os.O_DIRECTORY)
    fh = ctypes.create_string_buffer(data, len(data))
    show(syscall("open_by_handle_at", mount_fd, fh, os.O_RDONLY))


class Uring:
    """A one-entry io_uring through raw system calls (liburing is not everywhere)."""
    OPENAT, RENAMEAT, LINKAT = 18, 35, 39

    def __init__(self):
        params = ctypes.create_string_buffer(120)
        self.fd = syscall("io_uring_setup", 1, params)
        sq = struct.unpack_from("IIIIIII", params, 40)  # head tail mask entries flags dropped array
        cq = struct.unpack_from("IIIIII", params, 80)  # head tail mask entries overflow cqes
        sq_entries, cq_entries = struct.unpack_from("II", params, 0)
        size = max(sq[6] + 4 * sq_entries, cq[5] + 16 * cq_entries)
        self.ring = mmap.mmap(self.fd, size, offset=0)  # IORING_FEAT_SINGLE_MMAP: both rings
        self.sqes = mmap.mmap(self.fd, 64 * sq_entries, offset=0x10000000)
        self.sq, self.cq = sq, cq

    def submit(self, opcode, fd, addr, length=0, addr2=0, op_flags=0):
        """Runs one request; returns the completion's result (a descriptor or -errno)."""
        self.sqes[0:64] = struct.pack("BBHiQQIIQHHiQQ", opcode, 0, 0, fd, addr2, addr, length, op_flags,
                                      1, 0, 0, 0, 0, 0)
        tail = struct.unpack_from("I", self.ring, self.sq[1])[0]
        struct.pack_into("I", self.ring, self.sq[6] + 4 * (tail & self.sq[2]), 0)
        struct.pack_into("I", self.ring, self.sq[1], tail + 1)
        syscall("io_uring_enter", self.fd, 1, 1, 1, None, 0)  # IORING_ENTER_GETEVENTS
        head = struct.unpack_from("I", self.ring, self.cq[0])[0]
        res = struct.unpack_from("i", self.ring, self.cq[5] + 16 * (head & self.cq[2]) + 8)[0]
        struct.pack_into("I", self.ring, self.cq[0], head + 1)
        return res


def uring(op, args):
    ring = Uring()
    bufs = [ctypes.create_string_buffer(a.encode()) for a in args]
    if op == "openat":
        res = ring.submit(Uring.OPENAT, -100, ctypes.addressof(bufs[0]), 0, 0, os.O_RDONLY)
    else:
        code = Uring.RENAMEAT if op == "renameat" else Uring.LINKAT
        res = ring.submit(code, -100, ctypes.addressof(bufs[0]), -100 & 0xffffffff, ctypes.addressof(bufs[1]))
    if res < 0:
        print(f"errno {errno.errorcode.get(-res, -res)}")
        sys.exit(1)
    if op == "openat":
        show(res)


def memfd_exec(path):
    """Copies a binary into an anonymous memory file and runs that (fexecve)."""
    fd = syscall("memfd_create", b"escape", 0)
    os.write(fd, open(path, "rb").read())
    oserror(os.execve, fd, [path], {})


def deep(mode, root, depth, name_len, leaf, content=""):
    """A file at the bottom of a chain of directories, walked one openat() at a time so
    that the whole path may be longer than any path string (create: made, outside)."""
    fd = oserror(os.open, root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(int(depth)):
        if mode == "create":
            try:
                os.mkdir("d" * int(name_len), dir_fd=fd)
            except FileExistsError:
                pass
        parent, fd = fd, oserror(os.open, "d" * int(name_len), os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(parent)
    if mode == "create":
        with open(os.open(leaf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=fd), "w") as f:
            f.write(content + "\n")
    else:
        show(oserror(os.open, leaf, os.O_RDONLY, dir_fd=fd))


FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_IMMUTABLE_FL = 0x80086601, 0x40086602, 0x10


def inode_flags(fd):
    return struct.unpack("i", oserror(fcntl.ioctl, fd, FS_IOC_GETFLAGS, bytes(8))[:4])[0]


def chattr(change, path):
    """chattr +i through a descriptor opened with O_ACCMODE 3, which asks for neither read
    nor write; -i (the cleanup, outside) opens for reading, as an immutable file refuses
    O_ACCMODE 3."""
    fd = oserror(os.open, path, 3 if change == "+i" else os.O_RDONLY)
    flags = inode_flags(fd)
    flags = flags | FS_IMMUTABLE_FL if change == "+i" else flags & ~FS_IMMUTABLE_FL
    oserror(fcntl.ioctl, fd, FS_IOC_SETFLAGS, struct.pack("i", flags) + bytes(4))
    print("immutable" if inode_flags(fd) & FS_IMMUTABLE_FL else "mutable")


def tty_inject(text):
    """Types `text` into the terminal on stdin with TIOCSTI, after a harmless ioctl."""
    oserror(fcntl.ioctl, 0, termios.TIOCGWINSZ, bytes(8))
    print("winsize ok", flush=True)
    for c in text.encode():
        oserror(fcntl.ioctl, 0, termios.TIOCSTI, bytes([c]))


def tty_session(injected, argv):
    """Runs argv with a new terminal on its stdin, then saves to `injected` what waits in
    that terminal's input, which whoever reads the terminal next (a shell) would get, and
    exits with argv's status."""
    master, slave = pty.openpty()
    tty.setraw(slave)  # no line buffering: an injected byte is readable at once
    status = subprocess.run(argv, stdin=slave).returncode
    os.set_blocking(slave, False)
    try:
        data = os.read(slave, 4096)
    except BlockingIOError:
        data = b""
    with open(injected, "wb") as f:
        f.write(data)
    os.close(master)
    sys.exit(status)


def race_rename(a, b, stop):
    """Outside the sandbox: renames a to b and back until stop exists."""
    while not os.path.exists(stop):
        os.rename(a, b)
        os.rename(b, a)


def race_open(secret, public, rounds):
    """Opens secret and public in turn; counts the reads of each that succeeded."""
    got = {secret: 0, public: 0}
    for _ in range(int(rounds)):
        for path in (secret, public):
            try:
                with open(path) as f:
                    if f.read():
                        got[path] += 1
            except OSError:
                pass
    print(f"secret-reads {got[secret]} public-reads {got[public]}")


def listen(port, log):
    """Outside the sandbox: accepts TCP connections on 127.0.0.1:port (or a unix socket's
    path), one log line each."""
    if port.startswith("/"):
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(port)
    else:
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", int(port)))
    srv.listen(8)
    print("listening", flush=True)
    while True:
        conn, _ = srv.accept()
        with open(log, "a") as f:
            f.write("connection\n")
        conn.close()


def nest_request(target, artifact):
    """Asks the nesting broker (runtime/bwrun/nesting/protocol.h) for a nested sandbox for
    `target`: a pid, or "child" for a sleeping child of ours. Prints the answer and, when
    granted, the target's cgroup."""
    broker = int(os.environ["BWRUN_BROKER"])
    child = 0
    if target == "child":
        child = os.fork()
        if child == 0:
            os.execv("/usr/bin/sleep", ["sleep", "300"])
    pidfd = os.pidfd_open(child or int(target))
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    request = struct.pack("65s256s", b"", artifact.encode())
    fds = [theirs.fileno(), os.open(artifact, os.O_RDONLY), pidfd]
    socket.socket(fileno=os.dup(broker)).sendmsg(
        [request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    theirs.close()
    reply = mine.recv(1024)
    ok, name, message = struct.unpack_from("i65s512s", reply)
    name, message = name.split(b"\0")[0].decode(), message.split(b"\0")[0].decode()
    if ok != 1:
        print(f"refused: {message}")
        sys.exit(1)
    with open(f"/proc/{child or target}/cgroup") as f:
        print(f"granted {name} {f.read().strip()}")
    if child:
        os.kill(child, 9)
        os.waitpid(child, 0)


FAMILIES = {"unix": socket.AF_UNIX, "inet": socket.AF_INET, "netlink": socket.AF_NETLINK,
            "packet": socket.AF_PACKET}


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
    elif op == "ns-root":
        # ns-root pivot|chroot NEWROOT EXPOSED
        ns_root(*args)
    elif op == "move-tree":
        move_tree(*args)
    elif op == "tree-read":
        tree_read(*args)
    elif op == "fsmount-tmpfs":
        fsmount_tmpfs()
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
    elif op == "read":
        show(oserror(os.open, args[0], os.O_RDONLY))
    elif op == "opath-reopen":
        opath_reopen(args[0])
    elif op == "fd-serve":
        fd_serve(*args)
    elif op == "fd-read":
        # fd-read SOCKET: reads the descriptor handed over
        show(fd_receive(args[0]))
    elif op == "fd-openat":
        # fd-openat SOCKET NAME: opens NAME relative to the directory descriptor handed over
        show(oserror(os.open, args[1], os.O_RDONLY, dir_fd=fd_receive(args[0])))
    elif op == "handle-save":
        handle_save(*args)
    elif op == "handle-open":
        handle_open(*args)
    elif op.startswith("uring-"):
        uring(op[len("uring-"):], args)
    elif op == "memfd-exec":
        memfd_exec(args[0])
    elif op == "fd-exec":
        # the control of memfd-exec: fexecve of the file itself
        oserror(os.execve, oserror(os.open, args[0], os.O_RDONLY), [args[0]], {})
    elif op == "deep":
        deep(*args)
    elif op == "chattr":
        chattr(*args)
    elif op == "tty-inject":
        tty_inject(args[0])
    elif op == "tty-session":
        # tty-session INJECTED COMMAND...: runs outside any sandbox
        tty_session(args[0], args[1:])
    elif op == "race-rename":
        race_rename(*args)
    elif op == "race-open":
        race_open(*args)
    elif op == "listen":
        listen(*args)
    elif op == "connect" and args[0].startswith("/"):
        s = socket.socket(socket.AF_UNIX)
        oserror(s.connect, args[0])
    elif op == "connect":
        oserror(socket.create_connection, ("127.0.0.1", int(args[0])), 5).close()
    elif op == "bind":
        s = socket.socket()
        oserror(s.bind, ("127.0.0.1", int(args[0])))
    elif op == "socket":
        oserror(socket.socket, FAMILIES[args[0]], socket.SOCK_DGRAM if args[0] != "packet" else socket.SOCK_RAW).close()
    elif op == "nest-request":
        nest_request(*args)
    elif op == "setxattr":
        oserror(os.setxattr, args[0], "trusted.bw-escape", b"1")
    elif op == "utime":
        oserror(os.utime, args[0], (0, 0))
    else:
        sys.exit(f"unknown operation {op}")


if __name__ == "__main__":
    main()
