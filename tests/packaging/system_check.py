#!/usr/bin/env python3
"""tools/setup/check_system.sh, the check make test and make bench run
first: with every package of a list installed it passes silently; a
missing build package stops it and names the one apt-get command that
installs what is missing; a missing package of another group is named and
does not stop it; a command on PATH stands for its package. Each case runs
a copy of the script beside a list made for it. Skipped (77) without dpkg.

usage: system_check.py --source SOURCE_DIR --work DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--source", required=True)
parser.add_argument("--work", required=True)
args = parser.parse_args()
if not shutil.which("dpkg"):
    print("skip: no dpkg")
    sys.exit(77)

failures = []
INSTALLED = "dpkg"  # installed wherever dpkg runs
ABSENT = "corealloc-no-such-package"


def check(name, lines, groups, want_status, want_in, want_out=None):
    directory = os.path.join(args.work, name)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    script = os.path.join(directory, "check_system.sh")
    shutil.copy(os.path.join(args.source, "tools", "setup", "check_system.sh"), script)
    with open(os.path.join(directory, "debian-packages.txt"), "w") as f:
        f.write("# a list made for this case\n" + "\n".join(lines) + "\n")
    result = subprocess.run(["bash", script, *groups], capture_output=True, text=True, check=False)
    said = result.stdout + result.stderr
    ok = result.returncode == want_status and all(w in said for w in want_in)
    ok = ok and (want_out is None or want_out not in said)
    print(f"{'ok' if ok else 'FAILED'}: {name}: status {result.returncode}, said {said!r}")
    if not ok:
        failures.append(name)


check("all installed", [f"{INSTALLED} build", f"{INSTALLED} test"], ["build", "test"], 0, [], "install")
check("build tool missing", [f"{INSTALLED} build", f"{ABSENT} build", f"{ABSENT}-2 test"], ["build", "test"], 1,
      ["cannot build without", f"sudo apt-get install {ABSENT} {ABSENT}-2"])
check("test package missing", [f"{INSTALLED} build", f"{ABSENT} test"], ["build", "test"], 0,
      ["not installed", f"sudo apt-get install {ABSENT}"])
check("other group not asked", [f"{INSTALLED} build", f"{ABSENT} bench"], ["build", "test"], 0, [], ABSENT)
check("command stands for package", [f"{INSTALLED} build", f"{ABSENT} test sh"], ["build", "test"], 0, [], ABSENT)

if failures:
    print("failed:", ", ".join(failures))
    sys.exit(1)
