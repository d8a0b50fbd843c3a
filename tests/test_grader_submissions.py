"""The hidden grader on real submissions: correct, buggy, broken and hostile.

Every spec in tests/submissions/ is built into a real folder, graded in a fresh process, and
must get exactly the per-part scores it declares, with the declared words in its messages,
while the grader exits 0 with valid JSON and leaves no process or stray file behind.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from course.submissions import expected_scores, load, materialize
from graders.course_facts import course_seed
from graders.course_facts.parts import POINTS
from graders.isolation import sandbox

from grading import ROOT, STRONG, bonus_score, grade, leftover_processes, needs_isolation, part_scores

TOTAL = sum(POINTS.values())

# The sample class (examples/submissions/) is graded as a class, through minigrad-class, with
# the same checks of exact scores and messages: tests/test_class_grading.py.
SPECS = sorted((ROOT / "tests" / "submissions").glob("*.json"))


@contextmanager
def listening(port: int | None) -> Iterator[socket.socket | None]:
    """A loopback port a submission might try to reach; None when the spec names none."""
    if port is None:
        yield None
        return
    with socket.create_server(("127.0.0.1", port)) as server:
        server.setblocking(False)
        yield server


def fingerprint(path: str) -> tuple | None:
    """What a write would change; a file some other program left there is not the attack's."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


@needs_isolation
@pytest.mark.parametrize("spec", SPECS, ids=[s.stem for s in SPECS])
def test_submission_gets_exactly_its_score(spec: Path, tmp_path: Path) -> None:
    data = load(spec)
    if data.get("needs_level", STRONG[0]) != STRONG[0]:
        pytest.skip(f"this attack is only contained at the {data['needs_level']} level, not available here")
    submission = materialize(spec, tmp_path / "submission")
    before = {path: fingerprint(path) for path in data.get("must_not_exist", [])}
    with listening(data.get("loopback_port")) as server:
        run, results = grade(submission, tmp_path / "out", seed=data.get("seed", 7))
        if server is not None:
            with pytest.raises(BlockingIOError):
                server.accept()  # nobody connected
    written = (tmp_path / "out" / "results.json").read_bytes()

    assert part_scores(results) == pytest.approx(expected_scores(spec), abs=1e-9)
    assert results["execution_time"] <= data.get("max_seconds", 180)
    assert len(written) <= data.get("max_result_bytes", 1_000_000)
    assert results["score"] == pytest.approx(sum(expected_scores(spec).values()) + bonus_score(results), abs=1e-9)
    if "bonus" in data:  # the optional extensions' points, on top of the parts'
        assert bonus_score(results) == data["bonus"]
    failures = "\n".join(t["output"] for t in results["tests"])
    for words in data.get("messages", []):
        assert words in failures
    everything = results["output"] + "\n" + failures
    for words in data.get("said_once", []):
        assert everything.count(words) == 1, f"{words!r} said {everything.count(words)} times, not once"
    for words in data.get("forbidden_words", []):
        assert words not in written.decode() + run.stdout
    if "refused" in data:  # files handed in and refused, each with its reason
        assert results["extra_data"]["refused"] == data["refused"]
    if "first_lines" in data:  # the feedback after the score table and its notes, root cause first
        feedback = results["output"].split("\n\n", 1)[1].split("\n")
        assert feedback[: len(data["first_lines"])] == data["first_lines"]
    assert sorted(os.listdir(tmp_path / "out")) == ["report.json", "results.json"]
    for path, seen in before.items():
        assert fingerprint(path) == seen, f"the submission managed to write {path}"
    time.sleep(float(data.get("wait_seconds", 0)))  # a detached daemon would strike now
    assert (tmp_path / "out" / "results.json").read_bytes() == written
    assert leftover_processes() == []


@pytest.mark.parametrize("name", ["correct", "fair-import-numpy"])
@pytest.mark.parametrize("level", sandbox.LEVELS)
def test_correct_submission_scores_full_marks_at_every_level(level: str, name: str, tmp_path: Path) -> None:
    """With NumPy too: the child may import it, read-only, at every level."""
    if level not in sandbox.available_levels():
        pytest.skip(f"the {level} level is not available here (needs root, and bubblewrap for bwrap)")
    submission = materialize(ROOT / "tests" / "submissions" / f"{name}.json", tmp_path / "submission")
    _, results = grade(submission, tmp_path / "out", "--isolation", level)
    assert (results["score"], results["max_score"], bonus_score(results)) == (TOTAL + 5, TOTAL, 5)  # 5 bonus points
    assert results["extra_data"]["isolation"] == level
    assert results["extra_data"]["trusted"] is (level != "local")


