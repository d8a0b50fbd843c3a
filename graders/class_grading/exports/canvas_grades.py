"""canvas_grades.csv: the class's grades as Canvas's gradebook import reads them (Grades >
Import), so the instructor uploads the base total after the late policy, and the bonus as extra
credit, instead of typing them.

The rules, as canvas-lms reads an import (app/models/gradebook_importer.rb, `GradebookImporter`):
- The header must start `Student`, `ID` (`row[0]` includes "Student", `row[1]` includes "ID")
  and the last student column must be `Section`; with `SIS User ID` then `SIS Login ID`
  between them (`update_column_count`), the student columns are these five.
- Each later header is an assignment: `Title (id)` is matched by id (`Assignment.title_and_id`:
  a title, a space, digits in brackets); a header without an id is matched to an assignment
  of exactly that title, else Canvas offers to create one (`parse_assignments`). The header
  is `--canvas-assignment` as given, e.g. `Homework 3 (4711)` from the course's own gradebook
  export; by default `minigrad`, matched by that title.
- A row whose first cell includes "Points Possible" gives each assignment's points (`process_pp`).
- A student is found by `ID` (the Canvas user id), else by `SIS User ID`, else by `SIS Login
  ID`, else by name or sortable name (`process_student`); so every row carries the ids known.
- A blank grade (or `-`) is "no score": no change where Canvas has none (`no_score?`); a
  student with no grade (upload refused, grader failure) is written blank, so the import
  never sets a grade the kit did not compute, and a roster no-show is written 0.
Canvas has no extra credit inside an assignment; its documented way is a second assignment
worth 0 points, whose points add to the total without raising the maximum. So `total` (the
base after the late policy, out of the base maximum) goes in the assignment's column, the
bonus in `{title} bonus` (a new assignment, Canvas asks before creating it) with 0 points
possible. Canvas's own late policy, if the course enables one, deducts again on import: a
course that prices lateness here should keep Canvas's off.
Every cell goes through `csv_cell` (names are student text; a formula must not run).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..standing import Standing
from ..tables import number, write_csv

NAME = "canvas_grades.csv"
ASSIGNMENT = "minigrad"
TITLE_AND_ID = re.compile(r"(.*)\s\((\d+)\)", re.DOTALL)  # Canvas's Assignment.title_and_id
STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
KEYS = ("canvas_user_id", "canvas_sis_user_id", "canvas_sis_login_id")  # what Canvas finds a student by


def in_canvas(standing: Standing) -> bool:
    return any(standing.key(key) for key in KEYS)


def bonus_header(assignment: str) -> str:
    """The bonus assignment's header: the title without the id (a new assignment of its own)."""
    found = TITLE_AND_ID.fullmatch(assignment)
    return f"{found[1] if found else assignment} bonus"


def write(out: Path, standings: dict[str, Standing], assignment: str = ASSIGNMENT) -> list[str]:
    """canvas_grades.csv when the class came from Canvas (some student has a Canvas id), the
    grades under the `assignment` header; returns what the instructor must know (students
    Canvas could not find)."""
    known = {s: st for s, st in standings.items() if in_canvas(st)}
    if not known:
        return []
    bonus = any(st.bonus for st in known.values())
    header = [*STUDENT_COLUMNS, assignment, *([bonus_header(assignment)] if bonus else [])]
    most = max(st.max_score for st in known.values())
    rows = [["Points Possible", "", "", "", "", number(most), *(["0"] if bonus else [])]]
    for st in known.values():
        who = [st.key("sortable_name") or st.key("name") or st.student, st.key("canvas_user_id")]
        who += [st.key("canvas_sis_user_id"), st.key("canvas_sis_login_id"), st.key("canvas_section")]
        after = "" if st.after_late is None else number(st.after_late)
        rows.append([*who, after, *([("" if st.base is None else number(st.bonus))] if bonus else [])])
    write_csv(out, NAME, header, rows)
    left = sorted(set(standings) - set(known))
    return [f"{NAME}: {len(left)} students have no Canvas id and are not in it: {', '.join(left[:5])}"] if left else []
