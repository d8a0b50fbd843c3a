"""minigrad-class: grade a whole class with the hidden grader, in parallel.

    minigrad-class SUBMISSIONS --out DIR [--jobs N] [--official [--secret-file F] | --seed N]
                   [--roster CSV] [--layout auto|folders|nbgrader|gradescope|lms-zip|classroom]
                   [--resume] [--parts ...] [--isolation auto|bwrap|user|local] [--gradebook URL]
                   [--due ISO-TIME [--late-policy none|zero|per-day:P]] [--similarity]
                   [--scheduler tls://HOST:8786 [--tls-ca-file F --tls-cert F --tls-key F]]

Every student is graded by `minigrad-grade` with one seed for the whole class (so two
students with the same bug get the same score), the reference's answers computed once.
Under DIR: {student}/results.json, report.json, feedback.md, feedback.html, grading.json;
grades.csv, errors.csv, changes.csv (on a regrade), item_analysis.csv, summary.md,
histogram.png and feedback.zip; each grade also goes into nbgrader's gradebook as it arrives (DIR/gradebook.db
unless --gradebook names another). A grader failure on one student, an upload that cannot be
read (a bomb, a corrupt or encrypted archive, a path out of its folder) and an upload with code
but no package are recorded in errors.csv and summary.md, and the batch goes on. Uploads are
unpacked in a hidden staging folder under DIR, removed however the command ends (Ctrl-C and
SIGTERM too); Ctrl-C stops the running gradings and keeps every finished one.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shlex
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from tqdm import tqdm

from graders import course_seed, intake, writing
from graders.escape import say
from graders.isolation import preflight, sandbox
from graders.parts import PARTS

from . import feedback, gradebook, grading, kit_version, layouts, packing, records, report, roster, tables
from .records import StoredGrade

GRADEBOOK = "gradebook.db"
CACHE = ".reference-cache"  # inside --out; a student id never starts with a dot
STAGING = ".staging-"  # inside --out, for unpacked uploads; removed at the end
LATE_POLICIES = "none, zero, per-day:P (P percent of the maximum off per started day late)"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="minigrad-class", description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="a folder of submissions, or an LMS zip")
    parser.add_argument("--out", type=Path, required=True, help="where the grades go (created, closed to others)")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)), help="gradings at once (cores)")
    seeds = parser.add_mutually_exclusive_group()
    seeds.add_argument("--official", action="store_true", help="the course's seed, from its secret; bwrap/user only")
    seeds.add_argument("--seed", type=int, default=0, help="one seed for the class (default 0)")
    parser.add_argument("--secret-file", type=Path, help=f"the course secret (default: ${course_seed.SECRET_VARIABLE})")
    parser.add_argument("--roster", type=Path, help="a CSV of the students expected (nbgrader's: an id column)")
    parser.add_argument("--layout", default="auto", choices=layouts.LAYOUTS)
    parser.add_argument("--resume", action="store_true", help="keep grades of submissions unchanged since")
    parser.add_argument("--parts", default=",".join(PARTS), help="parts to grade (default: all)")
    parser.add_argument("--isolation", default="auto", choices=["auto", *sandbox.LEVELS])
    parser.add_argument(
        "--gradebook", help="nbgrader gradebook, any SQLAlchemy URL (default: sqlite:///DIR/gradebook.db)"
    )
    parser.add_argument(
        "--scheduler", default=os.environ.get("DASK_SCHEDULER_ADDRESS"),
        help="grade on this Dask cluster, e.g. tls://HOST:8786 (default: $DASK_SCHEDULER_ADDRESS; none: this machine)",
    )  # fmt: skip
    parser.add_argument("--due", type=_due, help="the deadline, ISO 8601 (UTC unless it says): adds hours_late")
    parser.add_argument("--late-policy", default="none", type=_policy, help=f"{LATE_POLICIES}; adds total_after_late")
    parser.add_argument("--similarity", action="store_true", help="also write similarity.csv and .html")
    for flag, what in (("--tls-ca-file", "CA certificate"), ("--tls-cert", "client certificate"),
                       ("--tls-key", "client key")):  # fmt: skip
        parser.add_argument(flag, help=f"the cluster's {what} (default: Dask's configuration)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


def _due(text: str) -> datetime.datetime:
    when = layouts.when(text)
    if when is None:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}")
    return when


def _policy(text: str) -> tuple[str, float]:
    """`none`, `zero` or `per-day:P` as (kind, percent)."""
    kind, _, percent = text.partition(":")
    try:
        if kind in ("none", "zero") and not percent:
            return kind, 0.0
        if kind == "per-day" and 0 <= float(percent) <= 100:
            return kind, float(percent)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{text!r}: one of {LATE_POLICIES}")


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    seed = args.seed
    if args.official:
        if (secret := course_seed.read_secret(args.secret_file)) is None:
            print(course_seed.NO_SECRET, file=sys.stderr)
            return 2
        seed = course_seed.official_seed(secret)
    expected = roster.read(args.roster) if args.roster else []  # a bad roster stops us before any grading
    if not args.scheduler and (status := preflight.check(args.isolation, args.official)):
        return status  # this machine cannot grade (said on stderr): refused before any student
    layouts.check_out(args.submissions, args.out)
    writing.prepare_folder(args.out)
    staging = Path(tempfile.mkdtemp(prefix=STAGING, dir=args.out))
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        layout, submissions, warnings = layouts.collect(args.submissions, args.layout, staging, args.out)
        status = grade_class(args, seed, expected, layout, submissions, warnings)
        if args.similarity and status != 130:
            from graders.similarity import cli as similarity  # copydetect, only when asked for

            similarity.for_class(args.out, submissions)
        return status
    except KeyboardInterrupt:
        print("\ninterrupted: finished grades are kept; run again with --resume for the rest", file=sys.stderr)
        return 130
    finally:
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C or SIGTERM cannot cut
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up short
        shutil.rmtree(staging, ignore_errors=True)
        signal.signal(signal.SIGINT, interrupt)
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM ends the command as Ctrl-C does: gradings stopped, finished grades kept, staging removed."""
    raise KeyboardInterrupt


