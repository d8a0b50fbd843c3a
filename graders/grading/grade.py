"""One grading, from a frozen `Options` to results.json: minigrad-grade's pipeline.

Claim a uid of its own for this grading -> choose an isolation level (self-test) -> copy the
submission safely -> run the hidden suites with pytest (reference in a trusted subprocess,
submission in the child) -> write results.json and report.json. The command line
(grade_cli.py) only parses; the class command builds its gradings' command lines from the same
`Options` (`argv`), so the two cannot drift apart.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from graders.course_facts.kit import SUITES
from graders.course_facts.parts import COURSE, PARTS
from graders.isolation import child_python, identity, sandbox, selftest
from graders.isolation.workdir import prepare_workdir
from graders.reporting import output_files, root_cause
from graders.reporting.escape import json_text, say, terminal, untrusted
from graders.reporting.results import gradescope, summary
from graders.uploads import intake

from . import reference_cache, upload_check
from .grading_run import GradingRun
from .plugin import Grading
from .refusals import said_refused

VISIBILITIES = ("after_due_date", "after_published", "visible", "hidden")  # Gradescope's words


@dataclass(frozen=True)
class Options:
    """What a grading is asked for, whoever asks (minigrad-grade's flags, or the class command)."""

    seed: int
    parts: tuple[str, ...] = PARTS  # in the order they are graded
    isolation: str = "auto"
    official: bool = False  # refuse the untrusted local level; fail closed
    check_imports: bool = False  # first, a visible 0-point test of the upload
    visibility: str | None = None  # when students see the hidden tests; None: after_due_date
    reference_cache: Path | None = None
    refused: tuple[str, ...] = ()  # files refused before the submission was copied out of its upload
    label: str | None = None  # the submission's name in the output
    in_class: bool = False  # one of a class's gradings: as official ones, never a child on the host's network

    def argv(self) -> tuple[str, ...]:
        """minigrad-grade's flags for these options, in the order the class command has always
        written them (its errors.csv shows them in the command that regrades a student)."""
        flags = ["--seed", str(self.seed), "--parts", ",".join(self.parts), "--isolation", self.isolation]
        flags += (
            ["--official"] * self.official + ["--in-class"] * self.in_class + ["--check-imports"] * self.check_imports
        )
        flags += ["--visibility", self.visibility] if self.visibility else []
        flags += ["--reference-cache", str(self.reference_cache)] if self.reference_cache else []
        flags += ["--label", self.label] if self.label is not None else []
        return (*flags, *(arg for note in self.refused for arg in ("--refused", note)))


def run_suites(run: GradingRun, parts: tuple[str, ...], report: Path) -> tuple[Grading, int]:
    """Run the hidden suites of `parts` with the grading plugin, which keeps each test's record."""
    grading = Grading(run)
    args = [
        *(str(SUITES / f"test_{part}.py") for part in parts),
        "-c",
        str(SUITES / "pytest.ini"),
        # -qq: no "3 failed, 45 passed" line above the grade: the bonus tests are counted
        # in it as failures, and the table below says the score part by part.
        "-qq",
        "--no-header",
        "-p",
        "no:cacheprovider",
        "--tb=no",
        "-rN",
        "--assert=plain",
        # No student code runs in this process, so it has no unraisable exceptions to report,
        # and that plugin's garbage collections at exit cost a tenth of the parent's time. Nor
        # does it print, log or warn in a test: capturing that around each of ~130 tests (and
        # the faulthandler and thread-exception hooks) costs a tenth of what is left.
        *("-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:faulthandler"),
        *("-p", "no:logging", "-p", "no:warnings", "--capture=no"),
        "-p",
        "pytest_jsonreport.plugin",
        "--json-report",
        f"--json-report-file={report}",
        "--json-report-omit=collectors",
    ]
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


def in_course_order(records: list) -> list:
    """The records part by part in the order students take the parts, as `make check` lists
    them (value, backward, mlp, tensor, checkpoint), not in the order they were graded (the
    quiz first, so a slow submission cannot spend its time budget)."""
    place = {part.name: i for i, part in enumerate(COURSE)}
    return sorted(records, key=lambda record: place.get(record.part, len(place)))


def run(submission: Path, out: Path, options: Options) -> int:
    """Grade `submission` into `out` (made if missing): 0 when a grade was written, whatever the
    score; 2 when the machine cannot grade safely or the grader failed (said on stderr)."""
    output_files.prepare_folder(out)
    with identity.claimed() if os.geteuid() == 0 else nullcontext(None) as who, private_tempdir() as root:
        stop_cleanly_on_sigterm(who, root)
        return grade(submission, out, options, who, root)


def grade(submission: Path, out: Path, options: Options, who: identity.Identity | None, root: Path) -> int:
    start = time.monotonic()
    closed = options.official or options.in_class
    isolation, seen, passed_over = selftest.choose_level(options.isolation, options.official, who, closed)
    if problem := selftest.missing_imports(isolation, who):  # a broken machine never grades
        print(f"grading refused: {problem}", file=sys.stderr)
        return 2
    seed = options.seed
    workdir, copied = prepare_workdir(submission.resolve(), who)
    copied.refused[:0] = options.refused
    first = [upload_check.check(submission, workdir, copied, isolation)] if options.check_imports else []
    cache = options.reference_cache or reference_cache.default_folder(isolation.level)
    grading_run = GradingRun(isolation, workdir, seed, cache)
    api, groups = [], []
    if first and not copied.found:
        records = first  # every hidden test failing would only hide the one thing to fix
        (root / "report.json").write_text("{}\n")
    else:
        grading, status = run_suites(grading_run, options.parts, root / "report.json")
        if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or grading.grader_errors:
            say("\n".join([f"grader error ({status!r}), no grade written:", *grading.grader_errors]), sys.stderr)
            return 2
        hidden = [replace(r, visibility=options.visibility or r.visibility) for r in grading.records]
        hidden = said_refused(hidden, copied.refused)
        records = first + hidden
        api, groups = grading.api, root_cause.group(hidden, grading.locations)
    level = isolation.level
    header = [
        f"minigrad hidden tests: {untrusted(options.label or submission, limit=1000)}",
        f"isolation: {level}{'' if level != 'local' else ' (untrusted: not for official grades)'}, seed: {seed}",
        *([f"note: {passed_over}"] if passed_over else []),
        *(f"refused: {untrusted(problem)}" for problem in copied.refused),
        *([] if copied.found else [intake.NOT_FOUND]),
        *(f"{check.name}: {check.status}" for check in first if copied.found),
    ]
    text = summary(in_course_order(records[len(first) :]), header, grading_run.notes)
    if groups:  # root cause first (root_cause.py)
        text += "\n\n" + terminal("\n".join(root_cause.lines(groups, [r.graded() for r in records])))
    extra = {
        "seed": seed,
        "isolation": level,
        "python": child_python.describe(),  # the child's: the kit's own at every level (child_python.py)
        "trusted": level != "local",
        "official": options.official,
        "self_test": seen,
        "network": isolation.network,
        "parts": list(options.parts),
        "limits": who.describe() if who else "rlimits only",
        "copied": copied.copied,
        "refused": copied.refused,
        "passed_over": passed_over,
        "course_api": api,  # the API probes' mismatches: Gradescope's visible test says them
        root_cause.KEY: root_cause.saved(groups),
    }
    results = gradescope(records, time.monotonic() - start, text, extra)
    report = json.loads((root / "report.json").read_bytes())  # pytest-json-report's: it quotes every message
    output_files.write_new(out, "report.json", (json_text(report) + "\n").encode())
    output_files.write_new(out, "results.json", (json_text(results) + "\n").encode())
    say(text)  # the grade is written: printing it can no longer cost it
    return 0
