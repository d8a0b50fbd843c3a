"""Bound a whole grading's memory and processes with a cgroup, where the machine has one.

Per-process rlimits alone let four forks of a 1 GiB child hold 4 GiB, and tmpfs files
written inside the sandbox are charged to nobody. A cgroup counts every process of the
grading and the shared memory it writes together. Used, in this order:
  cgroup v1  writable `memory` and `pids` hierarchies (root may make children in them);
  cgroup v2  a unified hierarchy whose root offers the `memory` and `pids` controllers.
Without either, the rlimits in sandbox.py are the only bound, chosen so that
processes x memory stays bounded; results say which is in force.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from .processes import kill_until_gone

MEMORY_BYTES = 2 * 1024**3  # the whole grading: children, their forks and their tmpfs files
MAX_PROCESSES = 64  # threads count too
ROOT = Path("/sys/fs/cgroup")
RLIMITS_ONLY = "rlimits only (no writable cgroup): 1 GiB per process, 8 processes per grading"


@dataclass(frozen=True)
class Limits:
    """The cgroup folders of one grading (one per v1 hierarchy, or one v2 folder)."""

    version: int
    folders: tuple[Path, ...]

    def describe(self) -> str:
        return f"cgroup v{self.version}: {MEMORY_BYTES // 1024**3} GiB and {MAX_PROCESSES} processes per grading"

    def procs_files(self) -> list[str]:
        """Where a child writes its pid (between fork and exec) to join the grading's cgroup."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def kill_and_remove(self) -> None:
        for folder in self.folders:
            kill_until_gone(partial(_read_pids, folder))
            try:
                folder.rmdir()
            except OSError:
                pass


def _read_pids(folder: Path) -> list[int]:
    try:
        return [int(line) for line in (folder / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _own_path(controller: str) -> str:
    """This process's cgroup in a v1 hierarchy ("memory") or v2 (""), from /proc/self/cgroup."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path.lstrip("/")
    return ""


def create(uid: int) -> Limits | None:
    """A cgroup for the grading run by `uid`, or None when this machine offers none."""
    name = f"minigrad-{uid}"
    for make in (_create_v1, _create_v2):
        try:
            limits = make(name)
        except OSError:
            continue
        if limits:
            return limits
    return None


def _create_v1(name: str) -> Limits | None:
    if not (ROOT / "memory" / "cgroup.procs").exists() or not (ROOT / "pids" / "cgroup.procs").exists():
        return None
    memory = ROOT / "memory" / _own_path("memory") / name
    pids = ROOT / "pids" / _own_path("pids") / name
    made = []
    try:
        for folder in (memory, pids):
            folder.mkdir(exist_ok=True)
            made.append(folder)
        (memory / "memory.limit_in_bytes").write_text(str(MEMORY_BYTES))
        swap = memory / "memory.memsw.limit_in_bytes"
        if swap.exists():
            swap.write_text(str(MEMORY_BYTES))
        (pids / "pids.max").write_text(str(MAX_PROCESSES))
    except OSError:
        Limits(1, tuple(made)).kill_and_remove()
        raise
    return Limits(1, (memory, pids))


def _create_v2(name: str) -> Limits | None:
    if not {"memory", "pids"} <= set((ROOT / "cgroup.controllers").read_text().split()):
        return None
    (ROOT / "cgroup.subtree_control").write_text("+memory +pids")
    folder = ROOT / name
    folder.mkdir(exist_ok=True)
    try:
        (folder / "memory.max").write_text(str(MEMORY_BYTES))
        if (folder / "memory.swap.max").exists():
            (folder / "memory.swap.max").write_text("0")
        (folder / "pids.max").write_text(str(MAX_PROCESSES))
    except OSError:
        folder.rmdir()
        raise
    return Limits(2, (folder,))


def cpu_seconds(limits: Limits) -> float | None:
    """CPU seconds used so far by every process that ever ran in the grading's cgroup, exited and
    reaped ones included: cgroup v2 keeps this count (`cpu.stat`'s `usage_usec`) in every
    cgroup, whatever its controllers. None under v1, whose `memory` and `pids` hierarchies
    keep none; the caller then counts the processes themselves."""
    if limits.version != 2:
        return None
    try:
        for line in (limits.folders[0] / "cpu.stat").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "usage_usec":
                return int(value) / 1e6
    except (OSError, ValueError):
        return None
    return None
