#!/usr/bin/env python3
"""The installed man pages: man finds corealloc(1) and corealloc(3) under
PREFIX/share/man, groff renders them without a warning, they carry the
version, and they list what src/platform/options_table.h declares:
corealloc(3) every environment variable, corealloc(1) every --option name.

usage: man_pages.py --prefix PREFIX --version V --root PROJECT_ROOT
"""
import argparse
import os
import shutil
import subprocess
import sys

parser = argparse.ArgumentParser()
for option in ("prefix", "version", "root"):
    parser.add_argument("--" + option, required=True)
args = parser.parse_args()
if shutil.which("man") is None:
    print("SKIP: no man command (Debian: man-db)")
    sys.exit(77)
sys.path.insert(0, os.path.join(args.root, "tools", "doc"))
import options_table  # noqa: E402

variables = options_table.read(os.path.join(args.root, "src", "platform", "options_table.h"))


def names_in_man1(text):
    """The --option names, listed in one sentence."""
    words = " ".join(text.split())
    names = [v.option_name for v in variables if v.kind]
    return names if f"one of {', '.join(names)}." in words else []


def names_in_man3(text):
    """Variables heading an entry of their own."""
    heads = {line.strip().split(" ")[0] for line in text.splitlines()}
    return [v.name for v in variables if v.name in heads]


expected = {
    "1": ([v.option_name for v in variables if v.kind], names_in_man1),
    "3": ([v.name for v in variables], names_in_man3),
}
env = dict(os.environ, MANWIDTH="200", LC_ALL="C.UTF-8")
manpath = os.path.join(args.prefix, "share", "man")
failures = []
for section, (names, listed) in expected.items():
    # man's own search, as a user's `man [3] corealloc` with this manpath
    found = subprocess.run(["man", "-M", manpath, section, "corealloc"], capture_output=True,
                           text=True, env=env, check=False)
    if f"COREALLOC({section})" not in found.stdout:
        failures.append(f"man -M {manpath} {section} corealloc: {found.stderr.strip()}")
    page = os.path.join(manpath, f"man{section}", f"corealloc.{section}")
    rendered = subprocess.run(["man", "--warnings", "-l", page], capture_output=True, text=True,
                              env=env, check=False)
    if rendered.returncode != 0 or rendered.stderr:
        failures.append(f"man -l {page}: status {rendered.returncode}, warnings:\n{rendered.stderr}")
    if f"corealloc {args.version}" not in rendered.stdout:
        failures.append(f"corealloc({section}) does not give the version {args.version}")
    missing = [name for name in names if name not in listed(rendered.stdout)]
    if missing:
        failures.append(f"corealloc({section}) does not name {', '.join(missing)}")
    print(f"corealloc({section}): {len(names) - len(missing)} of {len(names)} names listed")
for failure in failures:
    print("FAIL: " + failure)
sys.exit(1 if failures else 0)
