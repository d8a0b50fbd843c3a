"""minigrad-class on real classes: every layout, parallel runs, resume, regrade, crashes.

The whole sample class (examples/submissions/) is graded once through the command and every
student must get exactly the per-part scores the spec states. The layout tests grade the quiz
only (`--parts checkpoint`), which keeps them fast while the totals stay exact: Ada answers
every question right (12), Nia gets Q5 and Q8 wrong (10).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from course.submissions import expected_scores, load, materialize
from graders.class_grading import cli, report
from graders.course_facts import course_seed

from grading import ROOT, STRONG, bonus_score, ctrl_c_reaches_it, grader_tmp, leftover_processes, needs_isolation
from nbgrader_export import nbgrader_export

pytestmark = needs_isolation
EXAMPLES = ROOT / "examples" / "submissions"
ADA, NIA = EXAMPLES / "ada-correct.json", EXAMPLES / "nia-quiz-wrong.json"
JAY = EXAMPLES / "jay-endless-loop.json"
PARTS = ("checkpoint", "value", "backward", "mlp", "tensor")  # grades.csv's part columns, in order
BONUS_TESTS = {"sin", "cos", "sqrt", "descend", "count-nodes"}  # the optional extensions' test ids
QUIZ = {"alice": 12.0, "bob": 10.0}  # alice is built from Ada, bob from Nia
NIA_ANSWERS = ["0.64", "'C'"]  # the reference's answers to the questions Nia got wrong


def grade_class(submissions: Path, out: Path, *options: str, status: int = 0) -> subprocess.CompletedProcess:
    """minigrad-class in a fresh process, with a temporary folder that must end up empty."""
    with grader_tmp() as work:
        run = subprocess.run(
            [sys.executable, "-m", "graders.class_grading.cli", str(submissions), "--out", str(out), *options],
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "TMPDIR": str(work)},
        )
    assert run.returncode == status, run.stderr[-3000:]
    return run


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(newline="")))


def totals(out: Path) -> dict[str, float]:
    return {row["student"]: float(row["total"]) for row in read_csv(out / "grades.csv") if row["status"] == "graded"}


def package(spec: Path, where: Path) -> Path:
    """The spec's minigrad/ package, moved to `where` (which may not exist yet)."""
    built = materialize(spec, where.parent / f".build-{where.name}")
    where.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(built / "minigrad", where)
    shutil.rmtree(built)
    return where


def without(rows: list[dict[str, str]], column: str) -> list[dict[str, str]]:
    return [{k: v for k, v in row.items() if k != column} for row in rows]


# --- the sample class ------------------------------------------------------------------------


