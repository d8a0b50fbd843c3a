"""minigrad-grade: grade one submission with the hidden suites and write a Gradescope score.

    minigrad-grade SUBMISSION --out DIR [--parts checkpoint,value,backward,mlp,tensor] [--seed N]
                   [--official [--secret-file F]] [--isolation auto|bwrap|user|local]
                   [--check-imports] [--visibility after_due_date|after_published|visible|hidden]
                   [--reference-cache DIR] [--refused NOTE ...] [--label NAME]

The pipeline: claim a uid of its own for this grading -> choose an isolation level (self-test)
-> copy the submission safely -> pick the seed -> run the hidden suites with pytest
(reference in a trusted subprocess, submission in the child) -> write results.json and
report.json. Exit status 0 whenever a valid grade was written, whatever the score.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path

import pytest

from . import context, course_seed, imports, writing
from .escape import json_text, say, untrusted
from .isolation import identity, sandbox, selftest
from .kit import SUITES
from .parts import PARTS
from .plugin import Grading
from .results import gradescope, summary
from .workdir import prepare_workdir

GRADESCOPE_RESULTS = Path("/autograder/results")
VISIBILITIES = ("after_due_date", "after_published", "visible", "hidden")  # Gradescope's words


def run_suites(run: context.GradingRun, parts: list[str], report: Path) -> tuple[Grading, int]:
    """Run the hidden suites of `parts` with the grading plugin, which keeps each test's record."""
    grading = Grading(run)
    args = [
        *(str(SUITES / f"test_{part}.py") for part in parts),
        "-c", str(SUITES / "pytest.ini"),
        "-q", "--no-header", "-p", "no:cacheprovider", "--tb=no", "-rN", "--assert=plain",
        # No student code runs in this process, so it has no unraisable exceptions to report,
        # and that plugin's garbage collections at exit cost a tenth of the parent's time.
        "-p", "no:unraisableexception",
        "-p", "pytest_jsonreport.plugin", "--json-report", f"--json-report-file={report}",
        "--json-report-omit=collectors",
    ]  # fmt: skip
    # Only the plugins named here: whatever else is installed (hypothesis, anyio, ...) has no
    # business in a grading run, and loading it triples the start-up time.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    status = pytest.main(args, plugins=[grading])
    return grading, status


@contextmanager
def private_tempdir() -> Iterator[Path]:
    """One folder for every temporary folder of this grading, so that one `rmtree` (even from
    a signal handler) removes them all. The grading uid may pass through it, not list it."""
    root = Path(tempfile.mkdtemp(prefix="minigrad-grading-"))
    root.chmod(0o711)
    previous, tempfile.tempdir = tempfile.tempdir, str(root)
    try:
        yield root
    finally:
        tempfile.tempdir = previous
        shutil.rmtree(root, ignore_errors=True)


