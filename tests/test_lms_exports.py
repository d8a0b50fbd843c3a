"""What goes back to the LMS, read the way each platform's importer reads it: a hand-made class
(no grading) with an on-time student with the bonus, a late one whose penalty is priced, one
Canvas marked late with no time (unpriced), a roster no-show and a refused upload, whose name
is a formula and markup. Each importer's reading rules are reimplemented here from the
platform's source named beside them, and each test asserts the exact values the platform
would take.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import io
import re
import zipfile
from pathlib import Path

import pytest
from test_intake_attacks import ADA, NIA, package, under, zip_bytes
from test_intake_attacks import grade_class as run_class

from graders.class_grading import feedback, gradebook, report, tables
from graders.class_grading.exports import write_exports
from graders.class_grading.loaded_class import load
from graders.class_grading.records import StoredGrade
from graders.class_grading.standing import Roll, Standing

from nbgrader_export import nbgrader_export, store

GRADED_AT = "2026-11-28T10:00:00+00:00"
DUE = "2026-11-20T12:00:00+00:00"
HOSTILE = '=HYPERLINK("http://x.example","<b>x</b>")'  # a name Canvas or Moodle shows back


def results(value: float, mlp: float, bonus: float) -> dict:
    """A results.json with one test per part worth 2, and one bonus test worth 1."""

    def test(name: str, tags: list[str], score: float, most: float) -> dict:
        return {
            "name": name,
            "tags": tags,
            "score": score,
            "max_score": most,
            "status": "passed" if score else "failed",
        }

    tests = [test("v", ["value"], value, 2.0), test("m", ["mlp"], mlp, 2.0), test("b", ["value", "bonus"], bonus, 0.0)]
    return {"score": value + mlp + bonus, "max_score": 4.0, "output": "", "tests": tests}


def lateness(submitted: str, late: str, hours: str, penalty: str, after: str) -> dict[str, str]:
    return {
        "submitted_at": submitted,
        "due": DUE,
        "late": late,
        "hours_late": hours,
        "penalty": penalty,
        "total_after_late": after,
    }


COLUMNS = ["canvas_user_id", "canvas_attachment_id", "canvas_sis_user_id", "sortable_name", "name", "email"]
COLUMNS += ["moodle_participant_id", "submitted_at", "due", "late", "hours_late", "penalty", "total_after_late"]
KEYS = {
    "ann": {
        "canvas_user_id": "101",
        "canvas_attachment_id": "9001",
        "canvas_sis_user_id": "S-1",
        "sortable_name": "Lovelace, Ada",
        "name": "Ada Lovelace",
        "email": "ada@x.edu",
        "moodle_participant_id": "51",
        **lateness("2026-11-20T11:00:00+00:00", "", "0", "0", "4"),
    },
    "bob": {
        "canvas_user_id": "102",
        "canvas_attachment_id": "9002",
        "sortable_name": "Babbage, Charles",
        "name": "Charles Babbage",
        "email": "cb@x.edu",
        "moodle_participant_id": "52",
        **lateness("2026-11-21T18:00:00+00:00", "late", "30", "2", "2"),
    },
    "eve": {
        "canvas_user_id": "105",
        "canvas_attachment_id": "9005",
        "sortable_name": HOSTILE,
        "name": HOSTILE,
        "moodle_participant_id": "55",
        **lateness("", "late", "", "", "2"),
    },
    "cat": {"canvas_user_id": "103", "sortable_name": "Ng, Cat", "name": "Cat Ng", "moodle_participant_id": "53"},
    "dan": {
        "canvas_user_id": "104",
        "canvas_attachment_id": "9004",
        "sortable_name": "Roe, Dan",
        "name": "Dan Roe",
        "moodle_participant_id": "54",
        **lateness("2026-11-20T10:00:00+00:00", "", "0", "", ""),
    },
}
GRADED = {
    "ann": StoredGrade("ann", results(2.0, 2.0, 1.0), {"graded_at": GRADED_AT}),
    "bob": StoredGrade("bob", results(2.0, 2.0, 0.0), {"graded_at": GRADED_AT}),
    "eve": StoredGrade("eve", results(2.0, 0.0, 1.0), {"graded_at": GRADED_AT}),
}
ROLL = Roll(["ann", "bob", "dan", "eve"], GRADED, ["cat"], {"dan": "upload refused: a zip bomb"}, {}, COLUMNS, KEYS)
CLASS = load(ROLL)


def picked(rows: dict[str, dict[str, str]], *columns: str) -> dict[str, list[str]]:
    return {student: [row[column] for column in columns] for student, row in rows.items()}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("out")
    for student in GRADED:
        (folder / student).mkdir()
    tables.grades(folder, ["value", "mlp"], CLASS)
    assert write_exports(folder, CLASS) == []  # every student has the ids each export needs
    return folder


def test_grades_csv_total_is_the_base_and_no_show_is_0(out: Path) -> None:
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(newline=""))}
    assert picked(rows, "total", "max_score", "bonus_points", "total_with_bonus", "status", "total_after_late") == {
        "ann": ["4", "4", "1", "5", "graded", "4"],
        "bob": ["4", "4", "0", "4", "graded", "2"],
        "cat": ["0", "4", "0", "0", "no submission", "0"],
        "dan": ["", "", "", "", "not graded: upload refused (see errors.csv)", ""],
        "eve": ["2", "4", "1", "3", "graded", "2"],
    }
    assert rows["eve"]["name"] == "'" + HOSTILE.replace("<", "\u2039").replace(">", "\u203a")  # no formula, no markup


# --- Canvas's gradebook import (canvas-lms app/models/gradebook_importer.rb) ------------------------------------


def canvas_import(data: str, course: dict[str, str], sis: dict[str, str]) -> dict[str, dict[str, str]]:
    """GradebookImporter#parse! as far as it decides what lands where: the header's student
    columns (`row_has_student_headers?`, `update_column_count`, `last_student_info_column`), the
    assignment headers (`Assignment.title_and_id`), the "Points Possible" row (`process_pp`),
    each student found by ID, else SIS User ID (`process_student`), and each grade stripped.
    Assignments are keyed `id N` when the header names an id, else by their title."""
    rows = list(csv.reader(io.StringIO(data)))
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1]
    columns = 3
    if re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        columns += 2
    assert "Section" in header[columns - 1]
    assignments = {}
    for index, title in enumerate(header[columns:], start=columns):
        found = re.fullmatch(r"(.*)\s\((\d+)\)", title, re.DOTALL)
        assignments[index] = f"id {found[2]}" if found else title  # by id, else by exact title
    grades: dict[str, dict[str, str]] = {"Points Possible": {}}
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            grades["Points Possible"] = {assignments[i]: row[i] for i in assignments}
            continue
        user = row[1] if row[1] in course else sis.get(row[2])
        assert user is not None, f"Canvas would make a new student of {row[0]!r}"
        grades[user] = {assignments[i]: row[i].strip() for i in assignments}
    return grades


def test_canvas_gradebook_import(out: Path) -> None:
    course = {"101": "Ada", "102": "Charles", "103": "Cat", "104": "Dan", "105": "Eve"}
    got = canvas_import((out / "canvas_grades.csv").read_text(), course, {"S-1": "101"})
    assert got == {
        "Points Possible": {"minigrad": "4", "minigrad bonus": "0"},  # the bonus: a 0-point assignment, extra credit
        "101": {"minigrad": "4", "minigrad bonus": "1"},
        "102": {"minigrad": "2", "minigrad bonus": "0"},  # 4 - 2 for 30 h late
        "103": {"minigrad": "0", "minigrad bonus": "0"},  # on the roster, no submission
        "104": {"minigrad": "", "minigrad bonus": ""},  # refused: blank is no change in Canvas
        "105": {"minigrad": "2", "minigrad bonus": "1"},  # late by Canvas's mark, no time: not priced
    }
    assert "=HYPERLINK" not in (out / "canvas_grades.csv").read_text().replace("'=HYPERLINK", "")


# --- Canvas's "Upload submission comments" (app/models/assignment.rb) ----------------------------------------


def canvas_comments(names: list[str], submissions: dict[str, set[str]]) -> dict[str, str]:
    """Assignment#infer_comment_context_from_filename: the first two all-digit `_` parts of the
    base name are the user id and an attachment id, which must be one of that user's submission's
    files; a name starting `._` or ending in a `link...` part is ignored."""
    attributed = {}
    for path in names:
        name = path.rsplit("/", 1)[-1]
        parts = name.split("_")
        user, attachment = ([part for part in parts if re.fullmatch(r"\d+", part)] + [None, None])[:2]
        if parts[-1].startswith("link") or name.startswith("._"):
            attachment = None
        if user in submissions and attachment in submissions[user]:
            attributed[user] = path
    return attributed


def test_canvas_comment_files_are_attributed(out: Path) -> None:
    submissions = {"101": {"9001"}, "102": {"9002"}, "104": {"9004"}, "105": {"9005"}}
    with zipfile.ZipFile(out / "canvas_comments.zip") as bundle:
        attributed = canvas_comments(bundle.namelist(), submissions)
        assert sorted(attributed) == ["101", "102", "105"] and len(bundle.namelist()) == 3  # graded ones, all taken
        bob = bundle.read(attributed["102"]).decode()
        eve = bundle.read(attributed["105"]).decode()
    assert attributed["102"] == "bob-feedback_102_9002_feedback.html"
    assert (
        "<li>Submitted: <code>2026-11-21T18:00:00+00:00</code></li><li>Due: <code>2026-11-20T12:00:00+00:00</code></li>"
        in bob
    )
    assert "<li>Late by 30 hours.</li><li>Late penalty: -2</li><li>Total after the late penalty: 2 / 4</li>" in bob
    assert "<strong>Total: 4 / 4 + 0 bonus</strong>" in bob  # the raw total never changes
    assert "<li>Late (marked by the platform, with no hand-in time).</li><li>Late penalty: not applied" in eve


# --- Moodle's grading worksheet (mod/assign/feedback/offline/importgradeslib.php, locallib.php) --------------


def moodle_import(data: str, participants: dict[str, int], current: dict[str, tuple[float, int]], most: float) -> dict:
    """assignfeedback_offline_grade_importer::init and next, and process_import_grades: columns
    by exact header, `Participant ` taken off the Identifier, a grade skipped when blank,
    negative, above the maximum, equal to Moodle's or stale (Moodle's grade modified more than
    60 s after the row's time); feedback (a column other than the first) unless stale."""
    rows = list(csv.reader(io.StringIO(data)))
    header = rows[0]
    grade, ident, modified = header.index("Grade"), header.index("Identifier"), header.index("Last modified (grade)")
    comments = header.index("Feedback comments")
    assert comments != 0  # `!empty($details['index'])`
    taken = {}
    for row in rows[1:]:
        user = participants.get(row[ident].removeprefix("Participant "))
        if user is None:
            continue
        when = datetime.datetime.fromisoformat(row[modified]).timestamp()  # strtotime reads ISO 8601
        old, old_time = current.get(user, (None, 0))
        stale = old is not None and old_time > when + 60
        value = float(row[grade]) if row[grade] != "" else None
        skip = value is None or value < 0 or value == old or stale or value > most
        taken[user] = (None if skip else value, None if stale else row[comments])
    return taken


