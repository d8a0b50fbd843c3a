"""The CPU a child used, counted by the parent from outside: never a number the child reports.

A child's own clock is the submission's to slow down and its own timer the submission's to
disarm, and the work a test times may be done anywhere in the child: in a thread, in a process
it forks, at import, in a call the test never meant to time. So the parent counts everything,
from the moment it starts the child:
  the grading's cgroup, where it keeps a count (cgroup v2): every process that ever ran in it;
  else, at the bwrap and user levels, every process of the grading's uid, each with the CPU of
      the children it has reaped (a process that forks a worker and waits for it is charged
      the worker's CPU, and a dead process waiting to be reaped still shows its own);
  else (the local level, untrusted anyway), every process of the child's session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from . import cgroup, identity, sandbox

TICKS = os.sysconf("SC_CLK_TCK")


def counter(isolation: sandbox.Isolation) -> Callable[[], float]:
    """Made just before a child starts: a function that gives the CPU seconds the child (and
    every process it made) has used so far. Nothing that ran before it was made is counted."""
    runs_as = isolation.runs_as
    limits = runs_as.limits if runs_as else None
    if limits is not None and (start := cgroup.cpu_seconds(limits)) is not None:
        return lambda: (cgroup.cpu_seconds(limits) or start) - start
    if runs_as is not None:
        before = _started(identity.processes(runs_as.uid))
        return lambda: _seconds(set(_started(identity.processes(runs_as.uid))) - set(before))
    running = set(sandbox.RUNNING)  # the children of this process that run now; the new one is not among them
    return lambda: _seconds(_started(_in_sessions(set(sandbox.RUNNING) - running)))


def _started(pids: Iterable[int]) -> list[tuple[int, int]]:
    """(pid, start time) of each process: a pid reused by a new process is a new process."""
    found = []
    for pid in pids:
        if (fields := _stat(pid)) is not None:
            found.append((pid, int(fields[19])))
    return found


def _seconds(processes: Iterable[tuple[int, int]]) -> float:
    """The CPU of the processes, each with what it has reaped from its own children."""
    ticks = 0
    for pid, started in processes:
        fields = _stat(pid)
        if fields is not None and int(fields[19]) == started:
            ticks += sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime, stime, cutime, cstime
    return ticks / TICKS


def _in_sessions(sessions: set[int]) -> list[int]:
    """The processes of the given sessions."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None and int(fields[3]) in sessions:
            found.append(int(entry.name))
    return found


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the name (state first), or None when the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
