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

from graders.class_grading import layouts, lms_zip, roster
from graders.class_grading.students import safe_id, unique


@pytest.mark.parametrize(
    ("raw", "safe"),
    [("alice", "alice"), ("Bob Jones", "Bob_Jones"), ("../../etc", "_.._etc"), (".hidden", "hidden"), ("..", "student"),
     ("grades.csv", "grades.csv_"), ("émile/ü", "_mile_"), ("a@b.edu", "a_b.edu")],
)  # fmt: skip
def test_student_ids_are_safe_folder_names(raw: str, safe: str) -> None:
    assert safe_id(raw) == safe


def test_colliding_ids_are_numbered() -> None:
    assert unique(["ann", "ann", "bo", "ann"]) == ["ann", "ann-2", "bo", "ann-3"]


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
    found, warnings = lms_zip.unpack(archive, staging)

    folders = dict(found)
    assert sorted(folders) == ["ann_1", "ann_9", "mallory"]
    written = sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file() or p.is_symlink())
    assert written == ["0/engine.py", "1/engine.py", "2/hw1/minigrad/engine.py"]
    assert (folders["ann_1"] / "engine.py").read_text() == "a = 2\n"  # the resubmission wins
    assert not (tmp_path / "escaped.py").exists()
    assert any("engine.py not unpacked" in warning for warning in warnings)


def test_a_zip_entry_naming_no_student_is_reported(tmp_path: Path) -> None:
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("notes.txt", "hello")
    assert lms_zip.unpack(archive, tmp_path / "staging") == (
        [],
        ["notes.txt: the name carries no student (expected name_id_id_file)"],
    )


def test_layouts_are_recognised(tmp_path: Path) -> None:
    (tmp_path / "zip.zip").write_bytes(b"")
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
    assert roster.read(path) == ["ann", "bo_jones"]
    path.write_text("")
    with pytest.raises(SystemExit, match="the roster is empty"):
        roster.read(path)