def test_moodle_worksheet_import(out: Path) -> None:
    participants = {"51": 1, "52": 2, "53": 3, "54": 4, "55": 5}
    earlier = int(datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc).timestamp())
    taken = moodle_import((out / "moodle_grades.csv").read_text(), participants, {2: (1.0, earlier)}, 4.0)
    assert {user: grade for user, (grade, _) in taken.items()} == {1: 4.0, 2: 2.0, 3: 0.0, 4: None, 5: 2.0}
    comments = {user: text for user, (_, text) in taken.items()}
    assert comments[1] == (
        "Total: 4 / 4 + 1 bonus \u2022 Submitted: 2026-11-20T11:00:00+00:00 \u2022 Due: 2026-11-20T12:00:00+00:00"
        " \u2022 On time: no late penalty. \u2022 The full feedback is in the attached file feedback.html."
    )
    assert "Late by 30 hours. \u2022 Late penalty: -2 \u2022 Total after the late penalty: 2 / 4 \u2022" in comments[2]
    assert comments[3] == "no submission" and comments[4] == "not graded: upload refused (see errors.csv)"
    later = int(datetime.datetime(2026, 11, 29, tzinfo=datetime.timezone.utc).timestamp())
    stale = moodle_import((out / "moodle_grades.csv").read_text(), participants, {2: (1.0, later)}, 4.0)
    assert stale[2] == (None, None)  # Moodle's grade is newer than the kit's: Moodle keeps its own


