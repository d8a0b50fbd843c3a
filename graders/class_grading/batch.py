"""One class's grading, from a frozen `ClassOptions` to the files under `--out`: minigrad-class's
pipeline (cli.py only parses).

Every student is graded by `minigrad-grade` in a process of its own, with flags written by
`grade.Options.argv` from these options; each grade's files are written as it arrives (so a
crash or Ctrl-C loses nothing finished), then the class's tables, feedback bundle, summary
and histogram. Each student's earlier grade is read from `--out` once, at the start, and each
new one kept as it is written: the class is loaded once (loaded_class.py), and every report
is written from it.
"""

from __future__ import annotations

import datetime
import json
import math
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from graders.course_facts import kit_version
from graders.course_facts.parts import PARTS
from graders.grading import grade
from graders.reporting.escape import say
from graders.uploads import intake, layouts, packing, roster

from . import dispatch, feedback, gradebook, jobs, lateness, loaded_class, records, report, summary_html, tables
from .columns import key_columns
from .exports import write_exports
from .loaded_class import LoadedClass
from .records import StoredGrade
from .standing import GRADED, MISSING, Roll

GRADEBOOK = "gradebook.db"
CACHE = ".reference-cache"  # inside --out; a student id never starts with a dot


@dataclass(frozen=True)
class ClassOptions:
    """What minigrad-class was asked for, once parsed."""

    out: Path
    seed: int
    parts: str  # as given: grading.json keeps it, and --resume compares it
    isolation: str = "auto"
    official: bool = False
    jobs: int = 1
    resume: bool = False
    gradebook: str | None = None  # a SQLAlchemy URL; None: sqlite:///OUT/gradebook.db
    scheduler: str | None = None  # a Dask scheduler's address; None: this machine
    tls: tuple[str | None, str | None, str | None] = (None, None, None)  # CA file, certificate, key
    due: datetime.datetime | None = None
    policy: lateness.Policy = lateness.Policy()
    extensions: Mapping[str, datetime.datetime] = field(default_factory=dict)  # a key's own due
    file_times: bool = False  # the files' modification times as hand-in times, where the platform gives none
    canvas_assignment: str = "minigrad"  # canvas_grades.csv's column: Canvas's "Title (id)" or a title
    similarity: bool = False  # also similarity.csv and .html, with a section in summary.md and summary.html

    def grading(self) -> grade.Options:
        """The options every student's `minigrad-grade` runs with (each job adds its own label)."""
        return grade.Options(self.seed, tuple(self.parts.split(",")), self.isolation, self.official)