def grade_class(args: argparse.Namespace, seed: int, expected: list[str], layout: str,
                submissions: list[layouts.Submission], warnings: list[str]) -> int:  # fmt: skip
    out, kit = args.out, kit_version.digest()
    options = ("--seed", str(seed), "--parts", args.parts, "--isolation", args.isolation,
               *(["--official"] if args.official else []))  # fmt: skip
    wanted = {"seed": seed, "parts": args.parts, "kit": kit}
    grades = open_gradebook(args.gradebook or f"sqlite:///{out.resolve() / GRADEBOOK}", expected)
    refused = {s.student: f"upload refused: {s.refused}" for s in submissions if s.refused}
    members: dict[str, list[str]] = {}  # a group's first submitter: the others, graded with them
    for s in submissions:
        if s.graded_as and not s.refused:
            members.setdefault(s.graded_as, []).append(s.student)
    before, tasks, kept = {}, [], 0
    for submission in submissions:
        previous = records.load(out, submission.student)
        if previous is not None:
            before[submission.student] = previous.results
        if submission.refused or submission.graded_as or submission.folder is None:
            continue
        group = [submission.student, *members.get(submission.student, [])]
        if args.resume and all(_unchanged(records.load(out, s), wanted, submission.folder) for s in group):
            kept += 1
            for student in group:
                if grades:
                    grades.add(student, records.load(out, student).results)
            continue
        for student in group:
            records.forget(out / student)  # complete again only once this grading is
        tasks.append(Task(submission.student, submission.folder, _last_seconds(out, submission.student),
                          submission.source))  # fmt: skip
    tasks.sort(key=lambda task: -task.seconds)  # the longest first, so none starts last (when known)
    cache = None if args.scheduler else str(out / CACHE)  # a cluster's workers keep their own
    flagged: dict[str, str] = {}
    seen: dict[str, packing.Packed] = {}
    make_job = partial(_job, options=options, kit=kit, cache=cache, out=out, flagged=flagged, seen=seen)
    if args.scheduler:
        from . import cluster  # imports Dask, an optional extra: only when a cluster is asked for

        pool, slots = cluster.connect(args.scheduler, args.tls_ca_file, args.tls_cert, args.tls_key)
    else:
        pool, slots = grading.executor(args.jobs), args.jobs
    done = partial(finish, out=out, wanted=wanted, grades=grades, members=members, seen=seen, flagged=flagged)
    failed, interrupted = run(tasks, pool, 2 * slots, make_job, done)
    for primary, others in members.items():
        failed.update({other: failed[primary] for other in others if primary in failed})
    students = [s.student for s in submissions]
    problems = {**refused, **failed}
    graded = {s: r for s in students if (r := records.load(out, s)) is not None and s not in problems}
    flagged = {s: str(r.grading["flag"]) for s, r in graded.items() if r.grading.get("flag")}  # kept ones too
    missing = [s for s in expected if s not in students]
    columns, extra = key_columns(args, submissions, graded)
    write_tables(out, args.parts.split(","), students, graded, missing, problems, flagged, columns, extra,
                 {s: before[s] for s in before if s in graded})  # fmt: skip
    said = [f"{student}: {why}" for student, why in sorted({**flagged, **problems}.items())]
    facts = {"layout": layout, "seed": seed, "isolation": ", ".join(sorted(_levels(graded))) or "-",
             "submissions": len(submissions), "graded": sum(t.student in graded for t in tasks), "kept": kept,
             "errors": len(failed), "missing": missing,
             "warnings": warnings + copies(seen) + said,
             "not_on_roster": [s for s in students if expected and s not in expected]}  # fmt: skip
    for message in close_gradebook(grades):
        say(f"gradebook: {message}", sys.stderr)
    items = tables.item_analysis(out, graded)
    say(report.summary(out, facts, graded, items))
    if graded:
        report.histogram(out, graded)
    print(f"grades: {out / 'grades.csv'}; per student: {out}/STUDENT/feedback.md", file=sys.stderr)
    if interrupted:
        return 130
    return _grader_failures(failed, out)


