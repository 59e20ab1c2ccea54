#!/usr/bin/env python3
"""Installs the build into an empty PREFIX (what make install does) and
checks the installed files are exactly those a user should get: the
versioned shared library, the archive, the header, corealloc.pc, the CMake
package, the man pages and the tool (with the profiling library it
preloads), and nothing else (no ablation libraries). The other packaging tests use the tree it leaves.

usage: install_tree.py --build DIR --prefix DIR --version V --config CONFIG
                       --libdir D --includedir D --mandir D [--tools] [--man]
"""
import argparse
import os
import shutil
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def expected_files(args):
    major = args.version.split(".")[0]
    lib, package = args.libdir, f"{args.libdir}/cmake/corealloc"
    files = {
        f"{args.includedir}/corealloc.h",
        f"{lib}/libcorealloc.a",
        f"{lib}/libcorealloc.so",
        f"{lib}/libcorealloc.so.{major}",
        f"{lib}/libcorealloc.so.{args.version}",
        f"{lib}/pkgconfig/corealloc.pc",
        f"{package}/corealloc-config.cmake",
        f"{package}/corealloc-config-version.cmake",
        f"{package}/corealloc-targets.cmake",
        f"{package}/corealloc-targets-{args.config.lower()}.cmake",
    }
    if args.man:
        files |= {f"{args.mandir}/man1/corealloc.1", f"{args.mandir}/man3/corealloc.3"}
    if args.tools:
        python = "lib/corealloc/python/corealloc_cli"
        sources = os.listdir(os.path.join(ROOT, "tools", "cli", "corealloc_cli"))
        files |= {f"{python}/{name}" for name in sources if name.endswith(".py")}
        files |= {f"{python}/build_info.py", f"{python}/option_names.py", "bin/corealloc",
                  "lib/corealloc/corealloc-replay", "lib/corealloc/libcorealloc_hist.so",
                  "lib/corealloc/libcorealloc_trace.so", "lib/corealloc/libcorealloc-prof.so"}
    return files


def main():
    parser = argparse.ArgumentParser()
    for option in ("build", "prefix", "version", "config", "libdir", "includedir", "mandir"):
        parser.add_argument("--" + option, required=True)
    parser.add_argument("--tools", action="store_true")
    parser.add_argument("--man", action="store_true")
    args = parser.parse_args()

    shutil.rmtree(args.prefix, ignore_errors=True)
    subprocess.run(["cmake", "--install", args.build, "--prefix", args.prefix],
                   check=True, stdout=subprocess.DEVNULL)
    installed = set()
    for folder, _, names in os.walk(args.prefix):
        installed |= {os.path.relpath(os.path.join(folder, name), args.prefix) for name in names}
    expected = expected_files(args)
    for name in sorted(installed - expected):
        print(f"FAIL: installed, but should not be: {name}")
    for name in sorted(expected - installed):
        print(f"FAIL: not installed: {name}")
    if installed != expected:
        sys.exit(1)
    soname_link = os.path.join(args.prefix, args.libdir, f"libcorealloc.so.{args.version.split('.')[0]}")
    if os.readlink(soname_link) != f"libcorealloc.so.{args.version}":
        print(f"FAIL: {soname_link} points to {os.readlink(soname_link)}")
        sys.exit(1)
    print(f"ok: the {len(installed)} files expected are installed in {args.prefix}")


if __name__ == "__main__":
    main()
