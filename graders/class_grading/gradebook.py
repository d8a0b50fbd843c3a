"""Put a class's grades into nbgrader's own gradebook, so `nbgrader export`, the formgrader's
tables and any LMS bridge built on nbgrader's database see them as nbgrader grades.

nbgrader models an assignment as notebooks holding grade cells, with one grade per student
per cell. The kit has no notebooks, so its grades are mapped onto that model: the assignment
is `minigrad`, each part is a notebook, each hidden test is a code grade cell worth the
test's points. A bonus test (`max_score` 0 and the tag `bonus`) is a 0-point cell whose
points go into the grade's extra credit, which nbgrader adds to the score but not to the
maximum, exactly as results.json counts it. So nbgrader's total per student is the kit's.

A student's grades are replaced as a whole when they change (nbgrader's submission record is
removed and made again from the results), so a regrade never leaves a stale test behind; what
the gradebook already holds is read once when it is opened (gradebook_held.py), and a student,
a cell, a grade or a late field that would be written as it is stays untouched, so a
`--resume` that changes nothing writes nothing.

Once the class is done (`close` with its roll), nbgrader's own fields say the rest, as
its `nbgrader export` reads them (nbgrader/plugins/export.py: `raw_score`, then
`late_submission_penalty`, then `score` = max(0, raw - penalty); a student with no submission
0): the assignment's `duedate` (the earliest due of the class), each submission's `timestamp`
and `extension` (the student's own due beyond it), the late penalty on its notebooks
(`SubmittedNotebook.late_submission_penalty`, which nbgrader sums per assignment; the kit's
penalty is taken from the base only, so it is spread over the parts' base points and never
touches the extra credit), and each student's names, email and LMS id (`Student.first_name`,
`last_name`, `email`, `lms_user_id`). nbgrader writes its CSV without quoting, so a comma in
a name would shift its columns: commas become spaces, and each value is a safe CSV cell.
"""

from __future__ import annotations

import datetime
import os
import sys
import sysconfig
import warnings
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from unittest import mock

# nbgrader imports jsonschema, whose optional IRI checker (rfc3987_syntax, pulled in by
# jupyter-events) compiles 38 grammars on import: 2.6 s of every class run, for a format no
# gradebook write uses. Marking it absent makes jsonschema skip that one checker.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.exc import SAWarning  # noqa: E402

from graders.reporting.escape import csv_cell  # noqa: E402
from graders.reporting.results import BONUS  # noqa: E402
from graders.uploads.moments import when  # noqa: E402

from . import gradebook_held  # noqa: E402
from .gradebook_held import GradeRow, Key, Late  # noqa: E402
from .loaded_class import LoadedClass  # noqa: E402
from .standing import Standing  # noqa: E402

if TYPE_CHECKING:
    from nbgrader.api import Gradebook, SubmittedAssignment

ASSIGNMENT = "minigrad"
NAME_LIMIT = 128  # nbgrader's column width for cell names


@dataclass(frozen=True)
class Cell:
    """One hidden test as nbgrader sees it: a grade cell of the part's notebook."""

    part: str
    name: str
    max_score: float
    bonus: bool


def cells_of(student: str, results: dict) -> dict[Cell, float]:
    """Each test of one student's results.json as a cell and the points it got; a clear
    error naming the student and the test when the results are not the kit's format."""
    tests = results.get("tests") if isinstance(results, dict) else None
    if not isinstance(tests, list) or not tests:
        raise ValueError(f"{student}: results.json has no tests[] to put in the gradebook")
    scored = {}
    for number, test in enumerate(tests, start=1):
        try:
            name, tags = test["name"], test["tags"]
            score, most = float(test["score"]), float(test["max_score"])
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{student}: test {number} lacks a name, tags, score or max_score ({error})") from None
        if not isinstance(name, str) or not 0 < len(name) <= NAME_LIMIT:
            raise ValueError(f"{student}: test {number}'s name must be 1 to {NAME_LIMIT} characters for nbgrader")
        if not isinstance(tags, list) or not tags or not isinstance(tags[0], str):
            raise ValueError(f"{student}: test {name!r} has no part tag")
        bonus = BONUS in tags and most == 0  # results.is_bonus, on the values just checked
        cell = Cell(part=tags[0], name=name, max_score=most, bonus=bonus)
        if cell in scored:
            raise ValueError(f"{student}: test {name!r} appears twice")
        scored[cell] = score
    return scored


