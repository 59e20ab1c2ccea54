#!/usr/bin/env python3
"""corealloc's benchmark driver: runs the benchmark suite under every
allocator, interleaved and repeated, and writes raw runs, a Markdown report
and plots to results/<date-time>/. Entry point of `make bench`."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import json
import os
import platform
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import allocators as allocator_catalogue
import benchmarks as benchmark_catalogue
import plots
import real_programs
import report
from tqdm import tqdm
from allocators import Allocator
from benchmarks import TABLE3, Benchmark
from runner import Context, Run, cross_core_ns, run_program
from scales import FULL, QUICK, SCALES, TINY, Scale

REPOSITORY = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Job:
    benchmark: Benchmark
    allocator: Allocator
    threads: int
    repeat: int
    expected_seconds: float


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", type=Path, default=REPOSITORY / "build",
                        help="CMake build directory holding bench/ and src/libcorealloc*.so (default: build)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_const", dest="scale", const=QUICK.name,
                      help=f"everyday run: threads {' '.join(map(str, QUICK.threads))}, less work, one repeat")
    size.add_argument("--tiny", action="store_const", dest="scale", const=TINY.name,
                      help="seconds-long run for the driver's self-test")
    parser.add_argument("--allocators", nargs="+", metavar="NAME|NAME=PATH.so",
                        help="allocators to compare (default: glibc, corealloc, every installed Debian peer and the "
                             "peers in ../shared/peers)")
    parser.add_argument("--peer", action="append", metavar="NAME=PATH.so", default=[],
                        help="one more allocator to compare, on top of the others (repeatable)")
    parser.add_argument("--benchmarks", nargs="+", metavar="NAME",
                        help="benchmarks to run (default: all; 'lfstack' means all four patterns)")
    parser.add_argument("--threads", nargs="+", type=int, metavar="N",
                        help="thread counts (default: the scale's sweep, and its N for the standard shapes)")
    parser.add_argument("--repeat", type=int, help="runs per cell; the report shows medians")
    parser.add_argument("--timeout", type=float, help="seconds before a run is killed and recorded as a timeout")
    parser.add_argument("--out", type=Path, help="output directory (default: results/<date-time>)")
    parser.add_argument("--list", action="store_true", help="list benchmarks and allocators, then exit")
    parser.set_defaults(scale=FULL.name)
    arguments = parser.parse_args(argv)
    # "--benchmarks a,b" works as well as "--benchmarks a b".
    if arguments.benchmarks:
        arguments.benchmarks = [n for item in arguments.benchmarks for n in item.split(",") if n]
    if arguments.allocators:
        arguments.allocators = [n for item in arguments.allocators for n in item.split(",") if n]
    return arguments


def expected_seconds(benchmark: Benchmark, scale: Scale) -> float:
    """A rough length of one run, for the progress bar's first estimates."""
    if benchmark.real_program:
        return real_programs.expected_seconds(benchmark.name, scale)
    arguments = benchmark.arguments(1, scale)
    seconds = 0.05 + (scale.seconds if "-d" in arguments else 0.5 * scale.work)
    if "-w" in arguments:  # rss-return sleeps through its observation window
        seconds += float(arguments[arguments.index("-w") + 1])
    return seconds


def threads_of(benchmark: Benchmark, thread_counts: list[int] | None, scale: Scale) -> list[int]:
    """A benchmark's thread counts: the ones asked for, else the scale's
    sweep, or its N for a standard benchmark's shape; 1 when unthreaded."""
    if not benchmark.threaded:
        return [1]
    return thread_counts or list(scale.standard_threads if benchmark.standard else scale.threads)


