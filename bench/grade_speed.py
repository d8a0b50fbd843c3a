"""How long one grade takes: each part alone and all four together, for a correct and a
broken submission, graded side by side in one run at the strongest isolation available.

Target (issue "hidden grader"): all four parts of one submission in under 3 s at the
bwrap level on a 2-core machine.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course.submissions import ROOT, materialize
from graders.parts import COURSE

SUBMISSIONS = {"correct": "correct.json", "broken (syntax error)": "broken-syntax-error.json"}
PARTS = [*(part.name for part in COURSE), ",".join(part.name for part in COURSE)]  # each alone, then all
TARGET_SECONDS = 3.0


def seconds_to_grade(folder: Path, parts: str, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "graders", str(folder), "--out", str(out), "--parts", parts],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def main() -> int:
    specs = ROOT / "tests" / "submissions"
    with tempfile.TemporaryDirectory() as tmp:
        folders = {
            name: materialize(specs / spec, Path(tmp) / name)
            for name, spec in SUBMISSIONS.items()
            if (specs / spec).exists()
        }
        print(f"{'parts':<32}" + "".join(f"{name:>24}" for name in folders))
        total = {}
        for parts in PARTS:
            row = {name: seconds_to_grade(folder, parts, Path(tmp) / "out") for name, folder in folders.items()}
            label = "all four" if "," in parts else parts
            print(f"{label:<32}" + "".join(f"{row[name]:>23.2f}s" for name in folders))
            total = row
    slowest = max(total.values())
    verdict = "meets" if slowest < TARGET_SECONDS else "MISSES"
    print(f"\nall four parts, slowest submission: {slowest:.2f} s, {verdict} the {TARGET_SECONDS:.0f} s target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
