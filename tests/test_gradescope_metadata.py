"""Gradescope's submission_metadata.yml and nbgrader's timestamp.txt travel with the download, so
a hostile value in them is one student's missing time or the export's clear refusal, never a
crash or a stall of the class (graders/uploads/gradescope_metadata.py, layouts.py)."""

from __future__ import annotations

import datetime
import os
import threading
from pathlib import Path

import pytest

from graders.uploads import layouts

ENGINE = "class Value:\n    pass\n"


def export(tmp_path: Path, metadata: str, folders: tuple[str, ...] = ("submission_1",)) -> Path:
    """A Gradescope export folder with `metadata` and a one-file upload in each folder."""
    root = tmp_path / "export"
    for name in folders:
        (root / name / "minigrad").mkdir(parents=True)
        (root / name / "minigrad" / "engine.py").write_text(ENGINE)
    (root / layouts.GRADESCOPE_METADATA).write_text(metadata)
    return root


def collect(root: Path) -> list[layouts.Submission]:
    staging = root.parent / "staging"
    staging.mkdir(exist_ok=True)
    return layouts.collect(root, "gradescope", staging, root.parent / "out")[1]


ONE = """submission_1:
  :submitters:
  - :name: Ada Lovelace
    :sid: '{sid}'
    :email: ada@example.edu
  :created_at: {created}
"""


@pytest.mark.parametrize("created", ["0000-01-01 10:00:00", "2026-13-01 10:00:00", "2026-11-20 10:00:00 +99:99"])
def test_a_time_no_calendar_holds_is_an_unknown_time(tmp_path: Path, created: str) -> None:
    (submission,) = collect(export(tmp_path, ONE.format(sid="s1", created=created)))
    assert (submission.student, submission.submitted_at, submission.refused) == ("s1", None, "")


def test_gradescopes_own_time_is_read(tmp_path: Path) -> None:
    (submission,) = collect(export(tmp_path, ONE.format(sid="s1", created="2026-11-20 10:00:00.123456789 -0800")))
    assert submission.submitted_at == datetime.datetime(2026, 11, 20, 18, 0, 0, 123456, tzinfo=datetime.timezone.utc)


def test_a_5000_digit_sid_is_a_long_id_not_a_crash(tmp_path: Path) -> None:
    metadata = ONE.format(sid="9" * 5000, created="2026-11-20 10:00:00").replace("'", "")  # a YAML integer
    (submission,) = collect(export(tmp_path, metadata))
    assert submission.student == "9" * 64
    assert submission.keys["sid"] == "9" * 5000


def test_submitters_that_are_no_list_give_a_row_without_a_submitter(tmp_path: Path) -> None:
    (submission,) = collect(export(tmp_path, "submission_1:\n  :submitters: 5\n"))
    assert (submission.student, submission.keys["sid"], submission.refused) == ("submission-1", "", "")


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        ("[" * 5000, "nested over 8 deep"),
        ("a: &a [x, x]\nb: &b [*a, *a]\n", "an alias"),
        ("submission_1: [\n", "cannot be read"),
    ],
)
def test_a_hostile_metadata_file_is_refused_with_the_reason(tmp_path: Path, metadata: str, reason: str) -> None:
    with pytest.raises(SystemExit, match=reason):
        collect(export(tmp_path, metadata))


def test_a_timestamp_that_is_a_fifo_does_not_hold_the_class(tmp_path: Path) -> None:
    folder = tmp_path / "submitted" / "ada" / "hw1"
    (folder / "minigrad").mkdir(parents=True)
    (folder / "minigrad" / "engine.py").write_text(ENGINE)
    os.mkfifo(folder / "timestamp.txt")
    found: list = []
    reader = threading.Thread(
        target=lambda: found.extend(layouts.collect(tmp_path, "nbgrader", tmp_path, tmp_path / "out")[1])
    )
    reader.daemon = True
    reader.start()
    reader.join(30)  # a plain open() of the FIFO waits for a writer that never comes
    assert not reader.is_alive()
    assert [(s.student, s.submitted_at) for s in found] == [("ada", None)]
