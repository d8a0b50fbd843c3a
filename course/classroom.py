"""Write a standalone student repository for GitHub Classroom.

    python -m course.classroom DEST          (make classroom DEST=dir)

DEST gets the release (`minigrad/` with its holes, `checks/`, `lessons/`, exactly what
`make release` writes), a student Makefile sharing `check.mk` with this repository (so
`make check` prints the same), a student pyproject.toml and README, and
`.github/workflows/classroom.yml`: one autograding step per part, each running that part's
public checks for points in proportion to the checks passed (`.github/classroom_result.py`),
then the reporter that posts "Points X/Y". Nothing else: no solution, no hidden suite, no
grader code, no instructor file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graders.course_facts.parts import COURSE
from graders.gradescope.requirements import requirements

from .release import ROOT, build

TEMPLATES = Path(__file__).resolve().parent / "student_repo"
WORKFLOW = Path(".github/workflows/classroom.yml")
RESULT = Path(".github/classroom_result.py")  # a part's checks run, and its points as the reporter reads them
# The parts in the order students do them, with their hidden-test points (the parts' registry).
HIDDEN_POINTS = [(part.name, part.points) for part in COURSE]


def classroom_points(parts: list[tuple[str, float]]) -> dict[str, int]:
    """Integers (Classroom's points are whole); the checkpoint 0, since its
    public check only sees whether each answer is well formed, not whether it is right."""
    return {name: 0 if name == "checkpoint" else round(points) for name, points in parts}


POINTS = classroom_points(HIDDEN_POINTS)
TIMEOUT_MINUTES = 5  # per part; the slowest (mlp) takes seconds, so only an endless loop reaches it
PYTHON_VERSION = "3.12"


def pyproject() -> str:
    """What `make check` installs: the project's own dependencies and the pictures' (`plots`)."""
    dependencies = ", ".join(f'"{r}"' for r in requirements() + requirements("plots"))
    return f"""# Your minigrad, installed in editable mode by `make check` (the first time).
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "minigrad-student"
version = "0.1.0"
description = "minigrad: a small autograd engine, built one part at a time"
requires-python = ">=3.10"
dependencies = [{dependencies}]

[tool.setuptools]
packages = ["minigrad"]
"""


def workflow(points: dict[str, int]) -> str:
    """GitHub Classroom's autograding workflow, as Classroom itself writes one but for the
    parts' steps: a command grader step gives all of its points or none, so each part's step
    writes its own result, with points in proportion to the checks passed."""
    steps = "".join(
        f"""      - name: {part}
        id: {part}
        timeout-minutes: {TIMEOUT_MINUTES + 1}
        run: python3 {RESULT} {part} {score} {TIMEOUT_MINUTES}
"""
        for part, score in points.items()
    )
    results = "".join(f'          {p.upper()}_RESULTS: "${{{{ steps.{p}.outputs.result }}}}"\n' for p in points)
    return f"""# GitHub Classroom's autograding: each part's public checks are one step, worth the part's
# points times the share of its checks passed, rounded down; the reporter adds them up
# ("Points X/Y").
# Written by `make classroom`; the checkpoint is worth 0 here, its answers are graded hidden.
name: Autograding Tests
"on":
  - push
  - repository_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Set up Python
        uses: actions/setup-python@v5
        with:
          python-version: "{PYTHON_VERSION}"
      - name: Install what the checks need
        run: make .venv/.student
{steps}      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
{results}        with:
          runners: {",".join(points)}
"""


def files() -> dict[Path, bytes]:
    """The whole student repository, path -> content."""
    repository = build(ROOT / "reference")
    repository[Path("check.mk")] = (ROOT / "course" / "check.mk").read_bytes()
    for name in ("Makefile", "README.md"):
        repository[Path(name)] = (TEMPLATES / name).read_bytes()
    repository[Path(".gitignore")] = (TEMPLATES / "gitignore").read_bytes()
    repository[RESULT] = (TEMPLATES / RESULT.name).read_bytes()
    repository[Path("pyproject.toml")] = pyproject().encode()
    repository[WORKFLOW] = workflow(POINTS).encode()
    return repository


def write(repository: dict[Path, bytes], dest: Path) -> None:
    """Write into `dest`, which must be new, empty, or an earlier student repository (its files
    are replaced; anything else there, such as `.git`, is left alone)."""
    if dest.exists() and any(dest.iterdir()) and not (dest / WORKFLOW).is_file():
        raise SystemExit(f"{dest} is not empty and is not a student repository written before; choose a new folder")
    for rel, data in repository.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", help="the folder to write the student repository into")
    args = parser.parse_args(argv)
    if not args.dest:
        parser.error("give the folder: make classroom DEST=dir")
    repository = files()
    write(repository, Path(args.dest))
    print(f"wrote a student repository of {len(repository)} files to {args.dest}")
    print("push it to GitHub, mark it a template repository, and make it the assignment's starter code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
