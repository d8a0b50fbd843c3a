"""The trusted parent's side of a grading run: copy, run in the child, validate, compare.

Programs for the whole run go to one child, which answers one line per program; when the
child dies, hangs or floods, the program it was on fails and a fresh child takes the rest.
Time is bounded three ways, none of which a submission can stretch: each program has a
deadline that only its own valid answer ends; each part may lose at most PART_BUDGET seconds
to programs that never finish (then its programs get SHORT_TIMEOUT each); the whole grading
has GRADING_BUDGET. A program that times out without a full core to itself (a loaded
machine starved it, or it slept) is retried once, given as much more time as the load took
from it, so a loaded machine does not cost points.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import intake, sandbox
from .identity import Identity
from .kit import CHILD, DIGITS, REFERENCE

PROGRAM_TIMEOUT = 5.0  # wall seconds per program: room for a machine running a grading per core
PART_BUDGET = 10.0  # wall seconds a part may lose to programs that never finish
SHORT_TIMEOUT = 1.0  # per program, once its part's budget is spent
GRADING_BUDGET = 150.0  # wall seconds for all of one grading's children together
FULL_CORE = 0.9  # share of a core above which a timed-out child was simply too slow
ASLEEP = 0.1  # share below which it was not starved but waiting: its retry gets no extra time
MAX_STRETCH = 3.0  # the most a starved program's retry is stretched
REFERENCE_PATIENCE = 6.0  # the trusted reference never loops: only a loaded machine slows it
TEXT_LIMIT = 300  # characters kept of any string the child sends
DEPTH_LIMIT = 8  # nesting of lists in an answer
SKIPPED = "skipped: an earlier program of this test took too long; look for an endless loop"
OUT_OF_TIME = f"skipped: the grading's time budget ({GRADING_BUDGET:.0f} s) was spent; look for endless loops or sleeps"


@dataclass
class Outcome:
    """What one program produced: its reads, or why it has none."""

    out: list
    error: dict | None


def failure(message: str, kind: str = "ChildFailure") -> dict:
    return {"type": kind, "message": message, "where": None}


def prepare_workdir(submission: Path | None, identity: Identity | None) -> tuple[Path, intake.Intake]:
    """A private folder with the child runner and a safe copy of the submission's `.py` files.

    Only `minigrad/*.py` is copied (see intake.py), so a shipped conftest.py or
    sitecustomize.py never reaches the child's import path. With an identity the folder is
    readable by that grading's group alone; without one (a local run), by this user alone.
    """
    workdir = _workdir_with_runner()
    copied = intake.copy_package(submission, workdir / "submission" / "minigrad") if submission else intake.Intake()
    _seal(workdir, identity)
    return workdir, copied


def _workdir_with_runner() -> Path:
    """A new folder holding every `.py` file of child/ (the runner, the interpreter, each `steps_*.py`
    module, which the interpreter finds by listing its folder) and an empty `submission/minigrad/`."""
    workdir = Path(tempfile.mkdtemp(prefix="minigrad-grade-"))
    (workdir / "submission" / "minigrad").mkdir(parents=True)
    for source in CHILD.glob("*.py"):
        shutil.copyfile(source, workdir / source.name)
    # Part 4's digits, from our own copy: the child reads data only the grader hands it.
    shutil.copyfile(DIGITS, workdir / DIGITS.name)
    return workdir


def _seal(workdir: Path, identity: Identity | None) -> None:
    for path in [workdir, *workdir.rglob("*")]:
        if identity:
            os.chown(path, 0, identity.gid)
        path.chmod((0o750 if identity else 0o700) if path.is_dir() else (0o640 if identity else 0o600))


def reference_module(name: str):
    """A module of the reference package, for suites that need its datasets."""
    if str(REFERENCE) not in sys.path:
        sys.path.insert(0, str(REFERENCE))
    return importlib.import_module(f"minigrad.{name}")


def run_reference(programs: list[list], tests: list[str], parts: list[str]) -> list[Outcome]:
    """The same programs on the reference, in a trusted subprocess run like the child.

    Not in this process: `Value._prev` is a set ordered by id(), so with this process's
    randomized memory layout the reference's sums would add up in a different order each
    run, and a replayed grade would differ in the last digits of its expected values.
    """
    workdir = _workdir_with_runner()
    for source in (REFERENCE / "minigrad").glob("*.py"):  # our own files: a plain copy
        shutil.copyfile(source, workdir / "submission" / "minigrad" / source.name)
    _seal(workdir, None)
    try:
        return run_child(workdir, programs, tests, parts, sandbox.Isolation("local"), REFERENCE_PATIENCE)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_child(
    workdir: Path,
    programs: list[list],
    tests: list[str],
    parts: list[str],
    isolation: sandbox.Isolation,
    patience: float = 1.0,
) -> list[Outcome]:
    """Every program on the package copied into `workdir` (the submission's, or the
    reference's), restarting the child after each failure.

    `tests` and `parts` name the test and part of each program. A crash costs only a restart,
    so it fails just its own program; once a program of a test times out, the rest of that
    test is skipped instead of each hanging in turn. Each program gets the time its own part
    allows, even when one child runs programs of several parts; `patience` multiplies it.
    """
    outcomes: dict[int, Outcome] = {}
    hung: set[str] = set()
    lost: dict[str, float] = defaultdict(float)
    retried: dict[int, float] = {}  # program -> how much its retry's timeout is stretched
    end = time.monotonic() + GRADING_BUDGET

    def allowed(i: int) -> float:  # seconds on a core of its own
        return patience * (PROGRAM_TIMEOUT if lost[parts[i]] < PART_BUDGET else SHORT_TIMEOUT)

    def timeout_for(i: int) -> float:
        left = end - time.monotonic()
        return min(allowed(i) * retried.get(i, 1.0), left) if i < len(programs) else left

    start = 0
    while start < len(programs):
        if tests[start] in hung or end - time.monotonic() <= 0:
            outcomes[start] = Outcome([], failure(SKIPPED if tests[start] in hung else OUT_OF_TIME, "Skipped"))
            start += 1
            continue
        timeout = timeout_for(start)
        answers = Answers(outcomes, start, len(programs), timeout_for)
        request = json.dumps({"programs": programs, "start": start}).encode()
        result = sandbox.run(isolation, workdir, "runner.py", request, timeout, answers.accept)
        start = answers.next
        if start == len(programs):
            break
        given = allowed(start)
        if result.timed_out:
            if (stretch := retry_stretch(result.cpu_share)) is not None and start not in retried:
                retried[start] = stretch
                continue
            lost[parts[start]] += given
            hung.add(tests[start])
        outcomes[start] = Outcome([], child_failure(result, given))
        start += 1
    return [outcomes[i] for i in range(len(programs))]


def retry_stretch(cpu_share: float) -> float | None:
    """How much longer a timed-out program's one retry gets: None for a child that had a
    full core and still did not finish (an endless loop); for one a loaded machine starved,
    as much as the load took (a child with half a core gets twice the time); for one that
    slept, the same time again."""
    if cpu_share >= FULL_CORE:
        return None
    return min(1 / cpu_share, MAX_STRETCH) if cpu_share >= ASLEEP else 1.0


class Answers:
    """Collects a child's answers in order; only the answer to the program due renews its
    deadline, so stray lines (blank, forged, out of order) buy a hung child no time."""

    def __init__(self, outcomes: dict[int, Outcome], first: int, count: int, timeout_for: Callable[[int], float]):
        self.outcomes, self.next, self.count, self.timeout_for = outcomes, first, count, timeout_for

    def accept(self, line: bytes) -> float | None:
        """The next program's time if `line` answers the program due, else None."""
        parsed = parse_line(line, self.count)
        if parsed is None or parsed[0] != self.next:
            return None
        self.outcomes[self.next] = parsed[1]
        self.next += 1
        return self.timeout_for(self.next)


def child_failure(result: sandbox.ChildResult, timeout: float) -> dict:
    if result.timed_out:
        return failure(f"took too long (over {timeout:g} s); look for an endless loop")
    if result.flooded:
        return failure("printed far too much output")
    if result.returncode and result.returncode < 0:
        return failure(f"the Python process was killed (signal {-result.returncode}); memory or CPU limit exceeded?")
    reason = f"the Python process stopped early (exit code {result.returncode}); does your code call exit()?"
    tail = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
    return failure(reason + (f": {tail[0][:TEXT_LIMIT]}" if tail else ""))


def parse_line(line: bytes, count: int) -> tuple[int, Outcome] | None:
    """Accept exactly {"i": int, "out": list, "error": null|{"type","message","where"}};
    anything else, however malformed or deep, is garbage. Strings are trimmed here, in the
    parent: the child is never trusted to trim."""
    try:
        data = json.loads(line, parse_constant=_reject)
        if not isinstance(data, dict) or set(data) != {"i", "out", "error"}:
            return None
        if type(data["i"]) is not int or not 0 <= data["i"] < count or not isinstance(data["out"], list):
            return None
        return data["i"], Outcome(clean(data["out"], DEPTH_LIMIT), clean_error(data["error"]))
    except (ValueError, RecursionError, TypeError):
        return None


def clean(value: object, depth: int) -> object:
    """The answer with every string trimmed; nesting deeper than `depth` is garbage."""
    if isinstance(value, list):
        if depth == 0:
            raise ValueError("nested too deep")
        return [clean(v, depth - 1) for v in value]
    if isinstance(value, dict):
        return {str(k)[:TEXT_LIMIT]: clean(v, depth - 1) for k, v in value.items()} if depth else {}
    return value[:TEXT_LIMIT] if isinstance(value, str) else value


def clean_error(error: object) -> dict | None:
    if error is None:
        return None
    if not isinstance(error, dict) or set(error) != {"type", "message", "where"}:
        raise ValueError("malformed error")
    if not all(isinstance(v, (str, type(None))) for v in error.values()):
        raise ValueError("malformed error")
    return {k: v if v is None else v[:TEXT_LIMIT] for k, v in error.items()}


def _reject(token: str):
    raise ValueError(f"non-finite number {token}")


def is_number(x: object) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def is_array(x: object) -> bool:
    """An array answer as the child's `array()` sends it: {"shape": [3, 1], "values": [...]}."""
    return (
        isinstance(x, dict)
        and set(x) == {"shape", "values"}
        and isinstance(x["shape"], list)
        and all(type(n) is int and n >= 0 for n in x["shape"])
    )


def close(got: object, want: object, rtol: float, atol: float) -> bool:
    """Exact types, finite numbers, |got - want| <= atol + rtol * |want|, same shapes for lists
    and for arrays (whose shapes are compared first, then their values element by element)."""
    if is_array(want):
        return is_array(got) and got["shape"] == want["shape"] and close(got["values"], want["values"], rtol, atol)
    if isinstance(want, list):
        return (
            isinstance(got, list) and len(got) == len(want) and all(close(g, w, rtol, atol) for g, w in zip(got, want))
        )
    if isinstance(want, str):
        return type(got) is str and got == want
    if not is_number(want):
        return False
    if not is_number(got):
        return False
    try:
        return abs(got - want) <= atol + rtol * abs(want)
    except OverflowError:
        return False
