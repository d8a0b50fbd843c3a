"""How long one grade takes: each part alone and all of them together, for a correct and a broken
submission, and whole gradings of submissions that hang; graded at the strongest isolation
available, each figure the median of several runs (bench/repeat.py) with its spread and the
CPU time of the grader and its children.

Targets (issue "speed"): all parts of one submission in at most 1.0 s, for a correct
submission and for one with a syntax error alike; a submission that hangs, whatever it prints
meanwhile and however many parts reach the hang, in at most 15 s.

The reference's answers are cached per seed in the grader's user folder (reference_cache.py):
the first run of each figure computes them (the highest of its spread), the others reuse them,
as a student graded again or a class does.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from repeat import Figure, measure, warn_if_busy

from course.submissions import ROOT, load, materialize
from graders.course_facts.parts import COURSE

SPECS = ROOT / "tests" / "submissions"
SUBMISSIONS = {"correct": SPECS / "correct.json", "broken (syntax error)": SPECS / "broken-syntax-error.json"}
HANGS = {
    "while instead of if in train()": ROOT / "examples" / "submissions" / "jay-endless-loop.json",
    "backward() loops": SPECS / "attack-infinite-loop.json",
    "backward() loops, printing": SPECS / "attack-newline-drip.json",
}
PARTS = [*(part.name for part in COURSE), ",".join(part.name for part in COURSE)]  # each alone, then all
TARGET_SECONDS, TARGET_HANG_SECONDS = 1.0, 15.0


def grading(folder: Path, out: Path, *options: str) -> Figure:
    command = [sys.executable, "-m", "graders", str(folder), "--out", str(out), *options]
    return measure(lambda: subprocess.run(command, check=True, capture_output=True))


def verdict(figure: Figure, target: float) -> str:
    return f"{'meets' if figure.median <= target else 'MISSES'} the {target:g} s target"


def main() -> int:
    warn_if_busy()
    with tempfile.TemporaryDirectory() as tmp:
        folders = {name: materialize(spec, Path(tmp) / name) for name, spec in SUBMISSIONS.items()}
        print(f"{'parts':<16}" + "".join(f"{name:>40}" for name in folders))
        whole = {}
        for parts in PARTS:
            row = {name: grading(folder, Path(tmp) / "out", "--parts", parts) for name, folder in folders.items()}
            print(f"{'all parts' if ',' in parts else parts:<16}" + "".join(f"{str(row[n]):>40}" for n in folders))
            whole = row
        print()
        for name, figure in whole.items():
            print(f"all parts, {name}: {figure.median:.2f} s, {verdict(figure, TARGET_SECONDS)}")
        print(f"\n{'a submission that hangs':<36}{'whole grading':>40}")
        for name, spec in HANGS.items():
            folder = materialize(spec, Path(tmp) / spec.stem)
            figure = grading(folder, Path(tmp) / "out", "--seed", str(load(spec).get("seed", 7)))
            print(f"{name:<36}{str(figure):>40}   {verdict(figure, TARGET_HANG_SECONDS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
