"""The kit's paths and the files a grade depends on are said once (graders/course_facts/kit.py), and every
user of that list (the version digest, the reference cache, Gradescope's zip) sees the same."""

from __future__ import annotations

import gzip
import shutil

from graders.course_facts import kit
from graders.gradescope import package
from graders.isolation.workdir import with_runner


def test_every_file_a_grade_reads_is_a_grade_input():
    inputs = kit.grade_inputs()
    assert kit.DIGITS in inputs and kit.REGISTRY in inputs and kit.SUITES / "pytest.ini" in inputs
    for folder in (kit.CHILD, kit.SUITES, kit.REFERENCE / "minigrad"):
        assert set(folder.glob("*.py")) <= set(inputs)
    assert set(kit.reference_inputs()) <= set(inputs)
    assert all(path.is_file() for path in inputs)


def test_gradescope_zip_holds_every_grade_input():
    assert {path.relative_to(kit.ROOT) for path in kit.grade_inputs()} <= set(package.kit_files())


def test_the_child_is_handed_the_training_digits_and_never_the_test_labels() -> None:
    """The milestone's test labels stay in the grading process: a submission that reads the
    files beside the child runner finds the first TRAINING_DIGITS rows and no other."""
    workdir = with_runner()
    try:
        handed = (workdir / kit.CHILD_DIGITS).read_text().splitlines()
        data = [p.name for p in workdir.iterdir() if not p.name.endswith(".py") and p.name != "submission"]
    finally:
        shutil.rmtree(workdir)
    with gzip.open(kit.DIGITS, "rt") as f:
        every = f.read().splitlines()
    assert handed == every[: kit.TRAINING_DIGITS] and len(every) > kit.TRAINING_DIGITS
    assert data == [kit.CHILD_DIGITS]
