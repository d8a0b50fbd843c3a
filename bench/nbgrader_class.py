"""The same class graded nbgrader's way, to set the kit's class grading beside it.

Each submission becomes the notebook an nbgrader course would collect: one solution cell per
file of the student's `minigrad/` (`%%writefile minigrad/engine.py` and the student's code,
so the package the checks import is the student's) and one autograder test cell per part,
locked, that runs that part's public checks (`assignments/checks/test_<part>.py`) in the
kernel and scores the number that pass (nbgrader's partial credit: a test cell whose result
is a number gets that many points). The real `nbgrader autograde` then grades the class in a
course directory of its own, with each cell limited to 10 s, the kit's time budget for a
part (`Execute.timeout`; nbgrader interrupts the kernel and gives the cell 0). The milestone
draws no pictures there (`--pictures ''`): the kit's hidden grader draws none either, so
drawing would only slow nbgrader's side of the comparison.

    python bench/nbgrader_class.py --students 10     # alone: a mix of real submissions
    seconds_per_submission(folders)                   # from bench/class_speed.py
"""

from __future__ import annotations

import argparse
import copy
import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from course.submissions import ROOT, materialize
from graders.class_grading.gradebook import with_scripts_on_path
from graders.course_facts.parts import PARTS
from graders.uploads.intake import copy_package

ASSIGNMENT = "minigrad"
CHECKS = ROOT / "assignments" / "checks"
CELL_SECONDS = 10
MIX = [
    "correct",
    "bug-add-overwrites-grad",
    "bug-tanh-derivative",
    "broken-syntax-error",
    "bug-mse-sums",
    "untouched-release",
    "bug-reversed-topological-order",
    "broken-missing-nn",
    "bug-checkpoint-wrong-answers",
    "attack-infinite-loop",
]

SETUP = f"""\
import os
import pytest

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # as `make check` runs them
os.makedirs("minigrad", exist_ok=True)


class Passed:
    count = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.count += 1


def public_checks_passed(part):
    passed = Passed()
    pytest.main([{str(CHECKS)!r} + f"/test_{{part}}.py", "--submission", ".", "--pictures", "", "-q", "--tb=no",
                 "-p", "no:cacheprovider"], plugins=[passed])
    return passed.count
"""
CONFIG = f"""\
c = get_config()  # noqa: F821
c.CourseDirectory.root = {{root!r}}
c.Execute.timeout = {CELL_SECONDS}
"""


def cell(kind: str, name: str, source: str, points: int = 0) -> nbformat.NotebookNode:
    """A code cell with nbgrader's metadata: `solution` (the student's), `tests` (a locked
    autograder test worth `points`) or `setup` (locked, no points)."""
    made = nbformat.v4.new_code_cell(source)
    made.metadata["nbgrader"] = {
        "grade_id": name,
        "schema_version": 3,
        "solution": kind == "solution",
        "grade": kind == "tests",
        "locked": kind != "solution",
        "task": False,
        **({"points": points} if kind == "tests" else {}),
    }
    return made


def public_check_counts() -> dict[str, int]:
    """How many public checks each part has: the most points its test cell can give."""
    counts = {}
    for part in PARTS:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "-p",
                "no:cacheprovider",
                str(CHECKS / f"test_{part}.py"),
                "--submission",
                str(ROOT / "reference"),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        )
        counts[part] = int(re.search(r"(\d+) tests? collected", run.stdout).group(1))
    return counts


