"""The hidden suites' pytest plugin: seeded cases, one batch run, per-test points.

Each test function is parametrized by `@cases(make)`, where `make(rng)` returns the test's
`Case`s (a fixed number, so totals never depend on the seed). Before the first test runs,
every collected case is run on the reference (a trusted subprocess) and on the submission (the
child), side by side.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from graders import context, harness, notes, reference_cache
from graders.cases import MAKER
from graders.judge import GraderError, judge


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    make = getattr(metafunc.function, MAKER, None)
    if make is not None:
        rng = random.Random(f"{metafunc.config.stash[context.KEY].seed}/{metafunc.function.__name__}")
        built = make(rng)
        metafunc.parametrize("case", built, ids=[c.id for c in built])


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    config.stash[ALL_CASES] = [
        (item.originalname, item.callspec.params["case"]) for item in items if hasattr(item, "callspec")
    ]


ALL_CASES = pytest.StashKey[list]()
OUTCOMES = pytest.StashKey[dict]()


def _run_everything(config: pytest.Config) -> dict:
    all_cases = config.stash[ALL_CASES]
    programs = [p.steps for _, c in all_cases for p in c.programs]
    tests = [f"{test}[{c.id}]" for test, c in all_cases for _ in c.programs]  # a hang skips its own case
    parts = [c.part for _, c in all_cases for _ in c.programs]
    bonus = [c.bonus for _, c in all_cases for _ in c.programs]
    # An optional extension's programs get a time budget of their own, so an endless loop in
    # one can never shorten the time of the part's graded tests.
    budgets = [f"{part} (bonus)" if extra else part for part, extra in zip(parts, bonus)]
    run = config.stash[context.KEY]
    with ThreadPoolExecutor(max_workers=1) as pool:  # the child and the reference run side by side
        child = pool.submit(harness.run_child, run.workdir, programs, tests, budgets, run.isolation)
        reference = reference_cache.answers(run.reference_cache, programs, tests, budgets)
        submission = child.result()
    outcomes, position = {}, 0
    for _, c in all_cases:
        n = len(c.programs)
        outcomes[id(c)] = (reference[position : position + n], submission[position : position + n])
        position += n
    # The notes say what the graded tests need: a missing optional extension needs no note.
    run.notes.extend(notes.collect((part, got) for part, got, extra in zip(parts, submission, bonus) if not extra))
    return outcomes


@pytest.fixture
def grade(request: pytest.FixtureRequest):
    config = request.config
    if OUTCOMES not in config.stash:
        try:
            config.stash[OUTCOMES] = _run_everything(config)
        except Exception as exc:  # noqa: BLE001 - a grader fault: said once, never retried per test
            config.stash[OUTCOMES] = GraderError(f"the grading run failed: {exc!r}")
    outcomes = config.stash[OUTCOMES]

    def check(case) -> None:
        if isinstance(outcomes, GraderError):
            raise outcomes
        judge(case, *outcomes[id(case)])

    return check


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    case = getattr(item, "callspec", None) and item.callspec.params.get("case")
    if case is not None:
        report.user_properties += [("part", case.part), ("points", case.points), ("what", case.what)]
        report.user_properties.append(("bonus", case.bonus))
        visibility = item.get_closest_marker("visibility")
        report.user_properties.append(("visibility", visibility.args[0] if visibility else "after_due_date"))
        if report.failed and call.excinfo is not None and call.when == "call":
            report.longrepr = str(call.excinfo.value)
            if call.excinfo.errisinstance(GraderError):
                report.user_properties.append(("grader_error", True))
    return report
