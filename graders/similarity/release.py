"""The release's own code, left out of every comparison as boilerplate.

Students start from `assignments/minigrad/`: the given files entire (`datasets.py`, `draw.py`,
`plots.py`, ...) and the stubs' imports, signatures and docstrings. Two students who kept them
share all of it and copied nothing, so every k-gram of the release's normalised code is
removed from each file's fingerprints before any comparison (docstrings are dropped by the
normalising anyway). What remains is what the students wrote: two untouched releases share
nothing, and a similarity is a share of the student's own code only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graders import kit

from . import fingerprints

RELEASE = kit.ROOT / "assignments" / "minigrad"


def boilerplate(release: Path = RELEASE) -> np.ndarray:
    """The sorted k-gram hashes of every `.py` file of the release."""
    files = sorted(release.glob("*.py"))
    if not files:
        raise SystemExit(f"{release}: no .py files; --release must name the students' starting package")
    hashes = [fingerprints.all_hashes(path.read_text(encoding="utf-8")) for path in files]
    return np.unique(np.concatenate(hashes))


def modules(release: Path = RELEASE) -> set[str]:
    """The release's module names (`engine.py`, ...): the files students hand in."""
    return {path.name for path in release.glob("*.py")}
