"""The public checks run as `make check` runs them, on a copy of the reference with one mistake
made in it: the tests of what a student meets (tests/test_check_*.py) share these."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from course.release import ROOT
from graders.audit.grading import check_command, check_env


def submission(tmp_path: Path, file: str = "", old: str = "", new: str = "") -> Path:
    """The reference's minigrad/ in `tmp_path`, with `old` replaced by `new` in `file`."""
    shutil.copytree(
        ROOT / "reference" / "minigrad", tmp_path / "minigrad", ignore=shutil.ignore_patterns("__pycache__")
    )
    if file:
        path = tmp_path / "minigrad" / file
        assert old in path.read_text()
        path.write_text(path.read_text().replace(old, new, 1))
    return tmp_path


def check(folder: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The public checks as `make check` runs them."""
    command = check_command("--submission", str(folder), "--pictures", str(folder / "pictures"), *args)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=check_env())


def table(out: str) -> dict[str, str]:
    """The per-part table: part -> the rest of its line."""
    rows = re.findall(r"^(value|backward|mlp|tensor|checkpoint|extensions) +(.*)$", out, re.MULTILINE)
    return {part: rest.strip() for part, rest in rows}


def first_failure(out: str) -> str:
    """The first failure shown, from its `* test_...` line to the next (its lines unindented)."""
    found = re.search(r"^\* test_.*?(?=^\* |^\n)", out, re.MULTILINE | re.DOTALL)
    assert found, out
    return re.sub(r"^    ", "", found[0], flags=re.MULTILINE).rstrip("\n")


def line_of(folder: Path, file: str, text: str, after: str = "") -> int:
    """The number of the first line of minigrad/`file` that holds `text` (after the first line
    that holds `after`, when given)."""
    lines = (folder / "minigrad" / file).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return 1 + next(i for i, line in enumerate(lines) if i >= start and text in line)
