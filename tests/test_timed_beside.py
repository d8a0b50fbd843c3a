"""A measured program's child runs as the grading's second uid, beside the other children where
the sandbox walls them apart (bwrap with a /proc of its own) and after them elsewhere; its
outcome is the one it would have had after them: it stands only when the others' run changed
nothing it meets (graders/grading/child_loop.py, graders/isolation/sandbox.py Isolation.apart).

These run the real child on a small package and steps of the test's own, with a 1 s program
timeout where a hang is waited for.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest

from graders.grading import cases, child_loop
from graders.grading.protocol import Outcome
from graders.isolation import identity, processes, sandbox
from graders.isolation.workdir import seal, with_runner

from grading import STRONG

ENGINE = """
import time


class Value:
    def spin(self):
        while True: pass

    def burn(self):
        until = time.process_time() + 2.0
        while time.process_time() < until:
            pass
        return 2

    def fine(self):
        return 1
"""

STEPS = '''
import importlib
import os

from steps import step


@step
def call_value(run, *, method):
    """Call `method` of a new minigrad.engine.Value."""
    engine = importlib.import_module("minigrad.engine")
    run.out.append(getattr(engine.Value(), method)())


@step
def niceness(run):
    """How much lower than the grader's the child's priority is."""
    run.out.append(os.nice(0))
'''


class Child(NamedTuple):
    """A child the grading started: for the measured program ("timed") or the others ("main"),
    its uid (None: this process's, at the local level), and the roles of those running then."""

    role: str
    uid: int | None
    beside: set[str]


SPIN = "took too long (over 1 s); look for an endless loop in Value.spin (engine.py, line 7)"


def call(method: str, limit: float | None = None) -> list[list]:
    """A program calling `method`, then saying its child's niceness; with `limit`, a measured one
    (stopped after 1.5 s)."""
    timed = [["measured", {"what": method, "limit": limit, "stop_after": 1.5}]] if limit else []
    return [*timed, ["call_value", {"method": method}], ["niceness", {}]]


@contextmanager
def isolated(level: str) -> Iterator[tuple[Path, sandbox.Isolation]]:
    """A work folder with ENGINE and STEPS, and how a grading at `level` runs its children."""
    workdir = with_runner()
    (workdir / "submission" / "minigrad" / "__init__.py").write_text("")
    (workdir / "submission" / "minigrad" / "engine.py").write_text(ENGINE)
    (workdir / "steps_beside_test.py").write_text(textwrap.dedent(STEPS))
    try:
        if level == "local":
            seal(workdir, None)
            yield workdir, sandbox.Isolation("local")
            return
        with identity.claimed() as who:
            seal(workdir, who)
            yield workdir, sandbox.Isolation(level, who)
    finally:
        shutil.rmtree(workdir)


def run(level: str, programs: list[list], monkeypatch, timeout: float = 1.0) -> tuple[list[Outcome], list[Child]]:
    """The programs as a grading at `level` runs them, each with `timeout`; and each child it
    started, in order."""
    monkeypatch.setattr(child_loop, "PROGRAM_TIMEOUT", timeout)
    started: list[Child] = []
    running: list[str] = []
    lock = threading.Lock()
    real = sandbox.run

    def watched(isolation, folder, script, stdin, timeout, accept=None, starved=None):  # noqa: ANN001, ANN202
        request = json.loads(stdin)
        role = "timed" if cases.measured(request["programs"][request["start"]]) else "main"
        with lock:
            started.append(Child(role, isolation.runs_as.uid if isolation.runs_as else None, set(running)))
            running.append(role)
        try:
            return real(isolation, folder, script, stdin, timeout, accept, starved)
        finally:
            with lock:
                running.remove(role)
            # the others' run ends (and the measured child's priority is restored) only once the
            # measured child beside it is done, so that what it says of its priority is certain
            while role == "main" and "timed" in running:
                time.sleep(0.01)

    monkeypatch.setattr(sandbox, "run", watched)
    with isolated(level) as (workdir, isolation):
        names = [f"test {i}" for i in range(len(programs))]
        outcomes = child_loop.run_child(workdir, programs, names, ["p"] * len(programs), isolation)
        who = isolation.runs_as
        if who is not None:  # the grading's first uid runs the others, its second the measured
            assert {child.uid for child in started} == {who.uid, who.timed.uid} and who.uid != who.timed.uid
            assert all((child.uid == who.timed.uid) == (child.role == "timed") for child in started)
        return outcomes, started


@pytest.mark.parametrize("level", ["local", *STRONG])
def test_the_measured_child_runs_beside_the_others_only_at_bwrap_and_counts_only_its_own(
    level: str, monkeypatch
) -> None:
    """Its count holds none of the 2 s the other child burns, even while both run; beside them, it
    runs at a lower priority while they run (its count is CPU time, which priority does not
    change)."""
    (burned, timed), started = run(level, [call("burn"), call("fine", limit=5.0)], monkeypatch, 10.0)
    ours = os.nice(0)
    assert burned.out == [2, ours] and timed.error is None
    assert timed.out == [1, ours + child_loop.BESIDE_NICE if level == "bwrap" else ours]
    assert timed.cpu is not None and timed.cpu < 1.0
    assert sorted(child.role for child in started) == ["main", "timed"]
    assert any(child.beside for child in started) == (level == "bwrap")


@pytest.mark.parametrize("level", ["local", *STRONG])
def test_a_measured_program_meets_what_the_others_learnt_wherever_it_ran(level: str, monkeypatch) -> None:
    """The other child hangs in Value.spin: the measured program that calls it fails at once with
    that hang's message, as it does when it runs after them. At bwrap it ran beside them first
    (stopped at its own 1.5 s), and that outcome was set aside: it ran again, after."""
    outcomes, started = run(level, [call("spin"), call("spin", limit=0.5), call("fine")], monkeypatch)
    assert [o.error and o.error["message"] for o in outcomes] == [SPIN, SPIN, None]
    assert outcomes[2].out == [1, os.nice(0)]
    again = ["timed"] if level == "bwrap" else []
    assert sorted(child.role for child in started) == ["main", "main", "timed", *again]
    assert started[-1].role == "timed" and not started[-1].beside  # the last child: the measured program, after


@pytest.mark.skipif(not STRONG, reason="a grading's uids need root")
def test_the_measured_child_runs_beside_only_where_the_sandbox_walls_the_two_apart() -> None:
    """bwrap with a /proc of its own; never the user level (a shared /tmp), bwrap with the host's
    /proc bound (each reads the other's thread names), a grading with one uid, or local."""
    with identity.claimed() as who:
        assert sandbox.Isolation("bwrap", who).apart
        assert sandbox.Isolation("bwrap", who).timed().runs_as == who.timed and who.timed.groups == (who.gid,)
        assert not sandbox.Isolation("bwrap", who, sandbox.PROC_MOUNTS[1]).apart
        assert not sandbox.Isolation("user", who, own_namespaces=True).apart
        assert not sandbox.Isolation("bwrap", replace(who, timed=None)).apart
        assert not sandbox.Isolation("local", who).apart and sandbox.Isolation("local", who).timed().runs_as is None


@pytest.mark.skipif(not STRONG, reason="a grading's uids need root")
def test_the_end_of_a_grading_kills_what_either_uid_left_running() -> None:
    with identity.claimed() as who:
        left = [
            subprocess.Popen(["sleep", "600"], user=uid, group=uid, start_new_session=True)
            for uid in (who.uid, who.timed.uid)
        ]
        assert [identity.processes(uid) for uid in (who.uid, who.timed.uid)] == [[p.pid] for p in left]
    assert [identity.processes(uid) for uid in (who.uid, who.timed.uid)] == [[], []]
    assert not any(processes.alive(process.pid) for process in left)  # killed, and reaped by the sweep


@pytest.mark.parametrize("level", ["local", *STRONG])
def test_a_measured_program_that_timed_out_beside_the_others_is_decided_after_them(level: str, monkeypatch) -> None:
    """Beside them it may have been starved (it runs at a lower priority): its time-out decides
    nothing, and the program runs again after them, as everywhere else."""
    outcomes, started = run(level, [call("fine"), call("spin", limit=0.5)], monkeypatch)
    said = "took too long (over 1.5 s); look for an endless loop in Value.spin (engine.py, line 7)"
    assert [o.error and o.error["message"] for o in outcomes] == [None, said]
    again = ["timed"] if level == "bwrap" else []
    assert sorted(child.role for child in started) == ["main", "timed", *again]
    assert started[-1].role == "timed" and not started[-1].beside


@pytest.mark.skipif(not STRONG, reason="a grading's uids need root")
def test_once_the_others_are_done_the_measured_childs_processes_get_the_graders_priority_again() -> None:
    with identity.claimed() as who:
        isolation = sandbox.Isolation("bwrap", who).timed()
        lower = subprocess.Popen(["sleep", "600"], user=who.timed.uid, process_group=0)
        other = subprocess.Popen(["sleep", "600"], user=who.uid, process_group=0)
        for process in (lower, other):
            os.setpriority(os.PRIO_PROCESS, process.pid, os.nice(0) + child_loop.BESIDE_NICE)
        sandbox.restore_priority(isolation)
        said = [os.getpriority(os.PRIO_PROCESS, process.pid) for process in (lower, other)]
    assert said == [os.nice(0), os.nice(0) + child_loop.BESIDE_NICE]  # the other uid's stays