class Writer:
    """nbgrader's gradebook at `url` (any SQLAlchemy URL, `sqlite:///path/gradebook.db` by
    default), written one student at a time as the class's grades arrive.

    Opening a new gradebook costs about a second (nbgrader imports Jupyter's stack, and the
    database is stamped with its migrations' head) and each student's records about 50 ms (0.2 s on a
    gradebook that holds a class); done while the gradings run, that work no longer waits for
    the last grade, and records already as they would be written are left alone. Every call runs on one
    thread of its own, because nbgrader's session belongs to the thread that opened it.
    The roster's students are added graded or not (`nbgrader export` gives 0 to a student
    with no submission). One student's unusable results are reported, never stop the rest."""

    def __init__(self, url: str, roster: list[str] | None) -> None:
        self.roster = roster
        self.layout: dict[str, Cell] = {}  # every test seen so far, by name: one grade cell each
        self.stored: dict[str, dict[Cell, float]] = {}  # student -> their cells
        self.problems: dict[str, str] = {}
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradebook")
        self.pending = [self.thread.submit(self._open, url)]

    def enter(self, student: str, results: dict) -> None:
        """Queue a student's grades; a later `enter` of the same student replaces them."""
        self.pending.append(self.thread.submit(self._enter, student, results))

    def close(self, loaded: LoadedClass | None = None) -> list[str]:
        """Wait for every queued student, put in what the class's standings say (lateness, names), then
        say what the instructor must know: students graded but not on the roster (kept, never
        dropped), results the gradebook could not take, results lacking tests that others
        have (those count 0), cells an earlier store made that these results lack."""
        self.pending.append(self.thread.submit(self._finish, loaded.standings if loaded else {}))
        try:
            *_, messages = [future.result() for future in self.pending]
        finally:
            self.thread.shutdown()
        return messages

    def _open(self, url: str) -> None:
        from nbgrader.api import Gradebook  # imported here, on this thread, while the gradings run

        _make_sqlite_folder(url)
        with _head_read_in_process():
            self.gradebook = Gradebook(url)
        self.gradebook.update_or_create_assignment(ASSIGNMENT)
        self.held = gradebook_held.read(self.gradebook, ASSIGNMENT)
        for student in self.roster or []:
            self._student(student)

    def _student(self, student: str) -> None:
        """The student in the gradebook, added when missing."""
        if student not in self.held.students:
            self.gradebook.update_or_create_student(student)
            self.held.students[student] = (None, None, None, None)

    def _enter(self, student: str, results: dict) -> None:
        try:
            cells = cells_of(student, results)
        except ValueError as error:
            self.problems[student] = str(error)
            return
        if clashing := sorted(cell.name for cell in cells if self.layout.get(cell.name, cell) != cell):
            self.problems[student] = f"{student}: tests whose part or points differ from others' ({clashing[:3]})"
            return
        try:
            self._store(student, cells)
        except Exception as error:  # noqa: BLE001 - one student's records the database refused: the rest go on
            self.gradebook.db.rollback()
            self.stored.pop(student, None)
            self.held.grades.pop(student, None)  # removed, perhaps not made again: unknown until read
            self.held.late.pop(student, None)
            self.problems[student] = f"{student}: the gradebook refused these grades ({type(error).__name__}: {error})"
            return
        self.problems.pop(student, None)

    def _store(self, student: str, cells: dict[Cell, float]) -> None:
        for cell in cells:
            if cell.name in self.layout:
                continue
            self.layout[cell.name] = cell
            if self.held.cells.get((cell.part, cell.name)) == cell.max_score:
                continue  # the gradebook has this cell, worth these points
            if cell.part not in self.held.notebooks:
                self.gradebook.update_or_create_notebook(cell.part, ASSIGNMENT)
                self.held.notebooks.add(cell.part)
            self.gradebook.update_or_create_grade_cell(
                cell.name, cell.part, ASSIGNMENT, max_score=cell.max_score, cell_type="code"
            )
            self.held.cells[(cell.part, cell.name)] = cell.max_score
        self._student(student)
        self._record(student, cells)
        self.stored[student] = cells

    def _record(self, student: str, cells: dict[Cell, float]) -> None:
        """The student's submission made again from `cells`, unless it already holds exactly
        the grades that would give."""
        wanted = _grade_rows(cells, self.held.cells)
        if self.held.grades.get(student) == wanted:
            return
        _record(self.gradebook, student, cells)
        self.held.grades[student] = wanted
        self.held.late[student] = (None, None, dict.fromkeys(self.held.notebooks))  # a new submission's

    def _finish(self, standings: dict[str, Standing]) -> list[str]:
        try:
            # A student stored before a later one brought new tests has no grade for them:
            # stored again, nbgrader gives every submission a grade in every cell.
            for student, cells in self.stored.items():
                self._record(student, cells)
            messages = self._earlier_cells()
            try:
                self._describe(standings)
            except Exception as error:  # noqa: BLE001 - a name the database refused: the grades are stored
                self.gradebook.db.rollback()
                messages.append(f"lateness and names not stored ({type(error).__name__}: {error}); the grades are")
            for student in sorted({*self.stored, *self.problems}):
                if student in self.problems:
                    messages.append(f"{self.problems[student]}; not in the gradebook")
                    continue
                if self.roster is not None and student not in self.roster:
                    messages.append(f"{student}: not on the roster; graded and added to the gradebook anyway")
                if missing := len(self.layout) - len(self.stored[student]):
                    messages.append(
                        f"{student}: {missing} tests other students have are not in these results; they count 0"
                    )
            return messages
        finally:
            self.gradebook.close()

    def _describe(self, standings: dict[str, Standing]) -> None:
        """Names, emails and LMS ids of every student in the gradebook, and each stored
        submission's time, extension and late penalty."""
        dues = [due for standing in standings.values() if (due := _moment(standing.key("due")))]
        due = min(dues, default=None)
        if due is not None:
            self.gradebook.update_or_create_assignment(ASSIGNMENT, duedate=due)
        for student, standing in standings.items():
            if student not in self.stored and student not in (self.roster or []):
                continue  # refused or failed, not on the roster: nbgrader never heard of them
            first, last = _names(standing)
            names = (first, last, _cell(standing.key("email")), _cell(standing.key("canvas_user_id")))
            if self.held.students.get(student) != names:
                self.gradebook.update_or_create_student(
                    student, first_name=first, last_name=last, email=names[2], lms_user_id=names[3]
                )
                self.held.students[student] = names
            if student in self.stored:
                late = _late(standing, due, self.held.grades[student], self.held.notebooks)
                if self.held.late.get(student) != late:
                    _write_late(self.gradebook.find_submission(ASSIGNMENT, student), late)
                    self.held.late[student] = late
        self.gradebook.db.commit()

    def _earlier_cells(self) -> list[str]:
        """Cells an earlier store made for tests these results no longer have: nbgrader keeps
        counting them in the maximum, so the instructor must hear of them."""
        known = {(cell.part, cell.name) for cell in self.layout.values()}
        stale = sorted(f"{part}/{name}" for part, name in self.held.cells if (part, name) not in known)
        if not stale:
            return []
        return [f"the gradebook also has {len(stale)} tests these results lack (an earlier suite?): {stale[:3]}"]


