"""One grading of one student, and the executor that runs a class of them.

A grading is `minigrad-grade` run as a subprocess into the student's folder under `--out`:
the same command, sandbox and checks as a single grade, so a class grade is exactly the grade
a student would get alone. Each runs in a session of its own, so Ctrl-C reaches only the class
command, which then stops every running grading with SIGTERM (the grader's own handler kills
its child processes, deletes its work folders and frees its uid); a stopped grading writes
nothing, and every finished one is intact.

The class submits gradings to a `concurrent.futures.Executor`. Locally that is a thread pool
whose threads only wait: each grading is already a process of its own, with its own uid and
limits, so a process pool would add nothing but start-up time. `grade` takes and returns plain
data, so another executor (a cluster's) can run it as it is.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

GRADER = (sys.executable, "-m", "graders")
TIMEOUT = 600.0  # seconds; the grader bounds itself far below this (its children have 150 s together)
_running: set[subprocess.Popen] = set()
_lock = threading.Lock()


@dataclass(frozen=True)
class Task:
    student: str
    submission: Path
    out: Path  # the student's folder under --out
    options: tuple[str, ...]  # minigrad-grade's options: --seed, --parts, --reference-cache, ...


@dataclass(frozen=True)
class Finished:
    student: str
    problem: str | None  # why no grade was written; None when it was


def executor(jobs: int) -> Executor:
    return ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="grading")


def grade(task: Task) -> Finished:
    """Run minigrad-grade on one submission; a crash or a hang is a problem, never an exception."""
    command = [*GRADER, str(task.submission), "--out", str(task.out), *task.options]
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    with _lock:
        _running.add(process)
    try:
        _, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.terminate()
        process.communicate()
        return Finished(task.student, f"the grader took over {TIMEOUT:.0f} s and was stopped")
    finally:
        with _lock:
            _running.discard(process)
    if process.returncode != 0:
        last = (stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
        return Finished(task.student, f"the grader exited with status {process.returncode}: {last}")
    if not (task.out / "results.json").is_file():
        return Finished(task.student, "the grader exited without writing results.json")
    return Finished(task.student, None)


def stop_all() -> None:
    """SIGTERM every grading still running, as Ctrl-C asks."""
    with _lock:
        running = list(_running)
    for process in running:
        try:
            process.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
