"""moodle_feedback.zip: each graded student's feedback page, in the folders Moodle's "Upload
multiple feedback files in a zip" (the feedback files plugin) attributes to a participant.

The rule, as Moodle reads the zip (mod/assign/feedback/file/importziplib.php,
`assignfeedback_file_zip_importer::is_valid_filename_for_import`): hidden files (`.`, `~`)
are skipped; each part of the path is split at `_` into at most five pieces, and the first
part whose second piece is a participant's unique id (numeric) and whose third and fourth
name an enabled plugin (`assignfeedback` `file`) owns the file; what follows is the file's
name. So each page is `{student}_{participant id}_assignfeedback_file/feedback.html`: the
kit's id holds no `_` (any is made `-`), so the pieces cannot shift.
"""

from __future__ import annotations

from pathlib import Path

from graders.reporting import output_files

from .. import feedback
from ..records import StoredGrade
from ..standing import Standing

NAME = "moodle_feedback.zip"


def folder_name(student: str, participant: str) -> str:
    return f"{student.replace('_', '-')}_{participant}_assignfeedback_file"


def write(out: Path, standings: dict[str, Standing], graded: dict[str, StoredGrade]) -> None:
    """moodle_feedback.zip when some graded student has a Moodle participant id (those without
    one are said by the worksheet's export)."""
    known = sorted(s for s in graded if standings[s].number_key("moodle_participant_id"))
    if not known:
        return
    files = {
        f"{folder_name(s, standings[s].number_key('moodle_participant_id'))}/feedback.html": feedback.page(
            s, graded[s].results, standings[s]
        )
        for s in known
    }
    output_files.write_new(out, NAME, feedback.bundle(files))
