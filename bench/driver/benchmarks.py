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


def per_thread(total: float, threads: int) -> str:
    """Splits a fixed total amount of work among threads (at least 1 each)."""
    return str(max(1, int(total / threads)))


def scaled(amount: float, scale: Scale) -> str:
    return str(max(1, int(amount * scale.work)))


def mmicro_arguments(threads: int, scale: Scale) -> list[str]:
    # Seed 000's Table 3 shape "mmicro T :10000 64"; smaller at tiny scale.
    blocks = "10000" if scale.work >= 0.1 else "100"
    return ["-d", str(scale.seconds), str(threads), ":" + blocks, "64"]


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
    """The benchmarks asked for ("lfstack" means all four patterns), and the
    names that matched nothing."""
    if not names:
        return list(SUITE), []
    chosen, unknown = [], []
    for name in names:
        matches = [b for b in SUITE if b.name == name or b.name.startswith(name + "-") and b.program == name]
        if matches:
            chosen.extend(m for m in matches if m not in chosen)
        else:
            unknown.append(name)
    return chosen, unknown
