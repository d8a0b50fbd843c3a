"""Gradescope's results.json (its autograder format): written from the hidden run's per-test
records, and read back by everyone who uses a grade (the class command's tables, feedback,
report and gradebook, the Gradescope runner, the tests), so its shape is said in one place.

A bonus test (an optional extension) is worth 0 in the maximum and its points when passed:
Gradescope counts a score above the maximum as extra credit, so a submission without the
extensions can still reach full marks, and one with them can go beyond.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .cause import Cause
from .escape import terminal

BONUS = "bonus"  # the tag of an optional extension's test


@dataclass
class Verdict:
    """One graded test as the suite declared it and as it ended."""

    name: str
    part: str
    points: float
    passed: bool
    message: str
    visibility: str
    bonus: bool = False
    cause: Cause | None = None  # where a failure starts (root_cause.py), when the judge knows

    @property
    def status(self) -> str:
        return "passed" if self.passed else "failed"

    def graded(self) -> GradedTest:
        """This test as results.json will hold it (see `gradescope`)."""
        score, most = (self.points if self.passed else 0.0), (0.0 if self.bonus else self.points)
        return GradedTest(self.name, self.part, score, most, self.passed, terminal(self.message), self.bonus)


def earned(records: list[Verdict]) -> float:
    """The points of the passed tests among `records`."""
    return sum(r.points for r in records if r.passed)


def part_totals(records: list[Verdict]) -> dict[str, tuple[float, float]]:
    """(points, maximum) per part, bonus tests left out: they are counted on a line of their own."""
    return part_scores(r.graded() for r in records)


def summary(records: list[Verdict], header: list[str], notes: Sequence[str] = ()) -> str:
    """The header, the score of each part and the total ("106.5 / 122 + 4 bonus": the parts add
    up to the base, the bonus is not part of the maximum) and the bonus out of its own, then
    the notes (problems said once for the whole grading instead of under every test they
    stopped). No line of the header or of a note can hide a control character: the text is
    printed, and a cursor move could rewrite the score above it."""
    base = [r for r in records if not r.bonus]
    bonus = [r for r in records if r.bonus]
    lines = [*header, f"{'part':<12}{'score':>16}"]
    for part, (got, most) in part_totals(records).items():
        lines.append(f"{part:<12}{f'{got:g} / {most:g}':>16}")
    total = f"{earned(base):g} / {sum(r.points for r in base):g}"
    lines.append(f"{'total':<12}{total:>16}" + (f" + {earned(bonus):g} bonus" if bonus else ""))
    if bonus:
        lines.append(f"{'bonus':<12}{f'{earned(bonus):g} / {sum(r.points for r in bonus):g}':>16}")
    lines += [f"note: {note}" for note in notes]
    return terminal("\n".join(lines))


def gradescope(records: list[Verdict], seconds: float, output: str, extra: dict) -> dict:
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
                "tags": [r.part, BONUS] if r.bonus else [r.part],
            }
            for i, r in enumerate(records, start=1)
        ],
        "extra_data": extra,
    }


# Reading a results.json back


@dataclass(frozen=True)
class GradedTest:
    """One test as results.json holds it."""

    name: str
    part: str
    score: float
    max_score: float
    passed: bool
    output: str
    bonus: bool  # an optional extension's: worth 0 in the maximum, its points extra credit


@dataclass(frozen=True)
class Grade:
    """A results.json read back: the total, the maximum, each test, and the grader's facts."""

    score: float
    max_score: float
    tests: tuple[GradedTest, ...]
    extra: dict

    @property
    def parts(self) -> dict[str, tuple[float, float]]:
        return part_scores(self.tests)

    @property
    def bonus(self) -> float:
        return bonus_points(self.tests)

    @property
    def base(self) -> float:
        """The score without the bonus: what the parts add up to, out of `max_score`."""
        return round(self.score - self.bonus, 6)

    @property
    def total(self) -> str:
        """The grade as every text says it, e.g. "106.5 / 122 + 4 bonus"."""
        return total_text(self.base, self.max_score, self.bonus, self.has_bonus)

    @property
    def has_bonus(self) -> bool:
        return any(test.bonus for test in self.tests)


def is_bonus(test: dict) -> bool:
    """Whether a results.json test is an optional extension's: tagged so, worth 0 in the maximum."""
    return BONUS in test["tags"] and test["max_score"] == 0


def read_test(test: dict) -> GradedTest:
    """One test of a results.json; a test without a name or an output (a hand-made one) has them empty."""
    passed, bonus, name, output = (
        test["status"] == "passed",
        is_bonus(test),
        test.get("name", ""),
        test.get("output", ""),
    )
    return GradedTest(name, test["tags"][0], test["score"], test["max_score"], passed, output, bonus)


def read(results: dict) -> Grade:
    """The grade a results.json holds (one without tests, such as Gradescope's "not graded", has none)."""
    tests = tuple(read_test(test) for test in results.get("tests", []))
    return Grade(results.get("score", 0.0), results.get("max_score", 0.0), tests, results.get("extra_data", {}))


def part_scores(tests: Iterable[GradedTest]) -> dict[str, tuple[float, float]]:
    """(points, maximum) per part, in the order the tests ran; bonus tests are left out (see `bonus_points`)."""
    totals: dict[str, tuple[float, float]] = {}
    for test in tests:
        if test.bonus:
            continue
        got, most = totals.get(test.part, (0.0, 0.0))
        totals[test.part] = (round(got + test.score, 6), round(most + test.max_score, 6))
    return totals


def total_text(base: float, most: float, bonus: float, has_bonus: bool) -> str:
    """The base score out of the maximum, the bonus apart ("106.5 / 122 + 4 bonus"): a total
    with the bonus in it reads as perfect beside a student who lost points."""
    text = f"{round(base, 6):g} / {round(most, 6):g}"
    return f"{text} + {round(bonus, 6):g} bonus" if has_bonus else text


def bonus_points(tests: Iterable[GradedTest]) -> float:
    """The points of the bonus tests passed; results.json's score already counts them."""
    return round(sum(test.score for test in tests if test.bonus), 6)
