"""One student's grade as it lies under `--out`: results.json, written by the grader, and
grading.json, written by the class command once the grade is complete.

grading.json says what the grade was computed from (the submission's fingerprint, the seed,
the parts, the kit) and when; `--resume` trusts a grade only when all of those still match.
It is written after results.json, so an interrupted grading never looks finished. Reading
never follows a link: `--out` is the grader's, but a folder planted there is not trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graders.reporting import output_files
from graders.reporting.escape import json_text

RESULTS = "results.json"
GRADING = "grading.json"


@dataclass
class StoredGrade:
    """A student's complete grade under `--out`: results.json (read with `graders.reporting.results.read`)
    and grading.json, as parsed."""

    student: str
    results: dict
    grading: dict


def read_object(folder: Path, name: str) -> dict | None:
    """`folder/name` parsed, or None when missing, linked (file or folder) or not a JSON object."""
    data = None if folder.is_symlink() else output_files.read_json(folder / name)
    return data if isinstance(data, dict) else None


def load(out: Path, student: str) -> StoredGrade | None:
    """The student's complete grade under `out`, or None when there is none."""
    results, grading = read_object(out / student, RESULTS), read_object(out / student, GRADING)
    if results is None or grading is None:
        return None
    return StoredGrade(student, results, grading)


def write(folder: Path, name: str, data: bytes) -> None:
    """A file in a student's folder, by the hardening rule (never through a link)."""
    if folder.is_symlink() or not folder.is_dir():
        raise OSError(f"{folder} is not a real folder")
    output_files.write_new(folder, name, data)


def forget(folder: Path) -> None:
    """Mark a student's grade incomplete before it is regraded (not through a linked folder)."""
    if folder.is_dir() and not folder.is_symlink():
        (folder / GRADING).unlink(missing_ok=True)


def write_grading(folder: Path, grading: dict) -> None:
    write(folder, GRADING, (json_text(grading, sort_keys=True) + "\n").encode())  # found_in is the upload's text
