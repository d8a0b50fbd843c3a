"""Lateness from the platforms' own times: the student's due (with extensions), the grace,
and what a capped late policy takes from the base total (the raw total never changes)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from graders.class_grading import lateness
from graders.uploads import moments

UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 11, 21, 8, 0, tzinfo=UTC)
HOUR = datetime.timedelta(hours=1)


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        # nbgrader writes timestamp.txt with "%Y-%m-%d %H:%M:%S.%f %Z" (nbgrader/exchange/abc/exchange.py)
        ("2026-11-20 13:05:00.123456 UTC", datetime.datetime(2026, 11, 20, 13, 5, 0, 123456, tzinfo=UTC)),
        ("2026-11-20 08:05:00 America/New_York", datetime.datetime(2026, 11, 20, 13, 5, tzinfo=UTC)),
        # Gradescope's submission_metadata.yml :created_at: (nanoseconds and an offset)
        ("2026-11-20 10:00:00.123456789 -08:00", datetime.datetime(2026, 11, 20, 18, 0, 0, 123456, tzinfo=UTC)),
        ("2026-11-21T00:00:00-08:00", DUE),
        ("2026-11-21T08:00:00Z", DUE),
        ("2026-11-21 09:00:00 +0100", DUE),
        ("2026-11-21 08:00:00", DUE),  # no zone: UTC, as nbgrader's parse_utc takes it
        ("2026-11-21T08:00:00,5Z", DUE + datetime.timedelta(seconds=0.5)),  # ISO's comma: Python 3.10 reads it too
        ("2026-11-20 13:05:00.1 EDT", None),  # a zone name no database knows: unknown, not guessed
        ("2026-11-20 13:05:00 ../../etc/passwd", None),
        ("yesterday", None),
        ("9" * 5000, None),
    ],
)
def test_platform_times_are_read_exactly(text: str, moment: datetime.datetime | None) -> None:
    assert moments.when(text) == moment


def test_a_policy_takes_per_started_day_from_the_base_capped() -> None:
    policy = lateness.Policy("per-day", 10.0, cap=25.0)
    on_time = lateness.assess(DUE, False, DUE, policy, 100.0, 122.0)
    assert on_time.columns() == {
        "submitted_at": "2026-11-21T08:00:00+00:00",
        "due": "2026-11-21T08:00:00+00:00",
        "late": "",
        "hours_late": "0",
        "penalty": "0",
        "total_after_late": "100",
    }
    one_day = lateness.assess(DUE + 5 * HOUR, False, DUE, policy, 100.0, 122.0)
    assert (one_day.late, one_day.hours_late, one_day.penalty, one_day.total_after_late) == (True, 5.0, 12.2, 87.8)
    four_days = lateness.assess(DUE + 73 * HOUR, False, DUE, policy, 100.0, 122.0)
    assert (four_days.penalty, four_days.total_after_late) == (30.5, 69.5)  # 40% capped at 25% of 122
    small = lateness.assess(DUE + 73 * HOUR, False, DUE, policy, 10.0, 122.0)
    assert (small.penalty, small.total_after_late) == (10.0, 0.0)  # never below 0


def test_the_grace_forgives_its_hours_and_counts_from_its_end() -> None:
    policy = lateness.Policy("per-hour", 1.0, grace=datetime.timedelta(minutes=30))
    inside = lateness.assess(DUE + datetime.timedelta(minutes=29), False, DUE, policy, 50.0, 100.0)
    assert (inside.late, inside.hours_late, inside.penalty) == (False, 0.0, 0.0)
    past = lateness.assess(DUE + 2 * HOUR, False, DUE, policy, 50.0, 100.0)
    assert (past.late, past.hours_late, past.penalty, past.total_after_late) == (True, 1.5, 2.0, 48.0)


def test_a_late_mark_without_a_time_is_not_priced_by_a_time_policy() -> None:
    """Canvas's download says LATE and nothing more: a per-day policy cannot know how many days."""
    marked = lateness.assess(None, True, DUE, lateness.Policy("per-day", 10.0), 100.0, 122.0)
    assert (marked.late, marked.hours_late, marked.penalty, marked.total_after_late) == (True, None, None, 100.0)
    assert "no hand-in time" in marked.unknown
    zero = lateness.assess(None, True, None, lateness.Policy("zero", cap=50.0), 100.0, 122.0)
    assert (zero.penalty, zero.total_after_late) == (61.0, 39.0)
    ungraded = lateness.assess(DUE + HOUR, False, DUE, lateness.Policy("zero"))
    assert (ungraded.late, ungraded.penalty, ungraded.total_after_late) == (True, None, None)


def test_an_extension_is_found_under_any_key(tmp_path: Path) -> None:
    path = tmp_path / "extensions.csv"
    path.write_text("key,due\n101,2026-11-23T08:00:00Z\nBo@X.edu,2026-11-22 08:00:00 UTC\n,\n")
    extensions = lateness.read_extensions(path, moments.when)
    assert extensions == {"101": DUE + 48 * HOUR, "bo@x.edu": DUE + 24 * HOUR}
    assert lateness.due_for({"canvas_user_id": "101"}, "ann", DUE, extensions) == DUE + 48 * HOUR
    assert lateness.due_for({"email": "bo@x.edu"}, "bo", DUE, extensions) == DUE + 24 * HOUR
    assert lateness.due_for({"canvas_user_id": "102"}, "cy", DUE, extensions) == DUE
    path.write_text("101,next tuesday\n102,2026-11-23T08:00:00Z\n")
    extensions = lateness.read_extensions(path, moments.when)  # the first row is taken for a header
    path.write_text("101,2026-11-23T08:00:00Z\n102,next tuesday\n")
    with pytest.raises(SystemExit, match="line 2: 'next tuesday' is not a time"):
        lateness.read_extensions(path, moments.when)
