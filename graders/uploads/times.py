"""Hand-in times the platform recorded apart from its download (`--times FILE`).

Canvas's download says only `LATE`; its times are in the API's Submission objects
(`GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions`, documented at
canvas.instructure.com/doc/api/submissions.html: `user_id`, `submitted_at` in ISO 8601,
`late`, `seconds_late`), saved as a JSON list. Moodle's are in its grading worksheet
("Download grading worksheet", mod/assign/gradingtable.php): `Identifier` ("Participant 7001")
and `Last modified (submission)`, written by `userdate` in Moodle's default English format
("Friday, 20 November 2026, 1:05 PM", langconfig's `strftimedaydatetime`) in the zone of the
teacher who downloaded it, which the worksheet does not say: `--times-zone` names it.

The times are keyed by the student's LMS key (canvas_user_id, moodle_participant_id), so they
reach the right student whatever their name; a value that is no time is left unknown and said.
"""

from __future__ import annotations

import csv
import datetime
import json
from dataclasses import replace
from pathlib import Path

from . import layouts, moments
from .roster import PARTICIPANT

MAX_BYTES = 64 * 1024 * 1024  # a large course's API export, and a bound on what is read
MOODLE_FORMAT = "%A, %d %B %Y, %I:%M %p"
SUBMITTED = "Last modified (submission)"


def read(path: Path, zone: datetime.tzinfo) -> tuple[dict[tuple[str, str], datetime.datetime], list[str]]:
    """(key, value) -> hand-in time, from Canvas's API JSON or Moodle's worksheet, and what
    could not be read."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise SystemExit(f"{path}: cannot read the times ({exc})") from exc
    if len(data) > MAX_BYTES:
        raise SystemExit(f"{path}: over {MAX_BYTES // 1024**2} MiB; not a course's times")
    text = data.decode("utf-8-sig", errors="replace")
    if text.lstrip().startswith("["):
        return _canvas(path, text)
    return _moodle(path, text, zone)


def _canvas(path: Path, text: str) -> tuple[dict[tuple[str, str], datetime.datetime], list[str]]:
    try:
        submissions = json.loads(text)
    except ValueError as exc:
        raise SystemExit(f"{path}: not Canvas's submissions JSON ({exc})") from exc
    times, unread = {}, []
    for entry in submissions if isinstance(submissions, list) else []:
        if not isinstance(entry, dict) or not str(entry.get("user_id", "")).isdigit():
            continue
        user, value = str(entry["user_id"]), entry.get("submitted_at")
        if value is None:
            continue  # never submitted
        if (moment := moments.when(str(value))) is None:
            unread.append(f"{path.name}: user {user}: {str(value)[:40]!r} is not a time")
            continue
        times[("canvas_user_id", user)] = moment
    return times, unread


def _moodle(path: Path, text: str, zone: datetime.tzinfo) -> tuple[dict[tuple[str, str], datetime.datetime], list[str]]:
    rows = csv.DictReader(text.splitlines())
    if not rows.fieldnames or "Identifier" not in rows.fieldnames or SUBMITTED not in rows.fieldnames:
        raise SystemExit(f"{path}: neither Canvas's submissions JSON nor Moodle's grading worksheet")
    times, unread = {}, []
    for row in rows:
        participant = PARTICIPANT.match(row.get("Identifier") or "")
        value = (row.get(SUBMITTED) or "").strip()
        if participant is None or value in ("", "-"):
            continue
        try:
            moment = datetime.datetime.strptime(value[:80], MOODLE_FORMAT).replace(tzinfo=zone)
        except ValueError:
            unread.append(f"{path.name}: participant {participant[1]}: {value[:40]!r} is not a time")
            continue
        times[("moodle_participant_id", participant[1])] = moment
    return times, unread


def apply(submissions: list[layouts.Submission], times: dict[tuple[str, str], datetime.datetime]) -> list:
    """The submissions with the platform's times where their download gave none."""
    timed = []
    for s in submissions:
        moment = next((times[(key, value)] for key, value in s.keys.items() if (key, value) in times), None)
        timed.append(replace(s, submitted_at=moment) if s.submitted_at is None and moment else s)
    return timed
