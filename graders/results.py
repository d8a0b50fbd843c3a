"""Turn the hidden run's per-test records into Gradescope's results.json (DESIGN §6)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Record:
    """One graded test as the suite declared it and as it ended."""

    name: str
    part: str
    points: float
    passed: bool
    message: str
    visibility: str

    @property
    def status(self) -> str:
        return "passed" if self.passed else "failed"


def part_totals(records: list[Record]) -> dict[str, tuple[float, float]]:
    totals: dict[str, tuple[float, float]] = {}
    for r in records:
        got, most = totals.get(r.part, (0.0, 0.0))
        totals[r.part] = (got + (r.points if r.passed else 0.0), most + r.points)
    return totals


def summary(records: list[Record], header: list[str], notes: Sequence[str] = ()) -> str:
    """The header, the score of each part and the total, then the notes (problems said once
    for the whole grading instead of under every test they stopped)."""
    lines = [*header, f"{'part':<12}{'score':>16}"]
    for part, (got, most) in part_totals(records).items():
        lines.append(f"{part:<12}{f'{got:g} / {most:g}':>16}")
    total = sum(r.points for r in records if r.passed)
    lines.append(f"{'total':<12}{f'{total:g} / {sum(r.points for r in records):g}':>16}")
    lines += [f"note: {note}" for note in notes]
    return "\n".join(lines)


def gradescope(records: list[Record], seconds: float, output: str, extra: dict) -> dict:
    return {
        "score": round(sum(r.points for r in records if r.passed), 6),
        "max_score": round(sum(r.points for r in records), 6),
        "execution_time": round(seconds, 3),
        "output": output,
        "stdout_visibility": "hidden",
        "visibility": "after_due_date",
        "tests": [
            {
                "name": r.name,
                "number": str(i),
                "score": r.points if r.passed else 0.0,
                "max_score": r.points,
                "status": r.status,
                "output": r.message,  # empty for a passed hidden test; the visible check always says what it found
                "visibility": r.visibility,
                "tags": [r.part],
            }
            for i, r in enumerate(records, start=1)
        ],
        "extra_data": extra,
    }
