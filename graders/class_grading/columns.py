"""grades.csv's columns beyond the grade: what the upload's layout knows of each student
(an LMS's ids, names and emails, a Classroom login), where the package was found, and
lateness (lateness.py), with the total after a late policy beside the raw total (which never
changes).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from graders.uploads import layouts

from . import lateness
from .records import StoredGrade


def key_columns(
    submissions: list[layouts.Submission],
    graded: dict[str, StoredGrade],
    due: datetime.datetime | None,
    policy: lateness.Policy,
    extensions: Mapping[str, datetime.datetime] | None = None,
    file_times: bool = False,
    rostered: Mapping[str, dict[str, str]] | None = None,
) -> tuple[list[str], dict[str, dict[str, str]]]:
    """grades.csv's columns beyond the grade, and each student's values of them: the layout's
    keys, then what the roster adds (`rostered`: id to the roster's keys, a name and email as
    the platform wrote them; students with no submission too). The lateness columns are there
    whenever anything is known of time: a due, a policy, a platform's time or late mark
    (`file_times`: the files' modification times count as hand-in times)."""
    rostered = rostered or {}
    columns = [
        *dict.fromkeys([*(key for s in submissions for key in s.keys), *(k for r in rostered.values() for k in r)])
    ]
    columns.append("found_in")
    timed = due or extensions or policy.kind != "none" or any(s.submitted_at or s.late for s in submissions)
    columns += list(lateness.COLUMNS) if timed or file_times else []
    extra = {}
    for s in submissions:
        row = {**s.keys, **rostered.get(s.student, {})}
        record = graded.get(s.student)
        if record is not None:
            row["found_in"] = str(record.grading.get("found_in", ""))
        row.update(of(s, record, due, policy, extensions or {}, file_times).columns())
        extra[s.student] = row
    for student, keys in rostered.items():
        extra.setdefault(student, dict(keys))
    return columns, extra


def of(
    submission: layouts.Submission,
    record: StoredGrade | None,
    due: datetime.datetime | None,
    policy: lateness.Policy,
    extensions: Mapping[str, datetime.datetime],
    file_times: bool = False,
) -> lateness.Lateness:
    """One student's lateness, priced on their graded base total (none without a grade)."""
    own = lateness.due_for(submission.keys, submission.student, due, extensions)
    moment = submission.submitted_at or (submission.file_time if file_times else None)
    base = most = None
    if record is not None:
        base, most = record.grade.base, float(record.grade.max_score)
    return lateness.assess(moment, submission.late, own, policy, base, most)
