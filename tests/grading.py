"""Grading a submission the way the tests need it: in a fresh process, with the exact score,
and proof that it left nothing behind (no work folder, no process of its uid)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from graders.course_facts import kit
from graders.isolation import identity, processes, sandbox
from graders.reporting.results import read

ROOT = kit.ROOT  # the checkout, for the tests' paths
STRONG = [level for level in sandbox.available_levels() if level != "local"]
needs_isolation = pytest.mark.skipif(not STRONG, reason="needs the bwrap or user level (run as root)")


SECRET = {"MINIGRAD_TEST_SECRET": "in-the-graders-environment"}  # no child may ever read it


@contextmanager
def grader_tmp() -> Iterator[Path]:
    """A TMPDIR for one grading, which it must leave empty. Made under /tmp, not in pytest's
    private folders: the grading uid must be able to reach its own work folder inside."""
    work = Path(tempfile.mkdtemp(prefix="grader-tmp-"))
    work.chmod(0o711)
    try:
        yield work
        left = sorted(str(path.relative_to(work)) for path in work.rglob("*"))
        assert left == [], f"the grader left work folders behind: {left[:20]}"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def grade(submission: Path, out: Path, *args: str, seed: int = 7) -> tuple[subprocess.CompletedProcess, dict]:
    """Grade in a fresh process, with a temporary folder of its own that must end up empty."""
    with grader_tmp() as work:
        run = subprocess.run(
            [sys.executable, "-m", "graders", str(submission), "--out", str(out), "--seed", str(seed), *args],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, **SECRET, "TMPDIR": str(work)},
        )
        assert run.returncode == 0, run.stderr[-2000:]
    return run, json.loads((out / "results.json").read_text())


def part_scores(results: dict, bonus: bool = False) -> dict[str, float]:
    """Points per part (read by the kit's results model); a bonus test's (an optional
    extension's) only when `bonus` asks for them."""
    scores: dict[str, float] = {}
    for test in read(results).tests:
        if bonus or not test.bonus:
            scores[test.part] = round(scores.get(test.part, 0.0) + test.score, 6)
    return scores


def bonus_score(results: dict) -> float:
    """The points of the bonus tests passed: results.json's score is the base score plus these."""
    return read(results).bonus


def leftover_processes() -> list[int]:
    """Live processes of a grading uid that no grading holds any more (zombies are dead,
    waiting for init to reap them). Gradings running beside the tests hold their uids."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            uid = entry.stat().st_uid
            if not entry.name.isdigit() or not identity.FIRST_UID <= uid < identity.FIRST_UID + identity.UID_COUNT:
                continue
        except (FileNotFoundError, ProcessLookupError):
            continue
        if processes.alive(int(entry.name)) and not _held(uid):
            found.append(int(entry.name))
    return found


def _held(uid: int) -> bool:
    try:
        fd = os.open(identity.LOCKS / str(uid), os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def ctrl_c_reaches_it() -> None:
    """A Popen `preexec_fn`: SIGINT as a terminal's Ctrl-C sends it. A shell leaves SIGINT
    ignored in a command it runs in the background (CI's, `make test &`), a child inherits
    that, and Python then never raises KeyboardInterrupt: a test of Ctrl-C would pass nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
