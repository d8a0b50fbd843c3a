"""Where the kit's files are, and which of them a grade depends on: said once, here.

The version digest (a resumed class regrades when it changes), the reference cache's key,
Gradescope's autograder.zip and the tests all take their paths and their list of the files
a grade depends on from this module, so the lists cannot disagree: a changed suite, runner,
reference file, parts registry or digits file is a changed grade everywhere at once.

The kit runs from a checkout (the reference and the registry live beside `graders/`, not in
it), so every path is found from this file's place in that checkout.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

GRADERS = Path(__file__).resolve().parents[1]  # this file is graders/course_facts/kit.py
ROOT = GRADERS.parent  # the checkout (on Gradescope, the unpacked autograder.zip)
CHILD = GRADERS / "child"  # the runner and interpreter copied into every child's folder
SUITES = GRADERS / "suites"
GRADING_PACKAGES = ("grading", "reporting", "course_facts", "isolation")  # every module a grading runs
REFERENCE = ROOT / "reference"  # holds minigrad/, the package the suites compare with
REGISTRY = REFERENCE / "checks" / "parts.py"  # the parts, shared with the public checks
COURSE_API = REFERENCE / "checks" / "course_api.py"  # words for an unmet requirement, shared too
DIGITS = REFERENCE / "minigrad" / "data" / "digits.csv.gz"  # part 4's data
# The first rows train part 4's milestone and are all the child is handed; the rest are its
# test images, whose labels only the grading process reads.
TRAINING_DIGITS = 1500
CHILD_DIGITS = "digits-training.csv"  # the training rows, as the child finds them beside runner.py


def digit_rows() -> list[str]:
    """The digits file's rows, as its text lines: the child is handed the first TRAINING_DIGITS
    (workdir.py), the grading process parses the rest, the milestone's test images."""
    with gzip.open(DIGITS, "rt") as f:
        return [line for line in f if line.strip()]


def grade_inputs() -> list[Path]:
    """Every file a grade depends on, sorted: the grader's own modules (one grading, how it is
    reported, the course's facts, the isolation, and the reading of one upload), the child's,
    the suites (with their pytest.ini), the reference package, the parts registry and the
    digits. The class command's own modules are not among them: they change no grade."""
    found = [
        *GRADERS.glob("*.py"),
        *(path for package in GRADING_PACKAGES for path in (GRADERS / package).glob("*.py")),
        GRADERS / "uploads" / "intake.py",
        *CHILD.glob("*.py"),
        *SUITES.glob("*.py"),
        SUITES / "pytest.ini",
        *(REFERENCE / "minigrad").glob("*.py"),
        REGISTRY,
        COURSE_API,
        DIGITS,
    ]
    return sorted(found)


def shared_module(name: str, path: Path):
    """A module of the public checks that the grader uses too: it ships to students with the
    checks, so it is loaded by its path rather than imported as a package of the grader."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass in it looks its module up there
    spec.loader.exec_module(module)
    return module


def reference_inputs() -> list[Path]:
    """The files that compute the reference's answers: the reference package, the child's
    runner and interpreter that run it, and the digits they read."""
    return sorted([*(REFERENCE / "minigrad").glob("*.py"), *CHILD.glob("*.py"), DIGITS])


def hash_files(paths: list[Path], seed: bytes = b"") -> str:
    """sha256 of `seed` and of each file by its place in the checkout and its bytes."""
    hashed = hashlib.sha256(seed)
    for path in paths:
        hashed.update(f"{path.relative_to(ROOT)}\0".encode() + path.read_bytes() + b"\0")
    return hashed.hexdigest()


def reference_module(name: str):
    """A module of the reference package, for suites that need its datasets."""
    if str(REFERENCE) not in sys.path:
        sys.path.insert(0, str(REFERENCE))
    return importlib.import_module(f"minigrad.{name}")