def stop_cleanly_on_sigterm(who: identity.Identity | None, root: Path) -> None:
    """On SIGTERM, end the grading's processes, remove its folders and exit with no grade.

    Done here rather than by unwinding: the child runs in a worker thread that an exception
    in the main thread would not stop."""

    def stop(signum: int, frame: object) -> None:
        sandbox.kill_running()
        if who:
            identity.release(who)
        shutil.rmtree(root, ignore_errors=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="minigrad-grade", description=__doc__.splitlines()[0])
    parser.add_argument("submission", type=Path, help="a folder holding minigrad/, or minigrad/ itself")
    parser.add_argument(
        "--out", type=Path, help="where to write results.json (default on Gradescope: /autograder/results)"
    )
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--seed", type=int, help="replay a grade (default 0; with --official, the course's seed)")
    parser.add_argument(
        "--official", action="store_true", help="the course's seed; refuse the untrusted local level; fail closed"
    )
    parser.add_argument("--secret-file", type=Path, help=f"the course secret (default: ${course_seed.SECRET_VARIABLE})")
    parser.add_argument("--isolation", default="auto", choices=["auto", *sandbox.LEVELS])
    parser.add_argument(
        "--check-imports",
        action="store_true",
        help="first, a visible 0-point test: where the files were found and whether each module imports; "
        "when no package is found, only that test",
    )
    parser.add_argument(
        "--visibility", choices=VISIBILITIES, help="when students see the hidden tests (default: as each suite says)"
    )
    parser.add_argument(
        "--reference-cache", type=Path, help="a folder keeping the reference's answers for gradings with the same seed"
    )
    parser.add_argument(
        "--refused", action="append", default=[], metavar="NOTE",
        help="a file refused before SUBMISSION was copied out of the upload (minigrad-class packs uploads); "
        "reported with the grader's own refusals",
    )  # fmt: skip
    parser.add_argument("--label", help="the submission's name in the output (default: its path)")
    args = parser.parse_args(argv)

    out = args.out or (GRADESCOPE_RESULTS if GRADESCOPE_RESULTS.parent.is_dir() else None)
    if out is None:
        parser.error("--out is required outside Gradescope")
    asked = {p.strip() for p in args.parts.split(",") if p.strip()}
    if unknown := asked - set(PARTS):
        parser.error(f"unknown parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
    parts = [part for part in PARTS if part in asked]
    if args.seed is None:
        args.seed = 0
        if args.official:
            if (secret := course_seed.read_secret(args.secret_file)) is None:
                print(course_seed.NO_SECRET, file=sys.stderr)
                return 2
            args.seed = course_seed.official_seed(secret)
    writing.prepare_folder(out)
    with identity.claimed() if os.geteuid() == 0 else nullcontext(None) as who, private_tempdir() as root:
        stop_cleanly_on_sigterm(who, root)
        return grade(args, parts, out, who, root)


def grade(args: argparse.Namespace, parts: list[str], out: Path, who: identity.Identity | None, root: Path) -> int:
    start = time.monotonic()
    isolation, seen, passed_over = selftest.choose_level(args.isolation, args.official, who)
    if problem := selftest.missing_imports(isolation, who):  # a broken machine never grades
        print(f"grading refused: {problem}", file=sys.stderr)
        return 2
    seed = args.seed
    workdir, copied = prepare_workdir(args.submission.resolve(), who)
    copied.refused[:0] = args.refused
    first = [imports.check(args.submission, workdir, copied, isolation)] if args.check_imports else []
    run = context.GradingRun(isolation, workdir, seed, args.reference_cache)
    if first and not copied.found:
        records = first  # every hidden test failing would only hide the one thing to fix
        (root / "report.json").write_text("{}\n")
    else:
        grading, status = run_suites(run, parts, root / "report.json")
        if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or grading.grader_errors:
            say("\n".join([f"grader error ({status!r}), no grade written:", *grading.grader_errors]), sys.stderr)
            return 2
        hidden = [replace(r, visibility=args.visibility or r.visibility) for r in grading.records]
        records = first + hidden
    level = isolation.level
    header = [
        f"minigrad hidden tests: {untrusted(args.label or args.submission, limit=1000)}",
        f"isolation: {level}{'' if level != 'local' else ' (untrusted: not for official grades)'}, seed: {seed}",
        *([f"note: {passed_over}"] if passed_over else []),
        *(f"refused: {untrusted(problem)}" for problem in copied.refused),
        *([] if copied.found else ["no minigrad/ folder found in the submission"]),
        *(f"{check.name}: {check.status}" for check in first if copied.found),
    ]
    text = summary(records[len(first) :], header, run.notes)
    extra = {"seed": seed, "isolation": level, "trusted": level != "local", "official": args.official,
             "self_test": seen, "parts": parts, "limits": who.describe() if who else "rlimits only",
             "copied": copied.copied, "refused": copied.refused, "passed_over": passed_over}  # fmt: skip
    results = gradescope(records, time.monotonic() - start, text, extra)
    report = json.loads((root / "report.json").read_bytes())  # pytest-json-report's: it quotes every message
    writing.write_new(out, "report.json", (json_text(report) + "\n").encode())
    writing.write_new(out, "results.json", (json_text(results) + "\n").encode())
    say(text)  # the grade is written: printing it can no longer cost it
    return 0
