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

from collections.abc import Callable, Iterable

from . import cgroup, identity, processes, sandbox


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
    return lambda: _seconds(_started(processes.in_sessions(set(sandbox.RUNNING) - running)))


def _started(pids: Iterable[int]) -> list[tuple[int, int]]:
    """(pid, start time) of each process: a pid reused by a new process is a new process."""
    found = []
    for pid in pids:
        if (fields := processes.stat_fields(pid)) is not None:
            found.append((pid, int(fields[19])))
    return found


def _seconds(found: Iterable[tuple[int, int]]) -> float:
    """The CPU of the processes `_started` found, each with what it has reaped from its own children."""
    ticks = 0
    for pid, started in found:
        fields = processes.stat_fields(pid)
        if fields is not None and int(fields[19]) == started:
            ticks += processes.cpu_ticks(fields)
    return ticks / processes.CLOCK_TICKS