def test_sample_class_gets_exactly_its_scores(tmp_path: Path) -> None:
    specs = sorted(EXAMPLES.glob("*.json"))
    assert len(specs) >= 12
    for spec in specs:
        materialize(spec, tmp_path / "class" / spec.stem)
    run = grade_class(tmp_path / "class", tmp_path / "out", "--jobs", "2", "--seed", "0")

    rows = {row["student"]: row for row in read_csv(tmp_path / "out" / "grades.csv")}
    assert sorted(rows) == [spec.stem for spec in specs]
    for spec in specs:
        expected = expected_scores(spec)
        row = rows[spec.stem]
        assert {part: float(row[part]) for part in expected} == pytest.approx(expected, abs=1e-9), spec.stem
        results = (tmp_path / "out" / spec.stem / "results.json").read_text()
        bonus = bonus_score(json.loads(results))  # the optional extensions' points, apart from the total
        total = sum(expected.values())
        assert (float(row["total"]), float(row["bonus_points"])) == pytest.approx((total, bonus), abs=1e-9)
        assert float(row["total_with_bonus"]) == pytest.approx(total + bonus, abs=1e-9)
        assert sum(float(row[part]) for part in PARTS) == pytest.approx(total, abs=1e-9)
        assert_feedback_adds_up((tmp_path / "out" / spec.stem / "feedback.md").read_text(), row)
        assert (row["seed"], row["isolation"], row["status"]) == ("0", STRONG[0], "graded")  # the strongest here
        messages = "\n".join(test["output"] for test in json.loads(results)["tests"])
        for words in load(spec).get("messages", []):
            assert words in messages, (spec.stem, words)
        for words in load(spec).get("forbidden_words", []):
            assert words not in results + run.stdout, (spec.stem, words)
    assert read_csv(tmp_path / "out" / "errors.csv") == []
    assert len(list((tmp_path / "out" / ".reference-cache").glob("*.json"))) == 1  # one seed, one set of answers
    for name in ("item_analysis.csv", "summary.md", "summary.html", "histogram.png", "feedback.zip"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert (tmp_path / "out" / "histogram.png").read_bytes().startswith(b"\x89PNG")
    exported = nbgrader_export(f"sqlite:///{tmp_path / 'out' / 'gradebook.db'}", tmp_path)
    # nbgrader counts the bonus as extra credit: its score is the total, bonus included
    with_bonus = {s: float(r["total_with_bonus"]) for s, r in rows.items()}
    assert {s: float(row["score"]) for s, row in exported.items()} == with_bonus
    with zipfile.ZipFile(tmp_path / "out" / "feedback.zip") as bundle:
        assert bundle.namelist() == [f"{spec.stem}.html" for spec in specs]
    _, counts = report.bins(list(with_bonus.values()), 122 + 5)  # histogram.png's bars: everyone, 127 too
    assert counts == [0] * 7 + [1, 0, 0, 1, 2, 0, 1, 1, 1, 0, 0, 1, 7]
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "Class mean: 97.2 / 122 + 4.53 bonus." in summary
    assert (
        "| total | 97.20 | 113.5 | 44.5 | 122 | 122 |\n| bonus_points | 4.53 | 5 | 0 | 5 | 5 |\n"
        "| total_with_bonus | 101.73 | 118.5 | 44.5 | 127 | 122 + 5 bonus |\n"
    ) in summary
    items = read_csv(tmp_path / "out" / "item_analysis.csv")
    assert {item["students"] for item in items} == {"15"}  # dev-broken's tensor loads: it counts
    assert {item["test"].split("[")[-1].rstrip("]") for item in items if item["bonus"] == "bonus"} == BONUS_TESTS
    assert leftover_processes() == []


def assert_feedback_adds_up(feedback: str, row: dict[str, str]) -> None:
    """The header says the base total and the bonus apart, and the part table adds up to it."""
    header = f"**Total: {row['total']} / 122 + {row['bonus_points']} bonus**"
    assert header in feedback.splitlines(), feedback[:300]
    table = re.findall(r"^\| (\w+) \| ([0-9.]+) / [0-9.]+ \|$", feedback, re.MULTILINE)
    assert [part for part, _ in table] == list(PARTS)
    assert sum(float(got) for _, got in table) == pytest.approx(float(row["total"]), abs=1e-9)


def test_jobs_1_and_jobs_2_give_identical_grades(tmp_path: Path) -> None:
    for name in ("ada-correct", "cleo-buggy", "nia-quiz-wrong", "kim-flat-upload"):
        materialize(EXAMPLES / f"{name}.json", tmp_path / "class" / name)
    grade_class(tmp_path / "class", tmp_path / "one", "--jobs", "1", "--seed", "3")
    grade_class(tmp_path / "class", tmp_path / "two", "--jobs", "2", "--seed", "3")
    one, two = read_csv(tmp_path / "one" / "grades.csv"), read_csv(tmp_path / "two" / "grades.csv")
    assert without(one, "graded_at") == without(two, "graded_at")
    assert len(one) == 4 and {row["seed"] for row in one} == {"3"}
    assert (tmp_path / "one" / "item_analysis.csv").read_bytes() == (
        tmp_path / "two" / "item_analysis.csv"
    ).read_bytes()
    for name in ("ada-correct", "cleo-buggy"):
        first, second = (json.loads((tmp_path / out / name / "results.json").read_text()) for out in ("one", "two"))
        del first["execution_time"], second["execution_time"]
        assert first == second


# --- every layout ------------------------------------------------------------------------------


def folders(root: Path) -> Path:
    package(ADA, root / "alice" / "minigrad")
    package(NIA, root / "bob" / "hw1-bob" / "minigrad")  # a nested upload
    return root


def nbgrader(root: Path) -> Path:
    for student, spec in (("alice", ADA), ("bob", NIA)):
        package(spec, root / "submitted" / student / "minigrad" / "minigrad")
        (root / "submitted" / student / "minigrad" / "timestamp.txt").write_text("2026-11-20 10:00:00\n")
    return root


def gradescope(root: Path) -> Path:
    flat = package(ADA, root / "submission_1001")  # a flat upload: the files at the top
    assert (flat / "engine.py").is_file()
    package(NIA, root / "submission_1002" / "minigrad")
    (root / "submission_metadata.yml").write_text(
        "submission_1001:\n  :submitters:\n  - :name: Alice Smith\n    :sid: alice\n    :email: a@example.edu\n"
        "  :created_at: 2026-11-20 10:00:00.000000000 -08:00\n"
        "submission_1002:\n  :submitters:\n  - :name: Bob Jones\n    :sid: bob\n  :score: 0.0\n"
    )
    return root


def lms_zip(root: Path) -> Path:
    """A Canvas download: Alice's files one by one (checkpoint.py resubmitted, so renamed
    checkpoint-1.py), Bob's whole folder as a zip of his own, and a stray file."""
    alice = package(ADA, root / "build" / "alice")
    bob = package(NIA, root / "build" / "hw1" / "minigrad")
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as bundle:
        for path in sorted(bob.glob("*.py")):
            bundle.write(path, f"hw1/minigrad/{path.name}")
    archive = root / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted(alice.glob("*.py")):
            name = "checkpoint-1.py" if path.name == "checkpoint.py" else path.name
            bundle.write(path, f"alice_late_101_9001_{name}")
        bundle.writestr("bob_102_9002_hw1.zip", inner.getvalue())
        bundle.writestr("readme.txt", "not a submission")
    return archive


def classroom(root: Path) -> Path:
    for student, spec in (("alice", ADA), ("bob", NIA)):
        package(spec, root / f"hw1-minigrad-{student}" / "minigrad")
        subprocess.run(["git", "init", "-q", str(root / f"hw1-minigrad-{student}")], check=True)
    return root


LAYOUTS = {
    "folders": folders,
    "nbgrader": nbgrader,
    "gradescope": gradescope,
    "lms-zip": lms_zip,
    "classroom": classroom,
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_is_recognised_and_graded(layout: str, tmp_path: Path) -> None:
    submissions = LAYOUTS[layout](tmp_path / "upload")
    run = grade_class(submissions, tmp_path / "out", "--parts", "checkpoint", "--jobs", "2")
    assert f"layout: {layout}," in run.stdout
    assert totals(tmp_path / "out") == QUIZ
    if layout == "lms-zip":
        assert "readme.txt: the name carries no student" in run.stdout


# --- one class, graded again and again ------------------------------------------------------


def test_roster_resume_regrade_feedback_and_item_analysis(tmp_path: Path) -> None:
    classes, out = folders(tmp_path / "class"), tmp_path / "out"
    roster = tmp_path / "roster.csv"
    roster.write_text("id,first_name,last_name,email\nalice,Alice,Smith,a@example.edu\ncarol,Carol,Ng,c@example.edu\n")
    run = grade_class(classes, out, "--parts", "checkpoint", "--roster", str(roster))
    rows = {row["student"]: row for row in read_csv(out / "grades.csv")}
    assert (rows["carol"]["status"], rows["carol"]["total"], rows["carol"]["checkpoint"]) == ("no submission", "0", "0")
    assert "graded but not on the roster: bob" in run.stdout and "on the roster, no submission: carol" in run.stdout

    items = {row["test"].split("[")[-1].rstrip("]"): row for row in read_csv(out / "item_analysis.csv")}
    assert (items["Q1_DF_DA"]["pass_rate"], items["Q1_DF_DA"]["discrimination"]) == ("1.000", "")
    assert (items["Q5_DO_DN"]["pass_rate"], items["Q5_DO_DN"]["discrimination"]) == ("0.500", "1.000")

    feedback = (out / "bob" / "feedback.md").read_text() + (out / "bob" / "feedback.html").read_text()
    with zipfile.ZipFile(out / "feedback.zip") as bundle:
        feedback += bundle.read("bob.html").decode()
    assert "checkpoint Q5_DO_DN: your answer" in feedback and "got:      0.4" in feedback
    for answer in NIA_ANSWERS:
        assert answer not in feedback

    graded = {s: (out / s / "results.json").stat().st_ino for s in QUIZ}
    run = grade_class(classes, out, "--parts", "checkpoint", "--resume")
    assert "graded now: 0, unchanged and kept: 2" in run.stdout
    assert {s: (out / s / "results.json").stat().st_ino for s in QUIZ} == graded
    assert read_csv(out / "changes.csv") == []

    checkpoint = classes / "bob" / "hw1-bob" / "minigrad" / "checkpoint.py"
    checkpoint.write_text(checkpoint.read_text().replace("Q5_DO_DN = 0.4", "Q5_DO_DN = 0.64"))
    run = grade_class(classes, out, "--parts", "checkpoint", "--resume")
    assert "graded now: 1, unchanged and kept: 1" in run.stdout
    assert (out / "alice" / "results.json").stat().st_ino == graded["alice"]
    assert read_csv(out / "changes.csv") == [
        {"student": "bob", "old": "10", "new": "11", "tests_changed": "checkpoint: checkpoint Q5_DO_DN [Q5_DO_DN]"}
    ]
    assert totals(out) == {"alice": 12.0, "bob": 11.0}


def test_ctrl_c_keeps_every_finished_grade_and_resume_grades_the_rest(tmp_path: Path) -> None:
    """Ctrl-C while Jay's endless loop is being graded (one at a time: Ada, Jay, then Nia).
    Ada's finished grade stays whole, the stopped grading leaves no half-written grade, no
    process and no work folder, and --resume grades only the two who are left."""
    classes, out, parts = tmp_path / "class", tmp_path / "out", "checkpoint,mlp"
    for student, spec in (("a-ada", ADA), ("b-jay", JAY), ("c-nia", NIA)):
        materialize(spec, classes / student)
    command = [
        sys.executable,
        "-m",
        "graders.class_grading.cli",
        str(classes),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--parts",
        parts,
    ]
    with grader_tmp() as work:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "TMPDIR": str(work)},
            preexec_fn=ctrl_c_reaches_it,
        )
        deadline = time.monotonic() + 300
        while not (out / "a-ada" / "grading.json").exists():  # Ada's grade is complete
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.1)
        time.sleep(1.0)  # Jay's grading is under way
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    assert "interrupted: finished grades are kept; run again with --resume for the rest" in stderr
    status = {row["student"]: row["status"] for row in read_csv(out / "grades.csv")}
    left = "not graded (interrupted: run again with --resume)"
    assert status == {"a-ada": "graded", "b-jay": left, "c-nia": left}
    assert not (out / "b-jay" / "results.json").exists() and not (out / "c-nia").exists()
    assert leftover_processes() == []

    ada = (out / "a-ada" / "results.json").read_bytes()
    run = grade_class(classes, out, "--jobs", "1", "--parts", parts, "--resume")
    assert "graded now: 2, unchanged and kept: 1" in run.stdout
    assert (out / "a-ada" / "results.json").read_bytes() == ada
    expected = {
        student: sum(expected_scores(spec)[part] for part in parts.split(","))
        for student, spec in (("a-ada", ADA), ("b-jay", JAY), ("c-nia", NIA))
    }
    assert totals(out) == expected  # the base: the optional extensions are in bonus


