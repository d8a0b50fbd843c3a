"""Where each student's submission is, in the layouts courses collect them in.

    folders     one folder per student: SUBMISSIONS/{student}/...
    nbgrader    nbgrader's SUBMISSIONS/submitted/{student}/{assignment}/ (or submitted/ itself)
    gradescope  Gradescope's "export submissions": submission_metadata.yml + submission_NNN/, as
                its zip, its folder, or the folder holding it (gradescope_zip.py)
    lms-zip     Canvas's "Download Submissions" zip, file names carrying the student (lms_zip.py)
    moodle      Moodle's "Download all submissions", as its zip or unpacked (moodle.py)
    classroom   a folder of GitHub Classroom clones: SUBMISSIONS/{assignment}-{user}/.git

Only the student's upload is found here; where the package is inside it is the grader's own
intake's job, so every layout gets the same rules and the same refusals. An upload that holds
archives is copied into staging first (code and archives only, each archive unpacked by
archives.py's rules, and its files combined: combine.py): the submissions folder is never
written to. Each student's id comes from their name and the layout's own key, and those keys
(Canvas user and attachment ids, Gradescope submission id and SIDs, Moodle participant id,
nbgrader id, GitHub login, folder) travel with the submission as columns of grades.csv, so an
LMS import or a roster needs no matching by name. A hand-in time comes only from the platform's
record (`submitted_at`); the files' newest modification time is kept apart (`file_time`), for
`--file-times` alone.
"""

from __future__ import annotations

import datetime
import os
import shutil
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graders.uploads import intake

from . import archives, combine, gradescope_metadata, gradescope_zip, lms_zip, moodle
from .moments import when
from .students import safe_id, unique

LAYOUTS = ("auto", "folders", "nbgrader", "gradescope", "lms-zip", "moodle", "classroom")
GRADESCOPE_METADATA = "submission_metadata.yml"
MAX_GROUP = 50  # submitters of one Gradescope submission


@dataclass(frozen=True)
class Submission:
    student: str  # a safe id (students.safe_id), unique in the class
    folder: Path | None  # what the grader is given; None when the upload was refused
    source: str  # the upload where the instructor finds it: a folder, or the download's file names
    keys: dict[str, str] = field(default_factory=dict)  # the layout's own keys: columns of grades.csv
    refused: str = ""  # why the upload cannot be graded
    submitted_at: datetime.datetime | None = None  # when it was handed in, as the platform recorded it
    late: bool = False  # the LMS marked it late
    graded_as: str = ""  # a group member: graded once, as this student
    file_time: datetime.datetime | None = None  # its newest file's modification time: a hand-in time only on request
    left_out: tuple[str, ...] = ()  # files of it left out while unpacking ("hw1/minigrad/nn.py: ...; left out")


@dataclass
class _Found:
    """A submission before ids are given: `raw` becomes the id, `order` keeps ids stable."""

    raw: str
    order: tuple
    folder: Path | None
    source: str
    keys: dict[str, str]
    refused: str = ""
    submitted_at: datetime.datetime | None = None
    late: bool = False
    group: str = ""  # members of one group submission share it
    file_time: datetime.datetime | None = None
    key: str = ""  # the LMS's key, added to the id when two students' names come out alike
    left_out: tuple[str, ...] = ()


def detect(path: Path) -> str:
    """The layout of `path`, recognised by what each one always has: a zip holding Gradescope's
    metadata is its export, any other zip an LMS download; a folder (or the folder holding it)
    with Gradescope's metadata, nbgrader's `submitted/`, clones, else one folder a student."""
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            with archives.open_zip(path, gradescope_zip.MAX_ENTRIES) as (bundle, _):
                if gradescope_zip.metadata_in(bundle):
                    return "gradescope"
                return "moodle" if moodle.is_download(bundle.namelist()) else "lms-zip"
        except (OSError, zipfile.BadZipFile, archives.Refused) as exc:
            raise SystemExit(f"{path}: not a readable zip ({exc})") from exc
    if _gradescope_root(path) is not None:
        return "gradescope"
    if path.name == "submitted" or (path / "submitted").is_dir():
        return "nbgrader"
    subfolders = _subfolders(path, set())
    if subfolders and all((folder / ".git").exists() for folder in subfolders):
        return "classroom"
    if any(moodle.participant(folder.name) for folder in subfolders):
        return "moodle"
    return "folders"


