"""Where students put their package: wherever it is, it is found, and never through a link."""

from __future__ import annotations

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


def test_two_candidate_folders_are_not_guessed_between(tmp_path: Path) -> None:
    for student in ("alice", "bob"):
        shutil.copytree(package(tmp_path / student), tmp_path / "upload" / student / "minigrad")
    copied = copy(tmp_path / "upload", tmp_path)
    assert not copied.found and copied.copied == []


def test_a_wrapping_folder_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / "hw1").symlink_to(package(tmp_path).parent)
    copied = copy(tmp_path / "upload", tmp_path)
    assert not copied.found and copied.copied == []