def _grader_failures(failed: dict[str, str], out: Path) -> int:
    """1, said on the last line, when the grader itself gave some students no grade (a
    student's code cannot: it only costs points), so a class run on a broken machine never
    ends with 0; else 0."""
    if not failed:
        return 0
    print(f"the grader itself failed, not the code: {len(failed)} without a grade (see {out / 'errors.csv'})",
          file=sys.stderr)  # fmt: skip
    return 1


def copies(seen: dict[str, packing.Packed]) -> list[str]:
    """A warning for each upload that held several copies of the package: which was graded."""
    return [f"{student}: several copies of the package; graded {packed.location or '.'}, not {', '.join(packed.others)}"
            for student, packed in sorted(seen.items()) if packed.others]  # fmt: skip


def key_columns(args: argparse.Namespace, submissions: list[layouts.Submission],
                graded: dict[str, StoredGrade]) -> tuple[list[str], dict[str, dict[str, str]]]:  # fmt: skip
    """grades.csv's columns beyond the grade: the layout's keys, lateness and, with a late
    policy, the total after it (the raw `total` never changes)."""
    columns = [*dict.fromkeys(key for s in submissions for key in s.keys), "found_in"]
    marked = any("canvas_user_id" in s.keys for s in submissions)  # Canvas marks late files itself
    columns += ["late"] if marked or args.due else []
    columns += ["submitted_at", "hours_late"] if args.due else []
    columns += ["total_after_late"] if args.late_policy[0] != "none" else []
    extra = {}
    for s in submissions:
        hours = None
        if args.due and s.submitted_at is not None:
            hours = max(0.0, (s.submitted_at - args.due).total_seconds() / 3600)
        late = s.late or bool(hours)
        row = {**s.keys, "late": "late" if late else ""}
        if args.due:
            row["submitted_at"] = s.submitted_at.isoformat(timespec="seconds") if s.submitted_at else ""
            row["hours_late"] = "" if hours is None else tables.number(round(hours, 2))
        if (record := graded.get(s.student)) is not None:
            row["found_in"] = str(record.grading.get("found_in", ""))
            row["total_after_late"] = tables.number(after_late(record.results, args.late_policy, late, hours))
        extra[s.student] = row
    return columns, extra