def _gradescope_root(path: Path) -> Path | None:
    """The export folder: `path` itself, or the one folder in it that holds the metadata (the
    zip unpacked by hand gives `assignment_{id}_export/` inside the folder it was opened in)."""
    if (path / GRADESCOPE_METADATA).is_file():
        return path
    inside = [folder for folder in _subfolders(path, set()) if (folder / GRADESCOPE_METADATA).is_file()]
    return inside[0] if len(inside) == 1 else None


def check_out(path: Path, out: Path) -> None:
    """Refuse an `--out` that is the submissions or holds them: a student's folder could be
    written over. (`--out` inside the submissions is fine: it is no student.)"""
    here, there = path.resolve(), out.resolve()
    if here == there or there in here.parents:
        raise SystemExit(f"--out {out} holds the submissions: give a folder of its own for the grades")


def collect(path: Path, layout: str, staging: Path, out: Path) -> tuple[str, list[Submission], list[str]]:
    """The layout used, every student's submission (sorted by id), and warnings: anything
    that could not be assigned to a student, files superseded or left out, renumbered ids.
    `staging` receives unpacked uploads; `out` (which may lie inside `path`) is no student."""
    here, there = path.resolve(), out.resolve()
    if layout == "auto":
        layout = detect(path)
    warnings: list[str] = []
    skip = {there}
    if layout == "lms-zip":
        found, warnings = _lms(path, staging, lms_zip.unpack)
    elif layout == "moodle" and path.is_file():
        found, warnings = _lms(path, staging, moodle.unpack)
    elif layout == "moodle" and path.is_dir():
        found, warnings = _moodle_folders(path, skip)
    elif layout == "gradescope" and path.is_file():
        export = gradescope_zip.unpack(path, staging)
        if export is None:
            raise SystemExit(f"{path}: no {GRADESCOPE_METADATA} in the zip: not a Gradescope export")
        found = _gradescope(*export)
    elif not path.is_dir():
        raise SystemExit(f"{path}: not a folder (a {layout} layout is a folder)")
    elif layout == "gradescope":
        found = _gradescope(_gradescope_root(path) or path, {})
    elif layout == "nbgrader":
        found = _nbgrader(path, skip)
    else:
        folders = _subfolders(path, skip)
        names = _without_common_prefix([f.name for f in folders]) if layout == "classroom" else []
        key = "github_login" if layout == "classroom" else "folder"
        found = [
            _Found(
                names[i] if names else f.name,
                (f.name,),
                f,
                str(f),
                {key: names[i] if names else f.name},
                file_time=_newest(f),
            )
            for i, f in enumerate(folders)
        ]
    if there.parent in (here, (path / "submitted").resolve()):
        warnings.append(f"--out {out.name} lies inside the submissions: not graded as a student")
    if not found:
        raise SystemExit(_nobody(path, layout, warnings))
    _stage_archives(found, staging, warnings)
    if not any(f.refused or (f.folder and _holds_code(f.folder)) for f in found):
        raise SystemExit(_nothing_gradable(path, layout, found))
    submissions, renamed = _named(found)
    return layout, submissions, warnings + renamed


def _holds_code(folder: Path) -> bool:
    return any(entry.name.endswith((".py", ".ipynb")) for _, files in intake.walk(folder) for entry in files)


def _nothing_gradable(path: Path, layout: str, found: list[_Found]) -> str:
    """Why a class where no upload holds any code stops the run (the wrong folder, a download of
    reports), with what the first uploads hold instead."""
    held = [f"{f.raw}: {', '.join(intake.listing(f.folder, 3)) or 'nothing'}" for f in found[:3] if f.folder]
    return f"{path}: read as {layout}, {len(found)} uploads and none holds code (.py or .ipynb); " + "; ".join(held)


def _nobody(path: Path, layout: str, warnings: list[str]) -> str:
    """Why a class of nobody stops the run (a wrong file, an empty export), with what it holds."""
    if warnings:
        held = "; ".join(warnings[:5]) + ("; ..." if len(warnings) > 5 else "")
    else:
        held = ", ".join(intake.listing(path, 6)) if path.is_dir() else "nothing"
    return f"{path}: read as {layout}, it holds no student's submission; it holds: {held or 'nothing'}"


