"""The class roster: who should have submitted, read in the platforms' own export formats and
matched to the submissions by the LMS's keys, never by names (two students may share one).

    Canvas gradebook export   Student (or LastName, FirstName), ID, [SIS User ID], SIS Login ID,
                              [Integration ID], [Root Account], Section, ...; then a "Manual
                              Posting" row and a "    Points Possible" row, which are no students
                              (canvas-lms lib/gradebook_exporter.rb, `to_csv`)
    Gradescope roster         First Name, Last Name (or Name), SID, Email, Role, Sections: only
                              students (Gradescope's course roster "Download" and grades export)
    Moodle grading worksheet  Identifier ("Participant 1234567"), Full name, Email address, ...
                              (mod/assign/gradingtable.php, `col_userid` via the worksheet export)
    Moodle participants       First name, Last name, Email address, ...
    nbgrader                  its database (gradebook.db or any SQLAlchemy URL: the `student`
                              table, through nbgrader.api.Gradebook), or the CSV `nbgrader db
                              student import` takes: id, first_name, last_name, email, lms_user_id
    anything else             a CSV whose `id`, `student`, `sid`, `login` or `username` column
                              names the student (else its first column)

A roster row is a student with keys (the same column names as grades.csv's: canvas_user_id,
sid, email, moodle_participant_id, nbgrader_id ...) and their name and email as the platform
wrote them, which reach grades.csv and nbgrader's student table.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from .students import safe_id

MAX_ROWS = 100_000  # a roster larger than any course's is refused rather than read whole
ID_COLUMNS = ("id", "student", "student_id", "sid", "login", "username")
MATCHED_BY = (  # keys that name one student on one platform; email and name are only shown
    "canvas_user_id",
    "canvas_sis_user_id",
    "canvas_sis_login_id",
    "moodle_participant_id",
    "gradescope_submission_id",
    "sid",
    "email",
    "nbgrader_id",
    "github_login",
    "folder",
)
CANVAS = {
    "ID": "canvas_user_id",
    "SIS User ID": "canvas_sis_user_id",
    "SIS Login ID": "canvas_sis_login_id",
    "Section": "canvas_section",
    "Student": "sortable_name",
}
PARTICIPANT = re.compile(r"\D*?([0-9]+)$")  # Moodle's worksheet: "Participant 1234567" in any language


@dataclass(frozen=True)
class Entry:
    """One student of the roster: their keys, and the name their id is made from."""

    name: str
    keys: dict[str, str] = field(default_factory=dict)


def read(path: Path) -> list[Entry]:
    """The roster's students, in file order, without blanks or repeats (a repeat of every key)."""
    if path.suffix.lower() in (".db", ".sqlite") or "://" in str(path):
        return _nbgrader_database(str(path))
    try:
        with path.open(newline="", encoding="utf-8-sig") as file:
            rows = [row for _, row in zip(range(MAX_ROWS + 2), csv.reader(file))]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise SystemExit(f"{path}: cannot read the roster ({exc})") from exc
    if not rows:
        raise SystemExit(f"{path}: the roster is empty")
    if len(rows) > MAX_ROWS + 1:
        raise SystemExit(f"{path}: over {MAX_ROWS} rows; not a class roster")
    header = [cell.strip() for cell in rows[0]]
    entries = [entry for row in rows[1:] if (entry := _entry(header, row)) is not None]
    unique = {tuple(sorted(entry.keys.items())): entry for entry in reversed(entries)}
    return [entry for entry in entries if unique.get(tuple(sorted(entry.keys.items()))) is entry]


def _entry(header: list[str], row: list[str]) -> Entry | None:
    cells = {name: row[i].strip() for i, name in enumerate(header) if i < len(row)}
    lower = {name.lower(): value for name, value in cells.items()}
    if "ID" in cells and "SIS Login ID" in cells:  # Canvas's gradebook export
        if not cells["ID"].isdigit():
            return None  # the "Manual Posting" and "Points Possible" rows
        name = cells.get("Student") or ", ".join(filter(None, (cells.get("LastName"), cells.get("FirstName"))))
        name = name[2:-1] if name.startswith('="') and name.endswith('"') else name  # Canvas's formula guard
        keys = {key: cells[column] for column, key in CANVAS.items() if cells.get(column)}
        return Entry(name, {**keys, "sortable_name": name, "name": _first_last(name)})
    if "identifier" in lower and "full name" in lower:  # Moodle's grading worksheet
        participant = PARTICIPANT.match(lower["identifier"])
        if participant is None:
            return None
        keys = {"moodle_participant_id": participant[1], "name": lower["full name"]}
        return Entry(lower["full name"], {**keys, **_email(lower.get("email address", ""))})
    if "email address" in lower and "first name" in lower:  # Moodle's participants
        name = " ".join(filter(None, (lower["first name"], lower.get("last name", ""))))
        return Entry(name, {"email": lower["email address"], "name": name}) if lower["email address"] else None
    if "sid" in lower and "email" in lower and ("first name" in lower or "name" in lower):  # Gradescope
        if lower.get("role", "student").lower() not in ("student", ""):
            return None
        name = lower.get("name") or " ".join(filter(None, (lower.get("first name"), lower.get("last name"))))
        keys = {"sid": lower["sid"], **_email(lower["email"]), "name": name}
        return Entry(lower["sid"] or lower["email"] or name, {k: v for k, v in keys.items() if v}) if name else None
    column = next((name for name in ID_COLUMNS if name in lower), None)
    ident = lower[column] if column else (row[0].strip() if row else "")
    if not ident:
        return None
    name = " ".join(filter(None, (lower.get("first_name"), lower.get("last_name"))))
    keys = {"id": ident, **({"name": name} if name else {}), **_email(lower.get("email", ""))}
    lms = lower.get("lms_user_id", "")
    return Entry(ident, {**keys, "canvas_user_id": lms} if lms else keys)


