"""One grading of one student, as a pure task that runs on this machine or on a cluster worker.

A `Job` is plain data: the student's packed files (packing.py), the grader's options (the seed
fixed by the class command, so a rerun anywhere is identical) and the kit version the class
command runs. `grade(job)` checks the kit version, unpacks the files into a folder of its own,
runs `minigrad-grade` on them and returns results.json's and report.json's text; the class
command writes them. So a class grade is exactly the grade a student would get alone, and
nothing assumes the machine that grades shares a filesystem with the class command.

`minigrad-grade` runs as a fork of this process's forkserver (forkserver.py), which has
already imported the grader: the same command, in a process and session of its own (Ctrl-C
reaches only the class command, which then stops the gradings), that gets SIGTERM if the
process that asked for it dies (a cluster worker killed mid-grading): the grader's own SIGTERM
handler kills its children, deletes its work folders and frees its uid. On a cluster worker,
a task the class command cancelled stops its grading within a poll; a stopped grading returns
nothing. Its stderr goes to `STUDENT.grader-stderr.txt` in the task's folder, so `ls -l
/proc/PID/fd/2` (root's to read) tells which student a grading is. The folder itself is named
`minigrad-task-` and a random token, private to root: it lies where a user-level child may
list names (/tmp, a worker's directory), which must never show a classmate's.

The class submits gradings to a `concurrent.futures.Executor`. Locally that is a thread pool
whose threads only wait: each grading is already a process of its own, with its own uid and
limits, so a process pool would add nothing but start-up time.
"""

from __future__ import annotations

import tempfile
import threading
import time
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from graders.course_facts import kit_version
from graders.uploads import packing

from . import dask_worker, forkserver

TIMEOUT = 600.0  # seconds; the grader bounds itself far below this (its children have 150 s together)
POLL = 0.25  # seconds between checks that the task is still wanted
TASK, STDERR = "minigrad-task-", ".grader-stderr.txt"  # a task's folder is TASK + random; STUDENT + STDERR in it
_server: forkserver.Client | None = None
_running: dict[int, forkserver.Client] = {}  # each grading's pid, and the server that forked it
_lock = threading.Lock()


@dataclass(frozen=True)
class Job:
    student: str
    archive: bytes  # packing.pack's tar: the files the grader would copy
    digest: str  # packing's hash of the archive: with the student, the task's name
    options: tuple[str, ...]  # minigrad-grade's options: --seed, --parts, --refused, ...
    kit: str  # the class command's kit version; a worker running another refuses the job
    cache: str | None  # the reference cache folder where the job runs; None: the worker's own
    seconds: float = 0.0  # how long the student's last grading took: a cluster starts the longest first


@dataclass(frozen=True)
class Graded:
    student: str
    results: str | None  # results.json's text, when a grade was written
    report: str | None
    problem: str | None  # why there is no grade; None when there is


def executor(jobs: int) -> Executor:
    return ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="grading")


def grade(job: Job) -> Graded:
    """Grade one packed submission; a crash or a hang is a problem, never an exception."""
    if (here := kit_version.digest()) != job.kit:
        return Graded(
            job.student,
            None,
            None,
            f"kit version mismatch: this worker runs {here[:12]}, "
            f"the class command {job.kit[:12]}; install the same kit on both",
        )
    with tempfile.TemporaryDirectory(prefix=TASK, dir=dask_worker.scratch()) as scratch:
        submission, out = Path(scratch) / "submission", Path(scratch) / "out"
        submission.mkdir()
        packing.unpack(job.archive, submission)
        cache = job.cache or str(dask_worker.reference_cache())
        flags = [str(submission), "--out", str(out), *job.options, "--in-class", "--reference-cache", cache]
        problem = _run(flags, Path(scratch) / f"{job.student[:48]}{STDERR}")  # 48 4-byte letters fit a file name
        if problem is not None:
            return Graded(job.student, None, None, problem)
        results, report = (_read(out / name) for name in ("results.json", "report.json"))
    if results is None:
        return Graded(job.student, None, None, "the grader exited without writing results.json")
    return Graded(job.student, results, report, None)


def _run(flags: list[str], stderr: Path) -> str | None:
    """Run the grader to its end (or its stop); the problem, or None when it exited 0."""
    server = _forkserver()
    if (pid := server.start(flags, stderr)) is None:
        return "the grading server stopped before the grading started"
    with _lock:
        _running[pid] = server
    deadline = time.monotonic() + TIMEOUT
    try:
        while (status := server.wait(pid, POLL)) is None:
            stop = "the task was cancelled" if dask_worker.cancelled() else None
            if time.monotonic() > deadline:
                stop = f"the grader took over {TIMEOUT:.0f} s and was stopped"
            if stop:
                server.stop(pid)
                server.wait(pid, None)
                return stop
    finally:
        with _lock:
            _running.pop(pid, None)
    if status != 0:
        return f"the grader exited with status {status}: {_last_line(stderr)}"
    return None


def _forkserver() -> forkserver.Client:
    """This process's forkserver, started on first use (and again if it ever stopped)."""
    global _server
    with _lock:
        if _server is None or not _server.alive():
            _server = forkserver.Client()
        return _server


def _last_line(path: Path) -> str:
    """The last line the grader wrote to stderr (read from the end: its size is not bounded)."""
    try:
        with path.open("rb") as file:
            file.seek(max(0, path.stat().st_size - 4096))
            lines = file.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def stop_all() -> None:
    """SIGTERM every grading still running in this process, as Ctrl-C asks."""
    with _lock:
        running = list(_running.items())
    for pid, server in running:
        server.stop(pid)