def after_late(results: dict, policy: tuple[str, float], late: bool, hours: float | None) -> float:
    """The total under the late policy: `zero` gives 0 to anything late; `per-day:P` takes P%
    of the maximum per started day (one day when only the LMS's mark says late), never below 0."""
    total, kind = float(results["score"]), policy[0]
    if not late or kind == "none":
        return total
    if kind == "zero":
        return 0.0
    days = math.ceil(hours / 24) if hours else 1
    return max(0.0, total - days * policy[1] / 100 * float(results["max_score"]))


def _unchanged(previous: StoredGrade | None, wanted: dict, upload: Path) -> bool:
    """Whether a grade still stands: same seed, parts and kit, and the same graded files
    (packed only here, to compare; the grading packs them again when it is submitted)."""
    if previous is None:
        return False
    current = {**wanted, "submission": packing.pack(upload).digest}
    return all(previous.grading.get(key) == value for key, value in current.items())


@dataclass(frozen=True)
class Task:
    student: str
    upload: Path
    seconds: float  # how long the student's last grading took; 0 when unknown
    source: str = ""  # the upload where the instructor finds it


def _last_seconds(out: Path, student: str) -> float:
    results = records.read_json(out / student, records.RESULTS) or {}
    seconds = results.get("execution_time", 0.0)
    return float(seconds) if isinstance(seconds, int | float) else 0.0


def _job(task: Task, options: tuple[str, ...], kit: str, cache: str | None, out: Path, flagged: dict[str, str],
         seen: dict[str, packing.Packed]) -> grading.Job:  # fmt: skip
    """The task packed just before it is submitted, so only a window of archives is in memory
    (`seen` keeps where the package was, without the files). An upload where no package is
    found is still graded (0, every test saying why) and flagged."""
    packed = packing.pack(task.upload)
    seen[task.student] = replace(packed, archive=b"")
    if not packed.found:
        flagged[task.student] = not_found(task, out, options)
    refused = tuple(arg for problem in packed.refused for arg in ("--refused", problem))
    options = (*options, "--label", task.source or str(task.upload), *refused)
    return grading.Job(task.student, packed.archive, packed.digest, options, kit, cache, task.seconds)


def not_found(task: Task, out: Path, options: tuple[str, ...]) -> str:
    """Why an upload scored 0 without a package, for errors.csv and summary.md: when it holds
    code, the instructor's flag and the command that regrades it from the folder they choose."""
    code = [name for name in intake.listing(task.upload, 200) if name.endswith((".py", ".ipynb"))]
    if not code:
        held = ", ".join(intake.listing(task.upload, 6)) or "nothing"
        return f"no minigrad code found (graded 0); the upload holds: {held}"
    folder = str(Path(code[0]).parent).removeprefix(".")
    staged = not Path(task.source).is_dir()
    path = "FOLDER" if staged else shlex.quote(str(Path(task.source, folder)))
    regrade = f"minigrad-grade {path} --out {shlex.quote(str(out / task.student / 'regraded'))} {shlex.join(options)}"
    where = f" (FOLDER: {folder or 'the top'} of the unpacked {task.source})" if staged else ""
    shown = ", ".join(code[:5]) + (", ..." if len(code) > 5 else "")
    return (
        f"code found but not graded (graded 0): no minigrad/ folder with .py files and no engine.py "
        f"in the upload, which holds {shown}; to grade it from the folder you choose: {regrade}{where}"
    )


def open_gradebook(url: str, expected: list[str]) -> gradebook.Writer | None:
    """nbgrader's gradebook, opened now and fed each grade as it is written, so `nbgrader
    export` gives the same totals; None (and said) for a SQLite file that is a link."""
    if url.startswith("sqlite:///") and Path(url.removeprefix("sqlite:///")).is_symlink():
        print(f"gradebook: {url} is a link; not written through", file=sys.stderr)
        return None
    return gradebook.Writer(url, expected or None)


