"""How big a suite run is: the thread counts (of the thread sweeps and of
the standard benchmarks' shapes), repeats, timeout and the amount of work
per benchmark run for the everyday (--quick), default and self-test
(--tiny) sizes."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scale:
    name: str
    threads: tuple[int, ...]
    repeat: int
    timeout: float  # seconds per run
    seconds: float  # length of each fixed-time benchmark
    work: float  # fraction of the default amount of work of fixed-work benchmarks
    table3_threads: tuple[int, ...]
    table2_threads: int  # seed 000's Table 2 used 64 threads
    standard_threads: tuple[int, ...]  # the N of the standard benchmarks' shapes


FULL = Scale("full", (1, 2, 4, 8, 16, 32, 64, 128, 256), repeat=3, timeout=90.0, seconds=0.5, work=1.0,
             table3_threads=(1, 16, 256), table2_threads=64, standard_threads=(2, 8, 32))
QUICK = Scale("quick", (1, 8, 64), repeat=1, timeout=20.0, seconds=0.15, work=0.15,
              table3_threads=(1, 16, 256), table2_threads=64, standard_threads=(2, 8))
TINY = Scale("tiny", (1, 2), repeat=1, timeout=20.0, seconds=0.02, work=0.005,
             table3_threads=(1, 2), table2_threads=2, standard_threads=(2,))

SCALES = {scale.name: scale for scale in (FULL, QUICK, TINY)}
