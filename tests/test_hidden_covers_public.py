"""Hidden ⊇ public: every mistake the public checks catch, the hidden grader catches too.

Each of the project's own bug specimens (tests/submissions/bug-*.json) goes through the public
checks of every part its changed files reach; in each part where a check fails, the hidden
grader must take points (the extensions' checks are answered by the hidden bonus tests). A
student who sees `make check` fail and submits anyway must not keep that part's points.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course.submissions import load, materialize
from graders.audit import grading

from grading import ROOT, needs_isolation

SPECS = sorted((ROOT / "tests" / "submissions").glob("bug-*.json"))
REFERENCE = ROOT / "reference" / "minigrad"
DEFAULT_SEED = 7


def changed_files(package: Path) -> list[str]:
    """The files of `package` that differ from the reference's (missing ones included)."""
    names = {p.name for p in REFERENCE.glob("*.py")} | {p.name for p in package.glob("*.py")}
    return sorted(
        name
        for name in names
        if not (package / name).is_file()
        or not (REFERENCE / name).is_file()
        or (package / name).read_bytes() != (REFERENCE / name).read_bytes()
    )


def public_losses(submission: Path, files: list[str]) -> list[str]:
    """The parts whose public checks fail, among those that load a changed file."""
    parts = sorted({part for file in files for part in grading.public_parts(file)})
    return [part for part in parts if not grading.public_run(submission, part).passed]


def hidden_misses(submission: Path, caught: list[str], files: list[str], seed: int, cache: Path) -> list[str]:
    """The parts in `caught` where the hidden grader takes no point: in that part, or for the
    extensions, in a bonus test of a part that grades a changed file. One grading of every part
    concerned, as a student's is: a hang is then paid for once, not once a part."""
    extensions = grading.registry.EXTENSIONS.name
    extended = {p for file in files for p in grading.hidden_parts(file)} if extensions in caught else set()
    graded = {part for part in caught if part != extensions} | extended
    run = grading.hidden_run(submission, ",".join(sorted(graded)), seed, cache)
    part_of = {name: name.split(":")[0] for name in run.failed}  # a test's name starts with its part
    failed_parts = set(part_of.values())
    bonus_failed = any(part_of[name] in extended for name in set(run.failed) & set(run.bonus))
    return [part for part in caught if not (bonus_failed if part == extensions else part in failed_parts)]


@needs_isolation
@pytest.mark.parametrize("spec", SPECS, ids=[s.stem for s in SPECS])
def test_hidden_takes_points_wherever_public_checks_fail(spec: Path, tmp_path: Path) -> None:
    submission = materialize(spec, tmp_path / spec.stem)
    files = changed_files(submission / "minigrad")
    seed = load(spec).get("seed", DEFAULT_SEED)
    caught = public_losses(submission, files)
    missed = hidden_misses(submission, caught, files, seed, tmp_path / "cache") if caught else []
    assert missed == [], f"{spec.stem}: the public checks of {missed} fail, the hidden grader takes no point there"


def test_changed_files_names_what_a_specimen_edits(tmp_path: Path) -> None:
    spec = ROOT / "tests" / "submissions" / "bug-mse-sums.json"
    assert changed_files(materialize(spec, tmp_path / "s") / "minigrad") == ["nn.py"]
