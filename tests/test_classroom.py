"""The GitHub Classroom student repository: a valid workflow whose every autograding command
passes on the solutions and fails on the untouched release, and nothing an instructor keeps."""

from __future__ import annotations

import base64
import json
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
from course.student_repo import classroom_result

from grading import ROOT

REFERENCE = ROOT / "reference"
ASSIGNMENTS = ROOT / "assignments"
STUDENT_FILES = {
    "Makefile",
    "check.mk",
    "README.md",
    ".gitignore",
    "pyproject.toml",
    str(classroom.WORKFLOW),
    str(classroom.RESULT),
}


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("classroom") / "minigrad-student"
    assert classroom.main([str(dest)]) == 0
    return dest


def grading_steps(repository: Path) -> list[dict]:
    workflow = YAML(typ="safe").load((repository / classroom.WORKFLOW).read_text())
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    return [s for s in steps if s.get("run", "").startswith(f"python3 {classroom.RESULT} ")]


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
    assert [(s["id"], s["run"], s["timeout-minutes"]) for s in steps] == [
        ("value", "python3 .github/classroom_result.py value 28 5", 6),
        ("backward", "python3 .github/classroom_result.py backward 22 5", 6),
        ("mlp", "python3 .github/classroom_result.py mlp 28 5", 6),
        ("tensor", "python3 .github/classroom_result.py tensor 32 5", 6),
        ("checkpoint", "python3 .github/classroom_result.py checkpoint 0 5", 6),
    ]
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


def step_result(step: dict, clone: Path) -> tuple[dict, str]:
    """Run a part's step as GitHub runs it; its result as the reporter decodes it, and its log."""
    output = clone / "github-output"
    output.write_text("")
    env = {**os.environ, "GITHUB_OUTPUT": str(output)}
    run = subprocess.run(["bash", "-c", step["run"]], cwd=clone, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]  # a failing step would stop the reporter
    (line,) = output.read_text().splitlines()
    return json.loads(base64.b64decode(line.removeprefix("result="))), run.stdout


def reported(results: dict) -> int:
    """The points the reporter posts for one step: the sum of its tests' scores."""
    return sum(test["score"] for test in results["tests"])


HIDDEN = " (its answers are graded by the hidden tests)"
# The line the reporter prints for each part ("✅ LINE" or "❌ LINE"): on the solutions (every
# check passes: the part's points), on the untouched release (none passes: 0).
LINES = {
    "value": ("value: 71 of 71 checks, 28 / 28", "value: 0 of 71 checks, 0 / 28"),
    "backward": ("backward: 13 of 13 checks, 22 / 22", "backward: 0 of 13 checks, 0 / 22"),
    "mlp": ("mlp: 19 of 19 checks, 28 / 28", "mlp: 0 of 19 checks, 0 / 28"),
    "tensor": ("tensor: 59 of 59 checks, 32 / 32", "tensor: 0 of 59 checks, 0 / 32"),
    "checkpoint": (f"checkpoint: 12 of 12 checks, 0 / 0{HIDDEN}", f"checkpoint: 0 of 12 checks, 0 / 0{HIDDEN}"),
}


@pytest.mark.parametrize("with_solutions", [True, False], ids=["solutions", "untouched release"])
def test_each_part_reads_as_one_line_with_its_points_all_on_the_solutions_none_on_the_release(
    repository, tmp_path, with_solutions
):
    clone = prepared(repository, tmp_path / "clone", with_solutions)
    outcomes = {}
    for step in grading_steps(repository):
        results, log = step_result(step, clone)
        assert "minigrad public checks" in log, log[-2000:]
        (test,) = results["tests"]
        assert results["max_score"] == classroom.POINTS[step["id"]] and results["status"] == test["status"]
        assert (test["test_code"], test["line_no"]) == (f"make check PART={step['id']}", 0)
        assert log.splitlines()[-1] == test["name"]  # the step's log closes with the same line
        outcomes[step["id"]] = (test["name"], test["status"], test["score"])
    expected = {
        part: (solutions, "pass", classroom.POINTS[part]) if with_solutions else (release, "fail", 0)
        for part, (solutions, release) in LINES.items()
    }
    assert outcomes == expected


def test_a_wrong_rsub_costs_a_share_of_value_not_all_of_it(repository, tmp_path):
    clone = prepared(repository, tmp_path / "clone", with_solutions=True)
    engine = clone / "minigrad" / "engine.py"
    rsub = '        """other - self: order matters, so wrap the number and subtract."""\n'
    assert rsub in engine.read_text()
    engine.write_text(engine.read_text().replace(rsub, rsub + "        return self - other  # the wrong order\n"))
    (step,) = [s for s in grading_steps(repository) if s["id"] == "value"]
    results, log = step_result(step, clone)
    assert results["status"] == "fail" and results["max_score"] == 28, log[-2000:]
    # 28 * 70 // 71 = 27.6 rounded down; a command grader's step gave 0, and one test per check
    # put the 27 on the first check passed and 0 on the 69 others
    assert [(t["name"], t["status"], t["score"]) for t in results["tests"]] == [
        ("value: 70 of 71 checks, 27 / 28", "fail", 27)
    ]


def test_a_part_scores_in_proportion_to_its_checks_passed_rounded_down(tmp_path):
    junit = tmp_path / "checks.xml"
    cases = "".join(f'<testcase name="check {i}"/>' for i in range(70))
    cases += (
        '<testcase name="check 70"><failure message="wrong"/></testcase><testcase name="later"><skipped/></testcase>'
    )
    junit.write_text(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
    found = classroom_result.checks(junit)
    assert len(found) == 72 and found[70] == ("check 70", False) and found[71] == ("later", False)
    results = classroom_result.result("value", found, 28)
    assert (results["status"], results["max_score"], reported(results)) == ("fail", 28, 27)  # 27.2 rounded down
    assert results["tests"][0]["name"] == "value: 70 of 72 checks, 27 / 28"
    every = classroom_result.result("value", found[:70], 28)
    assert (every["status"], every["tests"][0]["name"], reported(every)) == (
        "pass",
        "value: 70 of 70 checks, 28 / 28",
        28,
    )
    assert classroom_result.result("value", found[1:71], 28)["tests"][0]["name"] == "value: 69 of 70 checks, 27 / 28"
    assert (
        classroom_result.result("value", found[:1] + found[70:], 28)["tests"][0]["name"]
        == "value: 1 of 3 checks, 9 / 28"
    )
    nothing = classroom_result.result("value", [], 28)
    assert (nothing["status"], reported(nothing)) == ("error", 0)
    assert [(t["name"], t["status"], t["message"]) for t in nothing["tests"]] == [
        ("value: no check ran, 0 / 28", "error", "no check of value ran: see `make check PART=value`")
    ]


# Without directory lines, which make prints when it runs under another make (make test).
MAKE_CHECK = ["make", "--no-print-directory", "check", "PART=value"]


def test_make_check_reads_the_same_as_in_this_repository(repository, tmp_path):
    clone = prepared(repository, tmp_path / "clone", with_solutions=False)
    student = subprocess.run(MAKE_CHECK, cwd=clone, capture_output=True, text=True).stdout
    here = subprocess.run(MAKE_CHECK, cwd=ROOT, capture_output=True, text=True).stdout
    timing = re.compile(r" in [0-9.]+s\b")  # pytest's closing line says how long the run took
    assert "not attempted yet: `Value.__add__` (minigrad/engine.py:" in student
    assert timing.sub("", student) == timing.sub("", here)
