"""A hang costs its time once per grading: the child names the function it was stopped in, and
every later program that calls that function fails at once with the same message. Likewise a
module whose import ends the child: every later import of it fails at once.

These run the real child (the local level) on a small package and steps of the test's own,
with a 1 s program timeout so that a hang is cheap to wait for.
"""

from __future__ import annotations

import shutil
import textwrap
import time
from pathlib import Path

import pytest

from graders.grading import child_loop, hang_report
from graders.grading.protocol import Outcome
from graders.isolation import sandbox
from graders.isolation.workdir import prepare_workdir

ENGINE = """
import time


class Value:
    def spin(self):
        while True: pass

    also = spin  # the same function under a second name: the same hang

    def fine(self):
        return 1

    def slow(self):
        time.sleep(1.7)  # past the report (at 1.6 s), before the deadline (2 s)
        return 2


def nested():
    def inner():
        while True: pass

    inner()
"""

STEPS = '''
import importlib

from steps import step


@step
def call_engine(run, *, function):
    """Call minigrad.engine's `function`: a method of a new Value, or a module function."""
    engine = importlib.import_module("minigrad.engine")
    owner, _, name = function.rpartition(".")
    target = getattr(engine.Value(), name) if owner else getattr(engine, name)
    run.out.append(target())


@step
def import_module(run, *, name):
    """Import minigrad.`name`."""
    importlib.import_module(f"minigrad.{name}")
    run.out.append(name)
'''


@pytest.fixture
def workdir():
    folder, _ = prepare_workdir(None, None)
    (folder / "submission" / "minigrad" / "__init__.py").write_text("")
    (folder / "submission" / "minigrad" / "engine.py").write_text(ENGINE)
    (folder / "submission" / "minigrad" / "quits.py").write_text("import os\n\nos._exit(3)\n")
    (folder / "steps_hang_test.py").write_text(textwrap.dedent(STEPS))
    yield folder
    shutil.rmtree(folder)


def grade_calls(
    workdir: Path, functions: list[str], parts: list[str], monkeypatch, timeout: float = 1.0
) -> tuple[list[Outcome], list[int]]:
    """Each function called by a program of its own (`import name`: that module imported); also
    the program each child that timed out was on, and -1 for each child that ended otherwise."""
    monkeypatch.setattr(child_loop, "PROGRAM_TIMEOUT", timeout)
    timed_out: list[int] = []
    run = sandbox.run

    def watched(isolation, folder, script, stdin, timeout, accept=None, starved=None):  # noqa: ANN001, ANN202
        result = run(isolation, folder, script, stdin, timeout, accept, starved)
        timed_out.append(accept.__self__.next if result.timed_out else -1)
        return result

    monkeypatch.setattr(sandbox, "run", watched)
    programs = [
        [["import_module", {"name": f.split()[1]}]] if f.startswith("import ") else [["call_engine", {"function": f}]]
        for f in functions
    ]
    tests = [f"test {i}" for i in range(len(programs))]
    return child_loop.run_child(workdir, programs, tests, parts, sandbox.Isolation("local")), timed_out


def test_a_function_stopped_once_fails_every_later_call_at_once(workdir: Path, monkeypatch) -> None:
    functions = ["Value.spin", "Value.fine", "Value.spin", "Value.also", "Value.fine"]
    outcomes, timed_out = grade_calls(workdir, functions, ["one", "one", "one", "two", "two"], monkeypatch)
    said = "took too long (over 1 s); look for an endless loop in Value.spin (engine.py, line 7)"
    assert [o.error and o.error["message"] for o in outcomes] == [said, None, said, said, None]
    assert [o.out for o in outcomes[1::3]] == [[1], [1]]
    assert set(timed_out) == {0, -1}  # once, or twice when its child barely ran: never again


def test_a_nested_function_is_named_but_cannot_be_stopped_at_once(workdir: Path, monkeypatch) -> None:
    outcomes, timed_out = grade_calls(workdir, ["nested", "nested"], ["one", "two"], monkeypatch)
    said = "took too long (over 1 s); look for an endless loop in nested.<locals>.inner (engine.py, line 21)"
    assert [o.error["message"] for o in outcomes] == [said, said]
    assert set(timed_out) == {0, 1}


def test_a_slow_program_that_ends_keeps_its_answer(workdir: Path, monkeypatch) -> None:
    """The child says where it is before the deadline; a program that then answers is not a hang."""
    outcomes, timed_out = grade_calls(workdir, ["Value.fine", "Value.slow"], ["one", "one"], monkeypatch, 2.0)
    assert outcomes == [Outcome([1], None), Outcome([2], None)]
    assert timed_out == [-1]


@pytest.mark.parametrize(
    "line",
    [
        b'{"i": 3, "stuck": {"module": "minigrad.engine", "name": "Value.spin", "file": "engine.py", "line": 8}}',
        b'{"i": 0, "stuck": {"module": "os", "name": "system", "file": "os.py", "line": 1}}',
        b'{"i": 0, "stuck": {"module": "minigrad.engine", "name": "a b", "file": "engine.py", "line": 8}}',
        b'{"i": 0, "stuck": {"module": "minigrad.engine", "name": "f", "file": "../x.py", "line": 8}}',
        b'{"i": 0, "stuck": {"module": "minigrad.engine", "name": "f", "file": "engine.py", "line": "8"}}',
        b'{"i": 0, "stuck": {"module": "minigrad.engine", "name": "f", "file": "engine.py"}}',
        b'{"i": 0, "stuck": [], "out": []}',
        b"[" * 100_000,
    ],
    ids=["another program", "not the submission", "not a name", "a path", "line as text", "no line", "shape", "deep"],
)
def test_a_report_in_any_other_shape_is_ignored(line: bytes) -> None:
    assert hang_report.parse(line, 0) is None


def test_the_report_is_believed_only_for_the_program_due() -> None:
    line = b'{"i": 0, "stuck": {"module": "minigrad.nn", "name": "train", "file": "nn.py", "line": 12}}'
    assert hang_report.parse(line, 0) == hang_report.Stuck("minigrad.nn", "train", "nn.py", 12)


def test_a_known_hang_costs_no_time(workdir: Path, monkeypatch) -> None:
    start = time.monotonic()
    grade_calls(workdir, ["Value.spin"] + ["Value.spin", "Value.fine"] * 5, ["one"] * 11, monkeypatch)
    assert time.monotonic() - start < 10  # ten more timed-out calls would take 10 s alone


def test_a_module_that_exits_when_imported_costs_one_child(workdir: Path, monkeypatch) -> None:
    functions = ["import quits", "Value.fine", "import quits", "import quits", "Value.fine"]
    outcomes, children = grade_calls(workdir, functions, ["one", "one", "two", "two", "two"], monkeypatch)
    said = "the Python process stopped early (exit code 3); does your code call exit()?"
    assert [o.error and o.error["message"] for o in outcomes] == [said, None, said, said, None]
    assert children == [-1, -1]  # the one that exited, and the one that ran the rest
