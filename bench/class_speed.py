"""How fast a class is graded: N generated submissions (a mix like the sample class, with 2
endless loops per 100 students), through `minigrad-class` with `--jobs 1` and `--jobs 2`,
side by side in one run; and the same class through the real `nbgrader autograde`
(bench/nbgrader_class.py).

    python bench/class_speed.py [--students N]

Targets on a 2-core machine (issue "grade a whole class"): `--jobs 2` at least 1.7x faster
than `--jobs 1`; 100 students in under 90 s; at least 3x faster than nbgrader autograde.
A shared or loaded machine makes every figure slower and the ratio smaller: say so with them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course.submissions import ROOT, materialize

EXAMPLES = ROOT / "examples" / "submissions"
ENDLESS = "jay-endless-loop"
ENDLESS_PER_100 = 2
TARGET_RATIO, TARGET_SECONDS, TARGET_VS_NBGRADER = 1.7, 90.0, 3.0


def generate(count: int, folder: Path) -> list[Path]:
    """`count` submissions: the sample class's students in turn, except that exactly
    2 in 100 (at least one) are the endless loop."""
    specs = sorted(spec for spec in EXAMPLES.glob("*.json") if spec.stem != ENDLESS)
    endless = max(1, round(count * ENDLESS_PER_100 / 100))
    every = count // endless
    made = []
    for i in range(count):
        spec = (
            EXAMPLES / f"{ENDLESS}.json" if i % every == every // 2 and i // every < endless else specs[i % len(specs)]
        )
        made.append(materialize(spec, folder / f"student{i:03d}-{spec.stem}"))
    return made


def seconds_to_grade(folder: Path, out: Path, jobs: int) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "graders.class_grading.cli", str(folder), "--out", str(out),
                    "--jobs", str(jobs), "--seed", "0"], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - start


def nbgrader_seconds(submissions: list[Path]) -> float:
    """Seconds for the same class through the real `nbgrader autograde` (bench/nbgrader_class.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import nbgrader_class

    return nbgrader_class.seconds_per_submission({folder.name: folder for folder in submissions}) * len(submissions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="class-bench-") as tmp:
        submissions = generate(args.students, Path(tmp) / "class")
        rows = {f"minigrad-class --jobs {jobs}": seconds_to_grade(Path(tmp) / "class", Path(tmp) / f"out{jobs}", jobs)
                for jobs in (1, 2)}  # fmt: skip
        rows["nbgrader autograde"] = nbgrader = nbgrader_seconds(submissions)
    n = args.students
    print(f"{n} students ({max(1, round(n * ENDLESS_PER_100 / 100))} endless loops)")
    print(f"{'how':<28}{'seconds':>10}{'per student':>14}")
    for how, seconds in rows.items():
        print(f"{how:<28}{seconds:>10.1f}{seconds / n:>13.2f}s")
    one, two = rows["minigrad-class --jobs 1"], rows["minigrad-class --jobs 2"]
    print(f"\n--jobs 2 vs --jobs 1: {one / two:.2f}x (target {TARGET_RATIO}x)")
    print(f"whole class with --jobs 2: {two:.1f} s (target under {TARGET_SECONDS:.0f} s for 100)")
    print(f"vs nbgrader autograde: {nbgrader / two:.2f}x faster (target {TARGET_VS_NBGRADER}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
