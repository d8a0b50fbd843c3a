"""CI's Python matrix: the kit grades alike on every Python it supports.

    .venv/bin/python -m course.python_matrix [--work DIR]

Courses run the kit on CPython 3.10 (Ubuntu 22.04, Gradescope's usual image) to 3.13, often on
an instructor's own pyenv or uv Python. After `make test` (on .venv's Python), for each of 3.10,
3.12 and 3.13 as pyenv installs them (~/.pyenv/versions/3.X.*, newest patch; a missing one is a
failure, never a skip) this makes a venv with the `instructor` extra, then:
  - grades the sample class (course/sample_class.py) and compares grades.csv with .venv's,
    leaving out graded_at and execution_time only: every other cell must be identical;
  - runs the tests of what differs between Pythons: the child's names for code (hangs and
    "Start here", which read co_qualname from 3.11 on), the child's own interpreter, and
    Gradescope's run_autograder on the built zip (a correct upload scores 127); none may skip;
  - on 3.12 and 3.13, runs the public checks of a GitHub Classroom student repository (`make
    classroom`, its `make check` with that Python) on the reference: every check passes.
Prints each step's time; exits 1 on the first difference.
"""

from __future__ import annotations

import argparse
import csv
import io
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .classroom import PYTHON_VERSION
from .submissions import ROOT

PYTHONS = ("3.10", "3.12", "3.13")
PYENV = Path.home() / ".pyenv" / "versions"
VARYING = {"graded_at", "execution_time"}  # a class run's times; everything else must agree
TESTS = [
    "tests/test_hangs.py",
    "tests/test_child_python.py",
    # Gradescope's run_autograder on the zip, in its /autograder layout, as root, with this venv
    "tests/test_gradescope.py::test_a_correct_upload_gets_full_marks_and_sees_only_the_visible_test_now",
]
# The Classroom workflow's Python (course/classroom.py: setup-python 3.12) and the next; 3.10 is
# Gradescope's, where no student repository runs.
CLASSROOM_PYTHONS = ("3.12", "3.13")


def pyenv_python(minor: str) -> Path:
    """pyenv's newest 3.X.Y; SystemExit when there is none (CI must not pass without it)."""
    releases = [p for p in PYENV.glob(f"{minor}.*/bin/python{minor}") if p.parts[-3].replace(".", "").isdigit()]
    found = sorted(releases, key=lambda p: [int(n) for n in p.parts[-3].split(".")])  # not 3.13.0t, 3.12-dev
    if not found:
        raise SystemExit(f"python_matrix: no Python {minor} under {PYENV} (pyenv install {minor}): CI needs it")
    return found[-1]


def run(command: list[str], what: str, cwd: Path = ROOT) -> str:
    """Run `command`, say how long it took; SystemExit with its output when it fails."""
    start = time.monotonic()
    ran = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    print(f"  {what}: {time.monotonic() - start:.0f} s", flush=True)
    if ran.returncode != 0:
        raise SystemExit(
            f"python_matrix: {what} failed (exit {ran.returncode}):\n{ran.stdout[-3000:]}{ran.stderr[-3000:]}"
        )
    return ran.stdout


def grades(path: Path) -> list[dict[str, str]]:
    """grades.csv without the columns that are times."""
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    return [{key: value for key, value in row.items() if key not in VARYING} for row in rows]


def grade_class(python: Path, out: Path) -> list[dict[str, str]]:
    shutil.rmtree(out, ignore_errors=True)
    run([str(python), "-m", "course.sample_class", "--out", str(out)], f"sample class ({python})")
    return grades(out / "grades.csv")


def venv(interpreter: Path, folder: Path) -> Path:
    """A venv of `interpreter` with the kit (editable) and its instructor extra. Kept between
    runs, as .venv is (a first install takes minutes, a kept one seconds); pip checks every
    requirement again each time, and a venv of another interpreter is made anew."""
    python = folder / "bin" / "python"
    if not python.exists() or python.resolve() != interpreter.resolve():
        shutil.rmtree(folder, ignore_errors=True)
        run([str(interpreter), "-m", "venv", str(folder)], f"venv {folder.name}")
    run([str(python), "-m", "pip", "install", "-q", "-e", f"{ROOT}[instructor]"], f"install the kit in {folder.name}")
    return python


def classroom_check(interpreter: Path, work: Path) -> None:
    """A student repository's `make check` with `interpreter`, on the reference: all pass."""
    repository, kept = work / f"student-{interpreter.name}", work / f"student-venv-{interpreter.name}"
    if (repository / ".venv").is_dir():  # its .venv is kept between runs (pip install took 2-3 minutes)
        shutil.rmtree(kept, ignore_errors=True)
        (repository / ".venv").rename(kept)
    shutil.rmtree(repository, ignore_errors=True)
    run([sys.executable, "-m", "course.classroom", str(repository)], "make classroom")
    if kept.is_dir():
        kept.rename(repository / ".venv")  # its stamp is older than the new pyproject.toml: pip checks again
    run(  # pytest's exit status: 1 when any check fails
        ["make", "check", f"PYTHON={interpreter}", f"SUBMISSION={ROOT / 'reference'}"],
        f"student repository's make check ({interpreter.name})",
        cwd=repository,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.python_matrix", description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/var/tmp/minigrad-python-matrix"))
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if PYTHON_VERSION not in CLASSROOM_PYTHONS:
        raise SystemExit(f"python_matrix: the Classroom workflow's Python {PYTHON_VERSION} is not one it tests")
    interpreters = {minor: pyenv_python(minor) for minor in PYTHONS}  # all found before any work
    print(f"Python {sys.version.split()[0]} (.venv):", flush=True)
    expected = grade_class(Path(sys.executable), args.work / "class-venv")
    with ThreadPoolExecutor() as pool:  # pip mostly waits on the network and the disk: all three at once
        pythons = dict(
            zip(interpreters, pool.map(lambda m: venv(interpreters[m], args.work / f"venv-{m}"), interpreters))
        )
    for minor, interpreter in interpreters.items():
        print(f"Python {minor} ({interpreter}):", flush=True)
        python = pythons[minor]
        got = grade_class(python, args.work / f"class-{minor}")
        if got != expected:
            differ = [(a, b) for a, b in zip(expected, got) if a != b] or [("rows", f"{len(expected)} vs {len(got)}")]
            raise SystemExit(f"python_matrix: grades.csv under {minor} differs from .venv's: {differ[:3]}")
        print(f"  grades.csv: {len(got)} rows identical to .venv's (graded_at, execution_time left out)", flush=True)
        said = run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS], f"{' '.join(TESTS)}")
        summary = said.strip().splitlines()[-1]
        print(f"  {summary}", flush=True)
        if "skipped" in summary:  # each is there to run on this Python
            raise SystemExit(f"python_matrix: tests skipped under {minor}:\n{said[-3000:]}")
        if minor in CLASSROOM_PYTHONS:
            classroom_check(interpreter, args.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
