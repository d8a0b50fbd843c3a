"""The hidden suites' pytest plugin: seeded cases, one batch run, and a record per graded test.

The grading command makes one `Grading` for a run and hands it to pytest as a plugin object;
the suites in suites/ hold only test programs. Each test function is parametrized by
`@cases(make)`, where `make(rng)` returns the test's `Case`s (a fixed number, so totals never
depend on the seed). When the first test runs, every collected case starts to run on the
reference (a trusted subprocess) and on the submission (the child), side by side, in a thread
of their own; each test waits only for its own programs (arrivals.py). As each test ends, its
`Verdict` is made from its `Case`, so the command reads the grades from `records` as objects.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from graders.reporting import root_cause
from graders.reporting.cause import Cause
from graders.reporting.results import Verdict

from . import notes, reference_cache
from .arrivals import Arrivals
from .cases import MAKER, Case
from .child_loop import run_child
from .grading_run import GradingRun
from .judge import GraderError, judge

MESSAGE_LIMIT = 4000  # characters of one test's message
# Each part's API probe (its step in child/steps_api.py) and what words its mismatches (notes.py)
PROBES = {"value": ("api", notes.api), "mlp": ("api_nn", notes.api_nn), "tensor": ("api_tensor", notes.api_tensor)}


class Grading:
    """The plugin for one grading run: its cases, their outcomes, and the records of its tests."""

    def __init__(self, run: GradingRun) -> None:
        self.run = run
        self.records: list[Verdict] = []
        self.grader_errors: list[str] = []  # a suite's fault, not the student's: no grade is written
        self.cases: list[tuple[str, Case]] = []  # (test function, case), in the order collected
        self.arrivals: Arrivals | None = None  # None until the first test asks
        self.programs_of: dict[int, range] = {}  # by id(case): its programs' places in the run
        self.worker: threading.Thread | None = None
        self.api: list[str] = []  # the API probes' mismatches with the course's API (notes.py)
        self.evidence = root_cause.Evidence()  # what the probes saw, for placing blame (notes.py)
        self.locations = self.evidence.locations  # where the submission defines each function

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        make = getattr(metafunc.function, MAKER, None)
        if make is not None:
            built = make(random.Random(f"{self.run.seed}/{metafunc.function.__name__}"))
            metafunc.parametrize("case", built, ids=[c.id for c in built])

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.cases = [(item.originalname, item.callspec.params["case"]) for item in items if hasattr(item, "callspec")]

    @pytest.fixture
    def grade(self) -> Callable[[Case], None]:
        """`grade(case)` fails the test, in words, unless the submission matches the reference."""
        if self.arrivals is None:
            self.start_everything()
        arrivals = self.arrivals

        def check(case: Case) -> None:
            judge(case, *arrivals.wait(self.programs_of[id(case)]))

        return check

    def start_everything(self) -> None:
        """Start every program of every collected case, on the reference and in the child at once."""
        programs = [p.steps for _, c in self.cases for p in c.programs]
        tests = [f"{test}[{c.id}]" for test, c in self.cases for _ in c.programs]  # a hang skips its own case
        parts = [c.part for _, c in self.cases for _ in c.programs]
        bonus = [c.bonus for _, c in self.cases for _ in c.programs]
        # Each API probe runs once per grading that grades its part, just after the last of the
        # part's programs: a program run earlier would import the submission sooner, and change
        # what its tests meet.
        probes = {}
        for part, (probe, _) in PROBES.items():
            if part in parts:
                at = len(parts) - parts[::-1].index(part)
                probes = {other: i + (i >= at) for other, i in probes.items()}
                probes[part] = at
                programs.insert(at, [[probe, {}]])
                tests.insert(at, f"course API ({part})")
                parts.insert(at, part)
                bonus.insert(at, False)
        # An optional extension's programs get a time budget of their own, so an endless loop in
        # one can never shorten the time of the part's graded tests.
        budgets = [f"{part} (bonus)" if extra else part for part, extra in zip(parts, bonus)]
        position = 0
        for _, c in self.cases:
            position += position in probes.values()  # a probe between two cases
            self.programs_of[id(c)] = range(position, position + len(c.programs))
            position += len(c.programs)
        self.arrivals = Arrivals(len(programs))
        run = (programs, tests, budgets, parts, bonus, probes)
        self.worker = threading.Thread(target=self.run_everything, args=run, daemon=True)  # no grade outlives it
        self.worker.start()

    def run_everything(
        self, programs: list, tests: list[str], budgets: list[str], parts: list[str], bonus: list[bool], probes: dict
    ) -> None:
        """The child and the reference side by side; then what the probes and the failures say."""
        run, arrivals = self.run, self.arrivals
        try:
            with ThreadPoolExecutor(max_workers=1) as pool:
                child = pool.submit(
                    run_child, run.workdir, programs, tests, budgets, run.isolation, settled=arrivals.settled
                )
                arrivals.reference_known(reference_cache.answers(run.reference_cache, programs, tests, budgets))
                submission = child.result()
            self.take_notes(submission, parts, bonus, probes)
        except Exception as exc:  # noqa: BLE001 - a grader fault: said once, never retried per test
            arrivals.failed(GraderError(f"the grading run failed: {exc!r}"))

    def take_notes(self, submission: list, parts: list[str], bonus: list[bool], probes: dict) -> None:
        """The notes: what the API probes found, and what the graded tests' failures share."""
        submission, parts, bonus = list(submission), list(parts), list(bonus)
        for part, at in sorted(probes.items(), key=lambda item: -item[1]):  # the later first: indices hold
            found = submission[at]
            notes.evidence(part, found, self.evidence)
            # said first among the notes: a wrong name explains many failures at once
            self.api[:0] = PROBES[part][1](found)
            for answers in (submission, parts, bonus):
                del answers[at]
        self.run.notes[:0] = self.api
        # The notes say what the graded tests need: a missing optional extension needs no note.
        collected = notes.collect((part, got) for part, got, extra in zip(parts, submission, bonus) if not extra)
        self.run.notes.extend(collected)

    def pytest_sessionfinish(self) -> None:
        """The run is over before the command reads its notes; a fault no test waited for is said."""
        if self.worker is None:
            return
        self.worker.join()
        if self.arrivals.failure is not None and not self.grader_errors:
            self.grader_errors.append(str(self.arrivals.failure))
        self.records = [replace(r, cause=r.cause and root_cause.through(r.cause, self.evidence)) for r in self.records]

    @staticmethod
    def ran(case: Case, passed: bool) -> Cause | None:
        """What a passed test used, every program of it: root_cause.py weighs a function that
        failing tests use by how many passing ones use it too."""
        return Cause(uses=tuple(dict.fromkeys(root_cause.uses([p.steps for p in case.programs])))) if passed else None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """A graded test's failure reads as the student's message, and its record is kept: one
        for the test's call, and one for a setup or teardown that failed."""
        report = yield
        case = getattr(item, "callspec", None) and item.callspec.params.get("case")
        if case is None:
            return report
        failed_call = report.failed and call.excinfo is not None and call.when == "call"
        if failed_call:
            report.longrepr = str(call.excinfo.value)
        if report.when != "call" and not report.failed:
            return report
        message = str(report.longrepr or "")[:MESSAGE_LIMIT]
        if failed_call and call.excinfo.errisinstance(GraderError):
            self.grader_errors.append(f"{report.nodeid}: {message}")
        name = f"{case.part}: {case.what} [{report.nodeid.split('[')[-1].rstrip(']')}]"
        self.records.append(
            Verdict(
                name,
                case.part,
                case.points,
                report.passed,
                message,
                "after_due_date",  # minigrad-grade's --visibility may change it
                case.bonus,
                getattr(call.excinfo.value, "cause", None) if failed_call else self.ran(case, report.passed),
            )
        )
        return report
