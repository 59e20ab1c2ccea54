"""A one-line progress bar with an estimate of the time remaining. The
estimate weights each planned run by its expected length, corrected by how
long runs have actually taken so far."""

from __future__ import annotations

import sys
import time


def format_duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{seconds:02d}s" if hours else f"{minutes}m{seconds:02d}s"


class Progress:
    WIDTH = 30

    def __init__(self, expected_seconds: list[float], stream=sys.stderr):
        self.remaining_expected = sum(expected_seconds)
        self.expected_done = 0.0
        self.total = len(expected_seconds)
        self.done = 0
        self.started = time.monotonic()
        self.stream = stream
        self.interactive = stream.isatty()
        self.last_reported_tenth = -1

    def advance(self, expected_seconds: float, label: str) -> None:
        self.done += 1
        self.expected_done += expected_seconds
        self.remaining_expected -= expected_seconds
        elapsed = time.monotonic() - self.started
        # Real time per unit of expected time so far predicts the rest.
        pace = elapsed / self.expected_done if self.expected_done > 0 else 1.0
        eta = self.remaining_expected * pace
        filled = self.WIDTH * self.done // max(1, self.total)
        line = (f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} "
                f"elapsed {format_duration(elapsed)} ETA {format_duration(eta)}  {label}")
        if self.interactive:
            self.stream.write("\r" + line[:160].ljust(160))
            self.stream.flush()
        elif self.done * 10 // max(1, self.total) > self.last_reported_tenth:
            self.last_reported_tenth = self.done * 10 // max(1, self.total)
            print(line, file=self.stream, flush=True)

    def finish(self) -> None:
        if self.interactive:
            self.stream.write("\n")
            self.stream.flush()
