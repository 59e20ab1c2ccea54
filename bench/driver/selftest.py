#!/usr/bin/env python3
"""The driver's self-test (ctest bench.driver): a tiny suite, repeated
twice, with glibc, corealloc when it is built, and crashalloc (an allocator
that aborts) given as an extra peer. The suite must finish, write its
report, raw runs and plots, record every crashalloc run as a failure, keep
running the others after a crash, rotate the allocator order between
repeats, compare the real program's output with glibc's, and show the
summary (time / fastest, peak RSS / leanest), the fastest of each row and
the spread of repeats, and corealloc's paired ratio to the fastest peer
(checked on made-up repeats too); the memory benchmark in it must keep every
key of its result line and show up in the Memory section."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = Path(__file__).resolve().parent / "run.py"
sys.path.insert(0, str(DRIVER.parent))
from aggregate import Cell, paired_cost  # noqa: E402
from runner import Run  # noqa: E402


def check(condition: bool, message: str) -> None:
    if not condition:
        print(f"selftest FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def check_paired_cost() -> None:
    """Pairs are matched by repeat: a repeat the other allocator failed, or
    a failed run of mine, makes no pair; by the CPUs' state, a repeat whose
    two runs found them in different states neither."""
    def cell(allocator: str, values: dict[int, float | None]) -> Cell:
        return Cell([Run("b", allocator, 1, repeat, "ok" if value else "failed", value)
                     for repeat, value in values.items()])
    mine = cell("corealloc", {0: 100.0, 1: 200.0, 2: 50.0, 3: None, 4: 80.0})
    other = cell("peer", {0: 110.0, 1: 190.0, 2: None, 3: 70.0, 4: 100.0})
    throughput = paired_cost(mine, other, higher_is_better=True)  # 1.10, 0.95, 1.25
    check(throughput is not None and throughput.pairs == 3 and abs(throughput.median - 1.10) < 1e-9
          and abs(throughput.lower_quartile - 1.025) < 1e-9 and abs(throughput.upper_quartile - 1.175) < 1e-9,
          f"paired ratios of throughputs: {throughput}")
    seconds = paired_cost(mine, other, higher_is_better=False)  # 0.909, 1.053, 0.8
    check(seconds is not None and abs(seconds.median - 100.0 / 110.0) < 1e-9, f"paired ratios of times: {seconds}")
    check(paired_cost(mine, cell("peer", {1: 190.0, 3: 40.0}), True) is None, "one pair is not a spread")
    # By the CPUs' state: a pair counts in a state only when both its runs found the CPUs in it.
    mine = cell("corealloc", {0: 100.0, 1: 100.0, 2: 100.0, 3: 100.0})
    other = cell("peer", {0: 110.0, 1: 120.0, 2: 200.0, 3: 300.0})
    for run, ns in zip(mine.runs + other.runs, [100, 90, 400, 420, 110, 100, 410, 120]):
        run.cross_core_ns = ns  # repeats 0, 1 fast; 2 slow; 3 mixed
    fast = paired_cost(mine, other, higher_is_better=True, state="fast")  # 1.10, 1.20
    check(fast is not None and fast.pairs == 2 and abs(fast.median - 1.15) < 1e-9, f"fast pairs: {fast}")
    check(paired_cost(mine, other, higher_is_better=True, state="slow") is None,
          "a mixed repeat made a slow pair")
    slow = paired_cost(mine, other, higher_is_better=True, state="slow", least=1)  # repeat 2 alone: 2.00
    check(slow is not None and slow.pairs == 1 and slow.median == slow.lower_quartile == 2.0,
          f"one slow pair, asked for: {slow}")


def main() -> int:
    check_paired_cost()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--crash-library", type=Path, required=True)
    arguments = parser.parse_args()
    # make test points COREALLOC_PYTHON at the venv, which has matplotlib.
    python = os.environ.get("COREALLOC_PYTHON") or sys.executable
    with tempfile.TemporaryDirectory(prefix="corealloc-driver-test-") as out:
        out = Path(out)
        completed = subprocess.run(
            [python, str(DRIVER), "--build", str(arguments.build), "--tiny", "--threads", "1", "2", "--repeat", "2",
             "--benchmarks", "mmicro", "larson", "lfstack-random", "tiny-objects", "python",
             "--allocators", "glibc", "corealloc", "--peer", f"crash={arguments.crash_library}", "--out", str(out)],
            capture_output=True, text=True, timeout=170)
        print(completed.stderr[-3000:], file=sys.stderr)
        check(completed.returncode == 0, f"driver exited with {completed.returncode}")
        report = (out / "report.md").read_text()
        runs = json.loads((out / "runs.json").read_text())
        check((out / "runs.csv").exists(), "runs.csv missing")
        check("### mmicro" in report and "### lfstack-random" in report and "### larson-standard" in report,
              "a benchmark table is missing ('larson' must also select larson-standard)")
        crash_runs = [r for r in runs if r["allocator"] == "crash"]
        # Table 3 runs glibc beside corealloc's ablation builds, never the others.
        glibc_runs = [r for r in runs if r["allocator"] == "glibc" and r["benchmark"] != "mmicro-table3"]
        check(any("crash (" in line for line in report.splitlines() if line.startswith("- Allocators:")),
              "the --peer allocator is not among the compared ones")
        check(crash_runs and len(crash_runs) == len(glibc_runs) and all(r["status"] == "failed" for r in crash_runs),
              "every crashalloc run must be recorded as failed")
        check(glibc_runs and all(r["status"] == "ok" for r in glibc_runs), "glibc runs must succeed")
        check(all(r["max_rss_kib"] for r in glibc_runs), "peak RSS missing for glibc runs")
        python_runs = [r for r in glibc_runs if r["benchmark"] == "python"]
        check(len(python_runs) == 2 and all("checksum=" in r["fields"]["output"] for r in python_runs),
              "the python workload's output was not compared with glibc's")
        tiny = [r for r in glibc_runs if r["benchmark"] == "tiny-objects"]
        check(len(tiny) == 2 and {"rss_before_mib", "rss_after_mib", "bytes_per_object"} <= set(tiny[0]["fields"]),
              "tiny-objects' result line was not kept whole")
        # Interleaving: the allocator that runs a row first changes from one repeat to the next.
        firsts = [next(r["allocator"] for r in runs if r["benchmark"] == "mmicro" and r["threads"] == 1
                       and r["repeat"] == repeat) for repeat in (0, 1)]
        check(firsts[0] != firsts[1], "the allocator order does not rotate between repeats")
        summary = report.split("## Summary")[1].split("\n## ")[0]
        check("time / fastest" in summary and "peak RSS / leanest" in summary
              and any(line.startswith("| glibc ") for line in summary.splitlines()),
              "the summary table is missing a column or the glibc row")
        check("Cross-core round trip" in summary, "the summary does not say how fast the CPUs passed a line")
        probed = [r["cross_core_ns"] for r in runs]
        check(len(os.sched_getaffinity(0)) < 2 or all(probed), f"a run without its cross-core round trip: {probed[:4]}")
        fastest = report.split("## Fastest per row")[1].split("\n## ")[0]
        check(any(line.startswith("| mmicro ") for line in fastest.splitlines()), "no mmicro row under Fastest per row")
        check(re.search(r"^\| mmicro .*\| \d+\.\d\d \[\d+\.\d\d-\d+\.\d\d\] vs glibc[ ;]", fastest, re.MULTILINE),
              "the mmicro row shows no paired ratio of corealloc to glibc")
        # Repeats in both cross-core states add each state's ratio and pair count.
        check(all(re.fullmatch(r"; fast \d+\.\d\d \(\d+\), slow \d+\.\d\d \(\d+\)", part)
                  for part in re.findall(r"; fast [^|]*?(?= *\|)", fastest)),
              "a row's per-state paired ratios are not in the form '; fast R (n), slow R (n)'")
        mmicro_table = report.split("### mmicro")[1].split("###")[0]
        check("±" in mmicro_table, "the mmicro table shows no spread of its repeats")
        check("## Memory" in report and "### tiny-objects" in report.split("## Memory")[1],
              "the Memory section is missing")
        first_crash = min(i for i, r in enumerate(runs) if r["allocator"] == "crash")
        check(any(r["status"] == "ok" for r in runs[first_crash + 1:]), "the suite stopped after a crash")
        check("| crash " in report.split("## Failures")[1], "the failures section does not list crashalloc")
        plots_skipped = "Plots skipped" in report
        check(plots_skipped or (out / "plots" / "mmicro.png").exists(), "no mmicro plot")
        print("selftest passed" + (" (plots skipped: no matplotlib)" if plots_skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
