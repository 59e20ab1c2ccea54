"""The Markdown report: the summary (per allocator, the geometric means of
its time relative to the fastest and of its peak RSS relative to the
leanest, row by row), the fastest allocator of every row, the memory
benchmarks' own numbers, one table per benchmark (allocator x threads,
medians with the spread of the repeats), seed 003's speedup and scalability
for pound, a Table 2-like block of execution characteristics for mmicro,
seed 000's Table 3 across corealloc's ablation builds, and every failure
with its reason."""

from __future__ import annotations

import math
from pathlib import Path

from tabulate import tabulate

from aggregate import (SLOW_CROSS_CORE_NS, Cell, cells, cost_relative_to_best, cross_core_state, paired_cost,
                       row_keys, summarise)
from allocators import ABLATION_LABELS
from benchmarks import TABLE3, Benchmark
from runner import Run


def human(value: float | None, digits: int = 3) -> str:
    if value is None:
        return ""
    for threshold, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= threshold:
            return f"{value / threshold:.{digits}g}{suffix}"
    return f"{value:.{digits}g}"


def mib(kib: float | None) -> str:
    return "" if kib is None else f"{kib / 1024:.1f}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return tabulate(rows, header, tablefmt="github", disable_numparse=True).splitlines() + [""]


def ratio_text(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def cell_text(cell: Cell | None, best: float | None, text) -> str:
    """A cell's median, bold when it is the best of its column, with the
    spread of its repeats (half their min-max range, in % of the median);
    FAILED or TIMEOUT when no repeat succeeded."""
    if cell is None:
        return ""
    if cell.value is None:
        return (cell.failure or "").upper()
    shown = text(cell.value)
    shown = f"**{shown}**" if best is not None and cell.value == best else shown
    return shown if cell.spread_pct is None else f"{shown} ±{cell.spread_pct:.0f}%"


def benchmark_section(benchmark: Benchmark, table_cells, allocators: list[str]) -> list[str]:
    direction = "higher is better" if benchmark.higher_is_better else "lower is better"
    lines = [f"### {benchmark.name}", "",
             f"{benchmark.description}. Median {benchmark.unit}, {direction}; ± is half the min-max range of the "
             "repeats.", ""]
    columns = sorted({t for (name, _, t) in table_cells if name == benchmark.name}) or [1]
    best = {}
    for threads in columns:
        values = [c.value for a in allocators if (c := table_cells.get((benchmark.name, a, threads))) and c.value]
        best[threads] = (max(values) if benchmark.higher_is_better else min(values)) if values else None
    header = ["allocator"] + [f"{t} thr" for t in columns] if benchmark.threaded else ["allocator", benchmark.unit]
    rows, rss_rows = [], []
    for allocator in allocators:
        row_cells = [table_cells.get((benchmark.name, allocator, t)) for t in columns]
        if all(c is None for c in row_cells):
            continue
        rows.append([allocator] + [cell_text(c, best[t], human) for c, t in zip(row_cells, columns)])
        rss_rows.append([allocator] + [mib(c.median("max_rss_kib")) if c else "" for c in row_cells])
    if not rows:
        return []
    lines += table(header, rows)
    lines += ["Peak RSS (MiB):", ""] + table(header if benchmark.threaded else ["allocator", "MiB"], rss_rows)
    skipped = {run.error for c in table_cells.values() for run in c.runs
               if run.benchmark == benchmark.name and run.status == "skipped"}
    lines += [f"Skipped: {reason}." for reason in sorted(skipped)] + ([""] if skipped else [])
    return lines


def pound_section(table_cells, allocators: list[str], thread_counts: list[int]) -> list[str]:
    """Seed 003's numbers: speedup = ST time / MT time, scalability = speedup
    / perfect speedup (min(threads, CPUs)) in percent."""
    rows = []
    for allocator in allocators:
        row = [allocator]
        for threads in thread_counts:
            cell = table_cells.get(("pound", allocator, threads))
            speedup = cell.median_of(lambda r: float(r.fields["speedup"])) if cell else None
            scalability = cell.median_of(lambda r: float(r.fields["scalability_pct"])) if cell else None
            row.append("" if speedup is None else f"{speedup:.2f} ({scalability:.0f}%)")
        if any(row[1:]):
            rows.append(row)
    if not rows:
        return []
    return (["### pound: speedup and scalability (seed 003)", "",
             "Speedup factor = single-threaded time / multithreaded time for the same work; in parentheses "
             "the scalability, speedup as a percentage of the perfect speedup min(threads, CPUs).", ""]
            + table(["allocator"] + [f"{t} thr" for t in thread_counts], rows))


def stat_value(run: Run, key: str) -> float | None:
    value = run.stats.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def characteristics_section(table_cells, allocators: list[str], threads: int, cpus: int) -> list[str]:
    """Seed 000's Table 2 for mmicro, with what Linux can tell without
    hardware counters: the rusage of the run and corealloc's own statistics."""
    columns = [a for a in allocators if table_cells.get(("mmicro", a, threads))]
    if not columns:
        return []
    busy_cpus = min(threads, cpus)

    def row(label: str, extract, text) -> list[str]:
        values = []
        for allocator in columns:
            value = table_cells[("mmicro", allocator, threads)].median_of(extract)
            values.append(text(value) if value is not None else "")
        return [label] + values

    def cpu_utilisation(run: Run) -> float | None:
        if run.user_seconds is None or run.system_seconds is None:
            return None
        return 100.0 * (run.user_seconds + run.system_seconds) / (run.wall_seconds * cpus)

    def user_share(run: Run) -> float | None:
        if run.user_seconds is None or run.system_seconds is None:
            return None
        return 100.0 * run.user_seconds / max(1e-9, run.user_seconds + run.system_seconds)

    def switch_rate(run: Run) -> float | None:
        if run.voluntary_switches is None or run.involuntary_switches is None:
            return None
        return (run.voluntary_switches + run.involuntary_switches) / run.wall_seconds

    rows = [
        row("Malloc-free throughput (pairs/s)", lambda r: r.value, human),
        row(f"Malloc-free latency (ns per pair, x {busy_cpus} busy CPUs)", lambda r: 1e9 * busy_cpus / r.value,
            lambda v: f"{v:.1f}"),
        row("Peak RSS (MiB)", lambda r: r.max_rss_kib, mib),
        row("Peak mapped heap (MiB, corealloc stats)", lambda r: stat_value(r, "peak_mapped_bytes"),
            lambda v: f"{v / 2**20:.1f}"),
        row("CPU utilisation (user+sys / wall x CPUs)", cpu_utilisation, lambda v: f"{v:.1f}%"),
        row("User share of CPU time", user_share, lambda v: f"{v:.1f}%"),
        row("Context switches per second (voluntary + involuntary)", switch_rate, lambda v: f"{v:.0f}"),
        row("Interrupted critical sections (rseq aborts)", lambda r: stat_value(r, "rseq_aborts"),
            lambda v: f"{v:.0f}"),
    ]
    return ([f"### Execution characteristics of mmicro at {threads} threads (seed 000, Table 2)", "",
             f"`mmicro {threads} :10000 64`, medians over repeats. Latency is CPU time per pair as in the seed: "
             f"busy CPUs / throughput. Blank cells: not reported by that allocator.", ""]
            + table(["", *columns], rows))


def table3_section(runs: list[Run], allocators_in_table3: list[str], thread_counts: list[int]) -> list[str]:
    table3_cells = cells([r for r in runs if r.benchmark == TABLE3.name])
    if not table3_cells:
        return ["### Contributions of synchronisation and heap selection (seed 000, Table 3)", "",
                "Not measured: no corealloc build was found in the build directory.", ""]
    rows = []
    for allocator in allocators_in_table3:
        synchronisation, selection = ABLATION_LABELS.get(allocator, (allocator, "(baseline)"))
        row = [allocator, synchronisation, selection]
        for threads in thread_counts:
            cell = table3_cells.get((TABLE3.name, allocator, threads))
            if cell is None:
                row.append("")
            elif cell.value is None:
                row.append((cell.failure or "").upper())
            else:
                row.append(f"{cell.value / 1000:.0f}")
        frontends = {str(r.stats.get("frontend")) for c in table3_cells.values() for r in c.ok_runs
                     if r.allocator == allocator and "frontend" in r.stats}
        row.append(", ".join(sorted(frontends)))
        rows.append(row)
    return (["### Contributions of synchronisation and heap selection (seed 000, Table 3)", "",
             "`mmicro T :10000 64` scores in malloc-free pairs per millisecond; the front end column is what "
             "corealloc reported in its statistics.", ""]
            + table(["build", "synchronisation", "heap selection", *[f"{t} thr" for t in thread_counts],
                     "front end"], rows))


def field_value(run: Run, key: str) -> float | None:
    """A number of the run's RESULT line, None when absent or not a number."""
    try:
        return float(run.fields[key])
    except (KeyError, TypeError, ValueError):
        return None


def summary_section(runs: list[Run], benchmarks: list[Benchmark], allocators: list[str]) -> list[str]:
    speed = [b for b in benchmarks if not b.memory]
    rows = [[s.allocator, ratio_text(s.time_common), ratio_text(s.time_own), str(s.rows_measured),
             str(s.rows_fastest), ratio_text(s.rss_common), ratio_text(s.rss_own), str(s.rows_leanest),
             str(s.failed_runs)] for s in summarise(runs, speed, benchmarks, allocators)]
    return (["## Summary", "",
             "A row is a benchmark at one thread count. **time / fastest**: on every speed row, each allocator's "
             "time (for a throughput, the fastest's throughput over its own) divided by the fastest allocator's on "
             "that row, peers included; the geometric mean over rows, 1.00 = fastest everywhere, lower is better. "
             "**peak RSS / leanest**: the same with the peak RSS of the process (median over repeats) against the "
             "leanest on each row, over every row, speed and memory alike. \"common\": over the rows every "
             "allocator completed; \"own\": over the rows this one completed. A run that crashed or timed out "
             "leaves its row out for that allocator and is counted under failed runs. The memory benchmarks' scores "
             "(not speeds) are under Memory.", ""]
            + table(["allocator", "time / fastest (common)", "time / fastest (own)", "rows", "fastest in",
                     "peak RSS / leanest (common)", "peak RSS / leanest (own)", "leanest in", "failed runs"], rows)
            + ["", cross_core_text(runs), ""])


def cross_core_text(runs: list[Run]) -> str:
    """How fast the CPUs passed a cache line between them before the runs:
    rows that hand memory between threads rank allocators differently when
    it is slow, so a comparison should come from runs in one state."""
    measured = sorted(run.cross_core_ns for run in runs if run.cross_core_ns)
    if not measured:
        return "Cross-core round trip: not measured (one CPU, or bench/core-latency failed)."
    slow = sum(cross_core_state(run) == "slow" for run in runs)
    return (f"Cross-core round trip before each run (`bench/core-latency`, in runs.json as `cross_core_ns`): "
            f"median {measured[len(measured) // 2]:.0f} ns, {slow} of {len(measured)} runs past "
            f"{SLOW_CROSS_CORE_NS:.0f} ns (the slow state, where rows that hand memory between threads rank "
            f"allocators differently).")


def fastest_section(runs: list[Run], benchmarks: list[Benchmark], allocators: list[str]) -> list[str]:
    """Which allocator is fastest on each speed row, the runner-up, and how
    long corealloc takes relative to the fastest."""
    table_cells = cells(runs)
    rows = []
    for benchmark, threads in row_keys(table_cells, [b for b in benchmarks if not b.memory]):
        values = {a: c.value for a in allocators
                  if (c := table_cells.get((benchmark.name, a, threads))) is not None and c.value}
        if not values:
            continue
        ratios = cost_relative_to_best(values, benchmark.higher_is_better)
        ranked = sorted(ratios, key=ratios.get)
        runner_up = f"{ranked[1]} ({ratios[ranked[1]]:.2f})" if len(ranked) > 1 else ""
        rows.append([benchmark.name, str(threads), ranked[0], f"{human(values[ranked[0]])} {benchmark.unit}",
                     runner_up, ratio_text(ratios.get("corealloc")),
                     str(ranked.index("corealloc") + 1) if "corealloc" in ratios else "",
                     paired_text(table_cells, benchmark, threads, [a for a in ranked if a != "corealloc"])])
    if not rows:
        return []
    return (["## Fastest per row", "",
             "The fastest allocator of every speed row (median over repeats), the runner-up with its time / "
             "fastest, and corealloc's time / fastest and rank. **corealloc / fastest peer, paired**: corealloc's "
             "time over the fastest other allocator's within each repeat (they ran one after the other), the "
             "median of those ratios and, in brackets, their quartiles: a difference smaller than that spread is "
             "noise on this machine. Where some repeats found the CPUs passing a line fast and some slow (see "
             "Summary), the median of each state's pairs follows, with their count.", ""]
            + table(["benchmark", "threads", "fastest", "score", "runner-up", "corealloc / fastest",
                     "corealloc rank", "corealloc / fastest peer, paired"], rows))


def paired_text(table_cells, benchmark: Benchmark, threads: int, peers_ranked: list[str]) -> str:
    mine = table_cells.get((benchmark.name, "corealloc", threads))
    if mine is None or not peers_ranked:
        return ""
    peer = peers_ranked[0]
    theirs = table_cells[(benchmark.name, peer, threads)]
    paired = paired_cost(mine, theirs, benchmark.higher_is_better)
    if paired is None:
        return ""
    text = f"{paired.median:.2f} [{paired.lower_quartile:.2f}-{paired.upper_quartile:.2f}] vs {peer}"
    # Repeats in both states: each state's pairs apart, as the row may rank
    # the two allocators differently in each (a default run has 3 repeats,
    # so a state may have one pair).
    by_state = {state: paired_cost(mine, theirs, benchmark.higher_is_better, state, least=1)
                for state in ("fast", "slow")}
    if all(by_state.values()):
        text += "; " + ", ".join(f"{state} {p.median:.2f} ({p.pairs})" for state, p in by_state.items())
    return text


def memory_section(table_cells, allocators: list[str], benchmarks: list[Benchmark]) -> list[str]:
    """The memory benchmarks' numbers besides their scores, per allocator
    (medians over repeats)."""
    names = {b.name for b in benchmarks if b.memory}
    if not names:
        return []

    def rows_for(name: str, columns) -> list[list[str]]:
        rows = []
        for allocator in allocators:
            cell = table_cells.get((name, allocator, 1))
            if cell is None:
                continue
            if cell.value is None:
                rows.append([allocator] + [(cell.failure or "").upper()] + [""] * (len(columns) - 1))
                continue
            rows.append([allocator] + [text(cell.median_of(extract)) for extract, text in columns])
        return rows

    def number(digits: int):
        return lambda v: "" if v is None else f"{v:.{digits}f}"

    def field(key: str):
        return lambda run: field_value(run, key)

    def return_time(run: Run) -> float | None:
        value = field_value(run, "return_ms")
        return None if value is None else math.inf if value < 0 else value

    lines = ["## Memory", ""]
    if "rss-return" in names:
        rows = rows_for("rss-return", [
            (field("baseline_mib"), number(1)), (field("peak_mib"), number(1)), (field("end_of_frees_mib"), number(1)),
            (field("after_mib"), number(1)), (field("returned_pct"), number(1)),
            (return_time, lambda v: "" if v is None else "never" if math.isinf(v) else f"{v:.0f}")])
        window = {run.fields.get("window_s") for cell in table_cells.values() for run in cell.ok_runs
                  if run.benchmark == "rss-return"}
        if rows:
            lines += ["### rss-return", "",
                      f"RSS in MiB: the baseline after a warm-up, the peak with every block live, right after the last "
                      f"free, and at the end of the {', '.join(sorted(w for w in window if w))} s window while the "
                      "process sleeps; the share of the excess returned by then; and the time from the last free until "
                      "RSS was within 5% + 1 MiB of the baseline (never: not within the window).", ""]
            lines += table(["allocator", "baseline", "peak", "after frees", "end of window", "returned %",
                            "back to baseline (ms)"], rows)
    if "tiny-objects" in names:
        rows = rows_for("tiny-objects", [
            (field("rss_before_mib"), number(1)), (field("rss_after_mib"), number(1)),
            (field("bytes_per_object"), number(1)), (field("rss_per_requested_byte"), number(2)),
            (field("rss_after_free_mib"), number(1))])
        if rows:
            lines += ["### tiny-objects", "",
                      "Seed 003's Listing One: RSS in MiB before and after 1,000,000 live `malloc(8)` blocks, the RSS "
                      "cost per block and per requested byte, and RSS once they are all freed.", ""]
            lines += table(["allocator", "RSS before", "RSS after", "bytes per object", "RSS per requested byte",
                            "RSS after free"], rows)
    if "thread-churn" in names:
        rows = rows_for("thread-churn", [
            (field("baseline_mib"), number(1)), (field("rss_first_decile_mib"), number(1)),
            (field("rss_last_decile_mib"), number(1)), (field("peak_mib"), number(1)),
            (field("growth_ratio"), number(2)), (field("threads_per_sec"), human)])
        if rows:
            lines += ["### thread-churn", "",
                      "RSS in MiB before any thread, after the first and after the last tenth of the threads had "
                      "exited, and the process's peak; growth = last / first (1.00 = flat); thread lifetimes per "
                      "second.", ""]
            lines += table(["allocator", "baseline", "first tenth", "last tenth", "peak", "growth", "threads/s"],
                           rows)
    return lines if len(lines) > 2 else []


def failures_section(runs: list[Run]) -> list[str]:
    failed = [r for r in runs if r.status in ("failed", "timeout")]
    if not failed:
        return ["No run failed.", ""]
    rows = [[r.benchmark, r.allocator, str(r.threads), str(r.repeat), r.status, r.error.replace("|", "/")[:200]]
            for r in failed]
    return table(["benchmark", "allocator", "threads", "repeat", "status", "reason"], rows)


def write(path: Path, *, runs: list[Run], benchmarks: list[Benchmark], allocators: list[str],
          thread_counts: list[int], table2_threads: int, table3_allocators: list[str], table3_threads: list[int],
          header_lines: list[str], plots: list[Path], cpus: int) -> None:
    table_cells = cells(runs)
    lines = ["# corealloc benchmark report", ""] + header_lines + [""]
    lines += summary_section(runs, benchmarks, allocators)
    lines += fastest_section(runs, benchmarks, allocators)
    lines += memory_section(table_cells, allocators, benchmarks)
    lines += ["## Benchmarks", ""]
    for benchmark in benchmarks:
        lines += benchmark_section(benchmark, table_cells, allocators)
        if benchmark.name == "pound":
            lines += pound_section(table_cells, allocators, thread_counts)
    if any(b.name == "mmicro" for b in benchmarks):
        lines += characteristics_section(table_cells, allocators, table2_threads, cpus)
        lines += table3_section(runs, table3_allocators, table3_threads)
    lines += ["## Failures", ""] + failures_section(runs)
    if plots:
        lines += ["## Plots", ""] + [f"![{p.stem}]({p.relative_to(path.parent)})" for p in plots] + [""]
    path.write_text("\n".join(lines))

