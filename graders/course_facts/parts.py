"""The course's parts as the grader needs them, read from the one registry every tool uses.

The registry is `reference/checks/parts.py`: it ships with the public checks to students, so
it is loaded here by its path rather than imported as a package of the grader. The grader runs
the parts in the order of their numbers: the quiz (0) first, since its few programs cannot
spend the time budget that a submission sleeping in every operator would otherwise leave it
none of.
"""

from __future__ import annotations

from .kit import REGISTRY, shared_module

registry = shared_module("minigrad_parts", REGISTRY)
COURSE = registry.PARTS  # in the order students take them
PARTS = tuple(part.name for part in sorted(COURSE, key=lambda part: part.number))  # in the order they are graded
POINTS = {part.name: part.points for part in COURSE}
