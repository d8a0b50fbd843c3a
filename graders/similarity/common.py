"""What was set aside as the course's idiom, said: never a silent "0 pairs".

Code found in more than `--common` students' bodies is set aside for everyone (matching.py).
When a whole class copied one leaked solution, that is every line of it; so the report says how
many lines were set aside, in how many students' code, and shows the largest block set aside
with how many students share it ("shared by 82 of 86 students: a leaked solution?").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from copydetect.utils import get_copied_slices

from .fingerprints import Body, K, mask

SHARED = 0.5  # a student shares the block when their code holds this share of its fingerprints


@dataclass(frozen=True)
class Block:
    student: str
    file: str
    text: str
    span: tuple[int, int]  # offsets in `text`
    tokens: int
    shared_by: int  # students whose code holds it

    @property
    def lines(self) -> str:
        start, end = self.span
        return f"{self.text.count(chr(10), 0, start) + 1}-{self.text.count(chr(10), 0, max(start, end - 1)) + 1}"


@dataclass(frozen=True)
class SetAside:
    lines: int  # lines of students' code whose every fingerprint was set aside
    students: int  # students with any
    of_lines: int  # lines of students' own code in all
    largest: Block | None


def set_aside(bodies: dict[str, Body], common: dict[int, int]) -> SetAside:
    """What setting aside the fingerprints in `common` took from the students' `bodies` (before)."""
    lines = students = of_lines = 0
    largest: Block | None = None
    for name in sorted(bodies):
        found = bodies[name]
        common_at = [at for key, ats in found.positions.items() if key in common for at in ats]
        kept_at = [at for key, ats in found.positions.items() if key not in common for at in ats]
        kept = mask(kept_at, found.length)
        of_lines += len(_lines(found, kept | mask(common_at, found.length)))
        took = _lines(found, mask(common_at, found.length) & ~kept) - _lines(found, kept)
        lines += len(took)
        students += bool(took)
        if not common_at:
            continue
        slices = get_copied_slices(np.array(common_at), K)
        for start, end in zip(slices[0].tolist(), slices[1].tolist()):
            if largest is None or end - start > largest.tokens:
                largest = _block(name, found, start, end, bodies, common)
    return SetAside(lines, students, of_lines, largest)


def _lines(found: Body, tokens: np.ndarray) -> set[tuple[int, int]]:
    """The (file, line) of each token marked in `tokens`."""
    at = np.flatnonzero(tokens)
    return set(zip(found.file_of[at].tolist(), found.lines[at].tolist()))


def _block(name: str, found: Body, start: int, end: int, bodies: dict[str, Body], common: dict[int, int]) -> Block:
    keys = {key for key, ats in found.positions.items() if key in common and any(start <= at < end for at in ats)}
    shared_by = sum(len(keys & other.keys) >= SHARED * len(keys) for other in bodies.values())
    file = int(found.file_of[start])
    span = (int(found.starts[start]), int(found.ends[end - 1]))
    return Block(name, found.names[file], found.texts[file], span, end - start, shared_by)
