#!/usr/bin/env python3
"""libcorealloc.a defines exactly the symbols libcorealloc.so exports: the
public API, nothing internal.

usage: exports_archive.py NM LIBCOREALLOC.a LIBCOREALLOC.so
"""
import subprocess
import sys

nm, archive, shared = sys.argv[1:4]


def defined(*args):
    out = subprocess.run([nm, "--defined-only", *args], capture_output=True, text=True, check=True).stdout
    return {parts[2] for parts in (line.split() for line in out.splitlines()) if len(parts) == 3}


in_archive = defined("-g", archive)
exported = defined("-D", shared)
extra, missing = sorted(in_archive - exported), sorted(exported - in_archive)
if extra:
    print("the archive defines internal symbols:", " ".join(extra))
if missing:
    print("the archive lacks exported symbols:", " ".join(missing))
print(f"{len(in_archive)} global symbols in the archive, {len(exported)} exported by the shared library")
sys.exit(1 if extra or missing else 0)
