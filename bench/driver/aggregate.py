"""From repeated runs to table cells: medians and spreads per (benchmark,
allocator, threads), and per allocator the geometric means of its time
relative to the fastest and of its peak RSS relative to the leanest, row by
row (a row is a benchmark at one thread count)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

from runner import Run


@dataclass
class Cell:
    """The repeats of one benchmark x allocator x thread count."""

    runs: list[Run]

    @property
    def ok_runs(self) -> list[Run]:
        return [run for run in self.runs if run.status == "ok"]

    def median(self, attribute: str) -> float | None:
        values = [getattr(run, attribute) for run in self.ok_runs if getattr(run, attribute) is not None]
        return statistics.median(values) if values else None

    def median_of(self, extract) -> float | None:
        """Median of extract(run) over successful runs where it is known."""
        values = [v for v in (extract(run) for run in self.ok_runs) if v is not None]
        return statistics.median(values) if values else None

    @property
    def value(self) -> float | None:
        return self.median("value")

    @property
    def spread_pct(self) -> float | None:
        """Half the min-max range of the repeats' scores, in % of their
        median; None with fewer than two successful repeats."""
        values = [run.value for run in self.ok_runs if run.value is not None]
        if len(values) < 2 or not self.value:
            return None
        return 50.0 * (max(values) - min(values)) / self.value

    @property
    def failure(self) -> str | None:
        """Why the cell has no value: its first failed run's status."""
        if self.ok_runs:
            return None
        for run in self.runs:
            if run.status != "ok":
                return run.status
        return None


def cells(runs: list[Run]) -> dict[tuple[str, str, int], Cell]:
    grouped: dict[tuple[str, str, int], list[Run]] = defaultdict(list)
    for run in runs:
        grouped[(run.benchmark, run.allocator, run.threads)].append(run)
    return {key: Cell(group) for key, group in grouped.items()}


def cost_relative_to_best(values: dict[str, float], higher_is_better: bool) -> dict[str, float]:
    """Each allocator's time (or the inverse of its throughput) divided by
    the fastest one's on the row: 1.0 is the fastest, 1.5 takes half as long
    again."""
    if higher_is_better:
        best = max(values.values())
        return {name: best / value for name, value in values.items()}
    best = min(values.values())
    return {name: value / best for name, value in values.items()}


@dataclass
class Paired:
    """One allocator's time relative to another's, repeat by repeat: the
    allocators of a repeat ran one after the other, so a disturbance that
    lasts seconds moves both of a pair, where medians taken apart keep it."""

    median: float
    lower_quartile: float
    upper_quartile: float
    pairs: int


# A round trip past this is the slow state of a virtual machine's two CPUs
# (about 400 ns against 100 on the machine this was written on).
SLOW_CROSS_CORE_NS = 250.0


def cross_core_state(run: Run) -> str | None:
    """"fast" or "slow": how the CPUs passed a cache line just before the
    run (None when not measured)."""
    if not run.cross_core_ns:
        return None
    return "slow" if run.cross_core_ns > SLOW_CROSS_CORE_NS else "fast"


def paired_cost(mine: Cell, other: Cell, higher_is_better: bool, state: str | None = None,
                least: int = 2) -> Paired | None:
    """mine's time over other's in each repeat both completed (for a
    throughput, other's over mine), as a median and quartiles; None with
    fewer than `least` such repeats (one ratio is no spread: its quartiles
    are itself). With a state, only the repeats whose two runs both found
    the CPUs in it (cross_core_state)."""
    others = {run.repeat: run for run in other.ok_runs if run.value}
    pairs = [(run.value, others[run.repeat].value) for run in mine.ok_runs
             if run.value and run.repeat in others
             and (state is None or cross_core_state(run) == cross_core_state(others[run.repeat]) == state)]
    ratios = sorted(theirs / value if higher_is_better else value / theirs for value, theirs in pairs)
    if len(ratios) < max(least, 1):
        return None
    if len(ratios) == 1:
        return Paired(ratios[0], ratios[0], ratios[0], 1)
    lower, _, upper = statistics.quantiles(ratios, n=4, method="inclusive")
    return Paired(statistics.median(ratios), lower, upper, len(ratios))


def geometric_mean(values: list[float]) -> float | None:
    return statistics.geometric_mean(values) if values else None


@dataclass
class RowRatios:
    all_rows: dict[str, list[float]]  # per allocator, its ratio on every row it completed
    common_rows: dict[str, list[float]]  # the same, over rows every allocator completed
    best_in: dict[str, int]  # rows where its ratio is 1.0


def row_keys(table: dict[tuple[str, str, int], Cell], benchmarks) -> list[tuple]:
    """The rows of the comparison, benchmark x thread count, in suite order."""
    return [(benchmark, threads) for benchmark in benchmarks
            for threads in sorted({t for (name, _, t) in table if name == benchmark.name})]


def ratios_per_row(runs: list[Run], benchmarks, allocators: list[str], measure, ratio) -> RowRatios:
    """For every benchmark x thread-count row: measure(cell) per allocator
    (positive values only), turned into ratios by ratio(values, benchmark),
    where 1.0 marks the best of the row."""
    table = cells(runs)
    result = RowRatios(defaultdict(list), defaultdict(list), defaultdict(int))
    for benchmark, threads in row_keys(table, benchmarks):
        values = {}
        for allocator in allocators:
            cell = table.get((benchmark.name, allocator, threads))
            value = measure(cell) if cell else None
            if value is not None and value > 0:
                values[allocator] = value
        if not values:
            continue
        complete = len(values) == len(allocators)
        for allocator, r in ratio(values, benchmark).items():
            result.all_rows[allocator].append(r)
            if complete:
                result.common_rows[allocator].append(r)
            if r == 1.0:
                result.best_in[allocator] += 1
    return result


@dataclass
class Summary:
    allocator: str
    time_common: float | None  # time / fastest, geometric mean over rows every allocator completed
    time_own: float | None  # the same over the rows this allocator completed
    rows_measured: int
    rows_fastest: int
    rss_common: float | None  # peak RSS / leanest, geometric mean over rows every allocator completed
    rss_own: float | None
    rows_leanest: int
    failed_runs: int


def summarise(runs: list[Run], speed_benchmarks, all_benchmarks, allocators: list[str]) -> list[Summary]:
    """Every allocator's time relative to the fastest on each speed row and
    its peak RSS (rusage of the process, median over repeats) relative to the
    leanest on each row of every benchmark, as geometric means: 1.00 is the
    best everywhere, lower is better. Sorted by time."""
    time = ratios_per_row(runs, speed_benchmarks, allocators, lambda cell: cell.value,
                          lambda values, benchmark: cost_relative_to_best(values, benchmark.higher_is_better))
    rss = ratios_per_row(runs, all_benchmarks, allocators, lambda cell: cell.median("max_rss_kib"),
                         lambda peaks, _: cost_relative_to_best(peaks, higher_is_better=False))
    failures: dict[str, int] = defaultdict(int)
    for run in runs:
        if run.status in ("failed", "timeout"):
            failures[run.allocator] += 1
    summary = [Summary(a, geometric_mean(time.common_rows[a]), geometric_mean(time.all_rows[a]),
                       len(time.all_rows[a]), time.best_in[a], geometric_mean(rss.common_rows[a]),
                       geometric_mean(rss.all_rows[a]), rss.best_in[a], failures[a]) for a in allocators]
    return sorted(summary, key=lambda s: (s.time_common or math.inf, s.time_own or math.inf))