def _named(found: list[_Found]) -> tuple[list[Submission], list[str]]:
    """Each student's id from their own name and key, never from the order they are met: a
    name that comes out alike for two students (the same name, or names alike once reduced:
    letter case, punctuation, Unicode form) gets each one's LMS key (`smith-101`, `smith-102`),
    so a grade stays with its key whatever else is in the download or graded before. Ids alike
    even then (folder names `a b` and `a_b`) are numbered in the order of the raw names, and
    each is said."""
    wanted = [safe_id(f.raw) for f in found]
    counts = Counter(w.casefold() for w in wanted)
    wanted = [safe_id(f"{w}-{f.key}") if counts[w.casefold()] > 1 and f.key else w for f, w in zip(found, wanted)]
    order = sorted(range(len(found)), key=lambda i: (wanted[i], found[i].raw, found[i].order))
    found, wanted = [found[i] for i in order], [wanted[i] for i in order]
    ids = unique(wanted)
    warnings = [
        f"{f.source}: its id {want} is taken by another student; graded as {got}"
        for f, want, got in zip(found, wanted, ids)
        if want != got
    ]
    first_of_group: dict[str, str] = {}
    submissions = []
    for f, student in zip(found, ids):
        graded_as = first_of_group.setdefault(f.group, student) if f.group else student
        submissions.append(
            Submission(
                student,
                f.folder,
                f.source,
                f.keys,
                f.refused,
                f.submitted_at,
                f.late,
                "" if graded_as == student else graded_as,
                f.file_time,
                f.left_out,
            )
        )
    return sorted(submissions, key=lambda s: s.student), warnings


def _files_left_out(notes: list[str]) -> tuple[str, ...]:
    """The notes that say a file was left out, and why: the grader is handed them (--refused),
    so the student is told the file was refused rather than that it is missing."""
    return tuple(note for note in notes if intake.refused_files([note]))


def _stage_archives(found: list[_Found], staging: Path, warnings: list[str]) -> None:
    """An upload folder holding archives is replaced by a staged copy with them unpacked and
    its files combined as an LMS's are (combine.py; once for a group's members, who share the
    folder). An archive that cannot be unpacked refuses
    the upload unless a package is found without it (then it is only said)."""
    staged: dict[Path, tuple[Path | None, str]] = {}
    left_out: dict[Path, tuple[str, ...]] = {}  # by the upload's folder, as `staged`
    for n, entry in enumerate(found):
        if entry.folder is None or entry.refused or not _holds_archive(entry.folder):
            continue
        if entry.folder not in staged:
            target = staging / f"folder-{n}"
            target.mkdir(parents=True)
            budget = archives.Budget()
            try:
                problems = archives.copy_folder(entry.folder, target, budget)
                graded, said = combine.gather(target)
                budget.notes += said
                if problems and not intake.locate(graded).found:
                    raise archives.Refused("; ".join(problems))
                staged[entry.folder] = (graded, "")
                budget.notes += [f"not unpacked: {problem}" for problem in problems]
            except (archives.Refused, OSError) as exc:
                staged[entry.folder] = (None, str(exc))
                shutil.rmtree(target)  # nothing of a refused upload is kept
            warnings += [f"{entry.source}: {note}" for note in budget.notes]
            left_out[entry.folder] = _files_left_out(budget.notes)
        entry.left_out = left_out.get(entry.folder, ())
        entry.folder, entry.refused = staged[entry.folder]


def _holds_archive(folder: Path) -> bool:
    return any(archives.is_archive(entry.name) for _, files in intake.walk(folder) for entry in files)


def _newest(folder: Path) -> datetime.datetime | None:
    """When a folder's files were last changed (the newest of them): its hand-in time."""
    times = []
    for _, files in intake.walk(folder):
        for entry in files:
            try:
                times.append(entry.stat(follow_symlinks=False).st_mtime)
            except OSError:
                continue
    return moment_of(max(times)) if times else None


def moment_of(seconds: float) -> datetime.datetime | None:
    """A file time as a UTC time, or None where it names no time Python can hold: a tar
    member's time is the student's to choose (the year 11476 is one filesystems keep), and
    `fromtimestamp` raises on it, which must cost that student's lateness, not the class."""
    try:
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _subfolders(path: Path, skip: set[Path]) -> list[Path]:
    """Real folders only (never a link), without the hidden ones uploads and clones carry,
    nor `--out` when it was put among them."""
    if not path.is_dir():
        return []
    with os.scandir(path) as entries:
        folders = [
            path / e.name for e in entries if e.is_dir(follow_symlinks=False) and not e.name.startswith((".", "__"))
        ]
    return sorted(folder for folder in folders if folder.resolve() not in skip)


