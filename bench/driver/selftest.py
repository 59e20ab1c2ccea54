#!/usr/bin/env python3
"""The driver's self-test (ctest bench.driver): a tiny suite with glibc,
corealloc when it is built, and crashalloc, an allocator that aborts. The
suite must finish, write its report, raw runs and plots, record every
crashalloc run as a failure, and keep running the others after a crash; the
memory benchmark in it must keep every key of its result line and show up
in the peak RSS summary and the Memory section."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = Path(__file__).resolve().parent / "run.py"


def check(condition: bool, message: str) -> None:
    if not condition:
        print(f"selftest FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--crash-library", type=Path, required=True)
    arguments = parser.parse_args()
    # make test points COREALLOC_PYTHON at the venv, which has matplotlib.
    python = os.environ.get("COREALLOC_PYTHON") or sys.executable
    with tempfile.TemporaryDirectory(prefix="corealloc-driver-test-") as out:
        out = Path(out)
        completed = subprocess.run(
            [python, str(DRIVER), "--build", str(arguments.build), "--tiny", "--threads", "1", "2",
             "--benchmarks", "mmicro", "larson", "lfstack-random", "tiny-objects",
             "--allocators", "glibc", "corealloc", f"crash={arguments.crash_library}", "--out", str(out)],
            capture_output=True, text=True, timeout=120)
        print(completed.stderr[-3000:], file=sys.stderr)
        check(completed.returncode == 0, f"driver exited with {completed.returncode}")
        report = (out / "report.md").read_text()
        runs = json.loads((out / "runs.json").read_text())
        check((out / "runs.csv").exists(), "runs.csv missing")
        check("## Summary" in report and "### mmicro" in report and "### lfstack-random" in report,
              "report lacks the summary or a benchmark table")
        crash_runs = [r for r in runs if r["allocator"] == "crash"]
        glibc_runs = [r for r in runs if r["allocator"] == "glibc"]
        # 3 threaded benchmarks x 2 thread counts, and tiny-objects once.
        check(len(crash_runs) == 7 and all(r["status"] == "failed" for r in crash_runs),
              "every crashalloc run must be recorded as failed")
        check(len(glibc_runs) >= 7 and all(r["status"] == "ok" for r in glibc_runs), "glibc runs must succeed")
        check(all(r["max_rss_kib"] for r in glibc_runs), "peak RSS missing for glibc runs")
        tiny = [r for r in glibc_runs if r["benchmark"] == "tiny-objects"]
        check(len(tiny) == 1 and {"rss_before_mib", "rss_after_mib", "bytes_per_object"} <= set(tiny[0]["fields"]),
              "tiny-objects' result line was not kept whole")
        check("### Peak RSS" in report and "| glibc |" in report.split("### Peak RSS")[1].split("##")[0],
              "the peak RSS summary is missing or has no glibc row")
        check("## Memory" in report and "### tiny-objects" in report.split("## Memory")[1],
              "the Memory section is missing")
        first_crash = min(i for i, r in enumerate(runs) if r["allocator"] == "crash")
        check(any(r["status"] == "ok" for r in runs[first_crash + 1:]), "the suite stopped after a crash")
        check("| crash |" in report.split("## Failures")[1], "the failures section does not list crashalloc")
        plots_skipped = "Plots skipped" in report
        check(plots_skipped or (out / "plots" / "mmicro.png").exists(), "no mmicro plot")
        print("selftest passed" + (" (plots skipped: no matplotlib)" if plots_skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
