"""Where students put their package: wherever it is, it is found, and never through a link."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from course.submissions import materialize
from graders.uploads import intake

from grading import ROOT

MODULES = sorted(path.name for path in (ROOT / "reference" / "minigrad").glob("*.py"))  # every file of the package


def package(tmp_path: Path) -> Path:
    return materialize(ROOT / "tests" / "submissions" / "correct.json", tmp_path / "built") / "minigrad"


def copy(submission: Path, tmp_path: Path) -> intake.Intake:
    target = tmp_path / "copy"
    target.mkdir()
    return intake.copy_package(submission, target)


@pytest.mark.parametrize(
    "where",
    [
        "minigrad",
        "minigrad/minigrad",
        "upload/minigrad",
        "upload/hw1-alice/minigrad",
        "upload/hw1-alice/hw1/minigrad",
        "upload",
    ],
    ids=[
        "the package itself",
        "in nbgrader's assignment folder",
        "at the top",
        "in a wrapping folder",
        "two folders deep",
        "flat",
    ],
)
def test_the_package_is_found_wherever_it_is(tmp_path: Path, where: str) -> None:
    place = tmp_path / where
    place.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(package(tmp_path), place)
    (tmp_path / "upload" / ".git").mkdir(parents=True, exist_ok=True)  # clones carry one
    copied = copy(tmp_path / where.split("/")[0], tmp_path)
    assert copied.found and copied.copied == MODULES and copied.refused == []


def test_of_two_copies_the_fuller_is_graded_whatever_the_file_times(tmp_path: Path) -> None:
    """Canvas, Gradescope and Moodle each set their own file times on a download: the same files
    must be graded the same way through all three, so only what the copies hold decides."""
    for copy_name in ("draft", "final"):
        shutil.copytree(package(tmp_path / copy_name), tmp_path / "upload" / copy_name / "minigrad")
    engine = tmp_path / "upload" / "draft" / "minigrad" / "engine.py"
    engine.write_text(engine.read_text()[:200])  # the draft: the same files, less code
    for when, copy_name in ((1_700_000_000, "final"), (1_800_000_000, "draft")):  # the draft looks newer
        for path in (tmp_path / "upload" / copy_name / "minigrad").iterdir():
            os.utime(path, (when, when))
    copied = copy(tmp_path / "upload", tmp_path)
    assert copied.found and copied.location == "final/minigrad" and copied.others == ["draft/minigrad"]
    assert copied.refused == [
        "draft/minigrad: another copy of the package, not graded; graded final/minigrad "
        "(of several copies, the one with the most .py files, then the most code)"
    ]
    (tmp_path / "upload" / "draft" / "minigrad" / "extra.py").write_text("x = 1\n")
    (tmp_path / "again").mkdir()
    assert copy(tmp_path / "upload", tmp_path / "again").location == "draft/minigrad"  # more files wins first


def test_a_package_deep_in_an_upload_is_found(tmp_path: Path) -> None:
    shutil.move(package(tmp_path), tmp_path / "upload" / "Downloads" / "hw" / "src" / "minigrad")
    copied = copy(tmp_path / "upload", tmp_path)
    assert copied.found and copied.location == "Downloads/hw/src/minigrad" and copied.copied == MODULES


def test_a_wrapping_folder_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / "hw1").symlink_to(package(tmp_path).parent)
    copied = copy(tmp_path / "upload", tmp_path)
    assert not copied.found and copied.copied == []
