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
    standard: bool = False  # a standard benchmark's shape: threads are the scale's standard_threads
    real_program: bool = False
    memory: bool = False  # scores memory, not speed: summarised under "Memory", not with the speed scores
    stats: bool = True  # corealloc's exit report collected (off where every one of many processes would pay it)


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


def seconds_of(scale: Scale) -> str:
    """The standard shapes' fixed time: 2 s in full (the standard's 5 s
    buys no precision over 3 repeats), less in quick and tiny runs."""
    return str(min(2.0, 4 * scale.seconds))


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
    # 50M blocks: a quarter of a second for the fastest, long enough that
    # thread start and first touch do not decide the row.
    Benchmark("consume", "consume",
              lambda t, s: ["-t", str(t), "-i", per_thread(5e5 * s.work, t), "-n", "100", "-s", "64"],
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
    # The standard benchmarks' shapes (mimalloc-bench's usual invocations),
    # written from their descriptions; the standard invocation is in each
    # program's header comment.
    Benchmark("larson-standard", "larson",
              lambda t, s: [seconds_of(s), "8", "1000", "5000" if s.work >= 0.1 else "500", "100", "4141", str(t)],
              "ops_per_sec", "ops/s",
              "larson 5 8 1000 5000 100 4141 N: 5000 blocks of 8..999 bytes per thread, 500,000 replacements per "
              "thread lifetime, blocks dealt by the main thread", standard=True),
    Benchmark("xmalloc-standard", "xmalloc",
              lambda t, s: ["-w", str(t), "-d", seconds_of(s), "-z", "64", "-b", "4096", "-q", "100", "-o", "lifo",
                            "-a", "sleep"],
              "frees_per_sec", "frees/s",
              "xmalloc-test -w N -t 5 -s 64: N producers and N consumers (threads = N), batches of 4096 blocks of "
              "64 bytes on a list of at most 100 taken newest first, every free cross-thread, a waiting thread asleep "
              "at once", standard=True),
    Benchmark("cache-scratch", "cache-scratch",
              lambda t, s: ["-p", "passive", "-t", str(t), "-i", "1000", "-s", "8", "-r", scaled(250000, s)],
              "seconds", "s",
              "passive false sharing (cache-scratch N 1000 1 2000000 N, 8-byte objects): each thread frees an object "
              "the main thread allocated next to the others', then writes its own objects",
              higher_is_better=False, standard=True),
    Benchmark("cache-thrash", "cache-scratch",
              lambda t, s: ["-p", "active", "-t", str(t), "-i", "1000", "-s", "8", "-r", scaled(250000, s)],
              "seconds", "s", "active false sharing (cache-thrash N 1000 1 2000000 N, 8-byte objects): each thread "
              "writes objects it allocated itself", higher_is_better=False, standard=True),
    Benchmark("mstress", "mstress",
              lambda t, s: ["-t", str(t), "-n", scaled(20000, s), "-r", "10"],
              "seconds", "s", "mstress N: mixed sizes (1% a hundred times larger), retained objects, objects swapped "
              "between threads through shared slots, threads re-created for each of 10 rounds",
              higher_is_better=False, standard=True),
    Benchmark("rptest", "rptest",
              lambda t, s: ["-t", str(t), "-c", "2", "-l", scaled(500, s), "-a", "1000", "-o", "100", "-m", "8",
                            "-M", "16000"],
              "ops_per_sec", "memory ops/s", "rptest N 0 1 2 500 1000 100 8 16000: 1000 live blocks of 8..16000 "
              "bytes per thread (linear drop-off), packets of blocks freed by the next thread every 2 loops",
              standard=True),
    Benchmark("glibc-simple", "glibc-bench", lambda t, s: ["-m", "simple", "-s", "16", "-n", scaled(2000000, s)],
              "pairs_per_sec", "pairs/s", "glibc's bench-malloc-simple: batches of 25..1600 blocks of 16, 32 and "
              "64 bytes allocated, written and freed, in the main thread, a second thread and the main thread again",
              threaded=False),
    Benchmark("glibc-thread", "glibc-bench", lambda t, s: ["-m", "thread", "-t", str(t), "-d", seconds_of(s)],
              "steps_per_sec", "steps/s", "glibc's bench-malloc-thread N: 1024 live blocks per thread of 4..32768 "
              "bytes (inverse-square sizes), a random one replaced per step and filled", standard=True),
    Benchmark("alloc-test-1", "alloc-test", lambda t, s: ["-t", "1", "-n", scaled(4000000, s)],
              "steps_per_sec", "steps/s", "alloc-test 1: 65536 live blocks of 8..512 bytes (skewed small), a random "
              "one replaced per step, one thread", threaded=False),
    Benchmark("alloc-test", "alloc-test", lambda t, s: ["-t", str(t), "-n", per_thread(8e6 * s.work, t)],
              "steps_per_sec", "steps/s", "alloc-test N: the same with N threads sharing a fixed total of steps",
              standard=True),
    Benchmark("working-set", "working-set",
              lambda t, s: ["-t", str(t), "-n", per_thread(262144 if s.work >= 0.1 else 8192, t),
                            "-r", scaled(20, s), "-o", "seq"],
              "pairs_per_sec", "pairs/s", "a fixed total of 262,144 live blocks of 64 bytes (16 MiB) shared among "
              "threads, every round all freed in allocation order and allocated again, 16 bytes of each written"),
    Benchmark("working-set-shuffled", "working-set",
              lambda t, s: ["-t", str(t), "-n", per_thread(262144 if s.work >= 0.1 else 8192, t),
                            "-r", scaled(20, s), "-m", "512", "-o", "rnd"],
              "pairs_per_sec", "pairs/s", "the same with blocks of 16..512 bytes (66 MiB in all), freed in a "
              "shuffled order"),
    Benchmark("malloc-large", "malloc-large",
              lambda t, s: ["-n", "20", "-r", str(max(10, int(2000 * s.work ** 1.5))), "-m", "5", "-M", "25"],
              "replacements_per_sec", "replacements/s",
              "malloc-large: 20 live buffers of 5..25 MiB, one replaced at random 2000 times (fewer in --quick), "
              "each zero-filled as std::make_unique<char[]>(n) does", threaded=False),
    Benchmark("cxx-churn", "cxx-churn", lambda t, s: ["-n", scaled(1000000, s), "-k", "20000"],
              "ops_per_sec", "ops/s", "C++ std::map<std::string, std::string> churn: inserts, erases, lookups and "
              "appends over 20,000 keys of mixed lengths, the map copied every 100,000 operations", threaded=False),
    Benchmark("startup", "startup", lambda t, s: ["-n", scaled(400, s)],
              "processes_per_sec", "processes/s",
              "short processes one after another, each allocating 28 blocks of 16 B..64 KiB and exiting: the "
              "allocator's start-up and exit, paid by every process of a pipeline or a build", threaded=False,
              stats=False),
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
              "python3 with PYTHONMALLOC=malloc: dicts, lists and strings built and dropped, JSON encoded and "
              "decoded, regular expressions over Unicode text",
              higher_is_better=False, threaded=False, real_program=True),
    Benchmark("gcc", "gcc", None, "seconds", "s", "gcc -O2 compiling a large generated C file",
              higher_is_better=False, threaded=False, real_program=True),
    Benchmark("sqlite", "sqlite", None, "seconds", "s",
              "the sqlite3 shell building a 400,000-row table in memory, indexing it and running aggregate, join "
              "and sort queries", higher_is_better=False, threaded=False, real_program=True),
    Benchmark("sort", "sort", None, "seconds", "s", "coreutils sort (one thread) of a generated 60 MiB text "
              "file by a numeric and a text key", higher_is_better=False, threaded=False, real_program=True),
)

# Seed 000's Table 3: the same mmicro shape across corealloc's ablation builds.
TABLE3 = Benchmark("mmicro-table3", "mmicro", mmicro_arguments, "pairs_per_sec", "pairs/s",
                   "seed 000 Table 3: mmicro T :10000 64 across synchronisation and heap selection")

BY_NAME = {benchmark.name: benchmark for benchmark in SUITE}


def select(names: list[str] | None) -> tuple[list[Benchmark], list[str]]:
    """The benchmarks asked for (a program's name means all its rows:
    "lfstack" the four patterns, "larson" larson and larson-standard;
    "memory" the memory benchmarks), and the names that matched nothing."""
    if not names:
        return list(SUITE), []
    chosen, unknown = [], []
    for name in names:
        matches = [b for b in SUITE if name in (b.name, b.program) or name == "memory" and b.memory]
        if matches:
            chosen.extend(m for m in matches if m not in chosen)
        else:
            unknown.append(name)
    return chosen, unknown
