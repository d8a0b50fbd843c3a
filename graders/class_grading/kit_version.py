"""The kit's version as a grade depends on it: a hash of the grader and reference sources.

grading.json records it, so a fixed suite or reference makes `--resume` regrade everyone
while a change to the class command does not; every grading task carries it, so a cluster
worker that runs another kit refuses the task instead of grading with other suites.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

GRADERS = Path(__file__).resolve().parent.parent
KIT_SOURCES = (GRADERS, GRADERS / "child", GRADERS / "suites", GRADERS.parent / "reference" / "minigrad")


@functools.cache
def digest() -> str:
    """sha256 of every source file a grade depends on, by name and bytes."""
    hashed = hashlib.sha256()
    for folder in KIT_SOURCES:
        for source in sorted(folder.glob("*.py")):
            hashed.update(f"{source.relative_to(GRADERS.parent)}\0".encode() + source.read_bytes() + b"\0")
    return hashed.hexdigest()
