"""The trusted parent's loop over one grading's children: programs in, outcomes out.

Programs for the whole run go to one child, which answers one line per program; when the
child dies, hangs or floods, the program it was on fails and a fresh child takes the rest.
Time is bounded three ways, none of which a submission can stretch: each program has a
deadline that only its own valid answer ends (and a child that answered them all has
EXIT_GRACE to exit, so a process it left behind holds nothing); each part may lose at most
PART_BUDGET seconds to programs that never finish (then its programs get SHORT_TIMEOUT each);
the whole grading has GRADING_BUDGET. A program that starts with a `measured` step (cases.py)
runs alone in a fresh child, as the grading's second uid: beside the others where the sandbox
walls the two children apart, else after them; the CPU that child used, counted here
(child_cpu.py), goes with its outcome, for the judge to hold against its limit, and at each of
its deadlines (`stop_after`) it runs on while it is within that limit. A program that
reaches its deadline without having had a full core (a loaded machine starved it) keeps
running, given as much more time as the load took from it (at most MAX_STRETCH times), so a
loaded machine does not cost points; one whose child barely ran (it slept, or was frozen) is
run once more in a fresh child. And a hang is paid for once: the function the child was
stopped in fails every later call at once, with the same message (hang_report.py), whatever
part calls it.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from graders.course_facts.kit import REFERENCE
from graders.isolation import child_cpu, sandbox
from graders.isolation.workdir import seal, with_runner

from . import hang_report
from .cases import measured
from .hang_report import Import, Stuck
from .protocol import TEXT_LIMIT, Outcome, failure, parse_line

PROGRAM_TIMEOUT = 5.0  # wall seconds per program: room for a machine running a grading per core
PART_BUDGET = 10.0  # wall seconds a part may lose to programs that never finish
SHORT_TIMEOUT = 1.0  # per program, once its part's budget is spent
GRADING_BUDGET = 150.0  # wall seconds for all of one grading's children together
EXIT_GRACE = 1.0  # wall seconds a child that answered every program has to exit; then it is stopped
FULL_CORE = 0.9  # share of a core above which a child at its deadline was simply too slow
ASLEEP = 0.1  # share below which it was not starved but waiting: it is run again, in a fresh child
MAX_STRETCH = 2.0  # the most a starved program's time is stretched: a hang then costs at most 2 program times
REFERENCE_PATIENCE = 6.0  # the trusted reference never loops: only a loaded machine slows it
# A measured child beside the others runs at a lower priority while they run: its count is CPU
# time, which priority does not change, and it then takes the cores the others and the parent
# leave idle rather than slowing the programs the grade waits on. Its time-outs decide nothing
# (it may have been starved): a measured program that timed out beside them runs again after them.
BESIDE_NICE = 10
SKIPPED = "skipped: an earlier program of this test took too long; look for an endless loop"
OUT_OF_TIME = f"skipped: the grading's time budget ({GRADING_BUDGET:.0f} s) was spent; look for endless loops or sleeps"


def run_reference(programs: list[list], tests: list[str], parts: list[str]) -> list[Outcome]:
    """The same programs on the reference, in a trusted subprocess run like the child.

    Not in this process: `Value._prev` is a set ordered by id(), so with this process's
    randomized memory layout the reference's sums would add up in a different order each
    run, and a replayed grade would differ in the last digits of its expected values.
    """
    folder = with_runner()
    for source in (REFERENCE / "minigrad").glob("*.py"):  # our own files: a plain copy
        shutil.copyfile(source, folder / "submission" / "minigrad" / source.name)
    seal(folder, None)
    try:
        return run_child(folder, programs, tests, parts, sandbox.Isolation("local"), REFERENCE_PATIENCE, alone=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_child(
    workdir: Path,
    programs: list[list],
    tests: list[str],
    parts: list[str],
    isolation: sandbox.Isolation,
    patience: float = 1.0,
    settled: Callable[[int, Outcome], None] | None = None,
    alone: bool = True,
) -> list[Outcome]:
    """Every program on the package copied into `workdir` (the submission's, or the
    reference's), restarting the child after each failure; `settled(i, outcome)` is told each
    program's outcome as soon as it is final.

    `tests` and `parts` name the test and part of each program. A crash costs only a restart,
    so it fails just its own program; once a program of a test times out, the rest of that
    test is skipped instead of each hanging in turn, and once one times out in a function the
    child names (hang_report.py), every later program that calls it fails at once with the
    same message. Each program gets the time its own part allows, even when one child runs
    programs of several parts; `patience` multiplies it. With `alone`, each measured program
    runs in a child of its own (as the grading's second uid, sandbox.Isolation.timed), after all
    the others (so that one child runs every other program: a child costs its start), and its
    CPU is counted; the reference's, whose time no test judges, run in order with the others.
    Where the children are walled apart (sandbox.Isolation.apart), the measured programs start
    at once, beside the others (at a lower priority while they run), and their outcomes stand when
    both runs ended calm: the others' changed nothing the measured programs meet, and none of
    these timed out (`_Loop.calm`); else they run again, after, as they would have.
    """
    order = sorted(range(len(programs)), key=lambda i: alone and measured(programs[i]) is not None)
    told = None if settled is None else lambda j, outcome: settled(order[j], outcome)
    ordered = [[items[i] for i in order] for items in (programs, tests, parts)]
    loop = _Loop(workdir, *ordered, isolation, patience, told, alone)
    timed = next((j for j, i in enumerate(order) if alone and measured(programs[i])), len(order))
    if timed < len(order) and isolation.apart:
        ahead = _Loop(workdir, *ordered, replace(isolation, nice=BESIDE_NICE), patience, None, alone, loop.end)
        with ThreadPoolExecutor(max_workers=1) as pool:
            beside = pool.submit(ahead.run, timed, len(order))
            loop.run(0, timed)
            ahead.isolation = isolation  # the others are done: no more waiting for them
            sandbox.restore_priority(isolation.timed())
            beside.result()
        if loop.calm and ahead.calm:
            for j in range(timed, len(order)):
                loop.settle(j, ahead.outcomes[j])
    loop.run(len(loop.outcomes), len(order))
    return [outcome for _, outcome in sorted(zip(order, loop.found()), key=lambda pair: pair[0])]


class _Loop:
    """run_child's programs, in the order they run, and what running them has taught: outcomes,
    hangs, exits at import, each part's time lost, the grading's time left."""

    def __init__(
        self,
        workdir: Path,
        programs: list[list],
        tests: list[str],
        parts: list[str],
        isolation: sandbox.Isolation,
        patience: float,
        settled: Callable[[int, Outcome], None] | None,
        alone: bool,
        end: float | None = None,
    ) -> None:
        self.workdir, self.programs, self.tests, self.parts = workdir, programs, tests, parts
        self.isolation, self.patience, self.settled, self.alone = isolation, patience, settled, alone
        self.outcomes: dict[int, Outcome] = {}
        self.hung: set[str] = set()
        self.stuck: dict[int, Stuck] = {}  # program -> where the child said it was, near its deadline
        self.known = hang_report.Known()
        self.lost: dict[str, float] = defaultdict(float)
        self.stretched: set[int] = set()  # programs given more time, in place, for a starved child
        self.rerun: set[int] = set()  # programs run again in a fresh child, after one that barely ran
        self.end = time.monotonic() + GRADING_BUDGET if end is None else end

    @property
    def calm(self) -> bool:
        """Whether what ran so far changes nothing a later program meets: no program timed out
        (which costs its part time and its test's later programs), no child exited importing a
        module (whose later imports then fail at once), and the grading has time left."""
        return not any(self.lost.values()) and not self.known.messages and time.monotonic() < self.end

    def found(self) -> list[Outcome]:
        return [self.outcomes[i] for i in range(len(self.programs))]

    def settle(self, i: int, outcome: Outcome) -> None:
        self.outcomes[i] = self.known.stopped(outcome)
        if self.settled is not None:
            self.settled(i, self.outcomes[i])

    def allowed(self, i: int) -> float:
        """Seconds on a core of its own."""
        wall = limit["stop_after"] if (limit := measured(self.programs[i])) else PROGRAM_TIMEOUT
        return self.patience * (wall if self.lost[self.parts[i]] < PART_BUDGET else SHORT_TIMEOUT)

    def timeout_for(self, i: int, last: int) -> float:
        """Nothing is wanted from a child past its last answer."""
        left = self.end - time.monotonic()
        return min(self.allowed(i) if i < last else EXIT_GRACE, left)

    def more_time(self, i: int, last: int, cpu_share: float) -> float | None:
        """For program i's child, at its deadline."""
        if (stretch := stretch_for(cpu_share)) is None or i in self.stretched or i >= last:
            return None
        self.stretched.add(i)
        return max(0.0, min(self.allowed(i) * (stretch - 1), self.end - time.monotonic()))

    def run(self, start: int, stop: int) -> None:
        """Programs `start` to `stop` (the end, or the first measured program); each measured one
        (when `alone`) in a child of its own."""
        programs, tests, parts = self.programs, self.tests, self.parts
        while start < stop:
            if tests[start] in self.hung or self.end - time.monotonic() <= 0:
                failed = failure(SKIPPED if tests[start] in self.hung else OUT_OF_TIME, "Skipped")
                self.settle(start, Outcome([], failed))
                start += 1
                continue
            last = segment_end(programs, start) if self.alone else stop
            limit = measured(programs[start]) if self.alone else None
            isolation = self.isolation.timed() if limit else self.isolation
            counted = (child_cpu.counter(isolation), limit["limit"]) if limit else None
            answers = Answers(self.settle, self.stuck, start, last, self.timeout_for, self.more_time, counted)
            seconds = [self.timeout_for(i, last) for i in range(start, last)]
            request = {"programs": programs[:last], "start": start, "seconds": seconds, **self.known.request()}
            result = sandbox.run(
                isolation,
                self.workdir,
                "runner.py",
                json.dumps(request).encode(),
                self.timeout_for(start, last),
                answers.accept,
                answers.starved,
            )
            start = answers.next
            if start == last:
                continue
            given = self.allowed(start)
            if result.timed_out:
                if result.cpu_share < ASLEEP and start not in self.rerun:
                    self.rerun.add(start)
                    continue
                self.lost[parts[start]] += given
                self.hung.add(tests[start])
                if (where := self.stuck.get(start)) is not None:
                    self.known.hang(where, hang_report.message(given, where))
            failed = child_failure(result, given, self.stuck.get(start))
            if answers.importing and result.returncode is not None and result.returncode >= 0 and not result.flooded:
                self.known.exit(answers.importing[-1], failed["message"])  # it exited while importing that module
            self.settle(start, Outcome([], failed, answers.cpu))
            start += 1


def segment_end(programs: list[list], start: int) -> int:
    """Where the child that starts at program `start` stops: after that one program when it is
    measured, else before the next measured program (or at the end)."""
    if measured(programs[start]):
        return start + 1
    return next((i for i in range(start + 1, len(programs)) if measured(programs[i])), len(programs))


def stretch_for(cpu_share: float) -> float | None:
    """How many times its time a program at its deadline gets in all, running on: for a child
    a loaded machine starved, as much as the load took (half a core: twice the time). None for
    one that had a full core and still did not finish (an endless loop), and for one that
    barely ran: asleep or frozen, it would not use the time (it is run again, fresh)."""
    if cpu_share >= FULL_CORE or cpu_share < ASLEEP:
        return None
    return min(1 / cpu_share, MAX_STRETCH)


class Answers:
    """Collects a child's answers in order, up to `last` (the child is sent no program past it,
    and an answer to one is garbage); only the answer to the program due renews its deadline, so
    stray lines (blank, forged, out of order) buy a hung child no time. The child's notes on the
    program due (where it is stuck, which modules it is importing) are kept, and buy no time
    either. With `counted` (a measured program's child: its CPU counter and its limit), the CPU
    it has used goes with its answer, or is kept at its deadline (`cpu`); at a deadline, a child
    that is running but has not yet used its limit runs on (a loaded machine slowed it, and the
    limit, not the wall clock, says whether it is too slow)."""

    def __init__(
        self,
        settle: Callable[[int, Outcome], None],
        stuck: dict[int, Stuck],
        first: int,
        last: int,
        timeout_for: Callable[[int, int], float],
        more_time: Callable[[int, int, float], float | None],
        counted: tuple[Callable[[], float], float] | None = None,
    ):
        self.settle, self.stuck, self.next, self.last = settle, stuck, first, last
        self.timeout_for, self.more_time, self.counted = timeout_for, more_time, counted
        self.importing: list[str] = []  # modules the program due began importing and has not ended
        self.cpu: float | None = None  # the measured child's CPU at its deadline

    def accept(self, line: bytes) -> float | None:
        """The next program's time if `line` answers the program due, else None."""
        parsed = parse_line(line, self.last)
        if parsed is None or parsed[0] != self.next:
            note = hang_report.parse(line, self.next)
            if isinstance(note, Stuck):
                self.stuck[self.next] = note
            elif isinstance(note, Import) and not note.done:
                self.importing.append(note.module)
            elif isinstance(note, Import) and note.module in self.importing:
                self.importing.remove(note.module)
            return None
        if self.counted is not None:
            parsed[1].cpu = self.counted[0]()
        self.settle(self.next, parsed[1])
        self.next += 1
        self.importing = []
        return self.timeout_for(self.next, self.last)

    def starved(self, cpu_share: float) -> float | None:
        """More seconds for the program due, whose child is at its deadline with `cpu_share`
        of a core over its life; None when it has simply timed out."""
        if self.counted is not None:
            self.cpu = self.counted[0]()
            if self.next < self.last and self.cpu <= self.counted[1] and cpu_share >= ASLEEP:
                return self.timeout_for(self.next, self.last)
        return self.more_time(self.next, self.last, cpu_share)


def child_failure(result: sandbox.ChildResult, timeout: float, stuck: Stuck | None = None) -> dict:
    if result.timed_out:
        return failure(hang_report.message(timeout, stuck))
    if result.flooded:
        return failure("printed far too much output")
    if result.returncode and result.returncode < 0:
        return failure(f"the Python process was killed (signal {-result.returncode}); memory or CPU limit exceeded?")
    reason = f"the Python process stopped early (exit code {result.returncode}); does your code call exit()?"
    tail = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
    return failure(reason + (f": {tail[0][:TEXT_LIMIT]}" if tail else ""))