def test_same_submission_and_seed_give_identical_scores(tmp_path: Path) -> None:
    submission = materialize(ROOT / "tests" / "submissions" / "bug-tanh-derivative.json", tmp_path / "submission")
    first = grade(submission, tmp_path / "a")[1]
    second = grade(submission, tmp_path / "b")[1]
    for results in (first, second):
        del results["execution_time"]
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


@needs_isolation
@pytest.mark.parametrize(
    ("spec", "part"),
    [("tests/submissions/bug-add-overwrites-grad.json", "backward"), ("examples/submissions/cleo-buggy.json", "mlp")],
)
def test_a_set_order_bug_scores_the_same_whatever_ran_before(spec: str, part: str, tmp_path: Path) -> None:
    """These bugs overwrite a gradient, so their score follows the order of `_prev` sets; that
    order must come from the program, not from what the child ran before (here: no earlier part)."""
    submission = materialize(ROOT / spec, tmp_path / "submission")
    _, alone = grade(submission, tmp_path / "out", "--parts", part, seed=load(ROOT / spec).get("seed", 7))
    assert part_scores(alone) == {part: expected_scores(ROOT / spec)[part]}


def test_results_json_has_every_gradescope_field(tmp_path: Path) -> None:
    submission = materialize(ROOT / "tests" / "submissions" / "untouched-release.json", tmp_path / "submission")
    _, results = grade(submission, tmp_path / "out", "--parts", "value")
    assert {"score", "execution_time", "output", "stdout_visibility", "tests"} <= set(results)
    assert isinstance(results["execution_time"], float)
    for number, test in enumerate(results["tests"], start=1):
        assert set(test) == {"name", "number", "score", "max_score", "status", "output", "visibility", "tags"}
        assert test["number"] == str(number) and test["visibility"] == "after_due_date"
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["summary"]["failed"] == len(results["tests"])


def test_each_part_is_worth_what_the_registry_says(tmp_path: Path) -> None:
    """The parts' registry (what the Classroom package and the README state) and the hidden
    suites (where each test declares its points) agree, part by part."""
    submission = materialize(ROOT / "tests" / "submissions" / "untouched-release.json", tmp_path / "submission")
    _, results = grade(submission, tmp_path / "out")
    most: dict[str, float] = {}
    for test in results["tests"]:
        most[test["tags"][0]] = most.get(test["tags"][0], 0.0) + test["max_score"]
    assert most == POINTS and results["max_score"] == sum(POINTS.values())


def test_official_refuses_the_local_level(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "graders",
            str(tmp_path),
            "--out",
            str(tmp_path / "out"),
            "--official",
            "--isolation",
            "local",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, course_seed.SECRET_VARIABLE: "correct horse battery staple"},
    )
    assert run.returncode == 2 and not (tmp_path / "out" / "results.json").exists()
    assert "official grading needs the bwrap or user level, and neither passed its self-test" in run.stderr


def test_official_grades_use_the_course_seed_and_need_its_secret(tmp_path: Path) -> None:
    submission = materialize(ROOT / "tests" / "submissions" / "untouched-release.json", tmp_path / "submission")
    secret = tmp_path / "course-secret"
    secret.write_text("correct horse battery staple\n")
    command = [sys.executable, "-m", "graders", str(submission), "--parts", "checkpoint", "--official"]
    without = subprocess.run(
        [*command, "--out", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != course_seed.SECRET_VARIABLE},
    )
    assert without.returncode == 2 and "official grading needs the course secret" in without.stderr
    seeds = []
    for out in ("a", "b"):
        subprocess.run(
            [*command, "--out", str(tmp_path / out), "--secret-file", str(secret)], check=True, capture_output=True
        )
        seeds.append(json.loads((tmp_path / out / "results.json").read_text())["extra_data"]["seed"])
    assert seeds[0] == seeds[1] == course_seed.official_seed("correct horse battery staple")
