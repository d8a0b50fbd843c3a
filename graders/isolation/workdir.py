"""The child's folder for one grading: the child runner, part 4's digits and a safe copy of
the submission, readable by that grading's uid alone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from graders.course_facts.kit import CHILD, CHILD_DIGITS, TRAINING_DIGITS, digit_rows
from graders.uploads import intake

from .identity import Identity


def prepare_workdir(submission: Path | None, identity: Identity | None) -> tuple[Path, intake.Intake]:
    """A private folder with the child runner and a safe copy of the submission's `.py` files.

    Only `minigrad/*.py` is copied (see intake.py), so a shipped conftest.py or
    sitecustomize.py never reaches the child's import path. With an identity the folder is
    readable by that grading's group alone; without one (a local run), by this user alone.
    """
    workdir = with_runner()
    copied = intake.copy_package(submission, workdir / "submission" / "minigrad") if submission else intake.Intake()
    seal(workdir, identity)
    return workdir, copied


def with_runner() -> Path:
    """A new folder holding every `.py` file of child/ (the runner, the interpreter, each `steps_*.py`
    module, which the interpreter finds by listing its folder) and an empty `submission/minigrad/`."""
    workdir = Path(tempfile.mkdtemp(prefix="minigrad-grade-"))
    (workdir / "submission" / "minigrad").mkdir(parents=True)
    for source in CHILD.glob("*.py"):
        shutil.copyfile(source, workdir / source.name)
    _training_digits(workdir / CHILD_DIGITS)
    return workdir


def _training_digits(path: Path) -> None:
    """Part 4's training digits, from our own copy: the child reads data only the grader hands
    it, and never the milestone's test labels, which a forging submission could read back."""
    path.write_text("".join(digit_rows()[:TRAINING_DIGITS]))


def seal(workdir: Path, identity: Identity | None) -> None:
    for path in [workdir, *workdir.rglob("*")]:
        if identity:
            os.chown(path, 0, identity.gid)
        path.chmod((0o750 if identity else 0o700) if path.is_dir() else (0o640 if identity else 0o600))
