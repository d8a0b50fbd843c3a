"""Grade a class's tasks on a pool, a window at a time: the local threads (jobs.py) or a
Dask cluster (cluster.py) alike.

Only a window of tasks (twice the pool's slots) is packed and submitted at once, so a class's
archives are never all in memory, and the pool always has the next one. Each grade is
written as it arrives, so a crash or Ctrl-C loses nothing finished. Anything one task raises,
packing its upload, grading it or writing its grade, is that student's problem in errors.csv:
the others go on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from . import jobs


@dataclass(frozen=True)
class Task:
    """One upload to grade, as the class command found it."""

    student: str
    upload: Path
    seconds: float  # how long the student's last grading took; 0 when unknown
    source: str = ""  # the upload where the instructor finds it
    left_out: tuple[str, ...] = ()  # files left out while unpacking it, with why (layouts.Submission)


def run(
    tasks: list[Task],
    pool: Executor,
    window: int,
    make_job: Callable[[Task], jobs.Job],
    finish: Callable[[jobs.Job, jobs.Graded], str | None],
) -> tuple[dict[str, str], bool]:
    """Grade `tasks` on `pool`, at most `window` submitted at once, each result written as it
    arrives (so a crash or Ctrl-C loses nothing finished), with a progress bar; returns each
    failed student's problem and whether Ctrl-C stopped the run."""
    failed: dict[str, str] = {}
    waiting: dict[Future, jobs.Job] = {}
    queue = iter(tasks)
    try:
        with tqdm(total=len(tasks), unit="student", desc="grading", dynamic_ncols=True) as bar:
            while True:
                while len(waiting) < window and (task := next(queue, None)) is not None:
                    try:
                        job = make_job(task)
                    except Exception as error:  # noqa: BLE001 - one upload's trouble is that student's row
                        failed[task.student] = f"the upload could not be packed: {type(error).__name__}: {error}"
                        bar.update()
                        continue
                    waiting[pool.submit(jobs.grade, job)] = job
                if not waiting:
                    break
                done, _ = wait(waiting, return_when=FIRST_COMPLETED)
                for future in done:
                    job = waiting.pop(future)
                    problem = _problem(future) or _finished(finish, job, future.result())
                    if problem is not None:
                        failed[job.student] = problem
                    bar.update()
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        jobs.stop_all()
        pool.shutdown(wait=True)
        print("\ninterrupted: finished grades are kept; run again with --resume for the rest", file=sys.stderr)
        return failed, True
    pool.shutdown()
    return failed, False


def _finished(finish: Callable[[jobs.Job, jobs.Graded], str | None], job: jobs.Job, graded: jobs.Graded) -> str | None:
    """`finish`, with anything it raises made that student's problem: the batch goes on."""
    try:
        return finish(job, graded)
    except Exception as error:  # noqa: BLE001 - the other students' grades must still be written
        return f"the grade could not be written: {type(error).__name__}: {error}"


def _problem(future: Future) -> str | None:
    """Why a task gave no grade: its own problem, or what the executor says (on a cluster,
    for example, that the submission's gradings killed every worker they ran on)."""
    if future.cancelled():
        return "the grading was cancelled"
    if (error := future.exception()) is not None:
        return f"the grading failed: {type(error).__name__}: {error}"
    return future.result().problem
