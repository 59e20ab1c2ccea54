"""Real programs under LD_PRELOAD: redis-server driven by redis-benchmark,
and four whose output must equal what they print under glibc: python3 on an
allocation-heavy script, gcc compiling a large generated C file, the sqlite3
shell on a 400,000-row table, coreutils sort on a large generated file. Each
is skipped, with a note, when the program is not installed."""

from __future__ import annotations

import csv
import hashlib
import io
import random
import shutil
import socket
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from allocators import Allocator
from runner import (Context, Launch, ProcessOutcome, Run, allocator_environment, failure_text, parse_result_line,
                    read_stats, record)
from scales import Scale

WORKLOADS = Path(__file__).resolve().parent / "workloads"
GLIBC = Allocator("glibc", None)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Workload:
    """A real program run whose output is compared with glibc's: prepare
    writes its inputs to the scratch directory and returns the command;
    output is what must not depend on the allocator; the score is seconds."""

    programs: tuple[str, ...]
    prepare: Callable[[Context], list[str]]
    output: Callable[[ProcessOutcome, Context], str]
    seconds: Callable[[ProcessOutcome], float]
    expected_seconds: Callable[[Scale], float]
    env: tuple[tuple[str, str], ...] = ()


def python_records(scale: Scale) -> int:
    return max(100, int(100000 * scale.work))


def prepare_python(context: Context) -> list[str]:
    return [shutil.which("python3"), str(WORKLOADS / "python_alloc.py"), str(python_records(context.scale)), "3"]


def python_output(outcome: ProcessOutcome, _: Context) -> str:
    fields = parse_result_line(outcome.stdout) or {}
    return f"records={fields.get('records')} checksum={fields.get('checksum')}"


def python_seconds(outcome: ProcessOutcome) -> float:
    return float((parse_result_line(outcome.stdout) or {})["seconds"])


def generate_c_source(path: Path, functions: int) -> None:
    """Many mid-sized functions keep the compiler's allocator busy."""
    with path.open("w") as out:
        out.write("#include <stddef.h>\n")
        for f in range(functions):
            out.write(f"int function_{f}(const int *values, size_t count, int seed)\n{{\n    int acc = seed;\n")
            out.write("    for (size_t i = 0; i < count; i++) {\n        switch ((values[i] + acc) & 7) {\n")
            for case in range(8):
                out.write(f"        case {case}: acc = acc * {case + 3} + values[i] - {f % 97}; break;\n")
            out.write("        }\n    }\n")
            for step in range(10):
                out.write(f"    if (acc > {step * 1000 + f}) acc ^= acc >> {step % 5 + 1};\n")
            out.write("    return acc;\n}\n")


def gcc_functions(scale: Scale) -> int:
    return max(20, int(600 * scale.work))


def prepare_gcc(context: Context) -> list[str]:
    source = context.scratch / f"generated-{gcc_functions(context.scale)}.c"
    if not source.exists():
        generate_c_source(source, gcc_functions(context.scale))
    return [shutil.which("gcc"), "-O2", "-c", str(source), "-o", str(context.scratch / "generated.o")]


def sqlite_rows(scale: Scale) -> int:
    return max(1000, int(400000 * min(1.0, scale.work)))


def prepare_sqlite(context: Context) -> list[str]:
    """An in-memory database: a table of N rows built by a recursive query,
    two indexes (analysed, or the self-join's plan goes quadratic), grouping,
    a self-join, sorting, updates and deletes."""
    rows = sqlite_rows(context.scale)
    script = context.scratch / f"sqlite-{rows}.sql"
    script.write_text(f"""
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, category INTEGER, value REAL, note TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows})
INSERT INTO t SELECT x, 'name-' || (x * 7919 % {rows}), x % 97, (x * 31 % 1000) / 10.0,
  substr('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 1, x % 53) FROM c;
CREATE INDEX t_name ON t(name);
CREATE INDEX t_category ON t(category, value);
ANALYZE;
SELECT category, count(*), sum(value), max(name) FROM t GROUP BY category ORDER BY category;
SELECT count(*), sum(b.value) FROM t a JOIN t b ON b.name = a.name WHERE b.category = a.category;
SELECT name, value FROM t ORDER BY note DESC, name LIMIT 20;
SELECT group_concat(name, ',') FROM (SELECT name FROM t WHERE category = 5 ORDER BY value, name LIMIT 100);
UPDATE t SET note = note || name WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), sum(length(note)), count(DISTINCT note) FROM t;
""")
    return [shutil.which("sqlite3"), ":memory:", f".read {script}"]


def sort_lines(scale: Scale) -> int:
    return max(1000, int(2000000 * scale.work))


def prepare_sort(context: Context) -> list[str]:
    """A generated file of numbered lines of words (about 30 bytes a line),
    sorted by the number and then by the text, on one thread."""
    lines = sort_lines(context.scale)
    source = context.scratch / f"sort-{lines}.txt"
    if not source.exists():
        rng = random.Random(20240)
        words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
        with source.open("w") as out:
            for _ in range(lines):
                out.write(f"{rng.randrange(1_000_000)}\t{' '.join(rng.choices(words, k=3))}\n")
    return [shutil.which("sort"), "--parallel=1", "-t", "\t", "-k1,1n", "-k2", str(source),
            "-o", str(context.scratch / "sorted.txt")]


