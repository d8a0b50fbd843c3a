"""The public checks themselves: the reference passes all, the untouched release passes none."""

import json
import subprocess

from course.release import ROOT
from graders.audit.grading import check_command, check_env
from graders.course_facts.parts import PARTS


def run_checks(submission, tmp_path, *args):
    report = tmp_path / "report.json"
    command = check_command(
        "--submission",
        str(submission),
        "-p",
        "pytest_jsonreport.plugin",
        "--json-report",
        f"--json-report-file={report}",
        *args,
    )
    subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=check_env())
    return json.loads(report.read_text())


def outcomes_by_part(report):
    parts = {}
    for test in report["tests"]:
        part = next(k for k in test["keywords"] if k in PARTS)
        parts.setdefault(part, []).append(test["outcome"])
    return parts


def test_reference_passes_every_public_check(tmp_path):
    parts = outcomes_by_part(run_checks(ROOT / "reference", tmp_path))
    assert set(parts) == set(PARTS)
    assert {part: set(outcomes) for part, outcomes in parts.items()} == {p: {"passed"} for p in parts}


def test_untouched_release_passes_no_check(tmp_path):
    report = run_checks(ROOT / "assignments", tmp_path)
    assert report["summary"]["total"] > 80
    assert report["summary"].get("passed", 0) == 0


def test_not_attempted_is_reported_by_name_without_a_traceback(tmp_path):
    out = subprocess.run(check_command("-m", "value"), cwd=ROOT, capture_output=True, text=True, env=check_env()).stdout
    assert "not attempted yet: `Value.__add__` (minigrad/engine.py:" in out
    assert "0 / 71" in out and "Begin with part 1" in out
    assert "Traceback" not in out


def test_a_classic_bug_is_explained_with_inputs_expected_got_where_and_hint(tmp_path):
    package = tmp_path / "minigrad"
    package.mkdir()
    for source in (ROOT / "reference" / "minigrad").glob("*.py"):
        (package / source.name).write_text(source.read_text())
    engine = package / "engine.py"
    correct = "self.grad += out.grad\n            other.grad += out.grad"
    assert correct in engine.read_text()
    engine.write_text(engine.read_text().replace(correct, correct.replace("+=", "="), 1))
    closure = 1 + engine.read_text().splitlines().index("            self.grad = out.grad") - 1  # its `def _backward`
    command = check_command("--submission", str(tmp_path), "-m", "value")
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=check_env()).stdout
    assert "69 / 71" in out
    assert (
        "a + b: gradient of a when a.grad was already 1.0\n"
        "        inputs:   a = 2.0, b = -3.0, out.grad = 2.5\n"
        "        expected: 3.5\n"
        "        got:      2.5\n"
        f"        where:    `Value.__add__`'s `_backward` (minigrad/engine.py:{closure})\n"
        "        hint:     use += in _backward: a node can get gradient from several places"
    ) in out