# --- Moodle's "Upload multiple feedback files in a zip" (mod/assign/feedback/file/importziplib.php) ----------


def moodle_feedback_files(names: list[str], participants: dict[str, int]) -> dict[int, str]:
    """is_valid_filename_for_import: hidden files skipped; the first path part that splits at
    `_` (at most 5 pieces, at least 4) into a known participant id and an existing plugin owns the
    file, named by what follows."""
    found = {}
    for name in names:
        if name.rsplit("/", 1)[-1].startswith((".", "~")):
            continue
        parts = name.split("/")
        while parts:
            info = parts.pop(0).split("_", 4)
            if len(info) < 4 or not info[1].isdigit() or info[1] not in participants:
                continue
            if (info[2], info[3]) not in {("assignfeedback", "file"), ("assignsubmission", "file")}:
                continue
            found[participants[info[1]]] = "/".join([info[4] if len(info) == 5 else "", *parts])
            break
    return found


def test_moodle_feedback_zip(out: Path) -> None:
    participants = {"51": 1, "52": 2, "53": 3, "54": 4, "55": 5}
    with zipfile.ZipFile(out / "moodle_feedback.zip") as bundle:
        found = moodle_feedback_files(bundle.namelist(), participants)
        page = bundle.read("eve_55_assignfeedback_file/feedback.html").decode()
    assert found == {1: "/feedback.html", 2: "/feedback.html", 5: "/feedback.html"}
    assert "<script" not in page and "<b>" not in page


