"""Moodle's "Download all submissions" of an assignment, as a zip or unpacked.

Moodle names each student's files after a prefix (mod/assign/classes/downloader.php,
`get_student_prefix` and `load_submissionplugin_filelist`; mod/assign/locallib.php before 4.1):

    {full name}_{participant id}_assignsubmission_file/{file path}{file}    in folders (Moodle 4.1+)
    {full name}_{participant id}_assignsubmission_file_/{file path}{file}   in folders (3.1 to 4.0)
    {full name}_{participant id}_assignsubmission_file_{file}               one folder for all
    Participant_{participant id}_...                                        blind marking
    {group name}_{group id}_...                                             team submissions

The full name has every `_` turned into a space, so the first `_{digits}_assignsubmission_` ends
it. The participant id is the assignment's own id for the student (`get_uniqueid_for_user`, the
grading worksheet's "Participant {id}"), so it is the key, in blind marking too. A download holds
each student's latest attempt only (`get_user_submission` takes the highest attempt number), so
all of a student's files are one submission, combined as Canvas's are (combine.py). Only the
file plugin's files are code; an online text is said and left out.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from . import archives, combine, download
from .download import Upload

PREFIX = re.compile(
    r"(?P<name>[^/]*?)_(?P<id>[0-9]+)_(?P<plugin>assignsubmission_[a-z]+)"
    r"(?:_?/(?P<path>.+)|_(?P<file>[^/]+))",
    re.DOTALL,
)
FOLDER = re.compile(r"(?P<name>.*?)_(?P<id>[0-9]+)_(?P<plugin>assignsubmission_[a-z]+)_?", re.DOTALL)
FILES = "assignsubmission_file"


def is_download(names: list[str]) -> bool:
    """Whether a zip's member names (or a folder's entries) are Moodle's."""
    return any(PREFIX.fullmatch(name) or FOLDER.fullmatch(name) for name in names[:1000])


def unpack(archive: Path, staging: Path) -> tuple[list[Upload], list[str]]:
    """Each participant's files unpacked into `staging/{n}/` (sorted by participant id), and a
    warning for every entry that names no participant."""
    return download.unpack(archive, staging, NAMING)


def _unpack_participant(bundle: zipfile.ZipFile, entries: download.Entries, upload: Upload) -> None:
    budget = archives.Budget()
    written = []
    for info, match in entries:
        if match["plugin"] != FILES:
            upload.notes.append(f"{info.filename}: a {match['plugin']} entry, not files; left out")
            continue
        budget.member(info.filename)
        path = archives.safe_path(match["path"] or match["file"])
        if (target := archives.copy_member(bundle, info, upload.folder, path, budget)) is not None:
            written.append(target)
    archives.unpack_inner(written, budget, 1)
    upload.folder, said = combine.gather(upload.folder)
    upload.notes += budget.notes + said


def participant(folder_name: str) -> re.Match | None:
    """A folder of the unpacked download: its name and participant id, or None."""
    match = FOLDER.fullmatch(folder_name)
    return match if match and match["plugin"] == FILES else None


NAMING = download.Naming(
    PREFIX,
    lambda match: match["id"],
    "Moodle writes fullname_participantid_assignsubmission_file/...",
    lambda ident, entries, folder: Upload(entries[0][1]["name"], ident, folder),
    _unpack_participant,
)
