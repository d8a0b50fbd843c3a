"""Downloads as the platforms really deliver them: who, what and when come in from Canvas,
Gradescope, Moodle and nbgrader, built by each platform's own rules (course/platform_class.py
cites them: canvas-lms lib/content_zipper.rb and lib/gradebook_exporter.rb, Gradescope's export,
Moodle's mod/assign/classes/downloader.php and gradingtable.php, nbgrader's exchange).

The class holds loose files, a zip, a nested tar, loose files beside a zip of the rest, a file
Canvas renamed when it was uploaded again, a Gradescope group, four students named Jane Smith,
a name with `_`, and a late student. The collection tests read each delivery without grading;
one test grades all four (`--parts checkpoint`) and needs the same grades through each.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from course import platform_class
from graders.uploads import intake, layouts, times

from grading import grader_tmp, needs_isolation

UTC = datetime.timezone.utc
ON_TIME = datetime.datetime(2026, 11, 19, 11, 0, tzinfo=UTC)  # 30 h before the due
LATE = datetime.datetime(2026, 11, 21, 18, 30, tzinfo=UTC)  # student 7: 25.5 h after it
QUIZ = {1: 10, 2: 11, 3: 12, 4: 12, 5: 12, 6: 10, 7: 11, 8: 12, 9: 12, 10: 12, 11: 10, 12: 11}  # of 12, by student
CANVAS_IDS = [  # the sortable name as Canvas writes it; names alike get the user id
    "chenyuki",
    "garcíamateo",
    "iyeromar",
    "mensahli",
    "o-brienravi",
    "okaforsofia",
    "smithines",
    "smithjane-1004",
    "smithjane-1005",
    "smithjane-1011",
    "smithjane-1012",
    "tanakachloé",
]


@pytest.fixture(scope="module")
def delivered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("platforms")
    platform_class.build(folder, 12)
    return folder


def collect(path: Path, tmp_path: Path) -> tuple[str, dict[str, layouts.Submission], list[str]]:
    (tmp_path / "staging").mkdir(parents=True, exist_ok=True)
    layout, submissions, warnings = layouts.collect(path, "auto", tmp_path / "staging", tmp_path / "out")
    return layout, {s.student: s for s in submissions}, warnings


def zipped(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as bundle:
        for name, text in members.items():
            bundle.writestr(name, text)
    return path


def test_canvas_every_file_of_a_user_is_one_submission(delivered: Path, tmp_path: Path) -> None:
    layout, found, warnings = collect(delivered / "canvas" / "submissions.zip", tmp_path)
    assert layout == "lms-zip" and sorted(found) == CANVAS_IDS
    assert found["smithjane-1004"].keys == {
        "canvas_user_id": "1004",
        "canvas_attachment_id": "50016",
        "name": "smithjane",
    }
    assert found["o-brienravi"].late and not found["chenyuki"].late  # Canvas's LATE, and no time
    assert {s.submitted_at for s in found.values()} == {None}
    located = {s: intake.locate(found[s].folder) for s in ("smithjane-1004", "okaforsofia", "mensahli")}
    assert located["smithjane-1004"].found and located["smithjane-1004"].location == ""  # 12 files one by one
    assert (found["smithjane-1004"].folder / "checkpoint.py").is_file()  # checkpoint-1.py: Canvas's renaming undone
    assert located["okaforsofia"].location == "minigrad"  # engine.py beside rest.zip: combined
    assert located["mensahli"].location == "hw1.tar.gz/hw1/src/minigrad"
    assert "okaforsofia_1003_*: one submission in several uploads; combined into minigrad/: the loose files, " in (
        "\n".join(warnings)
    )
    recorded, unread = times.read(delivered / "canvas" / "submissions.json", UTC)
    timed = {s.student: s for s in times.apply(list(found.values()), recorded)}
    assert unread == [] and timed["o-brienravi"].submitted_at == LATE and timed["chenyuki"].submitted_at == ON_TIME


def test_gradescope_export_as_its_zip_as_its_folder_and_as_its_parent(delivered: Path, tmp_path: Path) -> None:
    layout, found, _ = collect(delivered / "gradescope" / "assignment_4242_export.zip", tmp_path / "zip")
    assert layout == "gradescope" and sorted(found) == [f"s{n:03d}" for n in range(1, 13)]
    assert found["s010"].graded_as == "s009" and found["s009"].keys["submitters"] == "s009; s010"  # the group
    assert found["s007"].submitted_at == LATE and found["s001"].submitted_at == ON_TIME  # :created_at:, -08:00
    assert intake.locate(found["s003"].folder).location == "minigrad"  # combined, as through Canvas
    with zipfile.ZipFile(delivered / "gradescope" / "assignment_4242_export.zip") as bundle:
        bundle.extractall(tmp_path / "parent")
    for given in (tmp_path / "parent", tmp_path / "parent" / "assignment_4242_export"):
        layout, again, _ = collect(given, tmp_path / given.name)
        assert layout == "gradescope" and sorted(again) == sorted(found)


def test_moodle_download_and_worksheet(delivered: Path, tmp_path: Path) -> None:
    layout, found, _ = collect(delivered / "moodle" / "CS101-minigrad-42.zip", tmp_path)
    assert layout == "moodle"
    assert sorted(found)[:6] == [
        "Chloé-Tanaka",
        "Ines-Smith",
        "Jane-Smith-7004",
        "Jane-Smith-7005",
        "Jane-Smith-7011",
        "Jane-Smith-7012",
    ]
    assert found["Ravi-O-Brien"].keys == {"moodle_participant_id": "7007", "name": "Ravi O Brien"}  # _ became a space
    recorded, unread = times.read(delivered / "moodle" / "worksheet.csv", UTC)
    assert unread == [] and recorded[("moodle_participant_id", "7007")] == LATE
    zone = datetime.timezone(datetime.timedelta(hours=1))  # the teacher's zone, which the worksheet does not say
    assert times.read(delivered / "moodle" / "worksheet.csv", zone)[0][
        ("moodle_participant_id", "7007")
    ] == LATE.replace(tzinfo=zone)


def test_moodle_flat_blind_and_unpacked_downloads(tmp_path: Path) -> None:
    """Moodle before 3.1 (or "in folders" off) writes one folder of prefixed files; blind marking
    writes `Participant_{id}`; an online text is no code; the download unpacked is a layout too."""
    archive = zipped(
        tmp_path / "flat.zip",
        {
            "Participant_7001_assignsubmission_file_engine.py": "x = 1\n",
            "Participant_7001_assignsubmission_onlinetext_onlinetext.html": "<p>hi</p>",
            "Participant_7002_assignsubmission_file_/hw/engine.py": "y = 2\n",
            "readme.txt": "not a participant",
        },
    )
    layout, found, warnings = collect(archive, tmp_path)
    assert layout == "moodle" and sorted(found) == ["Participant-7001", "Participant-7002"]
    assert (found["Participant-7002"].folder / "hw" / "engine.py").read_text() == "y = 2\n"
    assert any("onlinetext.html: a assignsubmission_onlinetext entry, not files; left out" in w for w in warnings)
    assert any(w.startswith("readme.txt: the name carries no student") for w in warnings)
    unpacked = tmp_path / "unpacked"
    (unpacked / "Ann Lee_7003_assignsubmission_file" / "minigrad").mkdir(parents=True)
    (unpacked / "Ann Lee_7003_assignsubmission_file" / "minigrad" / "engine.py").write_text("z = 3\n")
    layout, found, _ = collect(unpacked, tmp_path / "again")
    assert layout == "moodle" and found["Ann-Lee"].keys == {"moodle_participant_id": "7003", "name": "Ann Lee"}


def test_canvas_anonymous_downloads_text_entries_and_names_with_underscores(tmp_path: Path) -> None:
    """content_zipper.rb: `anon_{anonymous id}` replaces name and user id when grading is
    anonymous, LATE then comes first; a text entry is `{prefix}_text.html`; the sortable name
    keeps `_` (sanitize_file_name keeps word characters)."""
    archive = zipped(
        tmp_path / "submissions.zip",
        {
            "anon_aB3dE_501_engine.py": "a = 1\n",
            "LATE_anon_Zx9Qw_502_engine.py": "b = 2\n",
            "o_brienpat_1007_503_engine.py": "c = 3\n",
            "o_brienpat_1007_text.html": "<p>see attached</p>",
        },
    )
    layout, found, warnings = collect(archive, tmp_path)
    assert layout == "lms-zip" and sorted(found) == ["anon-Zx9Qw", "anon-aB3dE", "o-brienpat"]
    assert found["anon-Zx9Qw"].late and not found["anon-aB3dE"].late
    assert found["anon-aB3dE"].keys == {"canvas_anonymous_id": "aB3dE", "canvas_attachment_id": "501"}
    assert found["o-brienpat"].keys == {"canvas_user_id": "1007", "canvas_attachment_id": "503", "name": "o_brienpat"}
    assert any("o_brienpat_1007_text.html: a text entry, not files; left out" in w for w in warnings)


def test_nbgrader_submitted_with_its_timestamps(delivered: Path, tmp_path: Path) -> None:
    layout, found, _ = collect(delivered / "nbgrader", tmp_path)
    assert layout == "nbgrader" and sorted(found) == [f"s{n:03d}" for n in range(1, 13)]
    assert found["s007"].submitted_at == LATE and found["s001"].submitted_at == ON_TIME
    assert (delivered / "nbgrader" / "submitted" / "s007" / "minigrad" / "timestamp.txt").read_text() == (
        "2026-11-21 18:30:00.000000 UTC"  # nbgrader's "%Y-%m-%d %H:%M:%S.%f %Z"
    )


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (
            "canvas",
            "read as lms-zip, it holds no student's submission; it holds: notes.txt: the name carries no student",
        ),
        ("gradescope", "read as gradescope, it holds no student's submission; it holds: submission_metadata.yml"),
        ("folder", "read as folders, it holds no student's submission; it holds: notes.txt"),
        ("reports", "read as folders, 2 uploads and none holds code (.py or .ipynb); ann: report.pdf; bo: nothing"),
    ],
)
def test_a_download_of_nobody_stops_with_what_it_holds(make: str, said: str, tmp_path: Path) -> None:
    if make == "canvas":
        given = zipped(tmp_path / "download.zip", {"notes.txt": "hello"})
    elif make == "gradescope":
        given = tmp_path / "export"
        given.mkdir()
        (given / "submission_metadata.yml").write_text("{}\n")
    elif make == "folder":
        given = tmp_path / "class"
        given.mkdir()
        (given / "notes.txt").write_text("hello")
    else:
        given = tmp_path / "reports"
        (given / "ann").mkdir(parents=True)
        (given / "bo").mkdir()
        (given / "ann" / "report.pdf").write_bytes(b"%PDF-1.4\n")
    with pytest.raises(SystemExit) as stopped:
        collect(given, tmp_path)
    assert said in str(stopped.value)


# --- one class through the four platforms -------------------------------------------------------


def minigrad_class(submissions: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    """The class command on the quiz alone, in a fresh process whose temporary folder must end up empty."""
    with grader_tmp() as work:
        run = subprocess.run(
            [sys.executable, "-m", "graders.class_grading.cli", str(submissions), "--out", str(out)]
            + ["--parts", "checkpoint", *options],
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "TMPDIR": str(work)},
        )
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def rows_by_student(out: Path, key: str, offset: int) -> dict[int, dict[str, str]]:
    with (out / "grades.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    return {int(row[key].lstrip("s")) - offset: row for row in rows}


@needs_isolation
def test_identical_files_give_identical_grades_through_every_platform(delivered: Path, tmp_path: Path) -> None:
    policy = ("--due", platform_class.DUE.isoformat(), "--late-policy", "per-day:10", "--late-cap", "50")
    runs = {
        "canvas": ("canvas/submissions.zip", "--roster", "canvas/gradebook.csv", "--times", "canvas/submissions.json"),
        "gradescope": ("gradescope/assignment_4242_export.zip", "--roster", "gradescope/roster.csv"),
        "moodle": (
            "moodle/CS101-minigrad-42.zip",
            "--roster",
            "moodle/worksheet.csv",
            "--times",
            "moodle/worksheet.csv",
        ),
        "nbgrader": ("nbgrader", "--roster", "nbgrader/students.csv"),
    }
    for platform, (given, *flags) in runs.items():
        options = [flag if flag.startswith("--") else str(delivered / flag) for flag in flags]
        run = minigrad_class(delivered / given, tmp_path / platform, "--jobs", "2", *policy, *options)
        assert "not on the roster" not in run.stdout and "no submission" not in run.stdout
    tables = {
        "canvas": rows_by_student(tmp_path / "canvas", "canvas_user_id", 1000),
        "gradescope": rows_by_student(tmp_path / "gradescope", "sid", 0),
        "moodle": rows_by_student(tmp_path / "moodle", "moodle_participant_id", 7000),
        "nbgrader": rows_by_student(tmp_path / "nbgrader", "nbgrader_id", 0),
    }
    compared = ("status", "total", "late", "submitted_at", "hours_late", "penalty", "total_after_late")
    seen = {
        platform: {n: tuple(row[c] for c in compared) for n, row in rows.items()} for platform, rows in tables.items()
    }
    assert seen["canvas"] == seen["gradescope"] == seen["moodle"] == seen["nbgrader"]
    assert {n: float(row["total"]) for n, row in tables["canvas"].items()} == QUIZ
    late = {
        n: (row["hours_late"], row["penalty"], row["total_after_late"])
        for n, row in tables["moodle"].items()
        if row["late"]
    }
    assert late == {7: ("25.5", "2.4", "8.6")}  # two started days at 10% of 12
    assert tables["canvas"][4]["name"] == "Jane Smith" and tables["canvas"][4]["canvas_sis_user_id"] == "S004"
    assert tables["gradescope"][10]["submitters"] == "s009; s010"


@needs_isolation
def test_a_finished_grade_never_moves_to_another_key(tmp_path: Path) -> None:
    """Two students whose names reduce to one id (`josé` written composed and decomposed) are
    told apart by their Canvas user ids, whatever else is in the download. When the id `josé`
    later names the other student, with the very same files, --resume grades them: the grade
    stored under `josé` was user 102's and stays theirs."""
    ada = platform_class.files_of(platform_class.Student(1, "", "", "ada-correct.json", "loose", 0), tmp_path / "specs")
    composed, decomposed = "jos\u00e9", "jose\u0301"
    downloads = {"first": [(decomposed, "102")], "both": [(composed, "101"), (decomposed, "102")]}
    downloads["second"] = [(composed, "101")]
    out, seen, said = tmp_path / "out", {}, {}
    for step, students in downloads.items():
        archive = tmp_path / f"{step}.zip"
        with zipfile.ZipFile(archive, "w") as bundle:
            for name, user in students:
                for n, (file, data) in enumerate(sorted(ada.items())):
                    bundle.writestr(f"{name}_{user}_{int(user) * 100 + n}_{file}", data)
        run = minigrad_class(archive, out, "--jobs", "1", *(["--resume"] if step != "first" else []))
        said[step] = run.stdout
        with (out / "grades.csv").open(newline="", encoding="utf-8") as file:
            seen[step] = {row["student"]: (row["canvas_user_id"], row["total"]) for row in csv.DictReader(file)}
    assert seen == {
        "first": {"josé": ("102", "12")},
        "both": {"josé-101": ("101", "12"), "josé-102": ("102", "12")},
        "second": {"josé": ("101", "12")},
    }
    assert "graded now: 1, unchanged and kept: 0" in said["second"]  # not 102's grade, kept for 101
    assert json.loads((out / "josé" / "grading.json").read_text())["keys"]["canvas_user_id"] == "101"


