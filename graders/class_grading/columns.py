"""grades.csv's columns beyond the grade: what the upload's layout knows of each student
(an LMS's ids, a Classroom login), where the package was found, and lateness, with the total
after a late policy beside the raw total (which never changes).
"""

from __future__ import annotations

import datetime
import math

from . import layouts
from .records import StoredGrade
from .tables import number


def key_columns(
    submissions: list[layouts.Submission],
    graded: dict[str, StoredGrade],
    due: datetime.datetime | None,
    late_policy: tuple[str, float],
) -> tuple[list[str], dict[str, dict[str, str]]]:
    """grades.csv's columns beyond the grade: the layout's keys, lateness and, with a late
    policy, the total after it (the raw `total` never changes)."""
    columns = [*dict.fromkeys(key for s in submissions for key in s.keys), "found_in"]
    marked = any("canvas_user_id" in s.keys for s in submissions)  # Canvas marks late files itself
    columns += ["late"] if marked or due else []
    columns += ["submitted_at", "hours_late"] if due else []
    columns += ["total_after_late"] if late_policy[0] != "none" else []
    extra = {}
    for s in submissions:
        hours = None
        if due and s.submitted_at is not None:
            hours = max(0.0, (s.submitted_at - due).total_seconds() / 3600)
        late = s.late or bool(hours)
        row = {**s.keys, "late": "late" if late else ""}
        if due:
            row["submitted_at"] = s.submitted_at.isoformat(timespec="seconds") if s.submitted_at else ""
            row["hours_late"] = "" if hours is None else number(round(hours, 2))
        if (record := graded.get(s.student)) is not None:
            row["found_in"] = str(record.grading.get("found_in", ""))
            row["total_after_late"] = number(after_late(record.results, late_policy, late, hours))
        extra[s.student] = row
    return columns, extra


def after_late(results: dict, policy: tuple[str, float], late: bool, hours: float | None) -> float:
    """The total under the late policy: `zero` gives 0 to anything late; `per-day:P` takes P%
    of the maximum per started day (one day when only the LMS's mark says late), never below 0."""
    total, kind = float(results["score"]), policy[0]
    if not late or kind == "none":
        return total
    if kind == "zero":
        return 0.0
    days = math.ceil(hours / 24) if hours else 1
    return max(0.0, total - days * policy[1] / 100 * float(results["max_score"]))
