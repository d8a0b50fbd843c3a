"""A submission's fingerprint: what `--resume` compares to know a grade is still current.

It hashes exactly what the grader would read (the files its intake copies, and what it
refused), not the whole upload: a clone's `.git`, a README or a notebook checkpoint changing
does not change the grade, so it does not cost a regrade; any change to a graded file does.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from graders import intake

GRADERS = Path(intake.__file__).resolve().parent
KIT_SOURCES = (GRADERS, GRADERS / "child", GRADERS / "suites", GRADERS.parent / "reference" / "minigrad")


def of(folder: Path) -> str:
    """sha256 of the submission's graded files (names and bytes) and of the intake's refusals."""
    with tempfile.TemporaryDirectory(prefix="minigrad-fingerprint-") as copy:
        taken = intake.copy_package(folder, Path(copy))
        digest = hashlib.sha256(f"found={taken.found}\n".encode())
        for name in taken.copied:
            data = (Path(copy) / name).read_bytes()
            digest.update(f"{name}\0{len(data)}\0".encode() + data)
        for problem in taken.refused:
            digest.update(f"refused\0{problem}\n".encode())
    return digest.hexdigest()


def kit() -> str:
    """sha256 of the grader and reference sources a grade depends on: a fixed suite or
    reference makes `--resume` regrade everyone, a change to the class command does not."""
    digest = hashlib.sha256()
    for folder in KIT_SOURCES:
        for source in sorted(folder.glob("*.py")):
            digest.update(f"{source.relative_to(GRADERS.parent)}\0".encode() + source.read_bytes() + b"\0")
    return digest.hexdigest()
