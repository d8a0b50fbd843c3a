"""A graded class as every report reads it, loaded once a run.

The roll says who is in the class and what became of each this run; each graded student's
`records.StoredGrade` holds their results.json already read into a `Grade`; each student's
`Standing` says where they stand (graded or why not, the base and the bonus apart, lateness).
grades.csv, changes.csv, item_analysis.csv, summary.md, summary.html, the histogram, the
gradebook and every LMS export are functions of this one object: none reads a student's
files again, and none can see a grade the others do not.
"""

from __future__ import annotations

from dataclasses import dataclass

from .records import StoredGrade
from .standing import Roll, Standing, standings


@dataclass(frozen=True)
class LoadedClass:
    """The roll, with each student's standing worked out once."""

    roll: Roll
    standings: dict[str, Standing]  # every student who submitted or is on the roster, by id

    @property
    def graded(self) -> dict[str, StoredGrade]:
        """The graded students' stored grades (results.json and grading.json, as read once)."""
        return self.roll.graded


def load(roll: Roll) -> LoadedClass:
    return LoadedClass(roll, standings(roll))
