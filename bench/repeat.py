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
from dataclasses import dataclass, field

RUNS = int(os.environ.get("BENCH_RUNS", "3"))  # `make bench RUNS=5` sets it
BUSY_LOAD = 0.5  # one-minute load average above which the machine is not idle


@dataclass(frozen=True)
class Figure:
    """Wall seconds of each run, the CPU seconds its child processes used, and the cores the
    whole machine kept busy meanwhile (none when unknown).

    The two CPU figures differ on purpose. A process's CPU reaches `RUSAGE_CHILDREN` only when
    its parent waits for it, and a sandboxed child killed inside its own namespaces is not
    always waited for by anyone who reports it: an endless loop's 5 s of CPU goes missing. The
    machine's own count (/proc/stat) misses nothing, but counts whatever else runs too."""

    walls: list[float]
    cpus: list[float]
    busy: list[float] = field(default_factory=list)  # busy core-seconds / wall, per run

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float | None:
        return statistics.median(self.cpus) if self.cpus else None

    @property
    def cores(self) -> float | None:
        return statistics.median(self.busy) if self.busy else None

    def __str__(self) -> str:
        cpu = f", CPU {self.cpu:5.2f} s" if self.cpu is not None else ""
        cores = f", {self.cores:.2f} cores busy" if self.cores is not None else ""
        return f"{self.median:6.2f} s ({min(self.walls):.2f}-{max(self.walls):.2f}){cpu}{cores}"


def measure(run: Callable[[], object], runs: int = RUNS) -> Figure:
    """`run()` `runs` times; wall time, CPU time of the processes it started and waited for,
    and the machine's busy cores."""
    walls, cpus, busy = [], [], []
    for _ in range(runs):
        before, machine_before = _children_cpu(), _machine_busy()
        start = time.perf_counter()
        run()
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - before)
        busy.append((_machine_busy() - machine_before) / walls[-1])
    return Figure(walls, cpus, busy)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _machine_busy() -> float:
    """Core-seconds every CPU of the machine has spent running anything since boot: the first
    line of /proc/stat, less idle, I/O wait and steal (time the hypervisor gave elsewhere)."""
    with open("/proc/stat") as stat:
        ticks = [int(count) for count in stat.readline().split()[1:9]]  # user ... steal
    idle, iowait, steal = ticks[3], ticks[4], ticks[7]
    return (sum(ticks) - idle - iowait - steal) / os.sysconf("SC_CLK_TCK")


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
