"""Turn the hidden run's per-test records into Gradescope's results.json (its autograder format).

A bonus test (an optional extension) is worth 0 in the maximum and its points when passed:
Gradescope counts a score above the maximum as extra credit, so a submission without the
extensions can still reach full marks, and one with them can go beyond.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .escape import terminal


@dataclass
class Record:
    """One graded test as the suite declared it and as it ended."""

    name: str
    part: str
    points: float
    passed: bool
    message: str
    visibility: str
    bonus: bool = False

    @property
    def status(self) -> str:
        return "passed" if self.passed else "failed"


def earned(records: list[Record]) -> float:
    """The points of the passed tests among `records`."""
    return sum(r.points for r in records if r.passed)


def part_totals(records: list[Record]) -> dict[str, tuple[float, float]]:
    """(points, maximum) per part, bonus tests left out: they are counted on a line of their own."""
    totals: dict[str, tuple[float, float]] = {}
    for r in records:
        if r.bonus:
            continue
        got, most = totals.get(r.part, (0.0, 0.0))
        totals[r.part] = (got + (r.points if r.passed else 0.0), most + r.points)
    return totals


def summary(records: list[Record], header: list[str], notes: Sequence[str] = ()) -> str:
    """The header, the score of each part and the total, the bonus points apart (they are not
    part of the maximum), then the notes (problems said once for the whole grading instead of
    under every test they stopped). No line of the header or of a note can hide a control
    character: the text is printed, and a cursor move could rewrite the score above it."""
    base = [r for r in records if not r.bonus]
    bonus = [r for r in records if r.bonus]
    lines = [*header, f"{'part':<12}{'score':>16}"]
    for part, (got, most) in part_totals(records).items():
        lines.append(f"{part:<12}{f'{got:g} / {most:g}':>16}")
    lines.append(f"{'total':<12}{f'{earned(base):g} / {sum(r.points for r in base):g}':>16}")
    if bonus:
        lines.append(f"{'bonus':<12}{f'{earned(bonus):g} / {sum(r.points for r in bonus):g}':>16}")
    lines += [f"note: {note}" for note in notes]
    return terminal("\n".join(lines))


def gradescope(records: list[Record], seconds: float, output: str, extra: dict) -> dict:
    """Gradescope's results; each test's message has its hidden characters shown (Gradescope
    shows it as text, and the class command reads it back for feedback and summaries)."""
    return {
        "score": round(earned(records), 6),
        "max_score": round(sum(r.points for r in records if not r.bonus), 6),
        "execution_time": round(seconds, 3),
        "output": output,
        "output_format": "text",
        "stdout_visibility": "hidden",
        "visibility": "after_due_date",
        # Gradescope shows the texts as they are: never as HTML, Markdown or ANSI colours
        "test_output_format": "text",
        "tests": [
            {
                "name": r.name,
                "number": str(i),
                "score": r.points if r.passed else 0.0,
                "max_score": 0.0 if r.bonus else r.points,
                "status": r.status,
                # empty for a passed hidden test; the visible check always says what it found
                "output": terminal(r.message),
                "visibility": r.visibility,
                "tags": [r.part, "bonus"] if r.bonus else [r.part],
            }
            for i, r in enumerate(records, start=1)
        ],
        "extra_data": extra,
    }
