"""One submission through the public checks and through the hidden grader, part by part.

Both run as the course runs them, in fresh processes: the public checks as `make check` does
(`pytest assignments/checks --submission DIR --part P`, no plugin autoload), the hidden grader
as `minigrad-grade DIR --parts P --seed S`, sharing one reference cache so the reference's
answers are computed once per seed and part. The audit and the project's tests
(tests/test_hidden_covers_public.py) both grade through here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from graders.course_facts.kit import ROOT
from graders.course_facts.parts import COURSE, registry
from graders.reporting.results import BONUS

CHECKS = ROOT / "assignments" / "checks"
PUBLIC_TIMEOUT = 300  # seconds for one part's checks: a backstop, each check has its own CPU budget
HIDDEN_TIMEOUT = 600  # seconds for one grading: a backstop, the grader has its own budget
# The extensions' own files (warmup.py, memory.py) are graded as bonus tests of part 3's suite.
EXTENSIONS_GRADED_IN = "mlp"


@dataclass(frozen=True)
class PublicRun:
    part: str
    passed: bool  # every check of the part passed
    summary: str  # pytest's last line, or why there is none


@dataclass(frozen=True)
class HiddenRun:
    part: str
    seed: int
    scores: dict[str, float]  # test name -> points earned (bonus tests included)
    failed: tuple[str, ...]  # the tests that did not pass
    bonus: tuple[str, ...]  # the optional extensions' tests (graded with the part they extend)

    def lost(self, baseline: dict[str, float]) -> tuple[float, list[str]]:
        """Points lost against the reference's grading of the same part and seed, and the
        tests that lost them (a test missing from this grading loses all its points)."""
        failed = [name for name, most in baseline.items() if self.scores.get(name, 0.0) < most - 1e-9]
        return round(sum(baseline[name] - self.scores.get(name, 0.0) for name in failed), 6), failed


def public_parts(file: str) -> list[str]:
    """The parts whose public checks load `file` (minigrad/<file>), the extensions included."""
    stem = Path(file).stem
    return [part.name for part in (*COURSE, registry.EXTENSIONS) if stem in part.modules]


def hidden_parts(file: str) -> list[str]:
    """The parts whose hidden suites grade `file`."""
    stem = Path(file).stem
    parts = [part.name for part in COURSE if stem in part.modules]
    return parts or ([EXTENSIONS_GRADED_IN] if stem in registry.EXTENSIONS.modules else [])


def check_command(*args: str, checks: Path | str = CHECKS) -> list[str]:
    """The public checks' command line as `make check` runs it (course/check.mk): quiet, no
    traceback, no pytest summary, no cache; `args` add the submission, the part and the rest.
    The audit and the project's tests (tests/test_check_*.py, tests/test_public_checks.py) run
    the checks through this one line."""
    return [
        sys.executable,
        "-m",
        "pytest",
        str(checks),
        "-q",
        "--tb=no",
        "-rN",
        "--no-header",
        "-p",
        "no:cacheprovider",
        *args,
    ]


def check_env() -> dict[str, str]:
    """The environment `make check` gives the checks: no plugin autoload (the checks need none,
    and an instructor's venv has several that would triple the start-up time)."""
    return {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def public_run(submission: Path, part: str, first_failure: bool = True) -> PublicRun:
    """The public checks of one part on `submission` (a folder holding minigrad/); with
    `first_failure`, pytest stops at the first failed check (a kill needs no more)."""
    command = check_command("--submission", str(submission), "--part", part, "--pictures", "", *["-x"] * first_failure)
    try:
        run = subprocess.run(command, cwd=ROOT, env=check_env(), capture_output=True, text=True, timeout=PUBLIC_TIMEOUT)
    except subprocess.TimeoutExpired:
        return PublicRun(part, False, f"no result within {PUBLIC_TIMEOUT} s")
    lines = [line for line in run.stdout.splitlines() if " in " in line and ("passed" in line or "failed" in line)]
    return PublicRun(part, run.returncode == 0, lines[-1].strip() if lines else f"exit {run.returncode}")


def hidden_run(submission: Path, part: str, seed: int, cache: Path) -> HiddenRun:
    """The hidden grader on one part of `submission`; raises if it writes no grade."""
    with tempfile.TemporaryDirectory(prefix="audit-grade-") as out:
        # Unformatted (fmt: skip): the command line reads as one would type it, flag beside value.
        command = [
            sys.executable, "-m", "graders", str(submission), "--out", out, "--parts", part,
            "--seed", str(seed), "--reference-cache", str(cache), "--label", submission.name,
        ]  # fmt: skip
        run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=HIDDEN_TIMEOUT)
        if run.returncode != 0:
            raise RuntimeError(f"minigrad-grade {submission} --parts {part} failed: {run.stderr[-1000:]}")
        results = json.loads((Path(out) / "results.json").read_text())
    tests = results["tests"]
    return HiddenRun(
        part,
        seed,
        {test["name"]: float(test["score"]) for test in tests},
        tuple(test["name"] for test in tests if test["status"] != "passed"),
        tuple(test["name"] for test in tests if BONUS in test.get("tags", [])),
    )


def reference_copy(dest: Path, file: str | None = None, source: str | None = None) -> Path:
    """A submission folder holding a copy of the reference package, with `file` replaced by
    `source` when given."""
    package = dest / "minigrad"
    shutil.copytree(ROOT / "reference" / "minigrad", package, ignore=shutil.ignore_patterns("__pycache__"))
    if file is not None:
        (package / file).write_text(source, encoding="utf-8")
    return dest
