"""The benchmark suite: which program each benchmark runs, with which
arguments at a given thread count and scale, and which number of its result
line is the score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from scales import Scale

Arguments = Callable[[int, Scale], list[str]]


@dataclass(frozen=True)
class Benchmark:
    name: str
    program: str  # an executable in <build>/bench, or a real program (see real_programs.py)
    arguments: Arguments | None
    metric: str  # key of the RESULT line
    unit: str
    description: str
    higher_is_better: bool = True
    threaded: bool = True  # False: measured once, at one thread
    real_program: bool = False
    memory: bool = False  # scores memory, not speed: summarised under "Memory", not with the speed scores


def per_thread(total: float, threads: int) -> str:
    """Splits a fixed total amount of work among threads (at least 1 each)."""
    return str(max(1, int(total / threads)))


def scaled(amount: float, scale: Scale) -> str:
    return str(max(1, int(amount * scale.work)))


def mmicro_arguments(threads: int, scale: Scale) -> list[str]:
    # Seed 000's Table 3 shape "mmicro T :10000 64"; smaller at tiny scale.
    blocks = "10000" if scale.work >= 0.1 else "100"
    return ["-d", str(scale.seconds), str(threads), ":" + blocks, "64"]


def rss_return_arguments(threads: int, scale: Scale) -> list[str]:
    # The shape: 1 GiB over 8 threads, RSS watched for 5 s; the
    # quick window still covers twice corealloc's default 1 s purge delay.
    mib = max(16, int(1024 * scale.work))
    window = 5.0 if scale.work >= 0.5 else 2.5 if scale.work >= 0.1 else 0.2
    return ["-t", "8", "-m", str(mib), "-w", str(window)]


def thread_churn_arguments(threads: int, scale: Scale) -> list[str]:
    total = 10000 if scale.work >= 0.5 else 2000 if scale.work >= 0.1 else 200
    return ["-n", str(total), "-c", "16"]


def lfstack(pattern: str) -> Benchmark:
    return Benchmark(
        f"lfstack-{pattern}", "lfstack",
        lambda t, s: ["-t", str(t), "-n", per_thread(2e6 * s.work, t), "-p", pattern],
        "ops_per_sec", "stack ops/s",
        f"seed 004: elimination back-off Treiber stack, push allocates and pop frees, {pattern} pattern")


SUITE: tuple[Benchmark, ...] = (
    Benchmark("larson", "larson",
              lambda t, s: ["-t", str(t), "-d", str(s.seconds), "-n", "1000" if s.work >= 0.1 else "100",
                            "-m", "10", "-M", "500", "-r", "10000" if s.work >= 0.1 else "500"],
              "ops_per_sec", "ops/s", "server simulation with thread replacement and a start barrier (seed 000)"),
    Benchmark("threadtest", "threadtest",
              lambda t, s: ["-t", str(t), "-i", "100", "-n", scaled(100000, s), "-s", "64"],
              "pairs_per_sec", "pairs/s", "Hoard threadtest: a fixed total of 64-byte objects shared among threads"),
    Benchmark("linux-scalability", "linux-scalability",
              lambda t, s: ["-t", str(t), "-n", per_thread(2e7 * s.work, t), "-s", "64"],
              "pairs_per_sec", "pairs/s", "malloc/free pair loop of 64 bytes (Lever & Boreham)"),
    Benchmark("mmicro", "mmicro", mmicro_arguments, "pairs_per_sec", "pairs/s",
              "seed 000: T threads allocate 10000 blocks of 64 bytes and free them in order, fixed time"),
    Benchmark("consume", "consume",
              lambda t, s: ["-t", str(t), "-i", per_thread(5e4 * s.work, t), "-n", "100", "-s", "64"],
              "blocks_per_sec", "blocks/s", "seed 001: one producer allocates, T consumers free"),
    Benchmark("heaptest", "heaptest",
              lambda t, s: ["-t", str(t), "-n", per_thread(2e7 * s.work, t), "-s", "100"],
              "pairs_per_sec", "pairs/s", "seed 001: fixed-size chunks allocated and freed untouched"),
    Benchmark("xmalloc", "xmalloc", lambda t, s: ["-t", str(t), "-d", str(s.seconds), "-s", "512"],
              "frees_per_sec", "frees/s", "xmalloc-style producer/consumer: T/2 threads allocate, T/2 free"),
    Benchmark("free-contention", "free-contention", lambda t, s: ["-t", str(t), "-d", str(s.seconds), "-s", "64"],
              "frees_per_sec", "frees/s", "seed 002: a ring of threads, each freeing what its neighbour allocated"),
    Benchmark("pound", "pound", lambda t, s: ["-t", str(t), "-i", per_thread(3000 * s.work, t)],
              "iterations_per_sec", "iterations/s",
              "seed 003: realloc-heavy pound(); the table of speedup and scalability % follows"),
    lfstack("random"),
    lfstack("producer-consumer"),
    lfstack("mostly-producer"),
    lfstack("mostly-consumer"),
    Benchmark("barnes-hut", "barnes-hut",
              lambda t, s: ["-t", str(t), "-b", scaled(10000, s), "-s", "5" if s.work >= 0.5 else "3"],
              "body_steps_per_sec", "body-steps/s", "seed 001: N-body simulation, octree rebuilt every step"),
    Benchmark("rss-return", "rss-return", rss_return_arguments, "returned_pct", "% returned",
              "memory: 8 threads allocate 1 GiB (half in 16..1024-byte blocks, half in 64 KiB..4 MiB ones), free it "
              "all cross-thread and sleep; the score is the share of the peak's excess over the baseline RSS that "
              "is back with the OS at the end of the window (5 s; 2.5 s in --quick). The Memory section has the "
              "baseline, peak and final RSS and the time until RSS was within 5% + 1 MiB of the baseline",
              threaded=False, memory=True),
    Benchmark("tiny-objects", "tiny-objects",
              lambda t, s: ["-n", "1000000" if s.work >= 0.1 else "20000", "-s", "8"],
              "rss_per_requested_byte", "RSS bytes per requested byte",
              "memory, seed 003 Listing One: one thread keeps 1,000,000 blocks of 8 bytes live; the score is the RSS "
              "they cost per byte requested (1.0 = no overhead; the article's Solaris malloc: 2.0)",
              higher_is_better=False, threaded=False, memory=True),
    Benchmark("thread-churn", "thread-churn", thread_churn_arguments, "growth_ratio", "x first-decile RSS",
              "memory: 10,000 threads (2,000 in --quick), at most 16 alive, each created, allocating 100 kept blocks "
              "of 16..4096 bytes, a 256 KiB block and 200 churned ones, handing 8 blocks to a later thread and "
              "exiting; the score is RSS after the last tenth of the threads over RSS after the first (1.0 = flat: "
              "exited threads strand nothing). Peak RSS is in its own table and in the Memory section",
              higher_is_better=False, threaded=False, memory=True),
    Benchmark("redis", "redis", None, "requests_per_sec", "requests/s",
              "redis-server under the allocator, driven by redis-benchmark on 127.0.0.1 (geometric mean over commands)",
              threaded=False, real_program=True),
    Benchmark("python", "python", None, "seconds", "s",
              "python3 with PYTHONMALLOC=malloc building and dropping dicts, lists and strings",
              higher_is_better=False, threaded=False, real_program=True),
    Benchmark("gcc", "gcc", None, "seconds", "s", "gcc -O2 compiling a large generated C file",
              higher_is_better=False, threaded=False, real_program=True),
)

# Seed 000's Table 3: the same mmicro shape across corealloc's ablation builds.
TABLE3 = Benchmark("mmicro-table3", "mmicro", mmicro_arguments, "pairs_per_sec", "pairs/s",
                   "seed 000 Table 3: mmicro T :10000 64 across synchronisation and heap selection")

BY_NAME = {benchmark.name: benchmark for benchmark in SUITE}


def select(names: list[str] | None) -> tuple[list[Benchmark], list[str]]:
    """The benchmarks asked for ("lfstack" means all four patterns,
    "memory" the memory benchmarks), and the names that matched nothing."""
    if not names:
        return list(SUITE), []
    chosen, unknown = [], []
    for name in names:
        matches = [b for b in SUITE if b.name == name or b.name.startswith(name + "-") and b.program == name
                   or name == "memory" and b.memory]
        if matches:
            chosen.extend(m for m in matches if m not in chosen)
        else:
            unknown.append(name)
    return chosen, unknown
