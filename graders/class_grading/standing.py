"""Who is in a class (`Roll`, what the run made of each student) and where each stands once
the run is over (`Standing`): graded or why not, the base score and the bonus apart, and the
lateness the intake computed, worked out once a run (loaded_class.py) for every file that
reports grades (grades.csv, the feedback, the summary, the gradebook, the LMS exports).

The base total is what the parts add up to, out of the base maximum; the bonus (the optional
extensions) is never part of it. A late policy takes its penalty from the base only, so the
total after it is the base minus the penalty, never below 0, and the bonus is added apart.
A student on the roster who handed in nothing stands at 0 everywhere; a student whose upload
was refused, or whom the grader could not grade, has no number: every export leaves their
cell empty, which the LMS importers read as "no change", so the instructor decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .records import StoredGrade


@dataclass(frozen=True)
class Roll:
    """Every student the class's tables list, and what became of each this run."""

    students: list[str]  # who submitted
    graded: dict[str, StoredGrade]
    missing: list[str]  # on the roster, with no submission
    failed: dict[str, str]  # no grade: upload refused, or the grader failed
    flagged: dict[str, str]  # graded, with a warning (code but no package)
    columns: list[str]  # the layout's keys, lateness, the late total
    keys: dict[str, dict[str, str]]  # each student's values of `columns`

    @property
    def errors(self) -> dict[str, str]:
        """What errors.csv lists: every student with a problem, graded or not."""
        return {**self.flagged, **self.failed}


REFUSED = "not graded: upload refused (see errors.csv)"
FAILED = "error (see errors.csv)"
MISSING = "no submission"
INTERRUPTED = "not graded (interrupted: run again with --resume)"
GRADED, FLAGGED = "graded", "graded (see errors.csv)"


@dataclass(frozen=True)
class Standing:
    """One student's outcome, as every report of the class says it."""

    student: str
    status: str
    base: float | None  # None: no grade (refused, failed, interrupted); 0 for a roster no-show
    max_score: float
    bonus: float = 0.0
    parts: dict[str, tuple[float, float]] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)  # the roll's columns: LMS ids, lateness

    @property
    def penalty(self) -> float:
        """Points the late policy takes from the base (0 when on time, without a policy, or unpriced)."""
        return number_in(self.keys, "penalty") or 0.0

    @property
    def after_late(self) -> float | None:
        """The base after the late policy: what goes back to an LMS (the raw base never changes)."""
        return None if self.base is None else max(0.0, round(self.base - self.penalty, 6))

    @property
    def late(self) -> bool:
        return self.keys.get("late") == "late"

    def key(self, name: str) -> str:
        return self.keys.get(name, "")

    def number_key(self, name: str) -> str:
        """An LMS id that must be ASCII digits (Canvas's user and attachment ids, Moodle's
        participant id), or "" when the value is anything else."""
        value = self.key(name)
        return value if value.isascii() and value.isdigit() else ""


def number_in(keys: dict[str, str], name: str) -> float | None:
    """A number column of the roll (written by the kit, but read back guarded: a finite float or None)."""
    try:
        value = float(keys.get(name, ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def standings(roll: Roll) -> dict[str, Standing]:
    """Every student who submitted or is on the roster, by id."""
    most = max((float(r.results.get("max_score", 0.0)) for r in roll.graded.values()), default=0.0)
    found: dict[str, Standing] = {}
    for student in sorted({*roll.students, *roll.missing}):
        keys = roll.keys.get(student, {})
        record = roll.graded.get(student)
        if record is not None:
            grade = record.grade
            status = FLAGGED if student in roll.flagged else GRADED
            found[student] = Standing(student, status, grade.base, grade.max_score, grade.bonus, grade.parts, keys)
            continue
        if student in roll.failed:
            status = REFUSED if roll.failed[student].startswith("upload refused") else FAILED
        else:
            status = MISSING if student in roll.missing else INTERRUPTED
        found[student] = Standing(student, status, 0.0 if status == MISSING else None, most, keys=keys)
    return found
