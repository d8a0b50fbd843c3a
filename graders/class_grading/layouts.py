"""Where each student's submission is, in the layouts courses collect them in.

    folders     one folder per student: SUBMISSIONS/{student}/...
    nbgrader    nbgrader's SUBMISSIONS/submitted/{student}/{assignment}/ (or submitted/ itself)
    gradescope  Gradescope's "export submissions": submission_metadata.yml + submission_NNN/
    lms-zip     an LMS download whose file names carry the student (Canvas: name_id_id_file)
    classroom   a folder of GitHub Classroom clones: SUBMISSIONS/{assignment}-{user}/.git

Only the student's folder is found here; where the package is inside it (`minigrad/`, a
wrapping folder, a flat upload) is the grader's own intake's job, so every layout gets the
same rules and the same refusals.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from . import lms_zip
from .students import safe_id, unique

LAYOUTS = ("auto", "folders", "nbgrader", "gradescope", "lms-zip", "classroom")
GRADESCOPE_METADATA = "submission_metadata.yml"


@dataclass(frozen=True)
class Submission:
    student: str  # a safe id (students.safe_id), unique in the class
    folder: Path  # what the grader is given


def detect(path: Path) -> str:
    """The layout of `path`, recognised by what each one always has."""
    if path.is_file() and path.suffix.lower() == ".zip":
        return "lms-zip"
    if (path / GRADESCOPE_METADATA).is_file():
        return "gradescope"
    if path.name == "submitted" or (path / "submitted").is_dir():
        return "nbgrader"
    subfolders = _subfolders(path)
    if subfolders and all((folder / ".git").exists() for folder in subfolders):
        return "classroom"
    return "folders"


def collect(path: Path, layout: str, staging: Path) -> tuple[str, list[Submission], list[str]]:
    """The layout used, every student's submission (sorted by id), and warnings about
    anything that could not be assigned to a student. `staging` receives unpacked uploads."""
    if layout == "auto":
        layout = detect(path)
    if layout == "lms-zip":
        found, warnings = lms_zip.unpack(path, staging)
        return layout, _named(found), warnings
    if not path.is_dir():
        raise SystemExit(f"{path}: not a folder (a {layout} layout is a folder)")
    if layout == "gradescope":
        return layout, _named(_gradescope(path)), []
    if layout == "nbgrader":
        return layout, _named(_nbgrader(path)), []
    folders = _subfolders(path)
    names = [folder.name for folder in folders]
    if layout == "classroom":
        names = _without_common_prefix(names)
    return layout, _named(list(zip(names, folders))), []


def _named(found: list[tuple[str, Path]]) -> list[Submission]:
    found = sorted(found, key=lambda pair: (safe_id(pair[0]), pair[0]))
    ids = unique([safe_id(raw) for raw, _ in found])
    return [Submission(student, folder) for student, (_, folder) in zip(ids, found)]


def _subfolders(path: Path) -> list[Path]:
    """Real folders only (never a link), without the hidden ones uploads and clones carry."""
    if not path.is_dir():
        return []
    with os.scandir(path) as entries:
        return sorted(
            path / e.name for e in entries if e.is_dir(follow_symlinks=False) and not e.name.startswith((".", "__"))
        )


def _nbgrader(path: Path) -> list[tuple[str, Path]]:
    """submitted/{student}/{assignment}/: the assignment folder when there is exactly one
    (nbgrader adds a timestamp.txt beside the files), else the student's folder."""
    submitted = path if path.name == "submitted" else path / "submitted"
    found = []
    for student in _subfolders(submitted):
        assignments = _subfolders(student)
        found.append((student.name, assignments[0] if len(assignments) == 1 else student))
    return found


def _gradescope(path: Path) -> list[tuple[str, Path]]:
    """Gradescope's metadata maps each submission_NNN folder to its submitters (Ruby symbols
    as keys: `:submitters:`, `:sid:`); a group submission is graded under its first member."""
    try:
        metadata = yaml.safe_load((path / GRADESCOPE_METADATA).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"{path / GRADESCOPE_METADATA}: cannot be read ({exc})") from exc
    found = []
    for folder_name, entry in sorted((metadata or {}).items()):
        folder = path / str(folder_name)
        submitters = (entry or {}).get(":submitters") or [{}]
        first = submitters[0] or {}
        student = first.get(":sid") or first.get(":email") or first.get(":name") or str(folder_name)
        if folder.is_dir() and not folder.is_symlink():
            found.append((str(student), folder))
    return found


def _without_common_prefix(names: list[str]) -> list[str]:
    """GitHub Classroom names each clone `{assignment}-{username}`: keep the usernames."""
    if len(names) < 2:
        return names
    prefix = os.path.commonprefix(names)
    cut = prefix.rfind("-") + 1
    return [name[cut:] for name in names]
