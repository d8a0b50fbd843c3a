"""Outcomes as they arrive, for the tests to wait on: a test is judged as soon as its own
programs have answered, while the child still runs the later ones.

The child answers in the order the tests were collected, so the parent's share of a grading
(pytest's protocol for each test, the comparisons, the messages) runs beside the child's on
the other core instead of after it. The reference's answers come all at once (from the cache,
or from its own run); a failure of the run reaches every test still waiting, as the same
`GraderError`.
"""

from __future__ import annotations

import threading

from .judge import GraderError
from .protocol import Outcome


class Arrivals:
    def __init__(self, count: int) -> None:
        self.submission: list[Outcome | None] = [None] * count
        self.reference: list[Outcome] | None = None
        self.failure: GraderError | None = None
        self.changed = threading.Condition()

    def settled(self, index: int, outcome: Outcome) -> None:
        """The submission's final outcome for program `index` (child_loop.run_child's callback)."""
        with self.changed:
            self.submission[index] = outcome
            self.changed.notify_all()

    def reference_known(self, reference: list[Outcome]) -> None:
        with self.changed:
            self.reference = reference
            self.changed.notify_all()

    def failed(self, failure: GraderError) -> None:
        with self.changed:
            self.failure = failure
            self.changed.notify_all()

    def wait(self, indices: range) -> tuple[list[Outcome], list[Outcome]]:
        """The reference's and the submission's outcomes of these programs, once all are known."""

        def known() -> bool:
            answered = self.reference is not None and all(self.submission[i] is not None for i in indices)
            return answered or self.failure is not None

        with self.changed:
            self.changed.wait_for(known)
            if self.failure is not None:
                raise self.failure
            return [self.reference[i] for i in indices], [self.submission[i] for i in indices]
