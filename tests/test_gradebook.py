"""The class's grades in nbgrader's real gradebook, read back by the real `nbgrader export`.

Three real gradings (correct, buggy, broken) go into a gradebook with a roster; nbgrader's
own CSV must give each student the kit's total and maximum, a roster student with no
submission 0, and a graded student missing from the roster must be kept and reported.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from course.submissions import expected_scores, materialize
from graders.class_grading.gradebook import ASSIGNMENT, Writer, with_scripts_on_path
from graders.course_facts.parts import POINTS

from grading import ROOT, bonus_score, grade, part_scores
from nbgrader_export import nbgrader_export, store

SPECS = ROOT / "tests" / "submissions"
STUDENTS = {"ada": "correct", "ben": "bug-tanh-derivative", "cy": "broken-syntax-error"}
TOTALS = {student: sum(expected_scores(SPECS / f"{spec}.json").values()) for student, spec in STUDENTS.items()}


@pytest.fixture(scope="module")
def class_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    work = tmp_path_factory.mktemp("class")
    results = {}
    for student, spec in STUDENTS.items():
        folder = materialize(SPECS / f"{spec}.json", work / student)
        results[student] = grade(folder, work / f"{student}-out")[1]
    return results


@pytest.fixture(scope="module")
def empty_gradebook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new nbgrader database, made once (in a folder that does not exist yet, as
    build/nbgrader/ on a fresh clone): nbgrader stamps each new one with a slow
    `alembic heads` run, so every test starts from a copy of this file."""
    path = tmp_path_factory.mktemp("template") / "build" / "nbgrader" / "gradebook.db"
    assert store(f"sqlite:///{path}", {}, []) == []
    return path


def gradebook_url(empty_gradebook: Path, folder: Path) -> str:
    shutil.copyfile(empty_gradebook, folder / "gradebook.db")
    return f"sqlite:///{folder / 'gradebook.db'}"


def test_nbgrader_export_gives_the_kits_totals(
    class_results: dict[str, dict], empty_gradebook: Path, tmp_path: Path
) -> None:
    assert {s: r["score"] - bonus_score(r) for s, r in class_results.items()} == TOTALS
    url = gradebook_url(empty_gradebook, tmp_path)
    roster = ["ada", "ben", "dee"]  # cy is graded but not on the roster; dee never submitted
    assert store(url, class_results, roster) == ["cy: not on the roster; graded and added to the gradebook anyway"]
    # a regrade replaces the grades, it does not add to them
    assert store(url, class_results, roster) == ["cy: not on the roster; graded and added to the gradebook anyway"]
    rows = nbgrader_export(url, tmp_path)
    assert {s: float(row["score"]) for s, row in rows.items()} == {
        **{s: r["score"] for s, r in class_results.items()},
        "dee": 0.0,
    }
    assert {float(row["max_score"]) for row in rows.values()} == {sum(POINTS.values())}
    assert {row["assignment"] for row in rows.values()} == {ASSIGNMENT}
    with Gradebook(url) as gradebook:
        for student, results in class_results.items():
            submission = gradebook.find_submission(ASSIGNMENT, student)
            assert {nb.name: nb.score for nb in submission.notebooks} == part_scores(results, bonus=True)
            assert {nb.name: nb.max_score for nb in submission.notebooks} == POINTS
        assert len(gradebook.find_assignment(ASSIGNMENT).notebooks[0].grade_cells) > 1


def test_a_bonus_test_is_extra_credit(class_results: dict[str, dict], empty_gradebook: Path, tmp_path: Path) -> None:
    """A bonus test (max_score 0, tag `bonus`, as results.json marks one) adds to nbgrader's
    score as extra credit and leaves the maximum alone, as the kit counts it. (The
    submission's score and the assignment's maximum are what `nbgrader export` prints.)"""
    results = json.loads(json.dumps(class_results["ada"]))
    results["tests"].append(
        {"name": "value: sin [bonus]", "score": 1.5, "max_score": 0.0, "status": "passed", "tags": ["value", "bonus"]}
    )
    results["score"] += 1.5
    url = gradebook_url(empty_gradebook, tmp_path)
    assert store(url, {"ada": results}, None) == []
    with Gradebook(url) as gradebook:
        submission = gradebook.find_submission(ASSIGNMENT, "ada")
        assert (submission.score, submission.assignment.max_score) == (128.5, 122) == (results["score"], 122)
        assert {nb.name: nb.score for nb in submission.notebooks}["value"] == 28 + 3 + 1.5  # sin, cos, sqrt too


def test_results_that_are_not_the_kits_format_get_a_clear_message_and_the_rest_go_in(
    class_results: dict[str, dict], empty_gradebook: Path, tmp_path: Path
) -> None:
    url = gradebook_url(empty_gradebook, tmp_path)
    broken = {"eve": {"score": 3}, "fay": {"tests": [{"name": "value: a + b", "score": 1}]}}
    clashing = json.loads(json.dumps(class_results["ben"]))
    clashing["tests"][0]["max_score"] += 1  # a test worth other points than Ada's same test
    assert store(url, {"ada": class_results["ada"], "ben": clashing, **broken}, None) == [
        f"ben: tests whose part or points differ from others' (['{clashing['tests'][0]['name']}']); "
        "not in the gradebook",
        "eve: results.json has no tests[] to put in the gradebook; not in the gradebook",
        "fay: test 1 lacks a name, tags, score or max_score ('tags'); not in the gradebook",
    ]
    rows = nbgrader_export(url, tmp_path)
    assert {s: float(row["score"]) for s, row in rows.items()} == {"ada": class_results["ada"]["score"]}