def _grade_rows(cells: dict[Cell, float], every: Iterable[Key]) -> dict[Key, GradeRow]:
    """The grade rows `_record` leaves: one per cell of the assignment (`every`), a cell these
    results lack as nbgrader makes it (no score, waiting for a manual grade)."""
    given = {
        (cell.part, cell.name): (0.0 if cell.bonus else score, score if cell.bonus else None, None, False)
        for cell, score in cells.items()
    }
    return {key: given.get(key, (None, None, None, True)) for key in every}


def _late(standing: Standing, due: datetime.datetime | None, grades: dict[Key, GradeRow], notebooks: set[str]) -> Late:
    """The submission's time, its extension beyond the class's due, and the penalty spread over
    the notebooks' base points (auto scores, from its `grades`; the bonus is extra credit,
    never taken)."""
    own = _moment(standing.key("due"))
    extension = own - due if own and due and own > due else None
    points = dict.fromkeys(notebooks, 0.0)
    for (notebook, _), (auto, *_) in grades.items():
        points[notebook] += auto or 0.0
    left, order, penalties = standing.penalty, [*standing.parts, *sorted(notebooks)], {}
    for notebook in sorted(notebooks, key=order.index):
        taken = min(left, points[notebook])
        penalties[notebook] = round(taken, 6)
        left -= taken
    return _moment(standing.key("submitted_at")), extension, penalties