# --- nbgrader's gradebook, read by the real `nbgrader export` ------------------------------------------------


def test_nbgrader_export_has_the_late_penalty_names_and_no_shows(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    messages = store(url, {s: r.results for s, r in GRADED.items()}, ["ann", "bob", "cat", "eve"], ROLL)
    assert messages == []
    rows = nbgrader_export(url, tmp_path)
    assert picked(rows, "raw_score", "late_submission_penalty", "score", "first_name", "last_name", "email") == {
        "ann": ["5.0", "0.0", "5.0", "Ada", "Lovelace", "ada@x.edu"],
        "bob": ["4.0", "2.0", "2.0", "Charles", "Babbage", "cb@x.edu"],
        "cat": ["0.0", "0.0", "0.0", "Cat", "Ng", ""],
        "eve": ["3.0", "0.0", "3.0", "", '\'=HYPERLINK("http://x.example" "‹b›x‹/b›")', ""],
    }
    assert (rows["bob"]["timestamp"], rows["bob"]["duedate"]) == ("2026-11-21 18:00:00", "2026-11-20 12:00:00")


def test_a_store_again_with_new_lateness_and_names_updates_them(tmp_path: Path) -> None:
    """A regrade keeps the grades (nothing to rewrite) but an extension or a name changed on the
    roster: the gradebook takes the new penalty, time and name, and leaves the rest."""
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    results = {s: r.results for s, r in GRADED.items()}
    assert store(url, results, ["ann", "bob", "cat", "eve"], ROLL) == []
    keys = {**KEYS, "bob": {**KEYS["bob"], **lateness("2026-11-20T18:00:00+00:00", "late", "6", "1", "3")}}
    keys["ann"] = {**KEYS["ann"], "sortable_name": "Byron, Ada", "name": "Ada Byron"}
    assert store(url, results, ["ann", "bob", "cat", "eve"], dataclasses.replace(ROLL, keys=keys)) == []
    rows = nbgrader_export(url, tmp_path)
    assert picked(rows, "raw_score", "late_submission_penalty", "score", "last_name", "timestamp") == {
        "ann": ["5.0", "0.0", "5.0", "Byron", "2026-11-20 11:00:00"],
        "bob": ["4.0", "1.0", "3.0", "Babbage", "2026-11-20 18:00:00"],
        "cat": ["0.0", "0.0", "0.0", "Ng", ""],
        "eve": ["3.0", "0.0", "3.0", '\'=HYPERLINK("http://x.example" "‹b›x‹/b›")', ""],
    }


def test_feedback_without_a_hand_in_time_claims_no_lateness() -> None:
    keys = {"submitted_at": "", "due": DUE, "late": "", "hours_late": "", "penalty": "0", "total_after_late": "4"}
    standing = Standing("zed", "graded", 4.0, 4.0, keys=keys)
    assert feedback.lateness(standing) == [
        "Submitted: time not recorded",
        "Due: 2026-11-20T12:00:00+00:00",
        "Not marked late: no late penalty.",
    ]
    assert feedback.lateness(Standing("zed", "graded", 4.0, 4.0)) == []  # a class with no times says nothing
    marked = {**keys, "late": "late"}  # Canvas's LATE, and no late policy
    assert feedback.lateness(Standing("zed", "graded", 4.0, 4.0, keys=marked))[2:] == [
        "Late (marked by the platform, with no hand-in time).",
        "No late penalty.",
    ]


# --- summary.md ---------------------------------------------------------------------------------------------


def test_summary_lists_the_late(tmp_path: Path) -> None:
    facts = {
        "layout": "lms-zip",
        "seed": 0,
        "isolation": "bwrap",
        "submissions": 4,
        "graded": 3,
        "kept": 0,
        "errors": 1,
        "missing": ["cat"],
        "warnings": [],
        "not_on_roster": [],
    }
    text = report.summary(tmp_path, facts, CLASS, [])
    assert (
        "| bob | `2026-11-21T18:00:00+00:00` | `2026-11-20T12:00:00+00:00` | 30 | 2 | 2 |\n"
        "| eve |  | `2026-11-20T12:00:00+00:00` |  |  |  |\n"  # late by the mark alone: nothing priced
    ) in text


# --- the class command, end to end, on a Canvas download with the course's gradebook as roster ---------------


def test_a_canvas_class_goes_back_to_canvas(tmp_path: Path) -> None:
    """Ada's files are marked LATE by Canvas (no time: not priced), Charles is on time, Cat is on
    the roster only; the grades land in the course's own assignment, found by its id, and each
    feedback page is attached to its student's submission."""
    ada, nia = package(ADA, tmp_path), package(NIA, tmp_path)
    download = tmp_path / "download.zip"  # names as canvas-lms lib/content_zipper.rb writes them
    download.write_bytes(
        zip_bytes(
            {
                "lovelaceada_LATE_101_9001_hw1.zip": zip_bytes(under("minigrad", ada)),
                "babbagecharles_102_9002_hw1.zip": zip_bytes(under("minigrad", nia)),
            }
        )
    )
    roster = tmp_path / "gradebook.csv"  # Canvas's gradebook export: the header its importer reads back
    roster.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Homework 3 (4711)\n    Points Possible,,,,,12\n"
        '"Lovelace, Ada",101,S1,ada,A,\n"Babbage, Charles",102,S2,cb,A,\n"Ng, Cat",103,S3,cat,A,\n'
    )
    out = tmp_path / "out"
    run_class(
        download, out, "--parts", "checkpoint", "--roster", str(roster), "--canvas-assignment", "Homework 3 (4711)"
    )
    got = canvas_import((out / "canvas_grades.csv").read_text(), {"101": "", "102": "", "103": ""}, {})
    assert got == {
        "Points Possible": {"id 4711": "12"},
        "101": {"id 4711": "12"},
        "102": {"id 4711": "10"},
        "103": {"id 4711": "0"},
    }
    with zipfile.ZipFile(out / "canvas_comments.zip") as bundle:  # each page reaches its student's submission
        attributed = canvas_comments(bundle.namelist(), {"101": {"9001"}, "102": {"9002"}})
    assert attributed == {
        "101": "lovelaceada-feedback_101_9001_feedback.html",
        "102": "babbagecharles-feedback_102_9002_feedback.html",
    }
    feedback = (out / "lovelaceada" / "feedback.md").read_text()
    assert "- Late (marked by the platform, with no hand-in time)." in feedback
    rows = nbgrader_export(f"sqlite:///{out / 'gradebook.db'}", tmp_path)
    assert picked(rows, "first_name", "last_name", "score") == {
        "lovelaceada": ["Ada", "Lovelace", "12.0"],
        "babbagecharles": ["Charles", "Babbage", "10.0"],
        "Ng-Cat": ["Cat", "Ng", "0.0"],
    }