def test_a_grader_failure_is_recorded_and_the_batch_goes_on(tmp_path: Path) -> None:
    """A link planted where bob's grades go makes the grader refuse to write them (exit 1):
    bob lands in errors.csv, alice is graded, nothing is written through the link, and the
    class command exits 1 saying so last: a student without a grade is never a quiet success."""
    classes, out = folders(tmp_path / "class"), tmp_path / "out"
    (tmp_path / "elsewhere").mkdir()
    out.mkdir()
    (out / "bob").symlink_to(tmp_path / "elsewhere")
    run = grade_class(classes, out, "--parts", "checkpoint", status=1)
    assert run.stderr.strip().splitlines()[-1] == (
        f"the grader itself failed, not the code: 1 without a grade (see {out / 'errors.csv'})"
    )
    errors = read_csv(out / "errors.csv")
    assert [row["student"] for row in errors] == ["bob"] and "is a symbolic link" in errors[0]["problem"]
    assert totals(out) == {"alice": 12.0}
    assert {row["student"]: row["status"] for row in read_csv(out / "grades.csv")}["bob"] == "error (see errors.csv)"
    assert os.listdir(tmp_path / "elsewhere") == []


def test_a_gradebook_that_fails_is_said_and_every_grade_file_is_written(tmp_path: Path) -> None:
    """Grades reach the gradebook while the class is graded; a database that cannot be
    opened (here a server URL whose driver is not installed) costs the gradebook only."""
    out = tmp_path / "out"
    run = grade_class(folders(tmp_path / "class"), out, "--parts", "checkpoint", "--gradebook", "nosuchdb://host/db")
    assert "gradebook: not written: NoSuchModuleError: " in run.stderr
    assert "store them again with --resume" in run.stderr
    assert totals(out) == QUIZ
    assert read_csv(out / "errors.csv") == []
    assert (out / "summary.md").stat().st_size > 0 and not (out / "gradebook.db").exists()


def test_official_uses_the_course_seed_for_everyone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    classes = folders(tmp_path / "class")
    monkeypatch.setenv(course_seed.SECRET_VARIABLE, "")
    assert cli.main([str(classes), "--out", str(tmp_path / "none"), "--official", "--parts", "checkpoint"]) == 2
    assert not (tmp_path / "none").exists()
    secret = tmp_path / "secret"
    secret.write_text("a course secret\n")
    grade_class(classes, tmp_path / "out", "--official", "--secret-file", str(secret), "--parts", "checkpoint")
    seed = str(course_seed.official_seed("a course secret"))
    assert {row["seed"] for row in read_csv(tmp_path / "out" / "grades.csv")} == {seed}
    assert totals(tmp_path / "out") == QUIZ