def run(tasks: list[Task], pool: Executor, window: int, make_job: Callable[[Task], grading.Job],
        finish: Callable[[grading.Job, grading.Graded], str | None]) -> tuple[dict[str, str], bool]:  # fmt: skip
    """Grade `tasks` on `pool`, at most `window` submitted at once, each result written as it
    arrives (so a crash or Ctrl-C loses nothing finished), with a progress bar; returns each
    failed student's problem and whether Ctrl-C stopped the run."""
    failed: dict[str, str] = {}
    waiting: dict[Future, grading.Job] = {}
    queue = iter(tasks)
    try:
        with tqdm(total=len(tasks), unit="student", desc="grading", dynamic_ncols=True) as bar:
            while True:
                while len(waiting) < window and (task := next(queue, None)) is not None:
                    try:
                        job = make_job(task)
                    except Exception as error:  # noqa: BLE001 - one upload's trouble is that student's row
                        failed[task.student] = f"the upload could not be packed: {type(error).__name__}: {error}"
                        bar.update()
                        continue
                    waiting[pool.submit(grading.grade, job)] = job
                if not waiting:
                    break
                done, _ = wait(waiting, return_when=FIRST_COMPLETED)
                for future in done:
                    job = waiting.pop(future)
                    problem = _problem(future) or _finished(finish, job, future.result())
                    if problem is not None:
                        failed[job.student] = problem
                    bar.update()
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        grading.stop_all()
        pool.shutdown(wait=True)
        print("\ninterrupted: finished grades are kept; run again with --resume for the rest", file=sys.stderr)
        return failed, True
    pool.shutdown()
    return failed, False


def _finished(finish: Callable[[grading.Job, grading.Graded], str | None], job: grading.Job,
              graded: grading.Graded) -> str | None:  # fmt: skip
    """`finish`, with anything it raises made that student's problem: the batch goes on."""
    try:
        return finish(job, graded)
    except Exception as error:  # noqa: BLE001 - the other students' grades must still be written
        return f"the grade could not be written: {type(error).__name__}: {error}"


def _problem(future: Future) -> str | None:
    """Why a task gave no grade: its own problem, or what the executor says (on a cluster,
    for example, that the submission's gradings killed every worker they ran on)."""
    if future.cancelled():
        return "the grading was cancelled"
    if (error := future.exception()) is not None:
        return f"the grading failed: {type(error).__name__}: {error}"
    return future.result().problem


def close_gradebook(grades: gradebook.Writer | None) -> list[str]:
    """What the gradebook has to say once every grade is in; a database that failed (an
    unreachable server, an `alembic` stamp cut short by Ctrl-C) is said, and the grade files,
    tables and report are written all the same."""
    if grades is None:
        return []
    try:
        return grades.close()
    except Exception as error:  # noqa: BLE001 - any database failure: the files under --out stand
        return [f"not written: {type(error).__name__}: {error}; every grade file is; store them again with --resume"]


def finish(job: grading.Job, graded: grading.Graded, out: Path, wanted: dict, grades: gradebook.Writer | None,
           members: dict[str, list[str]], seen: dict[str, packing.Packed],
           flagged: dict[str, str]) -> str | None:  # fmt: skip
    """A grade's files under `out`: results.json and report.json, then its feedback, then
    grading.json (with where the package was found, or why not), which marks it complete;
    then the grade goes to the gradebook. A group's other submitters get the same grade,
    each in a folder and a gradebook row of their own."""
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
        records.write_grading(folder, {**wanted, "submission": job.digest, "graded_at": graded_at,
                                       "found_in": found_in, "flag": flag})  # fmt: skip
        if grades:
            grades.add(student, results)
    return None


def write_tables(out: Path, parts: list[str], students: list[str], graded: dict[str, StoredGrade], missing: list[str],
                 problems: dict[str, str], flagged: dict[str, str], columns: list[str],
                 extra: dict[str, dict[str, str]], before: dict[str, dict]) -> None:  # fmt: skip
    tables.grades(out, [p for p in PARTS if p in parts], students, graded, missing, problems, flagged, columns, extra)
    tables.errors(out, {**flagged, **problems})
    if before:
        tables.changes(out, before, graded)
    feedback.write_zip(out, {student: record.results for student, record in graded.items()})


def _levels(graded: dict[str, StoredGrade]) -> set[str]:
    return {str(r.results.get("extra_data", {}).get("isolation", "?")) for r in graded.values()}


if __name__ == "__main__":
    sys.exit(main())