def test_a_late_gradescope_class_carries_its_penalty_everywhere(tmp_path: Path) -> None:
    """Gradescope's own times (submission_metadata.yml): Cy hands in 44.5 h late under 10% a
    started day, so 10 / 12 loses 2 days x 1.2 = 2.4; the raw total stays 10 everywhere."""
    ada, nia = package(ADA, tmp_path), package(NIA, tmp_path)
    root = tmp_path / "export"
    for folder, files in (("submission_1", ada), ("submission_2", nia)):
        for name, data in under(f"{folder}/minigrad", files).items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
    (root / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :name: Ann Lee\n    :sid: a1\n    :email: ann@x.edu\n"
        "  :created_at: 2026-11-20 10:00:00.000000000 -08:00\n"
        "submission_2:\n  :submitters:\n  - :name: Cy Ray\n    :sid: c3\n    :email: cy@x.edu\n"
        "  :created_at: 2026-11-22 20:30:00.000000000 -08:00\n"
    )
    out = tmp_path / "out"
    run, _ = run_class(
        root, out, "--parts", "checkpoint", "--due", "2026-11-21T00:00:00-08:00", "--late-policy", "per-day:10"
    )
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open(newline=""))}
    assert picked(rows, "total", "hours_late", "penalty", "total_after_late") == {
        "a1": ["12", "0", "0", "12"],
        "c3": ["10", "44.5", "2.4", "7.6"],
    }
    page = (out / "c3" / "feedback.html").read_text()
    assert "<p><strong>Total: 10 / 12</strong></p>" in page
    assert (
        "<li>Late by 44.5 hours.</li><li>Late penalty: -2.4</li><li>Total after the late penalty: 7.6 / 12</li>" in page
    )
    assert "| c3 | `2026-11-23T04:30:00+00:00` | `2026-11-21T08:00:00+00:00` | `44.5` | `2.4` | `7.6` |" in run.stdout
    exported = nbgrader_export(f"sqlite:///{out / 'gradebook.db'}", tmp_path)
    assert picked(exported, "raw_score", "late_submission_penalty", "score", "email", "timestamp") == {
        "a1": ["12.0", "0.0", "12.0", "ann@x.edu", "2026-11-20 18:00:00"],
        "c3": ["10.0", "2.4", "7.6", "cy@x.edu", "2026-11-23 04:30:00"],  # nbgrader's times are UTC
    }


