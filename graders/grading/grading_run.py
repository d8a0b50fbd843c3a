"""What the grading command hands the hidden suites' plugin for one run.

The command, not the suites, decides how the child runs (level, uid, cgroup) and makes the
safe copy of the submission; the suites' plugin (plugin.py) is made with this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from graders.isolation.sandbox import Isolation


@dataclass(frozen=True)
class GradingRun:
    isolation: Isolation
    workdir: Path  # the child's folder: runner plus the copied submission
    seed: int
    reference_cache: Path | None = None  # where a class keeps the reference's answers for its seed
    notes: list[str] = field(default_factory=list)  # said once under the score table (see notes.py)
