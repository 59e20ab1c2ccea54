"""From repeated runs to table cells: medians per (benchmark, allocator,
threads), each allocator's geometric mean score relative to the best, and
its geometric mean peak RSS relative to the leanest."""

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


def relative_to_best(values: dict[str, float], higher_is_better: bool) -> dict[str, float]:
    """Each allocator's score divided by the best one's (1.0 is the best)."""
    if higher_is_better:
        best = max(values.values())
        return {name: value / best for name, value in values.items()}
    best = min(values.values())
    return {name: best / value for name, value in values.items()}


@dataclass
class Summary:
    allocator: str
    common_mean: float | None  # relative to the best, over cells every allocator completed
    own_mean: float | None  # relative to the best, over the cells this allocator completed
    cells_measured: int
    cells_won: int
    failed_runs: int


def geometric_mean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


@dataclass
class CellRatios:
    all_cells: dict[str, list[float]]  # per allocator, its ratio in every cell it completed
    common_cells: dict[str, list[float]]  # the same, over cells every allocator completed
    best_in: dict[str, int]  # cells where its ratio is 1.0


def ratios_per_cell(runs: list[Run], benchmarks, allocators: list[str], measure, ratio) -> CellRatios:
    """For every benchmark x thread-count cell: measure(cell) per allocator
    (positive values only), turned into ratios by ratio(values, benchmark),
    where 1.0 marks the best of the cell."""
    table = cells(runs)
    result = CellRatios(defaultdict(list), defaultdict(list), defaultdict(int))
    for benchmark in benchmarks:
        thread_counts = sorted({threads for (name, _, threads) in table if name == benchmark.name})
        for threads in thread_counts:
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
                result.all_cells[allocator].append(r)
                if complete:
                    result.common_cells[allocator].append(r)
                if r == 1.0:
                    result.best_in[allocator] += 1
    return result


def summarise(runs: list[Run], benchmarks, allocators: list[str]) -> list[Summary]:
    r = ratios_per_cell(runs, benchmarks, allocators, lambda cell: cell.value,
                        lambda values, benchmark: relative_to_best(values, benchmark.higher_is_better))
    failures: dict[str, int] = defaultdict(int)
    for run in runs:
        if run.status in ("failed", "timeout"):
            failures[run.allocator] += 1
    summary = [Summary(allocator, geometric_mean(r.common_cells[allocator]), geometric_mean(r.all_cells[allocator]),
                       len(r.all_cells[allocator]), r.best_in[allocator], failures[allocator])
               for allocator in allocators]
    return sorted(summary, key=lambda s: (-(s.common_mean or 0.0), -(s.own_mean or 0.0)))


@dataclass
class PeakRssSummary:
    allocator: str
    common_mean: float | None  # peak RSS / the leanest's, over cells every allocator completed (1.0 = leanest)
    own_mean: float | None  # the same over the cells this allocator completed
    cells_measured: int
    cells_leanest: int


def summarise_peak_rss(runs: list[Run], benchmarks, allocators: list[str]) -> list[PeakRssSummary]:
    """Peak RSS (the median over repeats of rusage-run's max_rss_kib) of
    every benchmark x thread-count cell, divided by the smallest of that
    cell, and the geometric mean of those ratios: lower is better."""
    r = ratios_per_cell(runs, benchmarks, allocators, lambda cell: cell.median("max_rss_kib"),
                        lambda peaks, _: {name: peak / min(peaks.values()) for name, peak in peaks.items()})
    summary = [PeakRssSummary(allocator, geometric_mean(r.common_cells[allocator]),
                              geometric_mean(r.all_cells[allocator]), len(r.all_cells[allocator]),
                              r.best_in[allocator]) for allocator in allocators]
    return sorted(summary, key=lambda s: (s.common_mean or math.inf, s.own_mean or math.inf))