def grade_class(
    options: ClassOptions,
    entries: list[roster.Entry],
    layout: str,
    submissions: list[layouts.Submission],
    warnings: list[str],
) -> int:
    """Grade the class: `entries` is the roster (none: every submitter is expected), matched to
    the submissions by the LMS's keys (roster.match)."""
    out, kit, seed = options.out, kit_version.digest(), options.seed
    on_roster, absent = roster.match(entries, {s.student: s.keys for s in submissions}) if entries else ({}, {})
    expected = [*on_roster, *absent]
    wanted = {"seed": seed, "parts": options.parts, "kit": kit}
    grades = open_gradebook(options.gradebook or f"sqlite:///{out.resolve() / GRADEBOOK}", expected)
    refused = {s.student: f"upload refused: {s.refused}" for s in submissions if s.refused}
    members: dict[str, list[str]] = {}  # a group's first submitter: the others, graded with them
    for s in submissions:
        if s.graded_as and not s.refused:
            members.setdefault(s.graded_as, []).append(s.student)
    tasks, kept = [], 0
    keys = {s.student: dict(s.keys) for s in submissions}
    # each student's grade as it lies under --out: read once here, then kept up to date as
    # grades are forgotten and written, so no report reads a student's files again
    stored = {s.student: records.load(out, s.student) for s in submissions}
    before = {s: r for s, r in stored.items() if r is not None and _same_student(r, keys[s])}
    for submission in submissions:
        if submission.refused or submission.graded_as or submission.folder is None:
            continue
        group = [submission.student, *members.get(submission.student, [])]
        if options.resume and all(_unchanged(stored[s], wanted, submission.folder, keys[s]) for s in group):
            kept += 1
            for student in group:
                if grades:
                    grades.enter(student, stored[student].results)
            continue
        seconds = _last_seconds(out, submission.student, stored[submission.student])
        for student in group:
            records.forget(out / student)  # complete again only once this grading is
            stored[student] = None
        tasks.append(
            dispatch.Task(submission.student, submission.folder, seconds, submission.source, submission.left_out)
        )
    tasks.sort(key=lambda task: -task.seconds)  # the longest first, so none starts last (when known)
    cache = None if options.scheduler else str(out / CACHE)  # a cluster's workers keep their own
    flagged: dict[str, str] = {}
    seen: dict[str, packing.Packed] = {}
    make_job = partial(_job, base=options.grading(), kit=kit, cache=cache, out=out, flagged=flagged, seen=seen)
    if options.scheduler:
        from . import cluster  # imports Dask, an optional extra: only when a cluster is asked for

        pool, slots = cluster.connect(options.scheduler, *options.tls)
    else:
        pool, slots = jobs.executor(options.jobs), options.jobs
    done = partial(
        finish,
        out=out,
        wanted=wanted,
        grades=grades,
        members=members,
        seen=seen,
        flagged=flagged,
        keys=keys,
        stored=stored,
    )
    failed, interrupted = dispatch.run(tasks, pool, 2 * slots, make_job, done)
    for primary, others in members.items():
        failed.update({other: failed[primary] for other in others if primary in failed})
    students = [s.student for s in submissions]
    problems = {**refused, **failed}
    graded = {
        s: r for s in students if (r := stored[s]) is not None and s not in problems and _same_student(r, keys[s])
    }
    flagged = {s: str(r.grading["flag"]) for s, r in graded.items() if r.grading.get("flag")}  # kept ones too
    missing = list(absent)
    columns, keys = key_columns(
        submissions,
        graded,
        options.due,
        options.policy,
        options.extensions,
        options.file_times,
        {**on_roster, **absent},
    )
    loaded = loaded_class.load(Roll(students, graded, missing, problems, flagged, columns, keys))
    kept_before = {s: before[s] for s in before if s in graded}
    write_tables(out, options.parts.split(","), loaded, kept_before, options.canvas_assignment)
    said = [f"{student}: {why}" for student, why in sorted(loaded.roll.errors.items())]
    facts = {
        "layout": layout,
        "seed": seed,
        "isolation": ", ".join(sorted(_levels(graded))) or "-",
        "submissions": len(submissions),
        "graded": sum(t.student in graded for t in tasks),
        "kept": kept,
        "errors": len(failed),
        "missing": missing,
        "warnings": warnings + copies(seen) + said + _guessed_times(options, submissions),
        "not_on_roster": [s for s in students if entries and s not in on_roster],
    }
    for message in close_gradebook(grades, loaded):
        say(f"gradebook: {message}", sys.stderr)
    items = tables.item_analysis(out, loaded)
    say(report.summary(out, facts, loaded, items))
    if graded:
        report.histogram(out, loaded)
    if options.similarity and not interrupted:
        from graders.similarity import cli as similarity  # copydetect, only when asked for

        similarity.for_class(out, submissions)  # its section goes at the end of summary.md
    parts = [p for p in PARTS if p in options.parts.split(",")]
    base = options.grading().argv()
    commands = {  # for each student without a grade, or with a flag that does not give its own command already
        s.student: regrade_command(s.student, s.source, out, base)
        for s in submissions
        if loaded.standings[s.student].status not in (GRADED, MISSING)
        and "minigrad-grade " not in loaded.roll.errors.get(s.student, "")
    }
    summary_html.write(out, parts, facts, loaded, items, commands)
    print(f"grades: {out / 'grades.csv'}; per student: {out}/STUDENT/feedback.md", file=sys.stderr)
    print(f"the class page: {out / summary_html.NAME}", file=sys.stderr)
    if interrupted:
        return 130
    return _grader_failures(failed, out)


def _guessed_times(options: ClassOptions, submissions: list[layouts.Submission]) -> list[str]:
    """Said on every run that prices lateness on file times, since a zip or the student's own
    machine set them, not the platform; and who is late with no time a policy could price."""
    said = []
    if options.file_times:
        guessed = sum(s.submitted_at is None and s.file_time is not None for s in submissions)
        said.append(
            f"--file-times: {guessed} hand-in times are files' modification times, which the student's machine "
            "or the download set, not the platform's record"
        )
        unknown = [s.student for s in submissions if s.submitted_at is None and s.file_time is None and s.folder]
        if unknown:
            said.append(
                f"--file-times: no hand-in time for {_some(unknown)} (no file time names a date): not priced late"
            )
    unpriced = [s.student for s in submissions if s.late and s.submitted_at is None]
    if unpriced and options.policy.kind in ("per-day", "per-hour") and not options.file_times:
        said.append(
            f"late by the platform's mark with no hand-in time, so {options.policy.kind} took nothing: "
            f"{_some(unpriced)} (Canvas: pass its submissions from the API with --times)"
        )
    return said


