"""The reference's answers, computed once for a class graded with one seed.

Every student of a class graded with one seed gets the same programs, so the reference's
answers are the same for all of them; running the reference beside every child doubles the
work of a class. The cache is keyed by the programs themselves and by the exact files that
compute their answers (`kit.reference_inputs`: the reference package, the child runner, the
digits), so a stale answer cannot be served: a new seed, suite, reference, runner or data
file is a new key. Only runs in which the
reference answered every program are kept, so a reference starved by a loaded machine is
never remembered. The folder is the grader's own (inside the class's `--out`, closed to other
users); entries are written exclusive and no-follow, then renamed into place, so gradings
running at once may race to store the same answers without harm.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import kit, output_files
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
    return outcomes


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
    """A digest of the programs and of every file that computes their answers."""
    return kit.hash_files(kit.reference_inputs(), json.dumps(programs, sort_keys=True).encode())