def source_notebook() -> nbformat.NotebookNode:
    """The instructor's notebook: the reference's files as solution cells, then the checks."""
    files = sorted((ROOT / "reference" / "minigrad").glob("*.py"))
    cells = [cell("setup", "setup", SETUP)]
    cells += [
        cell("solution", f"file-{path.stem}", f"%%writefile minigrad/{path.name}\n{path.read_text()}") for path in files
    ]
    cells += [
        cell("tests", f"checks-{part}", f'public_checks_passed("{part}")', points)
        for part, points in public_check_counts().items()
    ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    return notebook


def student_notebook(release: nbformat.NotebookNode, submission: Path, scratch: Path) -> nbformat.NotebookNode:
    """The released notebook with each file cell holding the student's version of that file
    (found the way the kit finds it: flat, nested or wrapped); a file the student lacks
    leaves its cell without code, so the package lacks it too."""
    copy_package(submission, _mkdir(scratch))
    notebook = copy.deepcopy(release)
    for made in notebook.cells:
        grade_id = made.metadata["nbgrader"]["grade_id"]
        if grade_id.startswith("file-"):
            path = scratch / f"{grade_id.removeprefix('file-')}.py"
            made.source = (
                f"%%writefile minigrad/{path.name}\n{path.read_text()}" if path.exists() else "# not submitted"
            )
    return notebook


def nbgrader(course: Path, *args: str, check: bool = True) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        capture_output=True,
        text=True,
        env=with_scripts_on_path(os.environ),
    )
    if check and run.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{run.stderr[-3000:]}")


def build_course(folders: dict[str, Path], course: Path) -> None:
    """An nbgrader course in `course` with the assignment generated and every submission
    collected as `submitted/{student}/minigrad/minigrad.ipynb`."""
    (_mkdir(course) / "nbgrader_config.py").write_text(CONFIG.format(root=str(course)))
    nbformat.write(source_notebook(), _mkdir(course / "source" / ASSIGNMENT) / "minigrad.ipynb")
    nbgrader(course, "generate_assignment", ASSIGNMENT)
    release = nbformat.read(course / "release" / ASSIGNMENT / "minigrad.ipynb", as_version=4)
    for student, folder in folders.items():
        notebook = student_notebook(release, folder, course / "scratch" / student)
        nbformat.write(notebook, _mkdir(course / "submitted" / student / ASSIGNMENT) / "minigrad.ipynb")


def autograde(course: Path) -> float:
    """Seconds the real `nbgrader autograde` takes over the whole class. It exits 1 when it
    could not grade some submission (one whose code kills the kernel), after grading the rest."""
    start = time.perf_counter()
    nbgrader(course, "autograde", ASSIGNMENT, check=False)
    return time.perf_counter() - start


def scores(course: Path) -> tuple[dict[str, float], float]:
    """Each student's total in the course's gradebook after autograde, and the maximum."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        graded = {s.student.id: s.score for s in gradebook.assignment_submissions(ASSIGNMENT)}
        return graded, gradebook.find_assignment(ASSIGNMENT).max_score


def seconds_per_submission(folders: dict[str, Path]) -> float:
    """nbgrader autograde's seconds per submission on these submission folders (student ->
    folder). Building the course is not timed. Says which students nbgrader could not grade."""
    with tempfile.TemporaryDirectory(prefix="nbgrader-class-") as tmp:
        course = Path(tmp)
        build_course(folders, course)
        seconds = autograde(course)
        graded = scores(course)[0]
    if ungraded := sorted(folders.keys() - graded.keys()):
        print(f"nbgrader autograde could not grade {len(ungraded)}: {', '.join(ungraded)}")
    return seconds / len(folders)


def _mkdir(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--students", type=int, default=len(MIX), help="class size (a repeating mix of real submissions)"
    )
    args = parser.parse_args(argv)
    specs = list(itertools.islice(itertools.cycle(MIX), args.students))
    with tempfile.TemporaryDirectory(prefix="nbgrader-bench-") as tmp:
        folders = {
            f"s{i:03d}-{spec}": materialize(ROOT / "tests" / "submissions" / f"{spec}.json", Path(tmp) / str(i))
            for i, spec in enumerate(specs)
        }
        course = Path(tmp) / "course"
        build_course(folders, course)
        seconds = autograde(course)
        graded, most = scores(course)
    for student in folders:
        print(f"{student:<44}{graded.get(student, 'not graded')!s:>8} / {most:g} public checks")
    print(f"\nnbgrader autograde: {len(folders)} submissions in {seconds:.1f} s, {seconds / len(folders):.2f} s each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
