"""The trusted parent's side of a grading run: copy, run in the child, validate, compare.

Programs for the whole run go to one child, which answers one line per program; when the
child dies, hangs or floods, the program it was on fails and a fresh child takes the rest.
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import sandbox

CHILD = Path(__file__).resolve().parent / "child"
REFERENCE = Path(__file__).resolve().parent.parent / "reference"
MAX_FILE_BYTES = 512 * 1024
PROGRAM_TIMEOUT = 10.0  # wall seconds per program
SKIPPED = {
    "type": "Skipped",
    "message": "skipped: an earlier program of this test took too long; look for an endless loop",
    "where": None,
}


@dataclass
class Outcome:
    """What one program produced: its reads, or why it has none."""

    out: list
    error: dict | None


def find_package(submission: Path) -> Path | None:
    """The `minigrad/` folder: the submission itself or a folder inside it; None if absent,
    so that every test still runs, fails with the reason, and the maximum stays the same."""
    submission = submission.resolve()
    package = submission if submission.name == "minigrad" else submission / "minigrad"
    return package if package.is_dir() else None


def prepare_workdir(package: Path | None) -> Path:
    """A private folder with the child runner and a copy of the submission's regular .py files.

    Only `minigrad/*.py` is copied: no links, no other folders, nothing large, so a shipped
    conftest.py or sitecustomize.py never reaches the child's import path.
    """
    workdir = Path(tempfile.mkdtemp(prefix="minigrad-grade-"))
    target = workdir / "submission" / "minigrad"
    target.mkdir(parents=True)
    for source in sorted(package.glob("*.py")) if package else []:
        if source.is_file() and not source.is_symlink() and source.stat().st_size <= MAX_FILE_BYTES:
            shutil.copyfile(source, target / source.name)
    for source in CHILD.glob("*.py"):
        shutil.copyfile(source, workdir / source.name)
    for path in [workdir, *workdir.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return workdir


def reference_module(name: str):
    """A module of the reference package, for suites that need its datasets."""
    if str(REFERENCE) not in sys.path:
        sys.path.insert(0, str(REFERENCE))
    return importlib.import_module(f"minigrad.{name}")


def run_reference(programs: list[list], tests: list[str]) -> list[Outcome]:
    """The same programs on the reference, in a trusted subprocess run like the child.

    Not in this process: `Value._prev` is a set ordered by id(), so with this process's
    randomized memory layout the reference's sums would add up in a different order each
    run, and a replayed grade would differ in the last digits of its expected values.
    """
    workdir = prepare_workdir(REFERENCE / "minigrad")
    try:
        return run_child(workdir, programs, tests, "local")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run_child(workdir: Path, programs: list[list], tests: list[str], level: str) -> list[Outcome]:
    """Every program on the package copied into `workdir` (the submission's, or the
    reference's), restarting the child after each failure.

    `tests` names the test each program belongs to. A crash costs only a restart, so it fails
    just its own program; a time-out costs PROGRAM_TIMEOUT, so once a program of a test hangs,
    the rest of that test's programs are skipped instead of each hanging in turn.
    """
    outcomes: dict[int, Outcome] = {}
    hung: set[str] = set()
    start = 0
    while start < len(programs):
        if tests[start] in hung:
            outcomes[start] = Outcome([], SKIPPED)
            start += 1
            continue
        request = json.dumps({"programs": programs, "start": start}).encode()
        result = sandbox.run(level, workdir, "runner.py", request, PROGRAM_TIMEOUT, per_line=True)
        for line in result.stdout.split(b"\n")[:-1]:
            parsed = parse_line(line, len(programs))
            if parsed is None or parsed[0] != start:
                break
            outcomes[start] = parsed[1]
            start += 1
        if start < len(programs) and start not in outcomes:
            outcomes[start] = Outcome([], child_failure(result))
            if result.timed_out:
                hung.add(tests[start])
            start += 1
    return [outcomes[i] for i in range(len(programs))]


def child_failure(result: sandbox.ChildResult) -> dict:
    if result.timed_out:
        reason = f"took too long (over {PROGRAM_TIMEOUT:.0f} s); look for an endless loop"
    elif result.flooded:
        reason = "printed far too much output"
    elif result.returncode and result.returncode < 0:
        reason = f"the Python process was killed (signal {-result.returncode}); memory or CPU limit exceeded?"
    else:
        reason = f"the Python process stopped early (exit code {result.returncode}); does your code call exit()?"
        tail = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        if tail:
            reason += f": {tail[0][:200]}"
    return {"type": "ChildFailure", "message": reason, "where": None}


def parse_line(line: bytes, count: int) -> tuple[int, Outcome] | None:
    """Accept exactly {"i": int, "out": list, "error": null|dict}; anything else is garbage."""
    try:
        data = json.loads(line, parse_constant=_reject)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"i", "out", "error"}:
        return None
    if type(data["i"]) is not int or not 0 <= data["i"] < count or not isinstance(data["out"], list):
        return None
    error = data["error"]
    if error is not None and not (
        isinstance(error, dict) and all(isinstance(v, (str, type(None))) for v in error.values())
    ):
        return None
    return data["i"], Outcome(data["out"], error)


def _reject(token: str):
    raise ValueError(f"non-finite number {token}")


def is_number(x: object) -> bool:
    return type(x) in (int, float) and math.isfinite(x)


def close(got: object, want: object, rtol: float, atol: float) -> bool:
    """Exact types, finite numbers, |got - want| <= atol + rtol * |want|, same shapes for lists."""
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
