"""The course's parts, in the order students take them: what `make check PART=...` accepts,
which files each part's checks load, where its lesson is and what its hidden tests are worth.
Every tool reads this one list: the public checks, the hidden grader (whose suite for a part
is `graders/suites/test_<name>.py`), the Classroom package, the benches and the tests.

A part is named by its name (`value`), its number (`1`) or either with `part` in front
(`part1`, `part 1`), in any case. `extensions` are optional exercises worth bonus points.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    name: str  # also the pytest marker of its checks
    number: int | None  # None: not a numbered part of the course
    title: str
    lesson: str
    modules: tuple[str, ...]  # its files with holes, each needing the ones before (given files: see student.py)
    checks: str  # the file of public checks
    points: float  # what its hidden tests are worth (the extensions: 0, their points are bonus)

    @property
    def label(self) -> str:
        return f"part {self.number}, {self.title}" if self.number not in (None, 0) else self.title


# Unformatted (fmt: skip, here and below): one part a line, its fields in a row as in the README's table.
PARTS = (
    Part("value", 1, "the Value operators", "lessons/01-value.md", ("engine",), "test_value.py", 28),
    Part("backward", 2, "backpropagation", "lessons/02-backward.md", ("engine", "gradcheck"), "test_backward.py", 22),
    Part("mlp", 3, "networks and training", "lessons/03-mlp.md", ("engine", "nn"), "test_mlp.py", 27.5),
    Part("tensor", 4, "the Tensor engine", "lessons/04-tensor.md", ("tensor", "layers"), "test_tensor.py", 32.5),
    Part("checkpoint", 0, "the checkpoint quiz", "lessons/checkpoint.md", ("checkpoint",), "test_checkpoint.py", 12),
)
# Optional, for bonus points only: checked when asked for (`make check PART=extensions`).
EXTENSIONS = Part(
    "extensions", None, "the optional extensions (bonus points)", "lessons/01-value.md and lessons/03-mlp.md",
    ("engine", "warmup", "memory"), "test_extensions.py", 0,
)  # fmt: skip


def find(text: str) -> Part | None:
    """The part `text` names, or None."""
    wanted = text.strip().lower().removeprefix("part").strip()
    return next((p for p in (*PARTS, EXTENSIONS) if wanted in (p.name, str(p.number))), None)


def following(part: Part) -> Part | None:
    """The part that comes after `part` in the course, if any (the extensions are extra)."""
    index = PARTS.index(part) if part in PARTS else len(PARTS)
    return PARTS[index + 1] if index + 1 < len(PARTS) else None


def choices() -> str:
    return ", ".join([*(f"{p.name} ({p.number})" for p in PARTS), EXTENSIONS.name])