def _some(students: list[str]) -> str:
    """The first ten students named, and `...` for the rest."""
    return f"{', '.join(students[:10])}{' ...' if len(students) > 10 else ''}"


def _grader_failures(failed: dict[str, str], out: Path) -> int:
    """1, said on the last line, when the grader itself gave some students no grade (a
    student's code cannot: it only costs points), so a class run on a broken machine never
    ends with 0; else 0."""
    if not failed:
        return 0
    print(
        f"the grader itself failed, not the code: {len(failed)} without a grade (see {out / 'errors.csv'})",
        file=sys.stderr,
    )
    return 1


def copies(seen: dict[str, packing.Packed]) -> list[str]:
    """A warning for each upload that held several copies of the package: which was graded."""
    return [
        f"{student}: several copies of the package; graded {packed.location or '.'}, not {', '.join(packed.others)}"
        for student, packed in sorted(seen.items())
        if packed.others
    ]


def _same_student(previous: StoredGrade, keys: dict[str, str]) -> bool:
    """Whether a stored grade is this student's: graded under the same identifying LMS keys (a
    user id, an SID; not a name or a file's id, which change). A grade never moves to another
    key, even where an id once named someone else."""
    stored = previous.grading.get("keys", keys)
    identifying = [key for key in roster.MATCHED_BY if key != "gradescope_submission_id"]
    return isinstance(stored, dict) and all(stored.get(key) == keys.get(key) for key in identifying)


def _unchanged(previous: StoredGrade | None, wanted: dict, upload: Path, keys: dict[str, str]) -> bool:
    """Whether a grade still stands: the same student's (same LMS keys), same seed, parts and
    kit, and the same graded files (packed only here, to compare; the grading packs them again
    when it is submitted)."""
    if previous is None or not _same_student(previous, keys):
        return False
    current = {**wanted, "submission": packing.pack(upload).digest}
    return all(previous.grading.get(key) == value for key, value in current.items())


def _last_seconds(out: Path, student: str, stored: StoredGrade | None) -> float:
    """How long the student's last grading took (0 when unknown), from their stored grade, or
    from a results.json an interrupted run left without grading.json."""
    results = stored.results if stored else records.read_object(out / student, records.RESULTS) or {}
    seconds = results.get("execution_time", 0.0)
    known = isinstance(seconds, float) or (
        isinstance(seconds, int) and abs(seconds) < 2**53
    )  # float() of a huge int raises
    return float(seconds) if known and math.isfinite(seconds) and seconds >= 0 else 0.0


def _job(
    task: dispatch.Task,
    base: grade.Options,
    kit: str,
    cache: str | None,
    out: Path,
    flagged: dict[str, str],
    seen: dict[str, packing.Packed],
) -> jobs.Job:
    """The task packed just before it is submitted, so only a window of archives is in memory
    (`seen` keeps where the package was, without the files). An upload where no package is
    found is still graded (0, every test saying why) and flagged."""
    packed = packing.pack(task.upload)
    seen[task.student] = replace(packed, archive=b"")
    if not packed.found:
        flagged[task.student] = not_found(task, out, base.argv())
    refused = (*task.left_out, *packed.refused)
    options = replace(base, label=task.source or str(task.upload), refused=refused).argv()
    return jobs.Job(task.student, packed.archive, packed.digest, options, kit, cache, task.seconds)


def not_found(task: dispatch.Task, out: Path, options: tuple[str, ...]) -> str:
    """Why an upload scored 0 without a package, for errors.csv and summary.md: when it holds
    code, the instructor's flag and the command that regrades it from the folder they choose."""
    code = [name for name in intake.listing(task.upload, 200) if name.endswith((".py", ".ipynb"))]
    if not code:
        held = ", ".join(intake.listing(task.upload, 6)) or "nothing"
        return f"no minigrad code found (graded 0); the upload holds: {held}"
    folder = str(Path(code[0]).parent).removeprefix(".")
    regrade = regrade_command(task.student, task.source, out, options, folder)
    where = f" (FOLDER: {folder or 'the top'} of the unpacked {task.source})" if not Path(task.source).is_dir() else ""
    shown = ", ".join(code[:5]) + (", ..." if len(code) > 5 else "")
    return (
        f"code found but not graded (graded 0): no minigrad/ folder with .py files and no engine.py "
        f"in the upload, which holds {shown}; to grade it from the folder you choose: {regrade}{where}"
    )