def _write_late(submission: SubmittedAssignment, late: Late) -> None:
    submission.timestamp, submission.extension, penalties = late
    for notebook in submission.notebooks:
        notebook.late_submission_penalty = penalties[notebook.name]


def _moment(text: str) -> datetime.datetime | None:
    """An ISO time of the roll as nbgrader stores times: naive, in UTC (read by moments.when, as
    every time the kit reads, so Python 3.10's narrower fromisoformat reads it alike)."""
    moment = when(text) if text else None
    return moment.astimezone(datetime.timezone.utc).replace(tzinfo=None) if moment else None


def _names(standing: Standing) -> tuple[str | None, str | None]:
    """(first, last): Canvas's sortable name is `Last, First`; a plain name's last word is the last name."""
    sortable, name = standing.key("sortable_name"), standing.key("name")
    last, comma, first = sortable.partition(", ")
    if not comma:
        first, _, last = name.rpartition(" ")
    return _cell(first), _cell(last)


def _cell(text: str) -> str | None:
    """A value for nbgrader's unquoted CSV export: no comma, safe as a cell, within its columns' 128."""
    return str(csv_cell(text.replace(",", " ").strip()))[:NAME_LIMIT] or None


def _make_sqlite_folder(url: str) -> None:
    """SQLite creates a missing database file but not its folder (`build/nbgrader/` on a
    fresh clone); other databases are the server's business."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)


def with_scripts_on_path(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` with this Python's scripts folder first on PATH, for running nbgrader's own
    commands (the tests and the benchmarks do): they, and the `alembic` command nbgrader's
    Gradebook runs to stamp a new database outside this kit, are found there, which they are
    not when the kit runs as `.venv/bin/python` without an activated venv."""
    return {**environ, "PATH": os.pathsep.join([sysconfig.get_path("scripts"), environ.get("PATH", "")])}


@contextmanager
def _head_read_in_process() -> Iterator[None]:
    """nbgrader stamps a new gradebook with the head revision of its own migrations, which it
    asks an `alembic heads` subprocess for; that subprocess imports nbgrader and Jupyter's stack
    all over again: 4 s of CPU for every new gradebook, more than grading a student. Alembic's
    own ScriptDirectory reads the same head from the same migration scripts, here."""
    import nbgrader
    import nbgrader.api
    from alembic.script import ScriptDirectory

    head = ScriptDirectory(str(Path(nbgrader.__file__).parent / "alembic")).get_current_head()
    with mock.patch.object(nbgrader.api, "get_alembic_version", lambda: head):
        yield


def _record(gradebook: Gradebook, student: str, cells: dict[Cell, float]) -> None:
    from nbgrader.api import MissingEntry

    try:
        gradebook.remove_submission(ASSIGNMENT, student)
    except MissingEntry:
        pass
    with warnings.catch_warnings():
        # nbgrader's add_submission builds its records before adding them to the session,
        # which SQLAlchemy 2 remarks on; the records are added and committed all the same.
        warnings.filterwarnings("ignore", "Object of type", SAWarning)
        submission = gradebook.add_submission(ASSIGNMENT, student)
    where = {
        cell.id: (notebook.name, cell.name)
        for notebook in submission.assignment.notebooks
        for cell in notebook.grade_cells
    }
    grades = {where[grade.cell_id]: grade for notebook in submission.notebooks for grade in notebook.grades}
    for cell, score in cells.items():
        grade = grades[(cell.part, cell.name)]
        grade.auto_score = 0.0 if cell.bonus else score
        grade.extra_credit = score if cell.bonus else None
        grade.needs_manual_grade = False
    gradebook.db.commit()
