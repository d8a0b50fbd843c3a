"""Rosters in the platforms' own export formats, matched to submissions by the LMS's keys.

Each fixture is written as the platform writes it: Canvas's gradebook export by
canvas-lms lib/gradebook_exporter.rb (`Student, ID, SIS User ID, SIS Login ID, Section`, a
"Manual Posting" row when grades are posted by hand, a "    Points Possible" row, `="..."`
around a name that starts with `=`); Moodle's grading worksheet (`Identifier` is
"Participant {id}", mod/assign/gradingtable.php); Gradescope's roster download; nbgrader's
own database, written with nbgrader's API.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from graders.class_grading import gradebook
from graders.uploads import roster

CANVAS_GRADEBOOK = (
    "Student,ID,SIS User ID,SIS Login ID,Section,minigrad (4242),Current Score\n"
    ",,,,,Manual Posting,\n"
    "    Points Possible,,,,,122.00,(read only)\n"
    '"Smith, Jane",101,S-1,jsmith,Section A,,\n'
    '"Smith, Jane",102,S-2,jsmith2,Section B,,\n'
    '"=""=cmd, Eve""",103,S-3,eve,Section A,,\n'
    '"Ng, Carol",104,,carol,Section A,,\n'
)


def test_canvas_gradebook_rows_are_students_keyed_by_user_id(tmp_path: Path) -> None:
    path = tmp_path / "gradebook.csv"
    path.write_text(CANVAS_GRADEBOOK)
    entries = roster.read(path)
    assert [e.keys["canvas_user_id"] for e in entries] == ["101", "102", "103", "104"]
    assert entries[0].keys == {
        "canvas_user_id": "101",
        "canvas_sis_user_id": "S-1",
        "canvas_sis_login_id": "jsmith",
        "canvas_section": "Section A",
        "sortable_name": "Smith, Jane",
        "name": "Jane Smith",
    }
    assert entries[2].name == "=cmd, Eve"  # Canvas's formula guard (="...") taken off
    # the download: both Jane Smiths (ids from their user ids), and one who is not on the roster
    submissions = {
        "smithjane-101": {"canvas_user_id": "101", "name": "smithjane"},
        "smithjane-102": {"canvas_user_id": "102", "name": "smithjane"},
        "zed": {"canvas_user_id": "999", "name": "zed"},
    }
    found, missing = roster.match(entries, submissions)
    assert sorted(found) == ["smithjane-101", "smithjane-102"]
    assert found["smithjane-102"]["canvas_sis_user_id"] == "S-2" and found["smithjane-102"]["name"] == "Jane Smith"
    assert sorted(missing) == ["Ng-Carol", "cmd-Eve"]  # ids never start a formula
    assert missing["Ng-Carol"]["canvas_user_id"] == "104"


def test_two_roster_students_with_one_name_and_no_submission_stay_two(tmp_path: Path) -> None:
    path = tmp_path / "gradebook.csv"
    path.write_text(CANVAS_GRADEBOOK)
    found, missing = roster.match(roster.read(path), {})
    assert found == {} and sorted(missing) == ["Ng-Carol", "Smith-Jane-101", "Smith-Jane-102", "cmd-Eve"]


def test_moodle_worksheet_and_gradescope_roster(tmp_path: Path) -> None:
    worksheet = tmp_path / "Grades-CS101-minigrad.csv"
    worksheet.write_text(
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),Last modified (grade),Feedback comments\n"
        "Participant 7001,Jane Smith,jane@x.edu,Submitted for grading,,122.00,Yes,"
        '"Friday, 20 November 2026, 1:05 PM",-,\n'
        "Participant 7002,Jane Smith,jane2@x.edu,No submission,,122.00,Yes,-,-,\n"
    )
    entries = roster.read(worksheet)
    assert [e.keys for e in entries] == [
        {"moodle_participant_id": "7001", "name": "Jane Smith", "email": "jane@x.edu"},
        {"moodle_participant_id": "7002", "name": "Jane Smith", "email": "jane2@x.edu"},
    ]
    found, missing = roster.match(entries, {"Jane-Smith-7001": {"moodle_participant_id": "7001"}})
    assert list(found) == ["Jane-Smith-7001"] and list(missing) == ["Jane-Smith-7002"]

    gradescope = tmp_path / "roster.csv"
    gradescope.write_text(
        "First Name,Last Name,SID,Email,Role,Sections\n"
        "Ann,Lee,s1,ann@x.edu,Student,\nTia,Roe,,tia@x.edu,Student,\nPat,Kay,,pat@x.edu,TA,\n"
    )
    entries = roster.read(gradescope)
    assert [e.keys for e in entries] == [
        {"sid": "s1", "email": "ann@x.edu", "name": "Ann Lee"},
        {"email": "tia@x.edu", "name": "Tia Roe"},
    ]
    found, missing = roster.match(entries, {"s1": {"sid": "s1"}, "tia-x-edu": {"email": "TIA@x.edu", "sid": ""}})
    assert sorted(found) == ["s1", "tia-x-edu"] and missing == {}


def test_nbgrader_database_is_a_roster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", gradebook.with_scripts_on_path(os.environ)["PATH"])  # nbgrader runs `alembic` once
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as book:
        book.add_student("jsmith", first_name="Jane", last_name="Smith", email="j@x.edu", lms_user_id="101")
        book.add_student("cng")
    entries = roster.read(tmp_path / "gradebook.db")
    assert [e.keys for e in entries] == [
        {"nbgrader_id": "cng"},
        {"nbgrader_id": "jsmith", "name": "Jane Smith", "email": "j@x.edu", "canvas_user_id": "101"},
    ]
    found, missing = roster.match(entries, {"jsmith": {"nbgrader_id": "jsmith"}})
    assert found == {
        "jsmith": {"nbgrader_id": "jsmith", "name": "Jane Smith", "email": "j@x.edu", "canvas_user_id": "101"}
    }
    assert missing == {"cng": {"nbgrader_id": "cng"}}


def test_a_key_two_submissions_share_matches_neither(tmp_path: Path) -> None:
    entries = [roster.Entry("Ann", {"email": "ann@x.edu"})]
    submissions = {"a1": {"email": "ann@x.edu"}, "a2": {"email": "ann@x.edu"}}
    assert roster.match(entries, submissions) == ({}, {"Ann": {"email": "ann@x.edu"}})
