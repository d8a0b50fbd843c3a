"""Unpack Canvas's "Download Submissions": one zip whose file names carry the student.

Canvas writes every file of a submission as (canvas-lms lib/content_zipper.rb, `get_filename`
and `add_upload_submission`):

    {sortable name}[_LATE]_{user id}_{attachment id}_{display name}
    [LATE_]anon_{anonymous id}_{attachment id}_{display name}      when grading is anonymous
    {sortable name}[_LATE]_{user id}_text.html / _link.html        a text or URL entry

The name is the user's sortable name, lower-cased, with `_{digits}_` joined up and every
character that is not a word character removed (`sanitize_user_name`, `sanitize_file_name`): so
it may hold `_` and letters of any script, never `_{digits}_`, and the first `_{digits}_{digits}_`
ends it. `LATE` is Canvas's mark (upper case; read in any case, as a lower-cased name never
ends in `_late` but a hand-renamed download may); `[\\x00/\\\\:*?"<>|]` in the display name became `_`.
The download holds only each student's latest submission (`assignment.submissions`, one row a
student), and the third number is the *file's* id: a student who uploads `engine.py`, `nn.py`,
... one by one has one attachment id per file, all of them one submission.

A file re-uploaded under a name the student's files already hold is renamed by Canvas
(`Attachment.make_unique_filename`: `engine.py` -> `engine-1.py` ... `engine-7.py`, then
`engine-{uuid}.py`); the name is restored, and where two files come to the same name the one
Canvas stored last (the higher attachment id, then the higher `-N`) is kept and the other said. A student's files are
then combined (combine.py). A student is their Canvas user id (or anonymous id), so two students
who share a name stay two. An archive the student uploaded (`.zip`, `.tar`, `.tar.gz`) is
unpacked in its place by archives.py's rules; a student whose files break a rule (a path out of
their folder, a bomb, a corrupt or encrypted archive) is that student's refusal, with the
reason, and the other students go on.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path, PurePosixPath

from . import archives, combine, download
from .download import Upload, number

CANVAS = re.compile(
    r"(?:(?:(?P<anon_late>LATE)_)?anon_(?P<anonymous>[A-Za-z0-9]+)"
    r"|(?P<name>[^/]*?)_(?:(?P<late>(?i:late))_)?(?P<user>[0-9]+))"
    r"_(?:(?P<attachment>[0-9]+)_(?P<file>.+)|(?P<entry>text|link)\.html)",
    re.DOTALL,
)
RENAMED = re.compile(
    r"-(?:[0-9]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"(?=(?:\.[A-Za-z][A-Za-z0-9]*)*\.[A-Za-z0-9]*$)"
)  # make_unique_filename's `-N` (1 to 7 today; any number read) or `-{uuid}`, before its extension pattern


def unpack(archive: Path, staging: Path) -> tuple[list[Upload], list[str]]:
    """Each Canvas student's files unpacked into `staging/{n}/` (sorted by user id, anonymous
    students last), and a warning for every entry that names no student."""
    return download.unpack(archive, staging, NAMING)


def _upload(user: str, entries: download.Entries, folder: Path) -> Upload:
    late = any(match["late"] or match["anon_late"] for _, match in entries)
    attachments = [match["attachment"] for _, match in entries if match["attachment"]]
    return Upload(entries[0][1]["name"] or "", user, folder, late, attachment=max(attachments, key=number, default=""))


def _unpack_student(bundle: zipfile.ZipFile, entries: download.Entries, upload: Upload) -> None:
    """All of the student's files (one submission), Canvas's renaming undone, under one budget,
    then combined into one package where that is unambiguous."""
    chosen: dict[str, tuple[tuple, zipfile.ZipInfo]] = {}
    for info, match in entries:
        if match["entry"]:
            upload.notes.append(f"{info.filename}: a {match['entry']} entry, not files; left out")
            continue
        renamed = RENAMED.search(match["file"])
        name = RENAMED.sub("", match["file"], count=1)
        again = number(renamed.group()[1:]) if renamed and renamed.group()[1:].isdigit() else (0, "")
        rank = (number(match["attachment"]), again)
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
    upload.folder, said = combine.gather(upload.folder)
    upload.notes += budget.notes + said


NAMING = download.Naming(
    CANVAS,
    lambda match: f"anon_{match['anonymous']}" if match["anonymous"] else match["user"],
    "Canvas writes name[_LATE]_userid_fileid_file or anon_id_fileid_file",
    _upload,
    _unpack_student,
)