def _email(value: str) -> dict[str, str]:
    return {"email": value} if value else {}


def _first_last(sortable: str) -> str:
    """Canvas's sortable name ("Smith, Jane") as it shows a name ("Jane Smith")."""
    last, comma, first = sortable.partition(", ")
    return f"{first} {last}" if comma and first else sortable


def _nbgrader_database(url: str) -> list[Entry]:
    """nbgrader's own student table, read with nbgrader's API."""
    from nbgrader.api import Gradebook  # the instructor extra; only when a database is the roster

    url = url if "://" in url else f"sqlite:///{Path(url).resolve()}"
    try:
        with Gradebook(url) as gradebook:
            students = [(s.id, s.first_name, s.last_name, s.email, s.lms_user_id) for s in gradebook.students]
    except Exception as exc:  # noqa: BLE001 - any database failure stops the run before grading, said
        raise SystemExit(f"{url}: cannot read nbgrader's students ({type(exc).__name__}: {exc})") from exc
    entries = []
    for ident, first, last, email, lms in students:
        name = " ".join(filter(None, (first, last)))
        keys = {"nbgrader_id": ident, **({"name": name} if name else {}), **_email(email or "")}
        entries.append(Entry(ident, {**keys, **({"canvas_user_id": lms} if lms else {})}))
    return entries


def match(
    entries: list[Entry], submissions: dict[str, dict[str, str]]
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """The roster against the submissions (id: the layout's keys). Returns the roster's keys of
    each student who submitted (by id), and the students with no submission (an id each, made
    as the layouts make theirs: a name alike to another gets the student's key). A roster row
    matches the one submission that shares one of its identifying keys (an `id` column matches
    the id shown too); a key that two submissions share matches neither, so no grade is ever
    given to the wrong student."""
    index: dict[tuple[str, str], set[str]] = {}
    for student, keys in submissions.items():
        index.setdefault(("id", student.casefold()), set()).add(student)
        for key in MATCHED_BY:
            if keys.get(key):
                index.setdefault((key, keys[key].casefold()), set()).add(student)
    found: dict[str, dict[str, str]] = {}
    missing: list[Entry] = []
    for entry in entries:
        groups = [index.get((key, value.casefold()), set()) for key, value in _lookups(entry)]
        hits = {student for group in groups if len(group) == 1 for student in group}
        if len(hits) == 1:
            found[hits.pop()] = {k: v for k, v in entry.keys.items() if k != "id"}
        else:
            missing.append(entry)
    return found, _named(missing, set(submissions), [safe_id(entry.name) for entry in entries])


def _lookups(entry: Entry) -> list[tuple[str, str]]:
    """The (key, value) pairs a roster row is looked up by: its identifying keys, and a plain
    roster's `id` as any layout's own id (nbgrader's, a folder's, a login, an SID, an email)."""
    pairs = [(key, value) for key, value in entry.keys.items() if key in MATCHED_BY and value]
    if ident := entry.keys.get("id"):
        pairs += [("id", safe_id(ident))] + [(key, ident) for key in ("nbgrader_id", "folder", "github_login", "sid")]
    return pairs


def _named(entries: list[Entry], taken: set[str], names: list[str]) -> dict[str, dict[str, str]]:
    """Ids for roster students with no submission: from their name, with a key where the
    roster has that name twice (`names`: every roster row's) or a submitter has it as an id."""
    wanted = [safe_id(entry.name) for entry in entries]
    seen = [n.casefold() for n in names] + [t.casefold() for t in taken]
    named: dict[str, dict[str, str]] = {}
    for entry, want in zip(entries, wanted):
        key = next((entry.keys[k] for k in (*MATCHED_BY, "id") if entry.keys.get(k)), "")
        ident = safe_id(f"{want}-{key}") if seen.count(want.casefold()) > 1 and key else want
        n = 1
        while ident.casefold() in {t.casefold() for t in (*taken, *named)}:
            n += 1
            ident = f"{safe_id(f'{want}-{key}')}-{n}"
        named[ident] = {k: v for k, v in entry.keys.items() if k != "id"}
    return named
