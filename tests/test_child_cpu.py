"""A measured program's CPU is the parent's own count of the whole child that ran it
(graders/isolation/child_cpu.py, graders/grading/child_loop.py): the submission's clock, a worker it forks and
reaps, a thread, none of them hides a second of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graders.grading import child_loop
from graders.grading.protocol import Outcome
from graders.isolation import cgroup, identity, sandbox
from graders.isolation.workdir import seal, with_runner

from grading import STRONG

# The submission's engine, at import: 0.6 s of CPU in a worker it forks and reaps (its CPU is
# then its parent's, as the kernel counts reaped children), 0.3 s in a thread, then its own
# CPU clock stopped for whatever comes next.
ENGINE = """
import os
import threading
import time

_clock = time.process_time


def _burn(seconds):
    until = _clock() + seconds
    while _clock() < until:
        pass


worker = os.fork()
if worker == 0:
    _burn(0.6)
    os._exit(0)
os.waitpid(worker, 0)
thread = threading.Thread(target=_burn, args=(0.3,))
thread.start()
thread.join()
time.process_time = lambda: 0.0
"""
HIDDEN = 0.9  # seconds of CPU the engine spends out of its main thread
MEASURED = ["measured", {"what": "importing the engine", "limit": 5.0, "stop_after": 20.0}]
LOCAL = sandbox.Isolation("local")


def run(level: str, programs: list[list]) -> tuple[list[Outcome], list[int]]:
    """The programs on a submission whose engine is ENGINE, at `level`, as a grading runs them;
    and the order their outcomes were settled in."""
    workdir = with_runner()
    package = workdir / "submission" / "minigrad"
    (package / "__init__.py").write_text("")
    (package / "engine.py").write_text(ENGINE)
    settled: list[int] = []
    names, parts = [f"test {i}" for i in range(len(programs))], ["p"] * len(programs)  # a slow one skips no other
    try:
        if level == "local":
            seal(workdir, None)
            return child_loop.run_child(
                workdir, programs, names, parts, LOCAL, settled=lambda i, _: settled.append(i)
            ), settled
        with identity.claimed() as who:
            seal(workdir, who)
            isolation = sandbox.Isolation(level, who)
            outcomes = child_loop.run_child(
                workdir, programs, names, parts, isolation, settled=lambda i, _: settled.append(i)
            )
            return outcomes, settled
    finally:
        shutil.rmtree(workdir)


@pytest.mark.parametrize("level", ["local", *STRONG])
def test_a_measured_program_is_charged_its_forked_worker_and_its_threads(level: str) -> None:
    imports = ["imports", {"module": "engine"}]
    outcomes, settled = run(level, [[["imports", {"module": "checkpoint"}]], [MEASURED, imports], [imports]])
    before, measured, after = outcomes
    assert (measured.out, measured.error) == (["imports"], None)
    assert measured.cpu is not None and HIDDEN - 0.05 <= measured.cpu < HIDDEN + 1.5
    assert before.cpu is None and after.cpu is None  # unmeasured programs carry no count
    assert after.out == ["imports"]
    assert settled == [0, 2, 1]  # the measured program last, in a child of its own: the others share one


def test_a_child_s_share_of_a_core_counts_the_workers_it_reaped() -> None:
    """At a deadline, a child whose share of a core looks tiny is taken for asleep and run again;
    one that did its work in a worker it forked and reaped was busy the whole time."""
    worker = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    t = time.process_time() + 0.5\n"
        "    while time.process_time() < t: pass\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "print('reaped', flush=True)\n"
        "time.sleep(30)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", worker], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert child.stdout.readline() == b"reaped\n"
        assert sandbox.cpu_seconds(None, child.pid) >= 0.45
    finally:
        child.kill()
        child.wait()


def test_a_child_is_sent_no_program_past_its_segment_and_an_answer_to_one_is_garbage() -> None:
    """The child before a measured program must not answer it: the answer would be untimed."""
    settled: dict[int, Outcome] = {}
    answers = child_loop.Answers(settled.__setitem__, {}, 0, 1, lambda i, last: 1.0, lambda i, last, share: None)
    assert answers.accept(b'{"i": 0, "out": [1], "error": null}') == 1.0
    assert answers.accept(b'{"i": 1, "out": [2], "error": null}') is None
    assert list(settled) == [0] and answers.next == 1


def test_segments_put_each_measured_program_alone() -> None:
    plain = [["imports", {"module": "engine"}]]
    programs = [plain, [MEASURED], plain, plain, [MEASURED]]
    assert [child_loop.segment_end(programs, start) for start in range(5)] == [1, 2, 4, 4, 5]


def test_the_cgroup_count_is_read_from_cgroup_v2_and_none_under_v1(tmp_path: Path) -> None:
    (tmp_path / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n")
    assert cgroup.cpu_seconds(cgroup.Limits(2, (tmp_path,))) == 2.5
    assert cgroup.cpu_seconds(cgroup.Limits(1, (tmp_path, tmp_path))) is None
    os.remove(tmp_path / "cpu.stat")
    assert cgroup.cpu_seconds(cgroup.Limits(2, (tmp_path,))) is None


@pytest.mark.parametrize(
    ("used", "share", "runs_on"),
    [(0.5, 0.3, True), (2.5, 0.3, False), (0.5, 0.05, False)],
    ids=["starved within its limit", "past its limit", "asleep"],
)
def test_a_measured_child_at_its_deadline_runs_on_only_while_it_is_running_within_its_limit(
    used: float, share: float, runs_on: bool
) -> None:
    """The limit, not the wall clock, says whether it is too slow; one that barely ran is left
    to the fresh start every such child gets (child_loop.stretch_for)."""
    answers = child_loop.Answers(
        lambda i, outcome: None, {}, 0, 1, lambda i, last: 4.0, lambda i, last, s: None, (lambda: used, 2.0)
    )
    assert answers.starved(share) == (4.0 if runs_on else None)
    assert answers.cpu == used  # what the child had used there, for its outcome if it is stopped
