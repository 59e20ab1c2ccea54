"""PNG plots, one per threaded benchmark, three panels: speedup over glibc
vs threads (seed 000 Figure 1 a-d), speedup relative to one thread (Figure
1 e), and peak RSS vs threads."""

from __future__ import annotations

from pathlib import Path

from aggregate import cells
from benchmarks import Benchmark
from runner import Run


def load_pyplot():
    """matplotlib, or None when it is not installed (the report then says
    the plots were skipped rather than failing the whole suite)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    return pyplot


def speedup(value: float, reference: float, higher_is_better: bool) -> float:
    return value / reference if higher_is_better else reference / value


def draw(directory: Path, runs: list[Run], benchmarks: list[Benchmark], allocators: list[str]) -> list[Path] | None:
    pyplot = load_pyplot()
    if pyplot is None:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    table = cells(runs)
    written = []
    for benchmark in (b for b in benchmarks if b.threaded):
        thread_counts = sorted({t for (name, _, t) in table if name == benchmark.name})
        figure, (over_glibc, over_one, rss) = pyplot.subplots(1, 3, figsize=(16, 4.8))
        drew_any = False
        for allocator in allocators:
            points = [(t, table.get((benchmark.name, allocator, t))) for t in thread_counts]
            points = [(t, c) for t, c in points if c is not None and c.value is not None]
            if not points:
                continue
            drew_any = True
            threads = [t for t, _ in points]
            baseline = [table.get((benchmark.name, "glibc", t)) for t in threads]
            glibc_points = [(t, speedup(c.value, b.value, benchmark.higher_is_better))
                            for (t, c), b in zip(points, baseline) if b is not None and b.value]
            if glibc_points:
                over_glibc.plot(*zip(*glibc_points), marker="o", label=allocator)
            one = table.get((benchmark.name, allocator, 1))
            if one is not None and one.value:
                over_one.plot(threads, [speedup(c.value, one.value, benchmark.higher_is_better) for _, c in points],
                              marker="o", label=allocator)
            rss.plot(threads, [(c.median("max_rss_kib") or 0) / 1024 for _, c in points], marker="o", label=allocator)
        if not drew_any:
            pyplot.close(figure)
            continue
        for axes, title, label in ((over_glibc, "speedup over glibc", "x glibc"),
                                   (over_one, "speedup relative to 1 thread", "x own 1-thread score"),
                                   (rss, "peak RSS", "MiB")):
            axes.set_xscale("log", base=2)
            axes.set_xticks(thread_counts, [str(t) for t in thread_counts])
            axes.set_xlabel("threads")
            axes.set_ylabel(label)
            axes.set_title(title)
            axes.grid(True, alpha=0.3)
        if over_one.get_legend_handles_labels()[0]:
            over_one.legend(fontsize="small")
        figure.suptitle(f"{benchmark.name} ({benchmark.unit})")
        figure.tight_layout()
        path = directory / f"{benchmark.name}.png"
        figure.savefig(path, dpi=90)
        pyplot.close(figure)
        written.append(path)
    return written
