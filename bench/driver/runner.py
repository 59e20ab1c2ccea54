"""Runs one benchmark process under one allocator: bounded by a timeout,
with the process's resource usage (peak RSS, CPU time, context switches)
as measured by bench/rusage-run, and corealloc's JSON statistics when the
allocator writes them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from allocators import Allocator
from scales import Scale


@dataclass(frozen=True)
class Context:
    """What every run needs besides its benchmark and allocator."""

    launcher: Path  # the rusage-run program
    scale: Scale
    timeout: float
    scratch: Path  # a temporary directory for statistics files and inputs


@dataclass
class ProcessOutcome:
    """What the operating system tells about a finished process."""

    exit_code: int | None  # None when killed by the timeout
    timed_out: bool
    wall_seconds: float
    user_seconds: float | None  # None when the launcher was killed before reporting
    system_seconds: float | None
    max_rss_kib: int | None
    voluntary_switches: int | None
    involuntary_switches: int | None
    stdout: str
    stderr: str


@dataclass
class Run:
    """One measurement: a row of the raw results."""

    benchmark: str
    allocator: str
    threads: int
    repeat: int
    status: str  # ok | failed | timeout | skipped
    value: float | None = None
    wall_seconds: float | None = None
    user_seconds: float | None = None
    system_seconds: float | None = None
    max_rss_kib: int | None = None
    voluntary_switches: int | None = None
    involuntary_switches: int | None = None
    exit_code: int | None = None
    error: str = ""
    cross_core_ns: float | None = None  # the CPUs' round trip just before (core-latency), None if not measured
    fields: dict = field(default_factory=dict)  # the benchmark's RESULT line
    stats: dict = field(default_factory=dict)  # corealloc's exit statistics


class Launch:
    """A command started through rusage-run, in a session of its own so that
    it is killed, with everything it started, when time runs out."""

    def __init__(self, command: list[str], env: dict[str, str], context: Context):
        self._stdout = tempfile.TemporaryFile()
        self._stderr = tempfile.TemporaryFile()
        self._usage_file = context.scratch / f"rusage-{time.monotonic_ns()}.txt"
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [str(context.launcher), str(self._usage_file), "--", *command], env=env, stdin=subprocess.DEVNULL,
            stdout=self._stdout, stderr=self._stderr, start_new_session=True)
        self.timed_out = False
        self._timer = threading.Timer(context.timeout, self._kill_for_timeout)
        self._timer.start()

    def _kill_for_timeout(self) -> None:
        self.timed_out = True
        self.kill()

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def has_exited(self) -> bool:
        return self.process.poll() is not None

    def wait(self) -> ProcessOutcome:
        self.process.wait()
        wall = time.monotonic() - self.started
        self._timer.cancel()
        # Stragglers the command left in its session go too.
        self.kill()
        usage = self._read_usage()
        return ProcessOutcome(
            exit_code=None if self.timed_out else usage.get("exit", self.process.returncode),
            timed_out=self.timed_out,
            wall_seconds=wall,
            user_seconds=usage.get("user_seconds"),
            system_seconds=usage.get("system_seconds"),
            max_rss_kib=usage.get("max_rss_kib"),
            voluntary_switches=usage.get("voluntary_switches"),
            involuntary_switches=usage.get("involuntary_switches"),
            stdout=self._read(self._stdout),
            stderr=self._read(self._stderr),
        )

    def _read_usage(self) -> dict:
        try:
            text = self._usage_file.read_text()
        except OSError:
            return {}
        finally:
            self._usage_file.unlink(missing_ok=True)
        pairs = (item.split("=", 1) for item in text.split() if "=" in item)
        return {key: (float(value) if "." in value else int(value)) for key, value in pairs}

    @staticmethod
    def _read(handle) -> str:
        handle.seek(0)
        text = handle.read().decode(errors="replace")
        handle.close()
        return text


def allocator_environment(allocator: Allocator, stats_file: Path | None) -> dict[str, str]:
    """The process environment for a run under `allocator`."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("BENCH_CHILD_PRELOAD", None)
    if allocator.library is not None:
        env["BENCH_CHILD_PRELOAD"] = str(allocator.library)  # rusage-run preloads it into the command
    env.update(allocator.env)
    if stats_file is not None and allocator.is_corealloc:
        env["COREALLOC_STATS"] = "json"
        env["COREALLOC_STATS_FILE"] = str(stats_file)
    return env


def parse_result_line(stdout: str) -> dict[str, str] | None:
    """The last "RESULT key=value ..." line of a benchmark's output."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("RESULT "):
            pairs = (item.split("=", 1) for item in line.split()[1:] if "=" in item)
            return {key: value for key, value in pairs}
    return None


def read_stats(stats_file: Path | None) -> dict:
    """corealloc's exit statistics; anything missing or malformed is simply
    left out, since a report with blank cells beats a failed suite."""
    if stats_file is None or not stats_file.exists():
        return {}
    try:
        data = json.loads(stats_file.read_text())
    except (OSError, ValueError):
        return {}
    finally:
        stats_file.unlink(missing_ok=True)
    return data if isinstance(data, dict) else {}


def failure_text(outcome: ProcessOutcome) -> str:
    """A one-line reason for a failed run."""
    if outcome.timed_out:
        return "timed out"
    code = outcome.exit_code
    reason = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit status {code}"
    last_lines = " | ".join(outcome.stderr.strip().splitlines()[-2:])
    return f"{reason}: {last_lines}" if last_lines else reason


def record(run: Run, outcome: ProcessOutcome) -> Run:
    """Copies the operating system's view of the process into `run`."""
    run.wall_seconds = outcome.wall_seconds
    run.user_seconds = outcome.user_seconds
    run.system_seconds = outcome.system_seconds
    run.max_rss_kib = outcome.max_rss_kib
    run.voluntary_switches = outcome.voluntary_switches
    run.involuntary_switches = outcome.involuntary_switches
    run.exit_code = outcome.exit_code
    return run


def cross_core_ns(probe: Path) -> float | None:
    """The cross-core round trip now, from bench/core-latency (no allocator
    preloaded), or None when it cannot be had."""
    env = {key: value for key, value in os.environ.items() if key not in ("LD_PRELOAD", "BENCH_CHILD_PRELOAD")}
    try:
        completed = subprocess.run([str(probe)], env=env, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    fields = parse_result_line(completed.stdout) if completed.returncode == 0 else None
    try:
        value = float(fields["roundtrip_ns"]) if fields else 0.0
    except (KeyError, ValueError):
        return None
    return value or None


def run_program(run: Run, command: list[str], allocator: Allocator, metric: str, context: Context,
                stats: bool = True) -> Run:
    """Runs a benchmark program and fills in `run` from its result line (and
    corealloc's exit report, unless `stats` is false)."""
    stats_file = context.scratch / f"stats-{time.monotonic_ns()}.json" if stats else None
    outcome = Launch(command, allocator_environment(allocator, stats_file), context).wait()
    record(run, outcome)
    run.stats = read_stats(stats_file)
    if outcome.timed_out:
        run.status, run.error = "timeout", failure_text(outcome)
        return run
    fields = parse_result_line(outcome.stdout)
    if outcome.exit_code != 0 or fields is None or metric not in fields:
        run.status = "failed"
        run.error = failure_text(outcome) if outcome.exit_code != 0 else f"no '{metric}' in the result line"
        return run
    run.fields = fields
    run.value = float(fields[metric])
    run.status = "ok"
    return run
