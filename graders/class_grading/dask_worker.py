"""What a grading task needs from the Dask worker it runs on, when it runs on one.

Nothing here imports Dask: on the class command's own machine `distributed` is never loaded
(it is an optional extra), and every answer is the local one.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

CACHE = "minigrad-reference-cache"
GONE = {"cancelled", "released", "forgotten"}  # a task in these states is no longer wanted


def _worker():  # -> distributed.Worker | None
    if "distributed" not in sys.modules:
        return None
    try:
        return sys.modules["distributed"].get_worker()
    except ValueError:  # not inside a task
        return None


def scratch() -> str | None:
    """Where a task unpacks and grades: the worker's local directory, or the system's temp."""
    worker = _worker()
    return worker.local_directory if worker else None


def reference_cache() -> Path:
    """The reference's answers, kept per worker (a cluster shares no filesystem)."""
    return Path(scratch() or tempfile.gettempdir()) / CACHE


def cancelled() -> bool:
    """True once the class command has cancelled this task (Ctrl-C, or the task was lost)."""
    worker = _worker()
    if worker is None:
        return False
    state = worker.state.tasks.get(worker.get_current_task())
    return state is None or state.state in GONE
