"""Maps a file, then asks for execute permission on the mapping, the way a dynamic loader
or a JIT would. usage: map_exec.py mmap|mprotect FILE

mmap: mmap(PROT_READ|PROT_EXEC); mprotect: mmap(PROT_READ), then mprotect(PROT_READ|PROT_EXEC).
Exits 0 when the kernel allowed it, 13 (EACCES) or another errno when it refused.
"""
import ctypes
import os
import sys

PROT_READ, PROT_EXEC, MAP_PRIVATE = 0x1, 0x4, 0x02
MAP_FAILED = ctypes.c_void_p(-1).value

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

how, path = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDONLY)
first = PROT_READ | PROT_EXEC if how == "mmap" else PROT_READ
addr = libc.mmap(None, 4096, first, MAP_PRIVATE, fd, 0)
if addr in (None, MAP_FAILED):
    sys.exit(ctypes.get_errno())
if how == "mprotect" and libc.mprotect(addr, 4096, PROT_READ | PROT_EXEC) != 0:
    sys.exit(ctypes.get_errno())
sys.exit(0)
