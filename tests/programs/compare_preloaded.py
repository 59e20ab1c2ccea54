"""Runs a command twice, without and with corealloc preloaded, and fails
unless both runs succeed with byte-identical standard output. The preloaded
run also writes corealloc's exit report to a file, which must exist and name
the front end: proof that corealloc really was the allocator.

Usage: compare_preloaded.py LIBCOREALLOC [--needs PROGRAM]... -- COMMAND [ARG...]
A missing COMMAND or --needs PROGRAM exits 77 (the test is skipped).
"""
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def run(command, env, workdir):
    result = subprocess.run(command, env=env, cwd=workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=300)
    return result.returncode, result.stdout, result.stderr


def main():
    if "--" not in sys.argv[2:]:
        sys.exit(__doc__)
    split = sys.argv.index("--", 2)
    library, options, command = sys.argv[1], sys.argv[2:split], sys.argv[split + 1:]
    if not command or len(options) % 2 or any(o != "--needs" for o in options[::2]):
        sys.exit(__doc__)
    for program in [command[0]] + options[1::2]:
        if shutil.which(program) is None:
            print(f"{program} not found: skipped")
            sys.exit(SKIP)

    plain_env = {k: v for k, v in os.environ.items()
                 if k != "LD_PRELOAD" and not k.startswith("COREALLOC_")}
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "corealloc-stats.txt")
        preload_env = dict(plain_env, LD_PRELOAD=library, COREALLOC_STATS="1",
                           COREALLOC_STATS_FILE=report)
        os.mkdir(os.path.join(tmp, "plain"))
        os.mkdir(os.path.join(tmp, "preloaded"))
        base = run(command, plain_env, os.path.join(tmp, "plain"))
        test = run(command, preload_env, os.path.join(tmp, "preloaded"))
        failures = []
        if base[0] != 0:
            failures.append(f"the run without corealloc failed ({base[0]}): {base[2][-2000:]!r}")
        if test[0] != base[0]:
            failures.append(f"exit status {test[0]} with corealloc, {base[0]} without; "
                            f"stderr: {test[2][-2000:]!r}")
        if test[1] != base[1]:
            line = next((i for i, (a, b) in enumerate(
                zip(test[1].splitlines(), base[1].splitlines())) if a != b), None)
            failures.append(f"stdout differs ({len(test[1])} bytes with corealloc, "
                            f"{len(base[1])} without; first differing line {line}); "
                            f"stderr: {test[2][-2000:]!r}")
        if not os.path.exists(report):
            failures.append("corealloc wrote no exit report: was it preloaded?")
        elif "frontend" not in open(report, encoding="utf-8", errors="replace").read():
            failures.append("corealloc's exit report does not name the front end")
        print(f"{' '.join(command)}: {len(base[1])} bytes of output")
        for failure in failures:
            print("FAIL:", failure)
        sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