def test_a_student_stored_before_new_tests_appear_gets_a_grade_in_every_cell(
    class_results: dict[str, dict], empty_gradebook: Path, tmp_path: Path
) -> None:
    """Grades are stored as they arrive: when a later student brings tests the gradebook has
    no cell for yet, the earlier students are stored again, so each has a grade per cell."""
    ben = {**class_results["ben"], "tests": [t for t in class_results["ben"]["tests"] if t["tags"] == ["value"]]}
    url = gradebook_url(empty_gradebook, tmp_path)
    lacking = len(class_results["ada"]["tests"]) - len(ben["tests"])
    assert store(url, {"a-ben": ben, "b-ada": class_results["ada"]}, None) == [
        f"a-ben: {lacking} tests other students have are not in these results; they count 0"
    ]
    with Gradebook(url) as gradebook:
        cells = sum(len(nb.grade_cells) for nb in gradebook.find_assignment(ASSIGNMENT).notebooks)
        for student in ("a-ben", "b-ada"):
            submission = gradebook.find_submission(ASSIGNMENT, student)
            assert sum(len(nb.grades) for nb in submission.notebooks) == cells == len(class_results["ada"]["tests"])
        assert gradebook.find_submission(ASSIGNMENT, "a-ben").score == part_scores(ben)["value"]


def test_a_student_graded_on_fewer_tests_is_reported(
    class_results: dict[str, dict], empty_gradebook: Path, tmp_path: Path
) -> None:
    """Ben graded with `--parts value` only: his other tests count 0, and the instructor hears."""
    ben = {**class_results["ben"], "tests": [t for t in class_results["ben"]["tests"] if t["tags"] == ["value"]]}
    lacking = len(class_results["ada"]["tests"]) - len(ben["tests"])
    url = gradebook_url(empty_gradebook, tmp_path)
    messages = store(url, {"ada": class_results["ada"], "ben": ben}, ["ada", "ben"])
    assert messages == [f"ben: {lacking} tests other students have are not in these results; they count 0"]
    with Gradebook(url) as gradebook:
        assert (
            gradebook.find_submission(ASSIGNMENT, "ben").score
            == part_scores(ben)["value"]
            == expected_scores(SPECS / f"{STUDENTS['ben']}.json")["value"]
        )
    # stored again alone, Ben's results lack the cells Ada's made: nbgrader still counts them
    stale = sorted(f"{t['tags'][0]}/{t['name']}" for t in class_results["ada"]["tests"] if t["tags"] != ["value"])
    assert store(url, {"ben": ben}, None) == [
        f"the gradebook also has {lacking} tests these results lack (an earlier suite?): {stale[:3]}"
    ]


def test_a_store_again_rewrites_only_the_grades_that_changed(
    class_results: dict[str, dict], empty_gradebook: Path, tmp_path: Path
) -> None:
    """What `--resume` does: the same grades stored again leave nbgrader's records as they were
    (its submission ids, made new by every rewrite, stay), and a grade that changed is rewritten
    and read back by `nbgrader export`."""
    url = gradebook_url(empty_gradebook, tmp_path)
    assert store(url, class_results, None) == []
    before, exported = submission_ids(url), nbgrader_export(url, tmp_path)
    assert store(url, class_results, None) == []
    assert submission_ids(url) == before and nbgrader_export(url, tmp_path) == exported
    regraded = json.loads(json.dumps(class_results["ben"]))
    failed = next(test for test in regraded["tests"] if test["status"] == "failed" and test["max_score"] > 0)
    failed.update(status="passed", score=failed["max_score"])
    regraded["score"] += failed["max_score"]
    assert store(url, {**class_results, "ben": regraded}, None) == []
    after = submission_ids(url)
    assert after["ada"] == before["ada"] and after["cy"] == before["cy"] and after["ben"] != before["ben"]
    rows = nbgrader_export(url, tmp_path)
    assert float(rows["ben"]["raw_score"]) == regraded["score"] == class_results["ben"]["score"] + failed["max_score"]


def submission_ids(url: str) -> dict[str, str]:
    with Gradebook(url) as gradebook:
        return {s.student_id: s.id for s in gradebook.find_assignment(ASSIGNMENT).submissions}


def test_a_new_gradebook_is_stamped_with_the_revision_nbgrader_itself_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kit reads the head of nbgrader's migrations in process; nbgrader's own way (an
    `alembic heads` subprocess) must find the same, or `nbgrader db upgrade` would later
    migrate a gradebook from the wrong revision."""
    import nbgrader.api

    writer = Writer(f"sqlite:///{tmp_path / 'gradebook.db'}", None)
    assert writer.close() == []
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        stamped = db.execute("SELECT version_num FROM alembic_version").fetchall()
    monkeypatch.setenv("PATH", with_scripts_on_path(os.environ)["PATH"])
    assert stamped == [(nbgrader.api.get_alembic_version(),)]
