"""Shared by the tools tests: arguments from CMake, running the command,
and assertions that report what differed."""
import argparse
import os
import shutil
import subprocess
import sys

SKIP = 77


def arguments():
    parser = argparse.ArgumentParser()
    for name in ("cli", "single", "threads", "fork", "cxx", "probe", "workdir", "library",
                 "prof_sites", "frontend"):
        parser.add_argument("--" + name.replace("_", "-"))
    args = parser.parse_args()
    test_name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    args.workdir = os.path.join(args.workdir, test_name)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    return args


def corealloc(args, *command, python=None, expect_status=0, env=None):
    """Runs the corealloc command; returns (stdout, stderr)."""
    prefix = [python, args.cli] if python else [args.cli]
    result = subprocess.run(prefix + list(command), capture_output=True, text=True,
                            env=env, cwd=args.workdir, check=False)
    if expect_status is not None and result.returncode != expect_status:
        fail(f"corealloc {' '.join(command)} exited {result.returncode}, expected {expect_status}\n"
             f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result.stdout, result.stderr


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def expect_equal(what, actual, expected):
    if actual != expected:
        fail(f"{what}: got {actual!r}, expected {expected!r}")
    print(f"ok: {what} = {actual!r}")


def expect_in(what, needle, haystack):
    if needle not in haystack:
        fail(f"{what}: {needle!r} not found in:\n{haystack}")
    print(f"ok: {what} contains {needle!r}")
