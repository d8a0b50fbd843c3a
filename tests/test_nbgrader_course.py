"""nbgrader's own commands cannot damage the course (`reference/`, `assignments/`).

On a copy of the course directory (its nbgrader_config.py, reference/ and assignments/), with
a notebook in `reference/minigrad/` and in nbgrader's configured source folder, the real
`nbgrader generate_assignment` runs twice: once normally, once after a notebook was removed
while the gradebook holds a submission, which makes nbgrader fail and delete its release
folder for the assignment. Then `nbgrader export` runs. Every file of reference/ and
assignments/ must be byte for byte what it was. (With the old configuration, whose source
and release folders were reference/ and assignments/, the first run wrote the solutions
into assignments/ and the second deleted assignments/minigrad/.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from traitlets.config.loader import PyFileConfigLoader

from graders.class_grading.gradebook import with_scripts_on_path

from grading import ROOT

COMMITTED = ("reference", "assignments")


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=300,
        env=with_scripts_on_path(os.environ),
    )


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None) under `folder`, by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


def write_notebook(path: Path) -> None:
    cell = nbformat.v4.new_code_cell("x = 1\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION\n")
    notebook = nbformat.v4.new_notebook(cells=[cell])
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


def test_nbgrader_commands_leave_reference_and_assignments_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    for name in COMMITTED:
        shutil.copytree(ROOT / name, course / name, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(course)  # the way nbgrader reads its config: from the folder it runs in
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    coursedir = CourseDirectory(config=config)
    sources = {
        course / "reference" / "minigrad",
        Path(coursedir.format_path(coursedir.source_directory, ".", "minigrad")),
    }
    for folder in sources:
        write_notebook(folder / "lab.ipynb")
    before = {name: snapshot(course / name) for name in COMMITTED}

    first = nbgrader(course, "generate_assignment", "minigrad", "--force")
    assert first.returncode == 0, first.stderr[-2000:]
    with Gradebook(coursedir.db_url) as gradebook:
        gradebook.update_or_create_student("ada")
        gradebook.add_submission("minigrad", "ada")
    for folder in sources:
        (folder / "lab.ipynb").rename(folder / "lab-renamed.ipynb")
    before["reference"]["minigrad/lab-renamed.ipynb"] = before["reference"].pop("minigrad/lab.ipynb")
    second = nbgrader(course, "generate_assignment", "minigrad", "--force")
    assert "Cannot modify existing assignment" in second.stderr, second.stderr[-2000:]
    export = nbgrader(course, "export")
    assert export.returncode == 0, export.stderr[-2000:]

    exported = course / config.CsvExportPlugin.get("to", "grades.csv")  # nbgrader's default: where it runs
    assert "minigrad,,,ada," in exported.read_text(), "the export did not read the gradebook"
    for name in COMMITTED:
        after = snapshot(course / name)
        assert after.keys() == before[name].keys(), f"{name}/ changed: {sorted(after.keys() ^ before[name].keys())}"
        changed = sorted(path for path, data in after.items() if data != before[name][path])
        assert not changed, f"{name}/ changed: {changed}"
