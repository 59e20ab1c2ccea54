"""Real programs under LD_PRELOAD: redis-server driven by redis-benchmark,
python3 on an allocation-heavy script, gcc compiling a large generated C
file. Each is skipped, with a note, when the program is not installed."""

from __future__ import annotations

import csv
import io
import math
import shutil
import socket
import time
from pathlib import Path

from allocators import Allocator
from runner import (Context, Launch, ProcessOutcome, Run, allocator_environment, failure_text, parse_result_line,
                    read_stats, record)

WORKLOADS = Path(__file__).resolve().parent / "workloads"


def missing_programs(name: str) -> list[str]:
    """The executables a real-program benchmark needs that are not installed."""
    needed = {"redis": ["redis-server", "redis-benchmark"], "python": ["python3"], "gcc": ["gcc"]}[name]
    return [program for program in needed if shutil.which(program) is None]


def run(name: str, result: Run, allocator: Allocator, context: Context) -> Run:
    missing = missing_programs(name)
    if missing:
        result.status, result.error = "skipped", "not installed: " + ", ".join(missing)
        return result
    return {"redis": run_redis, "python": run_python, "gcc": run_gcc}[name](result, allocator, context)


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


def run_python(result: Run, allocator: Allocator, context: Context) -> Run:
    stats_file = context.scratch / "stats-python.json"
    env = allocator_environment(allocator, stats_file)
    env["PYTHONMALLOC"] = "malloc"  # bypass pymalloc so the allocator sees every object
    records = str(max(100, int(200000 * context.scale.work)))
    launch = Launch([shutil.which("python3"), str(WORKLOADS / "python_alloc.py"), records, "5"], env, context)
    outcome = finish(result, launch, stats_file)
    if failed(result):
        return result
    fields = parse_result_line(outcome.stdout)
    if fields is None or "seconds" not in fields:
        result.status, result.error = "failed", "no 'seconds' in the result line"
        return result
    result.fields, result.value, result.status = fields, float(fields["seconds"]), "ok"
    return result


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


def run_gcc(result: Run, allocator: Allocator, context: Context) -> Run:
    functions = max(20, int(600 * context.scale.work))
    source = context.scratch / f"generated-{functions}.c"
    if not source.exists():
        generate_c_source(source, functions)
    stats_file = context.scratch / "stats-gcc.json"
    command = [shutil.which("gcc"), "-O2", "-c", str(source), "-o", str(context.scratch / "generated.o")]
    launch = Launch(command, allocator_environment(allocator, stats_file), context)
    finish(result, launch, stats_file)
    if failed(result):
        return result
    result.value, result.status = result.wall_seconds, "ok"
    result.fields = {"functions": str(functions)}
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


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


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
    result.value, result.status = geometric_mean(list(rates.values())), "ok"
    return result