def plan(benchmarks: list[Benchmark], compared: list[Allocator], thread_counts: list[int] | None, repeat: int,
         scale: Scale, table3_allocators: list[Allocator]) -> list[Job]:
    """Runs interleaved across allocators: every allocator runs a row before
    any runs it again, and the order rotates between repeats so that no
    allocator always runs first after another's heavy run."""
    jobs = []
    for round_number in range(repeat):
        def rotated(items: list[Allocator]) -> list[Allocator]:
            shift = round_number % len(items) if items else 0
            return items[shift:] + items[:shift]

        for benchmark in benchmarks:
            for threads in threads_of(benchmark, thread_counts, scale):
                for allocator in rotated(compared):
                    jobs.append(Job(benchmark, allocator, threads, round_number, expected_seconds(benchmark, scale)))
        if table3_allocators:
            for threads in scale.table3_threads:
                for allocator in rotated(table3_allocators):
                    jobs.append(Job(TABLE3, allocator, threads, round_number, expected_seconds(TABLE3, scale)))
    return jobs


def execute(job: Job, build: Path, context: Context) -> Run:
    run = Run(job.benchmark.name, job.allocator.name, job.threads, job.repeat, status="")
    run.cross_core_ns = cross_core_ns(build / "bench" / "core-latency")
    if job.benchmark.real_program:
        return real_programs.run(job.benchmark.name, run, job.allocator, context)
    command = [str(build / "bench" / job.benchmark.program), *job.benchmark.arguments(job.threads, context.scale)]
    return run_program(run, command, job.allocator, job.benchmark.metric, context, job.benchmark.stats)


