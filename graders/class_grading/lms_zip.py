"""Unpack an LMS's bulk download: one zip whose file names carry the student.

Canvas names each file `{name}_{userid}_{submissionid}_{filename}` (`{name}_LATE_...` when it
came after the deadline, in any letter case) and appends `-1`, `-2` to a file submitted again
under the same name. A student is their Canvas user id, so two students who share a name stay
two. Of a student's files only their newest submission's are used, and of a name submitted
again the highest `-N`; the others are reported as superseded. An archive the student uploaded
(`.zip`, `.tar`, `.tar.gz`) is unpacked in its place by archives.py's rules; a student whose
files break a rule (a path out of their folder, a bomb, a corrupt or encrypted archive) is
that student's refusal, with the reason, and the other students go on.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from . import archives

CANVAS = re.compile(
    r"(?P<name>[^_]+)_(?:(?P<late>[Ll][Aa][Tt][Ee])_)?(?P<user>[0-9]+)_(?P<submission>[0-9]+)_(?P<file>.+)"
)
MAX_ENTRIES = 200_000  # files in one download: a large course's, and a bound on zipfile's memory
RESUBMITTED = re.compile(r"-(?P<n>[0-9]+)(?=(?:\.[A-Za-z0-9]+)+$)")  # engine-1.py: Canvas renamed a resubmission


@dataclass
class Upload:
    """One Canvas student's files, as found in the download."""

    name: str
    user: str
    folder: Path
    late: bool = False
    refused: str = ""  # why the files could not be unpacked
    notes: list[str] = field(default_factory=list)  # files left out or superseded


def number(digits: str) -> tuple[int, str]:
    """A digit string's order as a number, without converting it (a 4,400-digit id is an
    attack on int(), not a submission)."""
    digits = digits.lstrip("0")
    return (len(digits), digits)


def unpack(archive: Path, staging: Path) -> tuple[list[Upload], list[str]]:
    """Each student's files unpacked into `staging/{n}/`; returns the uploads (sorted by user
    id) and a warning for every entry that names no student."""
    try:
        with archives.open_zip(archive, MAX_ENTRIES) as (bundle, bad):
            return _unpack(bundle, bad, staging)
    except (OSError, zipfile.BadZipFile, archives.Refused) as exc:
        raise SystemExit(f"{archive}: not a readable zip ({exc})") from exc


def _unpack(bundle: zipfile.ZipFile, bad: set[str], staging: Path) -> tuple[list[Upload], list[str]]:
    """The download's files grouped by Canvas user id; a student whose file name is not text
    (`bad`: flagged UTF-8, and not) is refused, the others go on."""
    warnings: list[str] = []
    by_user: dict[str, list[tuple[zipfile.ZipInfo, re.Match]]] = defaultdict(list)
    for info in sorted(bundle.infolist(), key=lambda info: info.header_offset):
        if info.is_dir():
            continue
        match = CANVAS.fullmatch(PurePosixPath(info.filename).name)
        if match is None or "\\" in info.filename or ".." in info.filename.split("/"):
            warnings.append(f"{info.filename}: the name carries no student (expected name_id_id_file)")
            continue
        by_user[match["user"]].append((info, match))
    uploads = []
    for n, user in enumerate(sorted(by_user, key=number)):
        entries = by_user[user]
        folder = staging / str(n)
        folder.mkdir(parents=True)
        upload = Upload(entries[0][1]["name"], user, folder, any(m["late"] for _, m in entries))
        try:
            if named := [info.filename for info, _ in entries if info.filename in bad]:
                raise archives.Refused(f"{named[0]}: a file name marked UTF-8 that is not")
            _unpack_student(bundle, entries, upload)
        except (archives.Refused, OSError) as exc:
            upload.refused = str(exc)
            shutil.rmtree(folder)  # nothing of a refused upload is kept
        uploads.append(upload)
    return uploads, warnings


def _unpack_student(bundle: zipfile.ZipFile, entries: list[tuple[zipfile.ZipInfo, re.Match]], upload: Upload) -> None:
    """The newest copy of each of the student's file names, under one budget."""
    newest = max((m["submission"] for _, m in entries), key=number)
    chosen: dict[str, tuple[tuple, zipfile.ZipInfo]] = {}
    for info, match in entries:
        if match["submission"] != newest:
            upload.notes.append(f"{info.filename}: an earlier submission ({match['submission']}); superseded")
            continue
        again = RESUBMITTED.search(match["file"])
        name = RESUBMITTED.sub("", match["file"]) if again else match["file"]
        rank = number(again["n"]) if again else (0, "")
        if name in chosen:
            older, newer = sorted([chosen[name], (rank, info)], key=lambda pair: pair[0])
            upload.notes.append(f"{older[1].filename}: resubmitted as {newer[1].filename}; superseded")
            chosen[name] = newer
        else:
            chosen[name] = (rank, info)
    budget = archives.Budget()
    written = []
    for name, (_, info) in sorted(chosen.items()):
        budget.member(info.filename)
        path = PurePosixPath(archives.safe_path(name).name)
        if (target := archives.copy_member(bundle, info, upload.folder, path, budget)) is not None:
            written.append(target)
    archives.unpack_inner(written, budget, 1)
    upload.notes += budget.notes
