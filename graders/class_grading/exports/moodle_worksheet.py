"""moodle_grades.csv: Moodle's offline grading worksheet, filled in, for the assignment's
"Upload grading worksheet" (the offline grading worksheet feedback plugin).

The rules, as Moodle reads it (mod/assign/feedback/offline/importgradeslib.php,
`assignfeedback_offline_grade_importer`, and `process_import_grades` in its locallib.php):
- Columns are found by their exact English header: `Identifier` (string `recordid`), `Grade`
  (`gradenoun`), `Last modified (grade)` (`lastmodifiedgrade`), and each enabled feedback
  plugin's field by its name: `Feedback comments` (assignfeedback_comments' `pluginname`).
  The first three are required; a feedback column is read only when not the first column.
- A row's participant is `Identifier` without the `Participant ` prefix (string `hiddenuser`),
  looked up as the assignment's unique participant id (`get_user_id_for_uniqueid`): the
  number in Moodle's download folders, `{full name}_{participant id}_assignsubmission_file`.
- A grade is skipped when blank or negative, equal to Moodle's, above the assignment's
  maximum grade, or when Moodle's grade was modified more than 60 s after the row's `Last
  modified (grade)` (read with PHP's `strtotime`, which takes ISO 8601); feedback is written
  unless the row is stale in that way.
So the grade is the base total after the late policy (out of the base maximum: the Moodle
assignment's maximum grade must be that; a grade above it is skipped, so the bonus, which
Moodle's assignment has no place for, is said in the comments), blank for a student with no
grade, 0 for a roster no-show; `Last modified (grade)` is when the kit graded (the run's last
grade for a no-show); the comments are one line of text, every value HTML-escaped (Moodle's
editor format is HTML).
The other columns are what Moodle's own worksheet shows, for the instructor's eye.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from graders.reporting.escape import html

from .. import feedback
from ..loaded_class import LoadedClass
from ..records import StoredGrade
from ..standing import Standing
from ..tables import number, write_csv

NAME = "moodle_grades.csv"
PREFIX = "Participant "
HEADER = [
    "Identifier",
    "Full name",
    "Email address",
    "Status",
    "Grade",
    "Maximum Grade",
    "Grade can be changed",
    "Last modified (grade)",
    "Feedback comments",
]


def write(out: Path, loaded: LoadedClass) -> list[str]:
    """moodle_grades.csv when some student has a Moodle participant id; returns the students
    left out (no participant id)."""
    standings, graded = loaded.standings, loaded.graded
    known = {s: st for s, st in standings.items() if st.number_key("moodle_participant_id")}
    if not known:
        return []
    times = {s: str(r.grading.get("graded_at", "")) for s, r in graded.items()}
    latest = max(times.values(), default="") or datetime.datetime.now(datetime.timezone.utc).isoformat("T", "seconds")
    rows = []
    for student, st in known.items():
        grade = "" if st.after_late is None else number(st.after_late)
        rows.append(
            [
                PREFIX + st.key("moodle_participant_id"),
                st.key("name") or student,
                st.key("email"),
                st.status,
                grade,
                number(st.max_score),
                "Yes",
                times.get(student) or latest,
                comments(st, graded.get(student)),
            ]
        )
    write_csv(out, NAME, HEADER, rows)
    left = sorted(set(standings) - set(known))
    return [f"{NAME}: {len(left)} students have no Moodle participant id: {', '.join(left[:5])}"] if left else []


def comments(standing: Standing, record: StoredGrade | None) -> str:
    """The feedback comment: the total, the lateness, and where the full feedback is, as one
    line of text (Moodle shows it as HTML: each value is HTML-escaped, and the kit's CSV
    writer turns any `<` left into a look-alike, so no tag is written at all)."""
    if record is None:
        return html(standing.status)
    said = [f"Total: {record.grade.total}", *feedback.lateness(standing)]
    return " \u2022 ".join(html(line) for line in [*said, "The full feedback is in the attached file feedback.html."])
