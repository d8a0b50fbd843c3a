"""At the `user` level only file permissions stand between the child and the hidden material.

The child runs under a uid of its own, so "other users" is exactly what it is. The project
folder (hidden suites, reference, specimens, the sample class, default grade folders) is
closed to other users once and for good: a mode switched off during a grading and back on
afterwards races with a second grading and leaves the folder open to whichever child runs
in between. Git keeps no folder modes, so the checkout stays clean.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def close_to_others(*paths: Path) -> None:
    """Remove every permission of "other users" from `paths` (never given back)."""
    for path in paths:
        mode = path.stat().st_mode & 0o7777
        if mode & 0o007:
            os.chmod(path, mode & ~0o007)


def close_project() -> None:
    close_to_others(ROOT)
