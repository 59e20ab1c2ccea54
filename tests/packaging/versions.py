#!/usr/bin/env python3
"""The version is the same everywhere the build states it: the header's
macros (COREALLOC_VERSION_MAJOR/MINOR/PATCH, COREALLOC_VERSION,
COREALLOC_VERSION_STRING), the CMake project, corealloc_version() of the
library, and the shared library's file name and SONAME. (corealloc.pc,
the CMake package, the tool, the man pages, the Debian package and the
Rust crate are checked by their own tests.)

usage: versions.py --version PROJECT_VERSION --library LIBCOREALLOC.so.X.Y.Z
                   --include DIR --cc CC --readelf READELF
"""
import argparse
import ast
import ctypes
import os
import re
import subprocess
import sys

failures = []


def expect(what, actual, expected):
    if actual != expected:
        failures.append(f"{what}: {actual!r}, expected {expected!r}")
    else:
        print(f"ok: {what} = {actual!r}")


parser = argparse.ArgumentParser()
for option in ("version", "library", "include", "cc", "readelf"):
    parser.add_argument("--" + option, required=True)
args = parser.parse_args()
major, minor, patch = (int(part) for part in args.version.split("."))

# The macros as a compiler sees them.
snippet = "#include <corealloc.h>\nCOREALLOC_VERSION_MAJOR COREALLOC_VERSION_MINOR " \
          "COREALLOC_VERSION_PATCH\nCOREALLOC_VERSION\nCOREALLOC_VERSION_STRING\n"
expanded = subprocess.run([args.cc, "-E", "-P", "-I", args.include, "-x", "c", "-"], input=snippet,
                          capture_output=True, text=True, check=True).stdout.strip().splitlines()[-3:]
expect("COREALLOC_VERSION_MAJOR MINOR PATCH", expanded[0].split(), [str(major), str(minor), str(patch)])
expect("COREALLOC_VERSION", eval(expanded[1], {"__builtins__": {}}),
       major * 10000 + minor * 100 + patch)
expect("COREALLOC_VERSION_STRING", ast.literal_eval(expanded[2]), args.version)

library = ctypes.CDLL(args.library)
library.corealloc_version.restype = ctypes.c_char_p
expect("corealloc_version()", library.corealloc_version().decode(), args.version)

expect("the shared library's file name", os.path.basename(args.library), f"libcorealloc.so.{args.version}")
dynamic = subprocess.run([args.readelf, "-d", args.library], capture_output=True, text=True,
                         check=True).stdout
soname = re.search(r"\(SONAME\).*\[(.*)\]", dynamic)
expect("SONAME", soname[1] if soname else None, f"libcorealloc.so.{major}")

for failure in failures:
    print("FAIL: " + failure)
sys.exit(1 if failures else 0)