def _lms(
    path: Path, staging: Path, unpack: Callable[[Path, Path], tuple[list[lms_zip.Upload], list[str]]]
) -> tuple[list[_Found], list[str]]:
    """A Canvas or Moodle download: a student a user (or participant) id."""
    uploads, warnings = unpack(path, staging)
    found = []
    for upload in uploads:
        source = f"{path.name}: {upload.name + '_' if upload.name else ''}{upload.user}_*"
        if unpack is moodle.unpack:
            keys = {"moodle_participant_id": upload.user}
        elif upload.anonymous:
            keys = {"canvas_anonymous_id": upload.user[5:]}
        else:
            keys = {"canvas_user_id": upload.user}
        keys |= {"canvas_attachment_id": upload.attachment} if upload.attachment else {}
        found.append(
            _Found(
                upload.name or upload.user,
                lms_zip.number(upload.user),
                None if upload.refused else upload.folder,
                source,
                {**keys, "name": upload.name} if upload.name else keys,
                upload.refused,
                late=upload.late,
                key=upload.user,
                left_out=_files_left_out(upload.notes),
            )
        )
        warnings += [f"{source}: {note}" for note in upload.notes]
    return found, warnings


def _moodle_folders(path: Path, skip: set[Path]) -> tuple[list[_Found], list[str]]:
    """Moodle's download unpacked: a folder per participant (moodle.py names them)."""
    found, warnings = [], []
    for folder in _subfolders(path, skip):
        match = moodle.participant(folder.name)
        if match is None:
            warnings.append(f"{folder}: the name carries no participant (Moodle writes name_id_assignsubmission_file)")
            continue
        keys = {"moodle_participant_id": match["id"], "name": match["name"]}
        number = lms_zip.number(match["id"])
        found.append(
            _Found(match["name"], number, folder, str(folder), keys, file_time=_newest(folder), key=match["id"])
        )
    return found, warnings


def _nbgrader(path: Path, skip: set[Path]) -> list[_Found]:
    """submitted/{student}/{assignment}/: the assignment folder when there is exactly one
    (nbgrader adds a timestamp.txt beside the files), else the student's folder."""
    submitted = path if path.name == "submitted" else path / "submitted"
    found = []
    for student in _subfolders(submitted, skip):
        assignments = _subfolders(student, skip)
        folder = assignments[0] if len(assignments) == 1 else student
        found.append(
            _Found(
                student.name,
                (student.name,),
                folder,
                str(folder),
                {"nbgrader_id": student.name},
                submitted_at=_timestamp(folder / "timestamp.txt"),
                file_time=_newest(folder),
            )
        )
    return found


def _timestamp(path: Path) -> datetime.datetime | None:
    """nbgrader's timestamp.txt (UTC when it names no zone), or None (also for a link or a FIFO
    in its place, which a plain open would wait on for ever)."""
    data = intake.read_head(path, 100)
    return None if data is None else when(data.decode("utf-8", errors="replace"))


def _gradescope(path: Path, refused: dict[str, str]) -> list[_Found]:
    """Gradescope's metadata maps each submission_NNN folder to its submitters (Ruby symbols
    as keys: `:submitters:`, `:sid:`). A group submission is one grading and a row for every
    submitter: each member's id is their SID (else email, else name), grades.csv says the group."""
    found = []
    for folder_name, entry in sorted(gradescope_metadata.load(path / GRADESCOPE_METADATA).items()):
        folder = path / folder_name
        submitters = gradescope_metadata.submitters(entry, MAX_GROUP) or [{}]
        everyone = "; ".join(str(s.get(":sid") or s.get(":email") or s.get(":name") or "") for s in submitters)
        number = folder_name.removeprefix("submission_")
        plain = "/" not in folder_name and folder_name not in (".", "..")
        usable = plain and folder.is_dir() and not folder.is_symlink()
        submitted = when(entry[":created_at"]) if ":created_at" in entry else None
        for submitter in submitters:
            raw = str(submitter.get(":sid") or submitter.get(":email") or submitter.get(":name") or folder_name)
            keys = {
                "gradescope_submission_id": number,
                "sid": str(submitter.get(":sid") or ""),
                "email": str(submitter.get(":email") or ""),
                "name": str(submitter.get(":name") or ""),
                "submitters": everyone,
            }
            found.append(
                _Found(
                    raw,
                    (number, raw),
                    folder if usable else None,
                    str(folder),
                    keys,
                    refused.get(folder_name, "" if usable else "the submission's folder is missing or a link"),
                    submitted,
                    group=folder_name if len(submitters) > 1 else "",
                    file_time=_newest(folder) if usable else None,
                    key=number,
                )
            )
    return found


def _without_common_prefix(names: list[str]) -> list[str]:
    """GitHub Classroom names each clone `{assignment}-{username}`: keep the usernames."""
    if len(names) < 2:
        return names
    prefix = os.path.commonprefix(names)
    cut = prefix.rfind("-") + 1
    return [name[cut:] for name in names]
