"""What goes back to the platforms once a class is graded: each student's feedback (now with
their lateness), feedback.zip, and each LMS's own import formats, written only for a class
that came from that LMS (its ids are in the roll): Canvas's gradebook CSV and comment files,
Moodle's grading worksheet and feedback files. Each format's rules, and the platform source
they were read from, are beside its code.
"""

from __future__ import annotations

from pathlib import Path

from .. import feedback
from ..loaded_class import LoadedClass
from . import canvas_comments, canvas_grades, moodle_feedback, moodle_worksheet


def write_exports(out: Path, loaded: LoadedClass, canvas_assignment: str = canvas_grades.ASSIGNMENT) -> list[str]:
    """Every file above (`canvas_assignment`: the Canvas gradebook's column for the grades);
    returns what the instructor must know (students an export could not name, feedback that
    could not be written: the grades stand)."""
    where, graded = loaded.standings, loaded.graded
    said = []
    for student, record in sorted(graded.items()):
        if note := feedback.write(out / student, student, record.results, where[student]):
            said.append(f"{student}: {note}")
    feedback.write_zip(out, {student: record.results for student, record in graded.items()}, where)
    said += canvas_grades.write(out, where, canvas_assignment)
    said += canvas_comments.write(out, where, graded)
    said += moodle_worksheet.write(out, loaded)
    moodle_feedback.write(out, where, graded)
    return said