WORKLOADS_BY_NAME = {
    "python": Workload(("python3",), prepare_python, python_output, python_seconds,
                       lambda s: 0.3 + 8 * s.work, (("PYTHONMALLOC", "malloc"),)),
    "gcc": Workload(("gcc",), prepare_gcc, lambda _, c: digest((c.scratch / "generated.o").read_bytes()),
                    lambda o: o.wall_seconds, lambda s: 0.3 + 12 * s.work),
    "sqlite": Workload(("sqlite3",), prepare_sqlite, lambda o, _: digest(o.stdout.encode()),
                       lambda o: o.wall_seconds, lambda s: 0.2 + 3 * s.work),
    "sort": Workload(("sort",), prepare_sort, lambda _, c: digest((c.scratch / "sorted.txt").read_bytes()),
                     lambda o: o.wall_seconds, lambda s: 0.2 + 3 * s.work, (("LC_ALL", "C"),)),
}
NEEDS = {"redis": ("redis-server", "redis-benchmark"),
         **{name: workload.programs for name, workload in WORKLOADS_BY_NAME.items()}}


def missing_programs(name: str) -> list[str]:
    """The executables a real-program benchmark needs that are not installed."""
    return [program for program in NEEDS[name] if shutil.which(program) is None]


def expected_seconds(name: str, scale: Scale) -> float:
    """A rough length of one run, for the progress bar."""
    return 1.0 + 8 * scale.work if name == "redis" else WORKLOADS_BY_NAME[name].expected_seconds(scale)


def run(name: str, result: Run, allocator: Allocator, context: Context) -> Run:
    missing = missing_programs(name)
    if missing:
        result.status, result.error = "skipped", "not installed: " + ", ".join(missing)
        return result
    if name == "redis":
        return run_redis(result, allocator, context)
    return run_workload(WORKLOADS_BY_NAME[name], name, result, allocator, context)


def finish(result: Run, launch: Launch, stats_file: Path) -> ProcessOutcome:
    """Waits for the measured process; marks `result` failed if it failed."""
    outcome = launch.wait()
    record(result, outcome)
    result.stats = read_stats(stats_file)
    if outcome.timed_out or outcome.exit_code != 0:
        result.status, result.error = ("timeout" if outcome.timed_out else "failed"), failure_text(outcome)
    return outcome


def failed(result: Run) -> bool:
    return result.status in ("failed", "timeout")


# glibc's output of each workload, by name: the first run computes it.
_reference_outputs: dict[str, str] = {}


def launch_workload(workload: Workload, allocator: Allocator, context: Context, stats_file: Path | None) -> Launch:
    env = allocator_environment(allocator, stats_file)
    env.update(workload.env)
    return Launch(workload.prepare(context), env, context)


def reference_output(workload: Workload, name: str, context: Context) -> str | None:
    """What the workload outputs under glibc (an unmeasured run), or None
    when even that run fails."""
    if name not in _reference_outputs:
        outcome = launch_workload(workload, GLIBC, context, None).wait()
        if outcome.timed_out or outcome.exit_code != 0:
            return None
        _reference_outputs[name] = workload.output(outcome, context)
    return _reference_outputs[name]


def run_workload(workload: Workload, name: str, result: Run, allocator: Allocator, context: Context) -> Run:
    expected = reference_output(workload, name, context)
    stats_file = context.scratch / f"stats-{name}.json"
    outcome = finish(result, launch_workload(workload, allocator, context, stats_file), stats_file)
    if failed(result):
        return result
    output = workload.output(outcome, context)
    if expected is None or output != expected:
        result.status = "failed"
        result.error = "no glibc output to compare with" if expected is None else "output differs from glibc's"
        return result
    result.fields = {"output": output[:64]}
    result.value, result.status = workload.seconds(outcome), "ok"
    return result


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def redis_command(port: int, command: bytes, timeout: float = 1.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(command)
        try:
            return connection.recv(64)
        except (ConnectionError, socket.timeout):
            return b""


def wait_for_redis(port: int, server: Launch, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if server.has_exited():
            return False
        try:
            if redis_command(port, b"PING\r\n").startswith(b"+PONG"):
                return True
        except OSError:
            time.sleep(0.02)
    return False


def run_redis(result: Run, allocator: Allocator, context: Context) -> Run:
    port = free_port()
    stats_file = context.scratch / "stats-redis.json"
    server = Launch([shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", "no", "--dir", str(context.scratch), "--logfile", ""],
                    allocator_environment(allocator, stats_file), context)
    if not wait_for_redis(port, server, time.monotonic() + min(10.0, context.timeout)):
        server.kill()
        finish(result, server, stats_file)
        result.status = "failed"
        result.error = result.error or "redis-server did not answer PING"
        return result
    requests = str(max(1000, int(400000 * context.scale.work)))
    client_env = allocator_environment(Allocator("glibc", None), None)  # only the server is measured
    client = Launch([shutil.which("redis-benchmark"), "-h", "127.0.0.1", "-p", str(port), "-n", requests,
                     "-c", "50", "-P", "16", "-r", "100000", "-d", "64", "-t", "set,get,incr,lpush,lpop,sadd,hset",
                     "--csv"], client_env, context).wait()
    try:
        redis_command(port, b"SHUTDOWN NOSAVE\r\n")
    except OSError:
        server.kill()
    finish(result, server, stats_file)
    if failed(result):
        return result
    if client.exit_code != 0:
        result.status, result.error = "failed", "redis-benchmark: " + failure_text(client)
        return result
    rates = {row["test"]: float(row["rps"]) for row in csv.DictReader(io.StringIO(client.stdout))
             if row.get("rps")}
    if not rates:
        result.status, result.error = "failed", "redis-benchmark printed no rates"
        return result
    result.fields = {name.lower(): f"{rate:.0f}" for name, rate in rates.items()}
    result.value, result.status = statistics.geometric_mean(list(rates.values())), "ok"
    return result
