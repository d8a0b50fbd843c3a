"""What `minigrad-grade` prints: the grade table in `make check`'s part order, and no raw pytest
count above it (pytest's "3 failed, 45 passed" counts the unwritten bonus tests as failures)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from grading import ROOT, grade


def parts_1_and_2_done(folder: Path) -> Path:
    """The release with parts 1 and 2 written (the reference's engine.py and gradcheck.py)."""
    shutil.copytree(
        ROOT / "assignments" / "minigrad", folder / "minigrad", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("engine.py", "gradcheck.py"):
        shutil.copy(ROOT / "reference" / "minigrad" / name, folder / "minigrad" / name)
    return folder


def test_the_grade_table_follows_make_checks_order_with_no_pytest_count(tmp_path: Path) -> None:
    run, results = grade(parts_1_and_2_done(tmp_path / "sub"), tmp_path / "out")
    assert not re.search(r"\b\d+ (passed|failed)\b", run.stdout), run.stdout
    rows = re.findall(r"^(value|backward|mlp|tensor|checkpoint|total) +(.+)$", run.stdout, re.MULTILINE)
    assert rows == [
        ("value", "28 / 28"),
        ("backward", "22 / 22"),
        ("mlp", "0 / 27.5"),
        ("tensor", "0 / 32.5"),
        ("checkpoint", "0 / 12"),
        ("total", "50 / 122 + 3 bonus"),
    ], run.stdout
    assert results["score"] == 53
