"""Where students put their package: wherever it is, it is found, and never through a link."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from course.submissions import materialize
from graders import intake

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


def test_of_two_copies_the_newest_is_graded_and_the_other_named(tmp_path: Path) -> None:
    for n, copy_name in enumerate(("new", "old")):
        shutil.copytree(package(tmp_path / copy_name), tmp_path / "upload" / copy_name / "minigrad")
        for path in (tmp_path / "upload" / copy_name / "minigrad").iterdir():
            os.utime(path, (1_700_000_000 - n * 1000,) * 2)
    copied = copy(tmp_path / "upload", tmp_path)
    assert copied.found and copied.location == "new/minigrad" and copied.others == ["old/minigrad"]
    assert copied.refused == [
        "old/minigrad: another copy of the package, not graded; graded new/minigrad "
        "(of several copies, the one with the newest .py file)"
    ]


def test_a_package_deep_in_an_upload_is_found(tmp_path: Path) -> None:
    shutil.move(package(tmp_path), tmp_path / "upload" / "Downloads" / "hw" / "src" / "minigrad")
    copied = copy(tmp_path / "upload", tmp_path)
    assert copied.found and copied.location == "Downloads/hw/src/minigrad" and copied.copied == MODULES


def test_a_wrapping_folder_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / "hw1").symlink_to(package(tmp_path).parent)
    copied = copy(tmp_path / "upload", tmp_path)
    assert not copied.found and copied.copied == []