def test_lateness_the_gradebook_refuses_is_said_and_the_grades_stay(tmp_path: Path, monkeypatch) -> None:
    def refused(*args: object) -> None:
        raise ValueError("value too long for type character varying(128)")

    monkeypatch.setattr(gradebook, "_late", refused)
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    messages = store(url, {s: r.results for s, r in GRADED.items()}, None, ROLL)
    assert messages == [
        "lateness and names not stored (ValueError: value too long for type character varying(128)); the grades are"
    ]
    rows = nbgrader_export(url, tmp_path)
    assert picked(rows, "score", "late_submission_penalty", "last_name") == {
        "ann": ["5.0", "0.0", "Lovelace"],  # nbgrader commits each student: hers came before the refusal
        "bob": ["4.0", "0.0", ""],
        "eve": ["3.0", "0.0", ""],
    }


def test_a_moodle_class_goes_back_to_moodle(tmp_path: Path) -> None:
    """Moodle's "Download all submissions" (folders `{full name}_{participant id}_assignsubmission_file`,
    mod/assign/classes/downloader.php) with the assignment's grading worksheet as roster: the
    filled-in worksheet and the feedback zip, read as Moodle's importers read them, give each
    participant their grade and page; the roster-only participant gets 0."""
    ada, nia = package(ADA, tmp_path), package(NIA, tmp_path)
    download = tmp_path / "download.zip"
    download.write_bytes(
        zip_bytes(
            {
                **under("Ada Lovelace_51_assignsubmission_file/minigrad", ada),
                **under("Charles Babbage_52_assignsubmission_file/minigrad", nia),
            }
        )
    )
    roster = tmp_path / "worksheet.csv"  # the worksheet Moodle offers to download, as the roster
    roster.write_text(
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),Last modified (grade),Feedback comments\n"
        'Participant 51,Ada Lovelace,ada@x.edu,Submitted,,12.00,Yes,"Friday, 20 November 2026, 10:00 AM",-,\n'
        'Participant 52,Charles Babbage,cb@x.edu,Submitted,,12.00,Yes,"Friday, 20 November 2026, 11:00 AM",-,\n'
        "Participant 53,Cat Ng,cat@x.edu,No submission,,12.00,Yes,-,-,\n"
    )
    out = tmp_path / "out"
    run_class(download, out, "--parts", "checkpoint", "--roster", str(roster))
    taken = moodle_import((out / "moodle_grades.csv").read_text(), {"51": 1, "52": 2, "53": 3}, {}, 12.0)
    assert {user: grade for user, (grade, _) in taken.items()} == {1: 12.0, 2: 10.0, 3: 0.0}
    with zipfile.ZipFile(out / "moodle_feedback.zip") as bundle:
        assert moodle_feedback_files(bundle.namelist(), {"51": 1, "52": 2, "53": 3}) == {
            1: "/feedback.html",
            2: "/feedback.html",
        }
