"""The reference's answers, computed once for a class graded with one seed.

Every student of a class graded with one seed gets the same programs, so the reference's
answers are the same for all of them; running the reference beside every child doubles the
work of a class. The cache is keyed by the programs themselves and by the exact files that
compute their answers (`kit.reference_inputs`: the reference package, the child runner, the
digits), so a stale answer cannot be served: a new seed, suite, reference, runner or data
file is a new key, and so is another Python or NumPy. Only runs in which the
reference answered every program are kept, so a reference starved by a loaded machine is
never remembered. The folder is the grader's own (inside the class's `--out`, closed to other
users); entries are written exclusive and no-follow, then renamed into place, so gradings
running at once may race to store the same answers without harm.

A single grading (minigrad-grade without --reference-cache) keeps them in the grader's user
cache (`default_folder`), so grading again with the same seed costs the child's run alone:
half of a grading's CPU time.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graders.course_facts import kit
from graders.isolation import sandbox
from graders.reporting import output_files

from .child_loop import run_reference
from .protocol import Outcome


def answers(cache: Path | None, programs: list[list], tests: list[str], parts: list[str]) -> list[Outcome]:
    """The reference's outcome for each program, from `cache` when it holds them. Gradings
    started together wait for the first to compute them instead of computing them again."""
    if cache is None:
        return run_reference(programs, tests, parts)
    name = f"{key(programs)}.json"
    output_files.prepare_folder(cache)
    with _locked(cache / f"{name}.lock"):
        stored = output_files.read_json(cache / name)
        if isinstance(stored, list) and len(stored) == len(programs):
            return [Outcome(entry["out"], entry["error"]) for entry in stored]
        outcomes = run_reference(programs, tests, parts)
        if all(outcome.error is None for outcome in outcomes):
            data = json.dumps([{"out": o.out, "error": o.error} for o in outcomes]).encode()
            output_files.write_new(cache, name, data, mode=0o600)
            _prune(cache)
    return outcomes


def default_folder(level: str) -> Path | None:
    """Where a single grading keeps the reference's answers: the grader's user cache folder,
    closed to other users. None at the local level, whose child runs unconfined as this user
    and could write answers there for later gradings to believe, and None when the folder
    cannot be made (no home, a read-only one)."""
    if level == "local":
        return None
    try:
        folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "minigrad-grader" / "reference"
        output_files.prepare_folder(folder)
    except (OSError, RuntimeError, SystemExit):
        return None
    return folder


KEEP = 50  # entries: one per seed and version of the kit, so old ones are only ever stale


def _prune(cache: Path) -> None:
    entries = sorted(cache.glob("*.json"), key=lambda path: path.stat().st_mtime, reverse=True)
    for stale in entries[KEEP:]:
        stale.unlink(missing_ok=True)
        stale.with_name(f"{stale.name}.lock").unlink(missing_ok=True)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` for the block, dropped by the kernel however the grader
    ends; a lock file that cannot be opened (a link planted there) just means no waiting."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def key(programs: list[list]) -> str:
    """A digest of the programs, of every file that computes their answers, and of the Python
    and NumPy that run the reference."""
    numpy = sandbox.numpy_for(sys.executable)
    version = numpy / "numpy" / "version.py" if numpy else None
    runtime = sys.version + (version.read_text() if version and version.is_file() else "")
    return kit.hash_files(kit.reference_inputs(), (runtime + json.dumps(programs, sort_keys=True)).encode())