def machine_description() -> list[str]:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        memory_kib = int(Path("/proc/meminfo").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        memory_kib = 0
    libc = " ".join(platform.libc_ver())
    return [f"- Machine: {model}, {os.cpu_count()} CPUs, {memory_kib / 2**20:.1f} GiB, "
            f"Linux {platform.release()}, {libc}"]


def write_raw(out: Path, runs: list[Run]) -> None:
    records = [dataclasses.asdict(run) for run in runs]
    (out / "runs.json").write_text(json.dumps(records, indent=1))
    with (out / "runs.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]) if records else ["benchmark"])
        writer.writeheader()
        for record in records:
            record["fields"] = json.dumps(record["fields"])
            record["stats"] = json.dumps(record["stats"])
            writer.writerow(record)


def main(argv: list[str]) -> int:
    arguments = parse_arguments(argv)
    scale = SCALES[arguments.scale]
    build = arguments.build.resolve()
    available, missing_peers = allocator_catalogue.discover(build)
    if arguments.list:
        print("benchmarks:", " ".join(b.name for b in benchmark_catalogue.SUITE))
        print("allocators:", " ".join(a.name for a in available))
        return 0

    notes = []
    shared_present = [a.name for a in available if a.name in allocator_catalogue.SHARED_PEERS]
    hint = allocator_catalogue.install_hint(missing_peers)
    if hint:
        notes.append(f"Peers not installed ({', '.join(p.name for p in missing_peers)}): `{hint}`")
    compared, allocator_notes = allocator_catalogue.select(available, arguments.allocators, arguments.peer)
    notes += allocator_notes
    benchmarks, unknown = benchmark_catalogue.select(arguments.benchmarks)
    notes += [f"Unknown benchmark '{name}', skipped" for name in unknown]
    for benchmark in benchmarks:
        if benchmark.real_program and (missing := real_programs.missing_programs(benchmark.name)):
            notes.append(f"{benchmark.name}: not installed ({', '.join(missing)}), skipped")
    benchmarks = [b for b in benchmarks if not (b.real_program and real_programs.missing_programs(b.name))]
    missing_programs = sorted({b.program for b in benchmarks if not b.real_program} | {"rusage-run", "core-latency"})
    missing_programs = [p for p in missing_programs if not (build / "bench" / p).exists()]
    if missing_programs:
        print(f"error: benchmark programs not built in {build / 'bench'}: {', '.join(missing_programs)}; "
              f"build first (make release, or ninja -C {build})", file=sys.stderr)
        return 2
    if not compared or not benchmarks:
        print("error: nothing to run", file=sys.stderr)
        return 2

    thread_counts = sorted(set(arguments.threads)) if arguments.threads else None
    sweep = thread_counts or list(scale.threads)
    repeat = arguments.repeat or scale.repeat
    timeout = arguments.timeout or scale.timeout
    # Table 3 compares corealloc's ablation builds; it needs mmicro and corealloc.
    table3 = ([a for a in available if a.name in allocator_catalogue.ABLATION_LABELS]
              if any(b.name == "mmicro" for b in benchmarks) else [])
    table3_order = list(allocator_catalogue.ABLATION_LABELS)
    table3.sort(key=lambda a: table3_order.index(a.name) if a.name in table3_order else len(table3_order))
    table3 = [a for a in available if a.name == "glibc"] + table3 if table3 else []
    table2_threads = max([t for t in sweep if t <= scale.table2_threads] or sweep[:1])

    out = (arguments.out or REPOSITORY / "results" / datetime.datetime.now().strftime("%Y-%m-%d_%H%M%S")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for note in notes:
        print("note:", note, file=sys.stderr)
    jobs = plan(benchmarks, compared, thread_counts, repeat, scale, table3)
    print(f"{len(jobs)} runs: {len(benchmarks)} benchmarks x {len(compared)} allocators "
          f"({', '.join(a.name for a in compared)}) x threads {sweep} (standard shapes: "
          f"{thread_counts or list(scale.standard_threads)}) x {repeat} repeats"
          + (f", plus Table 3 with {len(table3)} builds" if table3 else "") + f"; results in {out}", file=sys.stderr)

    runs: list[Run] = []
    interrupted = False
    # The bar counts expected milliseconds, so its rate and ETA weigh long runs as such.
    with tempfile.TemporaryDirectory(prefix="corealloc-bench-") as scratch, \
            tqdm(total=sum(round(1000 * job.expected_seconds) for job in jobs), file=sys.stderr,
                 bar_format="{l_bar}{bar:30}| {elapsed} < {remaining} {postfix}") as progress:
        context = Context(build / "bench" / "rusage-run", scale, timeout, Path(scratch))
        try:
            for job in jobs:
                progress.set_postfix_str(f"{job.benchmark.name} {job.allocator.name} T={job.threads}", refresh=False)
                runs.append(execute(job, build, context))
                progress.update(round(1000 * job.expected_seconds))
        except KeyboardInterrupt:
            interrupted = True

    write_raw(out, runs)
    allocator_names = [a.name for a in compared]
    drawn = plots.draw(out / "plots", runs, benchmarks, allocator_names)
    if drawn is None:
        notes.append("Plots skipped: matplotlib is not installed for this Python (make venv installs it)")
    header = machine_description() + [
        f"- Run: {datetime.datetime.now():%Y-%m-%d %H:%M}, scale {scale.name}, {repeat} repeat(s) interleaved "
        f"(allocator order rotating per repeat), threads {' '.join(map(str, sweep))}, standard shapes at "
        f"{' '.join(map(str, thread_counts or scale.standard_threads))}, timeout {timeout:g} s per run"
        + (", INTERRUPTED: partial results" if interrupted else ""),
        "- Allocators: " + ", ".join(f"{a.name} ({a.library or 'libc'}"
                                     + "".join(f", {k}={v}" for k, v in a.env.items()) + ")" for a in compared),
        f"- Stronger peers in {allocator_catalogue.SHARED_PEERS_DIRECTORY}: "
        f"{', '.join(shared_present) or 'none present'}; compared here: "
        f"{', '.join(a.name for a in compared if a.name in shared_present) or 'none'}",
        "- redis-server in Debian is linked with jemalloc: its 'glibc' row is that default, the others preload "
        "over it.",
    ] + [f"- Note: {note}" for note in notes]
    report.write(out / "report.md", runs=runs, benchmarks=benchmarks, allocators=allocator_names,
                 thread_counts=sweep, table2_threads=table2_threads,
                 table3_allocators=[a.name for a in table3], table3_threads=list(scale.table3_threads),
                 header_lines=header, plots=drawn or [], cpus=os.cpu_count() or 1)
    failed = sum(run.status in ("failed", "timeout") for run in runs)
    print(f"report: {out / 'report.md'} ({len(runs)} runs, {failed} failed)", file=sys.stderr)
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
