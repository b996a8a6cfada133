#!/usr/bin/env python3
"""Builds or opens a file at the bottom of a directory chain deeper than any single
path string may be, walking with openat() one component at a time.

usage: deep_path.py create|open ROOT DEPTH NAME_LEN
Prints the resolved length; exits 0 when the final open worked, 13 on EACCES, 1 otherwise.
"""
import errno
import os
import sys

mode, root, depth, name_len = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
name = "d" * name_len
fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
try:
    for _ in range(depth):
        if mode == "create":
            try:
                os.mkdir(name, dir_fd=fd)
            except FileExistsError:
                pass
        nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    flags = os.O_WRONLY | os.O_CREAT if mode == "create" else os.O_RDONLY
    leaf = os.open("leaf", flags, 0o644, dir_fd=fd)
    if mode == "create":
        os.write(leaf, b"deep\n")
    os.close(leaf)
    print(len(root) + depth * (name_len + 1) + len("/leaf"))
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
    sys.exit(13 if e.errno == errno.EACCES else 1)
