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


def summarise(runs: list[Run], benchmarks, allocators: list[str]) -> list[Summary]:
    table = cells(runs)
    ratios: dict[str, list[float]] = defaultdict(list)
    common_ratios: dict[str, list[float]] = defaultdict(list)
    wins: dict[str, int] = defaultdict(int)
    for benchmark in benchmarks:
        thread_counts = sorted({threads for (name, _, threads) in table if name == benchmark.name})
        for threads in thread_counts:
            values = {}
            for allocator in allocators:
                cell = table.get((benchmark.name, allocator, threads))
                value = cell.value if cell else None
                if value is not None and value > 0:
                    values[allocator] = value
            if not values:
                continue
            complete = len(values) == len(allocators)
            for allocator, ratio in relative_to_best(values, benchmark.higher_is_better).items():
                ratios[allocator].append(ratio)
                if complete:
                    common_ratios[allocator].append(ratio)
                if ratio == 1.0:
                    wins[allocator] += 1
    failures: dict[str, int] = defaultdict(int)
    for run in runs:
        if run.status in ("failed", "timeout"):
            failures[run.allocator] += 1
    summary = [Summary(allocator, geometric_mean(common_ratios[allocator]), geometric_mean(ratios[allocator]),
                       len(ratios[allocator]), wins[allocator], failures[allocator]) for allocator in allocators]
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
    table = cells(runs)
    ratios: dict[str, list[float]] = defaultdict(list)
    common_ratios: dict[str, list[float]] = defaultdict(list)
    leanest: dict[str, int] = defaultdict(int)
    for benchmark in benchmarks:
        thread_counts = sorted({threads for (name, _, threads) in table if name == benchmark.name})
        for threads in thread_counts:
            peaks = {}
            for allocator in allocators:
                cell = table.get((benchmark.name, allocator, threads))
                peak = cell.median("max_rss_kib") if cell else None
                if peak is not None and peak > 0:
                    peaks[allocator] = peak
            if not peaks:
                continue
            smallest = min(peaks.values())
            complete = len(peaks) == len(allocators)
            for allocator, peak in peaks.items():
                ratios[allocator].append(peak / smallest)
                if complete:
                    common_ratios[allocator].append(peak / smallest)
                if peak == smallest:
                    leanest[allocator] += 1
    summary = [PeakRssSummary(allocator, geometric_mean(common_ratios[allocator]), geometric_mean(ratios[allocator]),
                              len(ratios[allocator]), leanest[allocator]) for allocator in allocators]
    return sorted(summary, key=lambda s: (s.common_mean or math.inf, s.own_mean or math.inf))