def test_a_gradescope_submission_that_breaks_a_rule_is_its_own_refusal(tmp_path: Path) -> None:
    """Each submission of an export zip is unpacked under its own budget: a path out of its
    folder refuses that submission, with the reason, and the others are read."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as bundle:
        bundle.writestr("../../escaped.py", "x = 1\n")
    export = tmp_path / "export.zip"
    with zipfile.ZipFile(export, "w") as bundle:
        bundle.writestr(
            "assignment_1_export/submission_metadata.yml",
            "submission_1:\n  :submitters:\n  - :name: Ann\n    :sid: a1\n"
            "submission_2:\n  :submitters:\n  - :name: Bo\n    :sid: b2\n",
        )
        bundle.writestr("assignment_1_export/submission_1/engine.py", "y = 2\n")
        bundle.writestr("assignment_1_export/submission_2/hw.zip", inner.getvalue())
    layout, found, _ = collect(export, tmp_path)
    assert layout == "gradescope" and (found["a1"].folder / "engine.py").read_text() == "y = 2\n"
    assert found["b2"].folder is None
    assert found["b2"].refused == "hw.zip: a member has a path out of its folder (..): '../../escaped.py'"
    assert not (tmp_path / "escaped.py").exists()


@needs_isolation
def test_file_times_extensions_and_grace_on_the_command_line(tmp_path: Path) -> None:
    """Folders carry no platform time: no lateness unless --file-times, which is said on the run;
    an extension (by the folder's key) moves one student's due, the grace forgives an hour, and
    per-hour:5 takes 5% of 12 for each started hour after it (bo: 1.5 h, so 2 hours, 1.2)."""
    for student, when in (("ann", "2026-11-20T17:30:00+00:00"), ("bo", "2026-11-21T21:30:00+00:00")):
        files = platform_class.files_of(platform_class.Student(1, "", "", "ada-correct.json", "loose", 0), tmp_path)
        (tmp_path / "class" / student / "minigrad").mkdir(parents=True)
        for name, data in files.items():
            (tmp_path / "class" / student / "minigrad" / name).write_bytes(data)
            moment = datetime.datetime.fromisoformat(when).timestamp()
            os.utime(tmp_path / "class" / student / "minigrad" / name, (moment, moment))
    (tmp_path / "extensions.csv").write_text("key,due\nbo,2026-11-21T19:00:00Z\n")
    late = ("--due", "2026-11-20T17:00:00Z", "--grace", "1", "--late-policy", "per-hour:5")
    for extra, out in (((), "plain"), (("--file-times", "--extensions", str(tmp_path / "extensions.csv")), "timed")):
        run = minigrad_class(tmp_path / "class", tmp_path / out, "--jobs", "1", *late, *extra)
        with (tmp_path / out / "grades.csv").open(newline="", encoding="utf-8") as file:
            rows = {row["student"]: row for row in csv.DictReader(file)}
        seen = {
            s: (r["submitted_at"], r["due"], r["late"], r["penalty"], r["total_after_late"]) for s, r in rows.items()
        }
        if out == "plain":
            assert "--file-times" not in run.stdout
            assert seen == {
                "ann": ("", "2026-11-20T17:00:00+00:00", "", "0", "12"),
                "bo": ("", "2026-11-20T17:00:00+00:00", "", "0", "12"),
            }
        else:
            assert "--file-times: 2 hand-in times are files' modification times" in run.stdout
            assert seen == {
                "ann": ("2026-11-20T17:30:00+00:00", "2026-11-20T17:00:00+00:00", "", "0", "12"),  # in the grace
                "bo": ("2026-11-21T21:30:00+00:00", "2026-11-21T19:00:00+00:00", "late", "1.2", "10.8"),  # own due
            }


@needs_isolation
def test_canvas_late_without_times_is_late_by_an_unknown_amount(delivered: Path, tmp_path: Path) -> None:
    """Canvas's download marks LATE and gives no time: a per-day policy cannot count days, so it
    takes nothing and the run names the student, instead of guessing one day."""
    policy = ("--due", platform_class.DUE.isoformat(), "--late-policy", "per-day:10")
    run = minigrad_class(delivered / "canvas" / "submissions.zip", tmp_path / "out", "--jobs", "2", *policy)
    with (tmp_path / "out" / "grades.csv").open(newline="", encoding="utf-8") as file:
        rows = {row["student"]: row for row in csv.DictReader(file)}
    late = {
        s: (r["late"], r["submitted_at"], r["hours_late"], r["penalty"], r["total_after_late"]) for s, r in rows.items()
    }
    assert late["o-brienravi"] == ("late", "", "", "", "11")
    assert late["chenyuki"] == ("", "", "", "0", "10")
    assert (
        "late by the platform's mark with no hand-in time, so per-day took nothing: o-brienravi (Canvas: " in run.stdout
    )
