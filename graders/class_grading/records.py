"""One student's grade as it lies under `--out`: results.json, written by the grader, and
grading.json, written by the class command once the grade is complete.

grading.json says what the grade was computed from (the submission's fingerprint, the seed,
the parts, the kit) and when; `--resume` trusts a grade only when all of those still match.
It is written after results.json, so an interrupted grading never looks finished. Reading
never follows a link: `--out` is the grader's, but a folder planted there is not trusted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from graders.reporting import output_files
from graders.reporting.escape import json_text
from graders.reporting.results import Grade, read

RESULTS = "results.json"
GRADING = "grading.json"


@dataclass
class StoredGrade:
    """A student's complete grade under `--out`: results.json and grading.json, as parsed, and
    the grade results.json holds (`graders.reporting.results.read`), read once here so that no
    report of the class reads it again."""

    student: str
    results: dict
    grading: dict
    grade: Grade = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.grade = read(self.results)


def read_object(folder: Path, name: str) -> dict | None:
    """`folder/name` parsed, or None when missing, linked (file or folder) or not a JSON object."""
    data = None if folder.is_symlink() else output_files.read_json(folder / name)
    return data if isinstance(data, dict) else None


def load(out: Path, student: str) -> StoredGrade | None:
    """The student's complete grade under `out`, or None when there is none (or its results.json
    is not one the kit wrote: a regrade replaces it)."""
    results, grading = read_object(out / student, RESULTS), read_object(out / student, GRADING)
    if results is None or grading is None:
        return None
    try:
        return StoredGrade(student, results, grading)
    except (KeyError, IndexError, TypeError, AttributeError):  # not the kit's results.json: graded again
        return None


def write(folder: Path, name: str, data: bytes) -> None:
    """A file in a student's folder, by the hardening rule (never through a link)."""
    if folder.is_symlink() or not folder.is_dir():
        raise OSError(f"{folder} is not a real folder")
    output_files.write_new(folder, name, data)


def forget(folder: Path) -> None:
    """Mark a student's grade incomplete before it is regraded (not through a linked folder)."""
    if folder.is_dir() and not folder.is_symlink():
        (folder / GRADING).unlink(missing_ok=True)


def write_grading(folder: Path, grading: dict) -> dict:
    """grading.json, which marks the grade complete; returns it as it now reads back (found_in is
    the upload's text, whose lone surrogates the JSON lost), so the run goes on from memory."""
    text = json_text(grading, sort_keys=True)
    write(folder, GRADING, (text + "\n").encode())
    return json.loads(text)
