"""A test waits for its own programs only, and a failed run reaches every test still waiting."""

from __future__ import annotations

import threading
import time

import pytest

from graders.grading.arrivals import Arrivals
from graders.grading.judge import GraderError
from graders.grading.protocol import Outcome


def later(seconds: float, action) -> threading.Thread:  # noqa: ANN001 - any callable
    thread = threading.Thread(target=lambda: (time.sleep(seconds), action()))
    thread.start()
    return thread


def test_a_test_is_judged_once_its_own_programs_and_the_reference_are_known() -> None:
    arrivals = Arrivals(3)
    reference = [Outcome([i], None) for i in range(3)]
    arrivals.settled(0, Outcome([10], None))
    later(0.05, lambda: arrivals.reference_known(reference)).join()
    assert arrivals.wait(range(0, 1)) == ([Outcome([0], None)], [Outcome([10], None)])
    waiting = later(0.2, lambda: arrivals.settled(2, Outcome([12], None)))
    start = time.monotonic()
    arrivals.settled(1, Outcome([11], None))
    assert arrivals.wait(range(1, 2)) == ([Outcome([1], None)], [Outcome([11], None)])
    assert time.monotonic() - start < 0.15  # program 1 did not wait for program 2
    assert arrivals.wait(range(1, 3))[1] == [Outcome([11], None), Outcome([12], None)]
    waiting.join()


def test_a_failed_run_reaches_every_test_still_waiting() -> None:
    arrivals = Arrivals(2)
    arrivals.settled(0, Outcome([], None))
    failing = later(0.05, lambda: arrivals.failed(GraderError("the grading run failed: OSError()")))
    with pytest.raises(GraderError, match="the grading run failed"):
        arrivals.wait(range(0, 1))  # the reference never came
    with pytest.raises(GraderError, match="the grading run failed"):
        arrivals.wait(range(1, 2))
    failing.join()
