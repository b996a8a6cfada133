"""Changes a file's extended attributes, POSIX ACL or times, the ways programs do.
usage: attr_ops.py OP FILE

setxattr / removexattr: the attribute trusted.bw-e2e (tmpfs has user.* only from 6.6);
setacl: an access ACL with a named user, which the file system stores as an xattr (from
6.2 the kernel hands it to inode_set_acl, not inode_setxattr); utime: explicit times
(1, 1); touch: the times set to now; fd-utime / fd-setxattr: as utime / setxattr, on a
descriptor opened for reading only.
Exits 0 when the kernel allowed it, the errno when it refused.
"""
import os
import struct
import sys

NAME, VALUE = "trusted.bw-e2e", b"1"
ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER = 0x01, 0x02, 0x04, 0x10, 0x20
ACL_UNDEFINED_ID = 0xFFFFFFFF


def acl():
    entries = [(ACL_USER_OBJ, 6, ACL_UNDEFINED_ID), (ACL_USER, 4, 1000), (ACL_GROUP_OBJ, 4, ACL_UNDEFINED_ID),
               (ACL_MASK, 4, ACL_UNDEFINED_ID), (ACL_OTHER, 4, ACL_UNDEFINED_ID)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def with_read_fd(path, op):
    fd = os.open(path, os.O_RDONLY)
    try:
        op(fd)
    finally:
        os.close(fd)


OPS = {
    "setxattr": lambda p: os.setxattr(p, NAME, VALUE),
    "removexattr": lambda p: os.removexattr(p, NAME),
    "setacl": lambda p: os.setxattr(p, "system.posix_acl_access", acl()),
    "utime": lambda p: os.utime(p, (1, 1)),
    "touch": lambda p: os.utime(p),
    "fd-utime": lambda p: with_read_fd(p, lambda fd: os.utime(fd, (1, 1))),
    "fd-setxattr": lambda p: with_read_fd(p, lambda fd: os.setxattr(fd, NAME, VALUE)),
}

op, path = sys.argv[1], sys.argv[2]
try:
    OPS[op](path)
except OSError as e:
    print(f"{op} {path}: {e.strerror}", file=sys.stderr)
    sys.exit(e.errno)
