"""minigrad-class: grade a whole class with the hidden grader, in parallel.

    minigrad-class SUBMISSIONS --out DIR [--jobs N] [--official [--secret-file F] | --seed N]
                   [--roster CSV] [--layout auto|folders|nbgrader|gradescope|lms-zip|moodle|classroom]
                   [--resume] [--parts ...] [--isolation auto|bwrap|user|local] [--gradebook URL]
                   [--due ISO-TIME] [--extensions CSV] [--grace HOURS] [--times FILE [--times-zone Z]]
                   [--file-times]
                   [--late-policy none|zero|per-day:P|per-hour:P [--late-cap P]] [--similarity]
                   [--scheduler tls://HOST:8786 [--tls-ca-file F --tls-cert F --tls-key F]]

Only the command line is here: it is parsed into a frozen `batch.ClassOptions`, which
batch.py's pipeline grades. Every student is graded by `minigrad-grade` with one seed for the
whole class (so two students with the same bug get the same score), the reference's answers
computed once.
Under DIR: {student}/results.json, report.json, feedback.md, feedback.html, grading.json;
grades.csv, errors.csv, changes.csv (on a regrade), item_analysis.csv, summary.md,
summary.html (the class page), histogram.png, feedback.zip, and for the LMSs canvas_grades.csv,
canvas_comments.zip (when Canvas's attachment ids are known), moodle_grades.csv and moodle_feedback.zip; each grade
also goes into nbgrader's gradebook as it arrives (DIR/gradebook.db unless --gradebook names
another). A grader failure on one student, an upload that cannot be
read (a bomb, a corrupt or encrypted archive, a path out of its folder) and an upload with code
but no package are recorded in errors.csv and summary.md, and the batch goes on. Uploads are
unpacked in a hidden staging folder under DIR, removed however the command ends (Ctrl-C and
SIGTERM too); Ctrl-C stops the running gradings and keeps every finished one.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
import zoneinfo
from pathlib import Path

from graders.course_facts import course_seed
from graders.course_facts.parts import PARTS
from graders.isolation import preflight, sandbox
from graders.uploads import layouts, moments, roster, staging, times

from . import lateness
from .batch import ClassOptions, grade_class

STAGING = ".staging-"  # inside --out, for unpacked uploads; removed at the end
LATE_POLICIES = "none, zero, per-day:P or per-hour:P (P percent of the base maximum off per started day or hour late)"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="minigrad-class", description=__doc__.splitlines()[0])
    parser.add_argument("submissions", type=Path, help="a folder of submissions, or an LMS zip")
    parser.add_argument("--out", type=Path, required=True, help="where the grades go (created, closed to others)")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)), help="gradings at once (cores)")
    seeds = parser.add_mutually_exclusive_group()
    seeds.add_argument("--official", action="store_true", help="the course's seed, from its secret; bwrap/user only")
    seeds.add_argument("--seed", type=int, help="one seed for the class (default 0)")
    parser.add_argument("--secret-file", type=Path, help=f"the course secret (default: ${course_seed.SECRET_VARIABLE})")
    parser.add_argument(
        "--roster",
        type=Path,
        help="the students expected: Canvas's gradebook CSV, Gradescope's roster, Moodle's worksheet or participants, "
        "nbgrader's gradebook.db, or a CSV with an id column",
    )
    parser.add_argument("--layout", default="auto", choices=layouts.LAYOUTS)
    parser.add_argument("--resume", action="store_true", help="keep grades of submissions unchanged since")
    parser.add_argument("--parts", default=",".join(PARTS), help="parts to grade (default: all)")
    parser.add_argument("--isolation", default="auto", choices=["auto", *sandbox.LEVELS])
    parser.add_argument(
        "--gradebook", help="nbgrader gradebook, any SQLAlchemy URL (default: sqlite:///DIR/gradebook.db)"
    )
    parser.add_argument(
        "--scheduler",
        default=os.environ.get("DASK_SCHEDULER_ADDRESS"),
        help="grade on this Dask cluster, e.g. tls://HOST:8786 (default: $DASK_SCHEDULER_ADDRESS; none: this machine)",
    )
    parser.add_argument("--due", type=_due, help="the deadline, ISO 8601 (UTC unless it says): adds hours_late")
    parser.add_argument("--late-policy", default="none", type=_policy, help=f"{LATE_POLICIES}; adds total_after_late")
    parser.add_argument("--late-cap", type=_percent, default=100.0, help="the most a late policy takes, percent of max")
    parser.add_argument("--grace", type=_hours, default=0.0, help="hours after the due that are not late (default 0)")
    parser.add_argument(
        "--times",
        type=Path,
        help="the platform's hand-in times: Canvas's submissions from its API (JSON) or Moodle's grading worksheet",
    )
    parser.add_argument("--times-zone", type=_zone, default="UTC", help="the zone of Moodle's worksheet times (IANA)")
    parser.add_argument("--extensions", type=Path, help="a CSV of KEY,DUE: a student's own due (KEY: any of their ids)")
    parser.add_argument(
        "--file-times",
        action="store_true",
        help="where the platform recorded no hand-in time, use the files' modification times (said on every run)",
    )
    parser.add_argument("--similarity", action="store_true", help="also write similarity.csv and .html")
    parser.add_argument(
        "--canvas-assignment", default="minigrad", help="canvas_grades.csv's column: 'TITLE (ID)' as Canvas exports it"
    )
    for flag, what in (
        ("--tls-ca-file", "CA certificate"),
        ("--tls-cert", "client certificate"),
        ("--tls-key", "client key"),
    ):
        parser.add_argument(flag, help=f"the cluster's {what} (default: Dask's configuration)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


def _due(text: str) -> datetime.datetime:
    when = moments.when(text)
    if when is None:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}")
    return when


def _policy(text: str) -> tuple[str, float]:
    """`none`, `zero`, `per-day:P` or `per-hour:P` as (kind, percent)."""
    kind, _, percent = text.partition(":")
    try:
        if kind in ("none", "zero") and not percent:
            return kind, 0.0
        if kind in ("per-day", "per-hour"):
            return kind, _percent(percent)
    except argparse.ArgumentTypeError:
        pass
    raise argparse.ArgumentTypeError(f"{text!r}: one of {LATE_POLICIES}")


def _zone(text: str) -> datetime.tzinfo:
    try:
        return zoneinfo.ZoneInfo(text)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError) as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: not a time zone (an IANA name: Europe/Paris)") from exc


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text!r}: a percent from 0 to 100")
    return value


def _hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 24 * 366:
        raise argparse.ArgumentTypeError(f"{text!r}: hours from 0 to a year")
    return value


def options_of(args: argparse.Namespace, seed: int) -> ClassOptions:
    """The parsed command line as the pipeline's frozen options."""
    tls = (args.tls_ca_file, args.tls_cert, args.tls_key)
    return ClassOptions(
        args.out,
        seed,
        args.parts,
        args.isolation,
        args.official,
        args.jobs,
        args.resume,
        args.gradebook,
        args.scheduler,
        tls,
        args.due,
        lateness.Policy(*args.late_policy, args.late_cap, datetime.timedelta(hours=args.grace)),
        lateness.read_extensions(args.extensions, moments.when) if args.extensions else {},
        args.file_times,
        canvas_assignment=args.canvas_assignment,
        similarity=args.similarity,
    )


def main(argv: list[str] | None = None) -> int:
    """Parse minigrad-class's command line, collect the class and grade it (see batch.py)."""
    args = parse(argv)
    if (seed := course_seed.resolve(args.seed, args.official, args.secret_file)) is None:
        print(course_seed.NO_SECRET, file=sys.stderr)
        return 2
    expected = roster.read(args.roster) if args.roster else []  # a bad roster stops us before any grading
    recorded, unread = times.read(args.times, args.times_zone) if args.times else ({}, [])
    if not args.scheduler and (status := preflight.check(args.isolation, args.official)):
        return status  # this machine cannot grade (said on stderr): refused before any student
    try:
        with staging.uploads(args.submissions, args.out, args.layout, STAGING) as (layout, submissions, warnings):
            submissions = times.apply(submissions, recorded)
            return grade_class(options_of(args, seed), expected, layout, submissions, warnings + unread)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: gradings stopped, finished grades kept, staging removed
        print("\ninterrupted: finished grades are kept; run again with --resume for the rest", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
