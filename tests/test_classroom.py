"""The GitHub Classroom student repository: a valid workflow whose every autograding command
passes on the solutions and fails on the untouched release, and nothing an instructor keeps."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from course import classroom
from course.markers import find_regions
from course.release import list_sources

from grading import ROOT

REFERENCE = ROOT / "reference"
ASSIGNMENTS = ROOT / "assignments"
STUDENT_FILES = {"Makefile", "check.mk", "README.md", ".gitignore", "pyproject.toml", str(classroom.WORKFLOW)}


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("classroom") / "minigrad-student"
    assert classroom.main([str(dest)]) == 0
    return dest


def grading_steps(repository: Path) -> list[dict]:
    workflow = YAML(typ="safe").load((repository / classroom.WORKFLOW).read_text())
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    return [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-command-grader@")]


def test_the_workflow_is_valid_for_github(repository):
    run = subprocess.run(
        [
            Path(sys.executable).parent / "check-jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(repository / classroom.WORKFLOW),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_one_step_per_part_with_integer_points_and_the_reporter_adds_them_all(repository):
    steps = grading_steps(repository)
    assert [(s["id"], s["with"]["command"], s["with"]["max-score"]) for s in steps] == [
        ("value", "make check PART=value", 28),
        ("backward", "make check PART=backward", 22),
        ("mlp", "make check PART=mlp", 28),
        ("tensor", "make check PART=tensor", 32),
        ("checkpoint", "make check PART=checkpoint", 0),
    ]
    assert all(type(s["with"]["timeout"]) is int for s in steps)
    workflow = YAML(typ="safe").load((repository / classroom.WORKFLOW).read_text())
    reporter = workflow["jobs"]["run-autograding-tests"]["steps"][-1]
    assert reporter["with"]["runners"] == "value,backward,mlp,tensor,checkpoint"
    assert reporter["env"]["MLP_RESULTS"] == "${{ steps.mlp.outputs.result }}"


def test_only_the_release_and_the_student_files_and_no_solution_line(repository):
    written = {str(p.relative_to(repository)) for p in repository.rglob("*") if p.is_file()}
    release = {str(p) for p in list_sources(ASSIGNMENTS)}
    assert written == release | STUDENT_FILES  # so no hidden suite, grader or instructor file
    assert all((repository / p).read_bytes() == (ASSIGNMENTS / p).read_bytes() for p in release)
    solutions = {}  # file -> its solution lines, as the release test reads them
    for rel in list_sources(REFERENCE):
        if rel.suffix == ".py":
            lines = (REFERENCE / rel).read_text().splitlines()
            regions = find_regions("\n".join(lines), str(rel))
            solutions[str(rel)] = {line for r in regions for line in lines[r.begin : r.end - 1] if line.strip()}
    distinctive = {line for lines in solutions.values() for line in lines if len(line.strip()) > 30}
    for path in (p for p in written if not p.endswith(".gz")):  # the digits: data, not text
        lines = set((repository / path).read_text().splitlines())
        assert not lines & (solutions.get(path, set()) | distinctive), f"{path} holds a solution line"


def prepared(repository: Path, copy: Path, with_solutions: bool) -> Path:
    """A clone as the workflow sees it after its install step: .venv ready (here it borrows
    this project's packages rather than downloading them)."""
    shutil.copytree(repository, copy)
    if with_solutions:
        for module in (REFERENCE / "minigrad").glob("*.py"):
            shutil.copyfile(module, copy / "minigrad" / module.name)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", copy / ".venv"], check=True)
    purelib = sysconfig.get_paths(vars={"base": str(copy / ".venv"), "platbase": str(copy / ".venv")})["purelib"]
    (Path(purelib) / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    stamp = copy / ".venv" / ".student"
    stamp.touch()
    later = time.time() + 60
    os.utime(stamp, (later, later))  # newer than pyproject.toml: make does not reinstall
    return copy


@pytest.mark.parametrize("with_solutions", [True, False], ids=["solutions", "untouched release"])
def test_every_step_command_passes_on_the_solutions_and_fails_on_the_release(repository, tmp_path, with_solutions):
    clone = prepared(repository, tmp_path / "clone", with_solutions)
    outcomes = {}
    for step in grading_steps(repository):
        run = subprocess.run(["bash", "-c", step["with"]["command"]], cwd=clone, capture_output=True, text=True)
        outcomes[step["id"]] = run.returncode == 0
        assert "minigrad public checks" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]
    assert outcomes == {part: with_solutions for part in classroom.POINTS}


# Without directory lines, which make prints when it runs under another make (make test).
MAKE_CHECK = ["make", "--no-print-directory", "check", "PART=value"]


def test_make_check_reads_the_same_as_in_this_repository(repository, tmp_path):
    clone = prepared(repository, tmp_path / "clone", with_solutions=False)
    student = subprocess.run(MAKE_CHECK, cwd=clone, capture_output=True, text=True).stdout
    here = subprocess.run(MAKE_CHECK, cwd=ROOT, capture_output=True, text=True).stdout
    timing = re.compile(r" in [0-9.]+s\b")  # pytest's closing line says how long the run took
    assert "not attempted yet: `Value.__add__` (minigrad/engine.py:" in student
    assert timing.sub("", student) == timing.sub("", here)
