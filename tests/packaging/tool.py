#!/usr/bin/env python3
"""The corealloc tool behaves as a Unix command, from the build tree and
once installed: help with and without --help, --version, --option names
checked against src/platform/options_table.h, --stats reports that
survive a program closing its stderr (one per process, or in the file the
user chose), leaving no temporary file behind, and prof finding the
profiling library it runs (per-CPU caches where the kernel has rseq).

usage: tool.py --cli COREALLOC_SCRIPT --version V --close-stderr PROGRAM
               --root PROJECT_ROOT --work DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

parser = argparse.ArgumentParser()
for option in ("cli", "version", "close_stderr", "root", "work"):
    parser.add_argument("--" + option.replace("_", "-"), dest=option, required=True)
args = parser.parse_args()
sys.path.insert(0, os.path.join(args.root, "tools", "doc"))
import options_table  # noqa: E402

NAMES = [v.option_name for v in options_table.read(
    os.path.join(args.root, "src", "platform", "options_table.h")) if v.kind]
REPORT = "corealloc statistics"

shutil.rmtree(args.work, ignore_errors=True)
tmp = os.path.join(args.work, "tmp")
os.makedirs(tmp)
# The tool's temporary files go here, to be found if left behind.
ENV = dict(os.environ, TMPDIR=tmp)
for name in list(ENV):
    if name.startswith("COREALLOC_"):
        del ENV[name]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def corealloc(*arguments, status=0, env=None):
    result = subprocess.run([args.cli, *arguments], capture_output=True, text=True,
                            env=env or ENV, cwd=args.work, check=False)
    if result.returncode != status:
        fail(f"corealloc {' '.join(arguments)} exited {result.returncode}, expected {status}\n"
             f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result.stdout, result.stderr


def expect(what, condition, detail=""):
    if not condition:
        fail(f"{what}\n{detail}")
    print(f"ok: {what}")


out, _ = corealloc()
expect("bare corealloc prints its usage on stdout and exits 0", out.startswith("usage: corealloc"), out)
out, _ = corealloc("--help")
expect("--help prints the usage and exits 0", out.startswith("usage: corealloc"), out)
out, _ = corealloc("--version")
expect("--version prints the build's version", out == f"corealloc {args.version}\n", out)

_, err = corealloc("run", "--option", "purge_delay=5", "--", "true", status=2)
expect("an unknown --option name is an error naming the valid ones",
       f"the options are: {', '.join(NAMES)}" in err, err)
expect("... and the closest", "did you mean purge_delay_ms?" in err, err)
out, _ = corealloc("run", "--option", "Purge_Delay_MS=7", "--", "sh", "-c", "echo $COREALLOC_PURGE_DELAY_MS")
expect("a valid --option reaches the program, any case", out == "7\n", out)

_, err = corealloc("run", "--stats", "--", args.close_stderr)
expect("--stats reports although the program closed its stderr", err.count(REPORT) == 1, err)
_, err = corealloc("run", "--stats", "--", "sh", "-c", f"{args.close_stderr}; {args.close_stderr}")
expect("--stats reports every process", err.count(REPORT) == 2, err)
_, quiet = corealloc("run", "--", args.close_stderr)
expect("no report without --stats", REPORT not in quiet, quiet)

chosen = os.path.join(args.work, "chosen-report")
_, err = corealloc("run", "--stats", "--option", f"stats_file={chosen}", "--", args.close_stderr)
expect("--option stats_file=FILE: the report goes to FILE only",
       REPORT not in err and REPORT in open(chosen).read(), err)
os.remove(chosen)
_, err = corealloc("run", "--stats", "--", args.close_stderr, env=dict(ENV, COREALLOC_STATS_FILE=chosen))
expect("COREALLOC_STATS_FILE=FILE: the report goes to FILE only",
       REPORT not in err and REPORT in open(chosen).read(), err)
expect("no temporary file left behind", os.listdir(tmp) == [], str(os.listdir(tmp)))

prof_stats = os.path.join(args.work, "prof-stats.json")
_, err = corealloc("prof", "-o", os.path.join(args.work, "prof"), "--", "true",
                   env=dict(ENV, COREALLOC_STATS="json", COREALLOC_STATS_FILE=prof_stats))
expect("prof writes its profiles", os.path.exists(os.path.join(args.work, "prof.pb.gz")), err)
with open(prof_stats) as f:
    report = json.load(f)
expect("prof runs the profiling library, on the per-CPU caches",
       report["frontend"] == "rseq" or report["rseq_source"] == "unavailable", str(report)[:300])
