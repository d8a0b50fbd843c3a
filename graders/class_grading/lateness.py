"""Whether a student handed in late, by how much, and what the course's late policy takes.

Times come only from what the platform recorded (Gradescope's `:created_at:`, nbgrader's
timestamp.txt, Moodle's grading worksheet, Canvas's submissions from its API): a file's
modification time is whatever the zip or the student's machine left there, so it is used only
when the instructor asks for it (`file_time`, said on every run by the caller). Canvas's
download says only `LATE`: the student is late, by an unknown amount, so a policy that counts
time cannot price it and says so instead of guessing a day.

A student's own due is the class's `--due` unless the extensions file gives them another (by
any of their keys: an LMS id, an SID, an email, the id shown). A grace period forgives the
first hours after the due entirely; beyond it, hours are counted from the end of the grace.

The policy takes points from the base total only (the bonus is never penalised and never
offsets a penalty), at most `cap` percent of the base maximum and never below 0; the raw
total is never changed, so `total_after_late` is a column of its own.
"""

from __future__ import annotations

import csv
import datetime
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

KINDS = ("none", "zero", "per-day", "per-hour")
MAX_EXTENSIONS = 100_000  # rows of an extensions file: a large course's, and a bound on memory


@dataclass(frozen=True)
class Policy:
    """A late policy: `zero` takes everything late; `per-day` and `per-hour` take `percent` of
    the base maximum per started day or hour after the grace; `cap` bounds any of them."""

    kind: str = "none"
    percent: float = 0.0
    cap: float = 100.0  # percent of the base maximum, the most a late hand-in loses
    grace: datetime.timedelta = datetime.timedelta(0)


@dataclass(frozen=True)
class Lateness:
    """One student's lateness, as the tables, feedback and exports show it."""

    submitted_at: datetime.datetime | None
    due: datetime.datetime | None  # the student's own (after any extension)
    late: bool
    hours_late: float | None  # beyond the grace; None when the time or the due is unknown
    penalty: float | None  # points off the base; None when the policy cannot price it
    total_after_late: float | None  # the base minus the penalty; None without a grade
    unknown: str = ""  # why the penalty could not be priced, for the instructor and student

    def columns(self) -> dict[str, str]:
        """The values of grades.csv's lateness columns (ISO times, numbers as `%g`)."""
        return {
            "submitted_at": _iso(self.submitted_at),
            "due": _iso(self.due),
            "late": "late" if self.late else "",
            "hours_late": "" if self.hours_late is None else f"{round(self.hours_late, 2):g}",
            "penalty": "" if self.penalty is None else f"{round(self.penalty, 6):g}",
            "total_after_late": "" if self.total_after_late is None else f"{round(self.total_after_late, 6):g}",
        }


COLUMNS = ("submitted_at", "due", "late", "hours_late", "penalty", "total_after_late")  # in this order


def assess(
    submitted_at: datetime.datetime | None,
    marked_late: bool,
    due: datetime.datetime | None,
    policy: Policy,
    base: float | None = None,
    max_score: float | None = None,
) -> Lateness:
    """A student's lateness: `submitted_at` from the platform's record (or None), `marked_late`
    when the platform says late without a time (Canvas's `LATE`), `due` the student's own;
    `base` and `max_score` the graded base total and its maximum (None when not graded)."""
    hours = None
    late = marked_late
    if submitted_at is not None and due is not None:
        over = (submitted_at - due - policy.grace).total_seconds()
        late, hours = over > 0, max(0.0, over) / 3600
    penalty, unknown = _penalty(late, hours, policy, max_score)
    if base is None:
        return Lateness(submitted_at, due, late, hours, None, None, unknown)
    taken = None if penalty is None else round(min(penalty, base), 6)  # points, as grades.csv writes them
    after = base if taken is None else round(base - taken, 6)
    return Lateness(submitted_at, due, late, hours, taken, after, unknown)


def _penalty(late: bool, hours: float | None, policy: Policy, max_score: float | None) -> tuple[float | None, str]:
    if not late or policy.kind == "none":
        return 0.0, ""
    most = (max_score or 0.0) * policy.cap / 100
    if policy.kind == "zero":
        return most, ""
    if hours is None:
        return None, "late by the platform's mark, with no hand-in time: the policy's penalty is not applied"
    units = math.ceil(hours / 24) if policy.kind == "per-day" else math.ceil(hours)
    return min(most, units * policy.percent / 100 * (max_score or 0.0)), ""


def due_for(
    keys: Mapping[str, str], student: str, due: datetime.datetime | None, extensions: Mapping[str, datetime.datetime]
) -> datetime.datetime | None:
    """The student's own due: an extension found under any of their keys (an LMS id, SID,
    email) or their id, else the class's."""
    for value in (student, *keys.values()):
        if value and (moment := extensions.get(value.casefold())) is not None:
            return moment
    return due


def read_extensions(path: Path, parse: Callable[[str], datetime.datetime | None]) -> dict[str, datetime.datetime]:
    """An extensions file: a CSV whose first column is a student's key (any LMS id, SID, email
    or the id shown) and whose second is their new due (parsed by `parse`); a header row is
    allowed. A row that names no time stops the run with its line, before any grading."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            rows = [row for _, row in zip(range(MAX_EXTENSIONS + 1), csv.reader(file))]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise SystemExit(f"{path}: cannot read the extensions ({exc})") from exc
    extensions = {}
    for line, row in enumerate(rows, 1):
        if len(row) < 2 or not row[0].strip():
            continue
        moment = parse(row[1])
        if moment is None:
            if line == 1:
                continue  # a header
            raise SystemExit(f"{path}, line {line}: {row[1]!r} is not a time (ISO 8601)")
        extensions[row[0].strip().casefold()] = moment
    return extensions


def _iso(moment: datetime.datetime | None) -> str:
    """In UTC, so the same moment reads the same from every platform (Gradescope writes -08:00)."""
    return moment.astimezone(datetime.timezone.utc).isoformat(timespec="seconds") if moment else ""
