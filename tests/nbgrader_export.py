"""The real `nbgrader export`, run on a gradebook, read back as rows: how the tests check
that nbgrader sees the kit's grades; and a class's grades stored in one call."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from graders.class_grading.gradebook import Writer, with_scripts_on_path
from graders.class_grading.loaded_class import load
from graders.class_grading.standing import Roll


def store(
    url: str, results_by_student: dict[str, dict], roster: list[str] | None, roll: Roll | None = None
) -> list[str]:
    """Every student's grades into the gradebook at once, a `Writer` fed in student order (as
    minigrad-class feeds it as grades arrive), closed with the class's `roll` (lateness, names)."""
    writer = Writer(url, roster)
    for student, results in sorted(results_by_student.items()):
        writer.enter(student, results)
    return writer.close(load(roll) if roll else None)


def nbgrader_export(url: str, folder: Path) -> dict[str, dict[str, str]]:
    """Run the real `nbgrader export` (no course config: the folder is empty) and read its CSV."""
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", "export", "--db", url, "--to", str(folder / "export.csv")],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env=with_scripts_on_path(os.environ),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    with open(folder / "export.csv", newline="") as file:
        return {row["student_id"]: row for row in csv.DictReader(file)}
