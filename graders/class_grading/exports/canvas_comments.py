"""canvas_comments.zip: each graded student's feedback page, named so that Canvas's "Upload
submission comments" (SpeedGrader's bulk upload of a zip) attaches it to that student's
submission as a comment.

The rule, as canvas-lms reads the zip (app/models/assignment.rb,
`Assignment#generate_comments_from_files` and `infer_comment_context_from_filename`): the
file's base name is split at `_`; the first two parts made only of digits are the user id and
an attachment id; the file is ignored unless that user has a submission to the assignment
and the attachment is one of its files (`submission.attachments.where(id:)`), or when the name
starts with `._` or its last part starts with `link`. So each file is named
`{student}-feedback_{user id}_{attachment id}_feedback.html`, with the attachment id of one
of the files the student handed in (from Canvas's download, where each file is named
`{name}_{user id}_{attachment id}_{file}`). The part before the first `_` is the kit's id
(letters, digits and `-`, never digits alone once `-feedback` follows), so no other part can
be read as an id. A student with no submission has no attachment, and nothing to attach to.
"""

from __future__ import annotations

from pathlib import Path

from graders.reporting import output_files

from .. import feedback
from ..records import StoredGrade
from ..standing import Standing

NAME = "canvas_comments.zip"


def file_name(student: str, user: str, attachment: str) -> str:
    return f"{student.replace('_', '-')}-feedback_{user}_{attachment}_feedback.html"


def write(out: Path, standings: dict[str, Standing], graded: dict[str, StoredGrade]) -> list[str]:
    """canvas_comments.zip when some graded student has a Canvas user id; returns the graded
    Canvas students left out (no attachment id known, so Canvas could not attribute them)."""
    canvas = {s for s in graded if standings[s].key("canvas_user_id")}
    if not canvas:
        return []
    files, left = {}, []
    for student in sorted(canvas):
        user, attachment = (
            standings[student].number_key("canvas_user_id"),
            standings[student].number_key("canvas_attachment_id"),
        )
        if not (user and attachment):
            left.append(student)
            continue
        files[file_name(student, user, attachment)] = feedback.page(
            student, graded[student].results, standings[student]
        )
    if files:
        output_files.write_new(out, NAME, feedback.bundle(files))
    if not left:
        return []
    return [
        f"{NAME}: {len(left)} graded students are not in it (Canvas attributes a comment file by the user id "
        f"and an attachment id of their submission, and none is known): {', '.join(left[:5])}"
    ]
