"""What minigrad-class takes from an upload it does not trust: student ids, LMS zips, rosters.

No grading here (tests/test_class_grading.py grades every layout): these check the names and
files that reach the grader, including the hostile ones.
"""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest

from graders.uploads import layouts, lms_zip, roster
from graders.uploads.students import safe_id, unique


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("alice", "alice"),
        ("Bob Jones", "Bob-Jones"),
        ("../../etc", "etc"),
        (".hidden", "hidden"),
        ("..", "student"),
        ("grades.csv", "grades-csv"),
        ("émile/ü", "émile-ü"),
        ("a@b.edu", "a-b-edu"),
        ("José García", "José-García"),
        ("Jose\u0301 García", "José-García"),
        ("-2-3", "2-3"),
        ("=HYPERLINK(1)", "HYPERLINK-1"),
        ("+1", "1"),
        ("@SUM", "SUM"),
        ("gradebook.db", "gradebook-db"),
        ("gradebook", "gradebook"),
        ("s80 a b", "s80-a-b"),
        ("s80_a_b", "s80-a-b"),
        ("\u202eevil\x1b[2J", "evil-2J"),
        ("9" * 4400, "9" * 64),
        ("", "student"),
    ],
)
def test_student_ids_are_safe_folder_names(raw: str, safe: str) -> None:
    assert safe_id(raw) == safe


def test_colliding_ids_are_numbered() -> None:
    assert unique(["ann", "ann", "bo", "ann"]) == ["ann", "ann-2", "bo", "ann-3"]
    assert unique(["ann", "Ann", "ann-2"]) == ["ann", "Ann-3", "ann-2"]  # letter case tells no two apart


def link_entry(name: str, target: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def test_an_lms_zip_cannot_write_outside_the_students_folder(tmp_path: Path) -> None:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as bundle:
        bundle.writestr("hw1/minigrad/engine.py", "x = 1\n")
        bundle.writestr("../../escaped.py", "escaped\n")
        bundle.writestr("/abs/olute.py", "escaped\n")
        bundle.writestr(link_entry("hw1/minigrad/nn.py", "/etc/passwd"), "/etc/passwd")
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("mallory_7_8_hw1.zip", inner.getvalue())
        bundle.writestr(link_entry("mallory_7_8_checkpoint.py", "/etc/shadow"), "/etc/shadow")
        bundle.writestr("ann_1_2_engine.py", "a = 1\n")
        bundle.writestr("ann_1_3_engine-1.py", "a = 2\n")  # resubmitted: Canvas renamed it
        bundle.writestr("ann_9_4_engine.py", "another ann\n")
    staging = tmp_path / "staging"
    uploads, warnings = lms_zip.unpack(archive, staging)

    assert [(u.name, u.user) for u in uploads] == [("ann", "1"), ("mallory", "7"), ("ann", "9")]
    assert uploads[1].refused == "hw1.zip: a member has a path out of its folder (..): '../../escaped.py'"
    written = sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file() or p.is_symlink())
    assert written == ["0/engine.py", "2/engine.py"]  # mallory's zip is refused whole: nothing of it is graded
    assert (uploads[0].folder / "engine.py").read_text() == "a = 2\n"  # the file Canvas stored last wins
    assert uploads[0].notes == ["ann_1_2_engine.py: resubmitted as ann_1_3_engine-1.py; superseded"]
    assert not (tmp_path / "escaped.py").exists() and warnings == []


def test_a_zip_entry_naming_no_student_is_reported(tmp_path: Path) -> None:
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("notes.txt", "hello")
    assert lms_zip.unpack(archive, tmp_path / "staging") == (
        [],
        [
            "notes.txt: the name carries no student "
            "(Canvas writes name[_LATE]_userid_fileid_file or anon_id_fileid_file)"
        ],
    )


def test_layouts_are_recognised(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "zip.zip", "w"):
        pass
    assert layouts.detect(tmp_path / "zip.zip") == "lms-zip"
    for name, marker in [("gs", "submission_metadata.yml"), ("course", "submitted/alice/")]:
        (tmp_path / name / marker).parent.mkdir(parents=True, exist_ok=True)
        if not marker.endswith("/"):
            (tmp_path / name / marker).write_text("{}\n")
    assert layouts.detect(tmp_path / "gs") == "gradescope"
    assert layouts.detect(tmp_path / "course") == "nbgrader"
    assert layouts.detect(tmp_path / "course" / "submitted") == "nbgrader"
    for clone in ("hw1-ann", "hw1-bo"):
        (tmp_path / "clones" / clone / ".git").mkdir(parents=True)
    assert layouts.detect(tmp_path / "clones") == "classroom"
    (tmp_path / "clones" / "loose").mkdir()
    assert layouts.detect(tmp_path / "clones") == "folders"


def test_a_roster_in_nbgrader_format(tmp_path: Path) -> None:
    path = tmp_path / "roster.csv"
    path.write_text("first_name,id,email\nAnn,ann,a@x\nBo,bo jones,b@x\nAnn,ann,a@x\n,,\n")
    assert roster.read(path) == [
        roster.Entry("ann", {"id": "ann", "name": "Ann", "email": "a@x"}),
        roster.Entry("bo jones", {"id": "bo jones", "name": "Bo", "email": "b@x"}),
    ]
    path.write_text("")
    with pytest.raises(SystemExit, match="the roster is empty"):
        roster.read(path)
