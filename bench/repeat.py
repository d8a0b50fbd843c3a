"""What every bench shares: run a measurement several times, and say how far to trust it.

One run of a grading on a 2-core machine varies by a quarter or more with whatever else runs,
so each figure is the median of several runs, printed with its spread (lowest to highest);
and a machine already busy when the bench starts gives figures that cannot be set beside
another machine's: the bench says so first.
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

RUNS = int(os.environ.get("BENCH_RUNS", "3"))  # `make bench RUNS=5` sets it
BUSY_LOAD = 0.5  # one-minute load average above which the machine is not idle


@dataclass(frozen=True)
class Figure:
    """Wall seconds of each run, and the CPU seconds its child processes used (none when
    unknown)."""

    walls: list[float]
    cpus: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float | None:
        return statistics.median(self.cpus) if self.cpus else None

    def __str__(self) -> str:
        cpu = f", CPU {self.cpu:5.2f} s" if self.cpu is not None else ""
        return f"{self.median:6.2f} s ({min(self.walls):.2f}-{max(self.walls):.2f}){cpu}"


def measure(run: Callable[[], object], runs: int = RUNS) -> Figure:
    """`run()` `runs` times; wall time, and CPU time of the processes it started and waited for."""
    walls, cpus = [], []
    for _ in range(runs):
        before = _children_cpu()
        start = time.perf_counter()
        run()
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - before)
    return Figure(walls, cpus)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def warn_if_busy() -> None:
    """Say at the start when the machine is not idle: its figures are not comparable. Under
    `make bench`, said once before the first bench (BENCH_LOAD_SAID): the load the earlier
    benches leave in the one-minute average is their own."""
    if os.environ.get("BENCH_LOAD_SAID"):
        return
    load = os.getloadavg()[0]
    if load > BUSY_LOAD:
        print(
            f"WARNING: load average {load:.2f} (above {BUSY_LOAD}) at the start: the machine is busy, "
            "so these figures are not comparable with an idle machine's\n",
            flush=True,
        )


if __name__ == "__main__":
    warn_if_busy()
