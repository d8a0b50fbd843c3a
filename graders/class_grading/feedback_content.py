"""What a student's feedback says, once, for both files that say it (feedback.md and
feedback.html): the totals, each named, the hand-in, the notes, the part table, and each root
cause with its tests. feedback.py gathers it from results.json; feedback.py and
feedback_page.py write it.

A message keeps the judge's words; only a number printed with every digit of a float
(0.14447400000000002, noise of binary arithmetic) is shown rounded, its exact text beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .tables import number

EVERY_DIGIT = 12  # significant digits a message's number is shown with; its exact value on request
_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d+(?:e[+-]?\d+)?(?![\w.])")


@dataclass
class Failure:
    title: str
    names: list[str]
    lost: float
    message: str  # the first test's, in full; for a file that does not load, its note
    stopped: bool = False  # a file that does not load: every name is a test it stopped

    @property
    def count(self) -> str:
        """'27 tests, -40.5 points'."""
        tests = f"{len(self.names)} test{'' if len(self.names) == 1 else 's'}"
        return f"-{number(self.lost)} point{'' if self.lost == 1 else 's'}, {tests}"

    @property
    def pieces(self) -> list[tuple[str, str | None]]:
        """The message as it is shown (`readable`)."""
        return readable(self.message)

    @property
    def rest(self) -> tuple[str, list[str]]:
        """What the other names of the group are, and the names: every test a file that does
        not load stopped, or the tests after the first."""
        rest = self.names if self.stopped else self.names[1:]
        if self.stopped:
            return "The tests it stopped:", rest
        many = len(rest) != 1
        return f"{len(rest)} more test{'s fail' if many else ' fails'} through it:", rest


@dataclass
class Feedback:
    """One student's feedback, as both files say it."""

    student: str
    total: str  # the base and the bonus apart: "106.5 / 122 + 4 bonus"
    totals: list[tuple[str, str]]  # each total named: the base, the bonus, with the bonus
    hand_in: list[str]  # `lateness`
    notes: list[str]  # refusals and the grade's notes; the kit's text, names between backticks
    parts: list[tuple[str, float, float]]  # (part, points, maximum)
    bonus: float | None  # None: no optional extension was graded
    failures: list[Failure] = field(default_factory=list)

    @property
    def start(self) -> str:
        """The first thing to fix and how many tests it costs, in words."""
        first = self.failures[0]
        count = len(first.names)
        tests = f"{count} test{'s' if count != 1 else ''}"
        if first.stopped:
            return f"{tests} could not run"
        return f"{tests} {'fails' if count == 1 else 'fail'} through it"


def readable(message: str) -> list[tuple[str, str | None]]:
    """The message in pieces, each (shown, exact): a number printed with every digit of a float
    (0.14447400000000002) is shown with EVERY_DIGIT significant digits (0.144474), its exact
    text kept beside it; any other piece has None."""
    pieces: list[tuple[str, str | None]] = []
    at = 0
    for found in _FLOAT.finditer(message):
        digits = re.sub(r"e.*|\D", "", found[0]).lstrip("0")
        if len(digits) <= EVERY_DIGIT:  # as the judge wrote it: a rounding would hide nothing
            continue
        shown = f"{float(found[0]):.{EVERY_DIGIT}g}"
        pieces += [(message[at : found.start()], None), (shown, found[0])]
        at = found.end()
    return [*pieces, (message[at:], None)]
