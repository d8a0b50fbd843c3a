"""minigrad-class: grade a whole class with the hidden grader, in parallel.

    minigrad-class SUBMISSIONS --out DIR [--jobs N] [--official [--secret-file F] | --seed N]
                   [--roster CSV] [--layout auto|folders|nbgrader|gradescope|lms-zip|classroom]
                   [--resume] [--parts ...] [--isolation auto|bwrap|user|local] [--gradebook URL]
                   [--scheduler tls://HOST:8786 [--tls-ca-file F --tls-cert F --tls-key F]]

Every student is graded by `minigrad-grade` with one seed for the whole class (so two
students with the same bug get the same score), the reference's answers computed once.
Under DIR: {student}/results.json, report.json, feedback.md, feedback.html, grading.json;
grades.csv, errors.csv, changes.csv (on a regrade), item_analysis.csv, summary.md,
histogram.png and feedback.zip; each grade also goes into nbgrader's gradebook as it arrives (DIR/gradebook.db
unless --gradebook names another). A grader failure on one student is recorded in errors.csv
and the batch goes on; Ctrl-C stops the running gradings and keeps every finished one.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from tqdm import tqdm

from graders import course_seed, preflight, sandbox, writing
from graders.parts import PARTS

from . import feedback, gradebook, grading, kit_version, layouts, packing, records, report, roster, tables
from .records import Record

GRADEBOOK = "gradebook.db"
CACHE = ".reference-cache"  # inside --out; a student id never starts with a dot


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
    for flag, what in (("--tls-ca-file", "CA certificate"), ("--tls-cert", "client certificate"),
                       ("--tls-key", "client key")):  # fmt: skip
        parser.add_argument(flag, help=f"the cluster's {what} (default: Dask's configuration)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


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
    writing.prepare_folder(args.out)
    with tempfile.TemporaryDirectory(prefix="minigrad-class-") as staging:
        layout, submissions, warnings = layouts.collect(args.submissions, args.layout, Path(staging))
        return grade_class(args, seed, expected, layout, submissions, warnings)


def grade_class(args: argparse.Namespace, seed: int, expected: list[str], layout: str,
                submissions: list[layouts.Submission], warnings: list[str]) -> int:  # fmt: skip
    out, kit = args.out, kit_version.digest()
    options = ("--seed", str(seed), "--parts", args.parts, "--isolation", args.isolation,
               *(["--official"] if args.official else []))  # fmt: skip
    wanted = {"seed": seed, "parts": args.parts, "kit": kit}
    grades = open_gradebook(args.gradebook or f"sqlite:///{out.resolve() / GRADEBOOK}", expected)
    before, tasks, kept = {}, [], 0
    for submission in submissions:
        previous = records.load(out, submission.student)
        if previous is not None:
            before[submission.student] = previous.results
        if args.resume and previous is not None and _unchanged(previous, wanted, submission.folder):
            kept += 1
            if grades:
                grades.add(submission.student, previous.results)
            continue
        records.forget(out / submission.student)  # complete again only once this grading is
        tasks.append(Task(submission.student, submission.folder, _last_seconds(out, submission.student)))
    tasks.sort(key=lambda task: -task.seconds)  # the longest first, so none starts last (when known)
    cache = None if args.scheduler else str(out / CACHE)  # a cluster's workers keep their own
    make_job = partial(_job, options=options, kit=kit, cache=cache)
    if args.scheduler:
        from . import cluster  # imports Dask, an optional extra: only when a cluster is asked for

        pool, slots = cluster.connect(args.scheduler, args.tls_ca_file, args.tls_cert, args.tls_key)
    else:
        pool, slots = grading.executor(args.jobs), args.jobs
    failed, interrupted = run(tasks, pool, 2 * slots, make_job, partial(finish, out=out, wanted=wanted, grades=grades))
    students = [s.student for s in submissions]
    graded = {s: r for s in students if (r := records.load(out, s)) is not None and s not in failed}
    missing = [s for s in expected if s not in students]
    write_tables(
        out, args.parts.split(","), students, graded, missing, failed, {s: before[s] for s in before if s in graded}
    )
    facts = {"layout": layout, "seed": seed, "isolation": ", ".join(sorted(_levels(graded))) or "-",
             "submissions": len(submissions), "graded": sum(t.student in graded for t in tasks), "kept": kept,
             "errors": len(failed), "missing": missing, "warnings": warnings,
             "not_on_roster": [s for s in students if expected and s not in expected]}  # fmt: skip
    for message in close_gradebook(grades):
        print(f"gradebook: {message}", file=sys.stderr)
    items = tables.item_analysis(out, graded)
    print(report.summary(out, facts, graded, items))
    if graded:
        report.histogram(out, graded)
    print(f"grades: {out / 'grades.csv'}; per student: {out}/STUDENT/feedback.md", file=sys.stderr)
    if interrupted:
        return 130
    return _grader_failures(failed, len(tasks), out)


def _grader_failures(failed: dict[str, str], tried: int, out: Path) -> int:
    """1, said on the last line, when the grader itself gave some students no grade (a
    student's code cannot: it only costs points), so a class run on a broken machine never
    ends with 0; else 0."""
    if not failed:
        return 0
    print(f"the grader failed for {len(failed)} of {tried} students, who have no grade: see {out / 'errors.csv'}",
          file=sys.stderr)  # fmt: skip
    return 1


def _unchanged(previous: Record, wanted: dict, upload: Path) -> bool:
    """Whether a grade still stands: same seed, parts and kit, and the same graded files
    (packed only here, to compare; the grading packs them again when it is submitted)."""
    current = {**wanted, "submission": packing.pack(upload).digest}
    return all(previous.grading.get(key) == value for key, value in current.items())


@dataclass(frozen=True)
class Task:
    student: str
    upload: Path
    seconds: float  # how long the student's last grading took; 0 when unknown


def _last_seconds(out: Path, student: str) -> float:
    results = records.read_json(out / student, records.RESULTS) or {}
    seconds = results.get("execution_time", 0.0)
    return float(seconds) if isinstance(seconds, int | float) else 0.0


def _job(task: Task, options: tuple[str, ...], kit: str, cache: str | None) -> grading.Job:
    """The task packed just before it is submitted, so only a window of archives is in memory."""
    packed = packing.pack(task.upload)
    refused = tuple(arg for problem in packed.refused for arg in ("--refused", problem))
    options = (*options, "--label", str(task.upload), *refused)
    return grading.Job(task.student, packed.archive, packed.digest, options, kit, cache, task.seconds)


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
                    job = make_job(task)
                    waiting[pool.submit(grading.grade, job)] = job
                if not waiting:
                    break
                done, _ = wait(waiting, return_when=FIRST_COMPLETED)
                for future in done:
                    job = waiting.pop(future)
                    problem = _problem(future) or finish(job, future.result())
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


def finish(
    job: grading.Job, graded: grading.Graded, out: Path, wanted: dict, grades: gradebook.Writer | None
) -> str | None:
    """A grade's files under `out`: results.json and report.json, then its feedback, then
    grading.json, which marks it complete; then the grade goes to the gradebook."""
    folder = out / job.student
    if folder.is_symlink():
        return f"{folder} is a symbolic link; nothing was written through it"
    folder.mkdir(mode=0o700, exist_ok=True)
    try:
        results = json.loads(graded.results or "")
    except ValueError:
        return "results.json is not JSON"
    records.write(folder, records.RESULTS, graded.results.encode())
    records.write(folder, "report.json", (graded.report or "{}\n").encode())
    feedback.write(folder, job.student, results)
    graded_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    records.write_grading(folder, {**wanted, "submission": job.digest, "graded_at": graded_at})
    if grades:
        grades.add(job.student, results)
    return None


def write_tables(out: Path, parts: list[str], students: list[str], graded: dict[str, Record], missing: list[str],
                 failed: dict[str, str], before: dict[str, dict]) -> None:  # fmt: skip
    tables.grades(out, [p for p in PARTS if p in parts], students, graded, missing, failed)
    tables.errors(out, failed)
    if before:
        tables.changes(out, before, graded)
    feedback.write_zip(out, {student: record.results for student, record in graded.items()})


def _levels(graded: dict[str, Record]) -> set[str]:
    return {str(r.results.get("extra_data", {}).get("isolation", "?")) for r in graded.values()}


if __name__ == "__main__":
    sys.exit(main())
