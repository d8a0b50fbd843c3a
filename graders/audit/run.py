"""Every mutant graded in a pool: the public checks, then the hidden grader at three seeds.

A mutant is graded only in the parts that load its file (grading.py), the cheapest parts
first, and each side stops at the first part that kills it: a kill needs no more. At the first
seed every part is tried; at the other two the part that killed it first is tried first, so
the seed check usually costs one part's grading. Each task is a handful of subprocesses, so the
pool is of threads that wait on them: `jobs` gradings run at once.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import grading
from .mutants import Mutant

# Cheapest first (measured: a part's public checks take 0.3 s to 2.3 s, a hidden part 0.4 to 0.8 s).
PUBLIC_ORDER = ("checkpoint", "value", "backward", "extensions", "tensor", "mlp")
HIDDEN_ORDER = ("checkpoint", "value", "mlp", "tensor", "backward")
ERROR_CHARS = 500  # of a failed grading's reason, in the report


@dataclass(frozen=True)
class Kill:
    part: str
    lost: float  # points lost in that part against the reference
    failed: tuple[str, ...]  # the tests that lost them


@dataclass(eq=False)  # compared by identity: one grading of one mutant
class Graded:
    mutant: Mutant
    public: grading.PublicRun | None = None  # the first part whose checks failed, None: all passed
    hidden: dict[int, Kill | None] = field(default_factory=dict)  # seed -> first kill, None: survived
    seconds: float = 0.0
    error: str | None = None  # why it could not be graded (a grading crashed or timed out)

    @property
    def killed_by_public(self) -> bool:
        return self.public is not None

    def killed_by_hidden(self, seed: int) -> bool:
        return self.hidden.get(seed) is not None


class Baseline:
    """The reference's scores per seed and part, which a mutant's grading is compared with."""

    def __init__(self, cache: Path):
        self.cache = cache
        self.scores: dict[tuple[int, str], dict[str, float]] = {}

    def grade(self, seeds: list[int], parts: list[str], jobs: int) -> None:
        pairs = [(seed, part) for seed in seeds for part in parts]
        with tempfile.TemporaryDirectory(prefix="audit-reference-") as work:
            submission = grading.reference_copy(Path(work) / "reference")
            with ThreadPoolExecutor(jobs) as pool:
                runs = pool.map(lambda pair: grading.hidden_run(submission, pair[1], pair[0], self.cache), pairs)
                for (seed, part), run in zip(pairs, runs):
                    if run.failed:
                        raise RuntimeError(f"the reference fails {', '.join(run.failed)} ({part}, seed {seed})")
                    self.scores[seed, part] = run.scores


def grade_all(
    mutants: list[Mutant],
    seeds: list[int],
    jobs: int,
    work: Path,
    progress: Callable[[Graded], None] = lambda graded: None,
) -> list[Graded]:
    """Grade every mutant; results in the order of `mutants`."""
    work.mkdir(parents=True, exist_ok=True)
    cache = work / "reference-cache"
    baseline = Baseline(cache)
    parts = sorted({part for m in mutants for part in grading.hidden_parts(m.file)}, key=HIDDEN_ORDER.index)
    baseline.grade(seeds, parts, jobs)

    def task(mutant: Mutant) -> Graded:
        graded = grade_one(mutant, seeds, baseline, work)
        progress(graded)
        return graded

    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(task, mutants))


def grade_one(mutant: Mutant, seeds: list[int], baseline: Baseline, work: Path) -> Graded:
    started, graded = time.monotonic(), Graded(mutant)
    folder = work / mutant.id
    shutil.rmtree(folder, ignore_errors=True)
    submission = grading.reference_copy(folder, mutant.file, mutant.source)
    try:
        _grade(graded, submission, seeds, baseline)
    except (OSError, ValueError, KeyError, RuntimeError, subprocess.SubprocessError) as error:
        graded.error = f"{type(error).__name__}: {error}"[:ERROR_CHARS]  # said in the report; the rest go on
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    graded.seconds = time.monotonic() - started
    return graded


def _grade(graded: Graded, submission: Path, seeds: list[int], baseline: Baseline) -> None:
    """Fill in `graded`: the first public part that fails, then each seed's first hidden kill."""
    mutant = graded.mutant
    for part in sorted(grading.public_parts(mutant.file), key=PUBLIC_ORDER.index):
        if not (run := grading.public_run(submission, part)).passed:
            graded.public = run
            break
    order = sorted(grading.hidden_parts(mutant.file), key=HIDDEN_ORDER.index)
    if graded.public is not None and graded.public.part in order:  # most likely to kill it
        order.remove(graded.public.part)
        order.insert(0, graded.public.part)
    for seed in seeds:
        graded.hidden[seed] = _first_kill(submission, order, seed, baseline)
        if (kill := graded.hidden[seed]) is not None:
            order.remove(kill.part)
            order.insert(0, kill.part)


def _first_kill(submission: Path, parts: list[str], seed: int, baseline: Baseline) -> Kill | None:
    for part in parts:
        run = grading.hidden_run(submission, part, seed, baseline.cache)
        lost, failed = run.lost(baseline.scores[seed, part])
        if failed:
            return Kill(part, lost, tuple(failed))
    return None