def regrade_command(student: str, source: str, out: Path, options: tuple[str, ...], folder: str = "") -> str:
    """The command that grades one upload again by hand, into the student's folder (regraded/),
    with the class's options: from the upload where it is a folder (`folder`: where in it), else
    from FOLDER, the files the instructor unpacks from the download."""
    path = shlex.quote(str(Path(source, folder))) if Path(source).is_dir() else "FOLDER"
    return f"minigrad-grade {path} --out {shlex.quote(str(out / student / 'regraded'))} {shlex.join(options)}"


def open_gradebook(url: str, expected: list[str]) -> gradebook.Writer | None:
    """nbgrader's gradebook, opened now and fed each grade as it is written, so `nbgrader
    export` gives the same totals; None (and said) for a SQLite file that is a link."""
    if url.startswith("sqlite:///") and Path(url.removeprefix("sqlite:///")).is_symlink():
        print(f"gradebook: {url} is a link; not written through", file=sys.stderr)
        return None
    return gradebook.Writer(url, expected or None)


def close_gradebook(grades: gradebook.Writer | None, loaded: LoadedClass) -> list[str]:
    """What the gradebook has to say once every grade is in; a database that failed (an
    unreachable server, an `alembic` stamp cut short by Ctrl-C) is said, and the grade files,
    tables and report are written all the same."""
    if grades is None:
        return []
    try:
        return grades.close(loaded)
    except Exception as error:  # noqa: BLE001 - any database failure: the files under --out stand
        return [f"not written: {type(error).__name__}: {error}; every grade file is; store them again with --resume"]


def finish(
    job: jobs.Job,
    graded: jobs.Graded,
    out: Path,
    wanted: dict,
    grades: gradebook.Writer | None,
    members: dict[str, list[str]],
    seen: dict[str, packing.Packed],
    flagged: dict[str, str],
    keys: dict[str, dict[str, str]],
    stored: dict[str, StoredGrade | None],
) -> str | None:
    """A grade's files under `out`: results.json and report.json, then its feedback, then
    grading.json (with where the package was found, or why not), which marks it complete;
    then the grade goes to the gradebook, and into `stored` as it now lies under `out`. A
    group's other submitters get the same grade, each in a folder and a gradebook row of
    their own."""
    packed = seen.get(job.student)
    found_in = "" if packed is None or not packed.found else packed.location or "."
    try:
        results = json.loads(graded.results or "")
    except ValueError:
        return "results.json is not JSON"
    for student in (job.student, *members.get(job.student, [])):
        folder = out / student
        if folder.is_symlink():
            return f"{folder} is a symbolic link; nothing was written through it"
        folder.mkdir(mode=0o700, exist_ok=True)
        records.write(folder, records.RESULTS, graded.results.encode())
        records.write(folder, "report.json", (graded.report or "{}\n").encode())
        if note := feedback.write(folder, student, results):
            say(f"{student}: {note}; the grade is kept", sys.stderr)
        graded_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        flag = flagged.get(job.student, "")
        grading = records.write_grading(
            folder,
            {
                **wanted,
                "submission": job.digest,
                "graded_at": graded_at,
                "found_in": found_in,
                "flag": flag,
                "keys": keys.get(student, {}),
            },
        )
        stored[student] = StoredGrade(student, results, grading)
        if grades:
            grades.enter(student, results)
    return None


def write_tables(
    out: Path, parts: list[str], loaded: LoadedClass, before: dict[str, StoredGrade], canvas_assignment: str
) -> None:
    """The class's CSV files and the students' feedback bundle; changes.csv only on a regrade
    (`before`: the earlier grades of students graded again)."""
    tables.grades(out, [p for p in PARTS if p in parts], loaded)
    tables.errors(out, loaded.roll.errors)
    if before:
        tables.changes(out, before, loaded)
    for message in write_exports(out, loaded, canvas_assignment):  # feedback with lateness, each LMS's import files
        say(message, sys.stderr)


def _levels(graded: dict[str, StoredGrade]) -> set[str]:
    return {str(r.grade.extra.get("isolation", "?")) for r in graded.values()}
