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
    Gradescope's run_autograder on the built zip (a correct upload scores 127), and on 3.10 and
    3.12 (Ubuntu 22.04's and 24.04's) also where bwrap cannot make namespaces, as in
    Gradescope's container: graded at the user level; none may skip;
  - runs the public checks (`make check`, with that venv's Python) on the reference, where every
    check passes, and on the release (assignments/, the stubs), where they run to their table
    with a row for every part and no crash;
  - on 3.12 and 3.13, runs the public checks of a GitHub Classroom student repository (`make
    classroom`, its `make check` with that Python) on the reference: every check passes.
Prints each step's time; exits 1 on the first difference.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from graders.course_facts.parts import COURSE

from .classroom import PYTHON_VERSION
from .submissions import ROOT

PYTHONS = ("3.10", "3.12", "3.13")
PYENV = Path.home() / ".pyenv" / "versions"
CLOSING = re.compile(r"(\d+ (passed|failed|skipped|errors?)(, )?)+ in [0-9.]+s")  # pytest's last line
VARYING = {"graded_at", "execution_time"}  # a class run's times; everything else must agree
TESTS = [
    "tests/test_hangs.py",
    "tests/test_child_python.py",
    # Gradescope's run_autograder on the zip, in its /autograder layout, as root, with this venv
    "tests/test_gradescope.py::test_a_correct_upload_gets_full_marks_and_sees_only_the_visible_test_now",
]
# Gradescope's container usually refuses bwrap its namespaces: its Pythons (Ubuntu 22.04's 3.10,
# 24.04's 3.12) grade there at the user level too.
GRADESCOPE_PYTHONS = ("3.10", "3.12")
WITHOUT_NAMESPACES = (
    "tests/test_gradescope.py::test_where_bwrap_cannot_make_namespaces_a_correct_upload_is_graded_at_the_user_level"
)
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


def run(command: list[str], what: str, cwd: Path = ROOT, exits: tuple[int, ...] = (0,)) -> str:
    """Run `command`, say how long it took; SystemExit with its output when its exit status is
    not one of `exits`."""
    start = time.monotonic()
    ran = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    print(f"  {what}: {time.monotonic() - start:.0f} s", flush=True)
    if ran.returncode not in exits:
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
    (folder / ".student").touch()  # what `make check VENV=folder` installs first, just installed
    return python


def table(said: str) -> dict[str, tuple[int, int]]:
    """The parts' rows of `make check`'s table ("value  71 / 71   all pass"): part -> (passed, checks)."""
    rows = {}
    for line in said.splitlines():
        words = line.split()
        if len(words) >= 4 and words[2] == "/" and words[1].isdigit() and words[3].isdigit():
            rows[words[0]] = (int(words[1]), int(words[3]))
    return rows


def public_checks(folder: Path, submission: str) -> dict[str, tuple[int, int]]:
    """`make check` with the venv in `folder` on `submission`: it must run to its table, with a
    row for every part, and close with pytest's count of checks passed and failed, none in error
    (make exits 2 when checks fail, as they do on the release; a crash shows as a missing row, an
    error or no closing count). Its rows, part -> (passed, checks)."""
    command = ["make", "--no-print-directory", "check", f"VENV={folder}", f"SUBMISSION={submission}"]
    said = run(command, f"make check on {submission}", exits=(0, 2))
    rows = table(said)
    missing = [part.name for part in COURSE if part.name not in rows]
    closing = [line for line in said.splitlines() if CLOSING.fullmatch(line)]
    if missing or len(closing) != 1 or "error" in closing[0]:
        raise SystemExit(f"python_matrix: make check on {submission} under {folder.name} crashed:\n{said[-3000:]}")
    return rows


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
        reference = public_checks(python.parent.parent, "reference")
        if any(passed != checks for passed, checks in reference.values()):
            raise SystemExit(f"python_matrix: the reference fails public checks under {minor}: {reference}")
        release = public_checks(python.parent.parent, "assignments")
        if {part: checks for part, (_, checks) in release.items()} != {p: c for p, (_, c) in reference.items()}:
            raise SystemExit(f"python_matrix: the release's checks are not the reference's under {minor}: {release}")
        print(f"  public checks: reference {reference}, release {release}", flush=True)
        tests = TESTS + [WITHOUT_NAMESPACES] * (minor in GRADESCOPE_PYTHONS)
        said = run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], f"{' '.join(tests)}")
        summary = said.strip().splitlines()[-1]
        print(f"  {summary}", flush=True)
        if "skipped" in summary:  # each is there to run on this Python
            raise SystemExit(f"python_matrix: tests skipped under {minor}:\n{said[-3000:]}")
        if minor in CLASSROOM_PYTHONS:
            classroom_check(interpreter, args.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
