"""How fast `minigrad-class --resume` is when nothing is to regrade: a class of N students as Canvas
delivers it (course/platform_class.py: its download, its gradebook as roster, the submissions'
hand-in times), with a due and a per-day late policy, graded once; then resumed RUNS times, each
of which must keep every grade. The figure is the median resume, with its spread and CPU time.

    python bench/class_resume.py [--students 86]

Target on a 2-core machine: a few seconds. Before the class was loaded once and the gradebook
compared before writing, a resume of 86 took 25-34 s, 18 s of it rewriting every nbgrader entry.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from repeat import RUNS, measure, warn_if_busy

from course import platform_class

TARGET_SECONDS = 10.0


def command(delivery: Path, out: Path, *extra: str) -> list[str]:
    """minigrad-class on the Canvas delivery, as examples/platform_class.py grades it."""
    flags = ["--due", platform_class.DUE.isoformat(), "--late-policy", "per-day:10", "--late-cap", "50"]
    flags += ["--roster", str(delivery / "gradebook.csv"), "--times", str(delivery / "submissions.json")]
    zip_ = str(delivery / "submissions.zip")
    return [sys.executable, "-m", "graders.class_grading.cli", zip_, "--out", str(out), *flags, "--jobs", "2", *extra]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=86)
    args = parser.parse_args()
    warn_if_busy()
    with tempfile.TemporaryDirectory(prefix="class-resume-") as work:
        folder = Path(work)
        platform_class.build(folder / "class", args.students)
        delivery, out = folder / "class" / "canvas", folder / "out"
        start = time.perf_counter()
        subprocess.run(command(delivery, out), check=True, capture_output=True)
        print(f"{args.students} students graded once: {time.perf_counter() - start:.1f} s", flush=True)

        def resume() -> None:
            run = subprocess.run(command(delivery, out, "--resume"), check=True, capture_output=True, text=True)
            kept = f"graded now: 0, unchanged and kept: {args.students}"
            if kept not in run.stdout:
                raise SystemExit(f"the resume regraded someone:\n{run.stdout[-2000:]}")

        figure = measure(resume, RUNS)
    verdict = "met" if figure.median <= TARGET_SECONDS else "NOT met"
    print(
        f"--resume with nothing to regrade, {args.students} students: {figure} (target {TARGET_SECONDS:g} s: {verdict})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
