"""Kill a set of processes that may still be forking while we kill them."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable


def kill_until_gone(find: Callable[[], list[int]], rounds: int = 50) -> None:
    """SIGKILL whatever `find()` lists, again and again until it lists nothing: a fork bomb
    may refill for a moment after each round."""
    for _ in range(rounds):
        pids = find()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
