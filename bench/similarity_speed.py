"""How fast a class is compared: N generated students with 6 files each, through
`minigrad-similar` (intake, Python's tokenize, fingerprints, every pair of students' whole code,
the reports), beside copydetect's own `CopyDetector` on the same files (same-name files only,
its fingerprints and comparisons, no report). Which pairs each finds is bench/similarity_peers.py.

    python bench/similarity_speed.py [--students N]

Every student's files are the reference's six modules that students write, each line dropped
with a chance of one in five and a share of the names changed, with the student's own seed:
every file differs (nothing is read once for many) and every pair shares much code, the worst
case for the comparisons. Timed as run by default (code more than 10 students share is the
course's idiom and set aside), and with `--common 0` (every pair reported, the writers' worst
case); each figure the median of several runs with its spread (bench/repeat.py). Target: 100
students under 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from repeat import RUNS, Figure, measure, warn_if_busy

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("engine.py", "nn.py", "tensor.py", "layers.py", "checkpoint.py", "gradcheck.py")
TARGET_SECONDS = 10.0
DROP, RENAME = 0.2, 0.5
NAME = re.compile(r"\b[a-z_][a-z0-9_]{2,}\b")


def student_file(text: str, rng: random.Random, suffix: str) -> str:
    """`text` with some lines dropped and some names given the student's suffix."""
    names = sorted(set(NAME.findall(text)))
    renamed = {name: f"{name}_{suffix}" for name in names if rng.random() < RENAME}
    lines = [line for line in text.splitlines() if rng.random() >= DROP]
    return re.sub(r"\b[a-z_][a-z0-9_]{2,}\b", lambda found: renamed.get(found[0], found[0]), "\n".join(lines))


def generate(count: int, folder: Path) -> Path:
    for n in range(count):
        rng = random.Random(n)
        package = folder / f"student{n:03d}" / "minigrad"
        package.mkdir(parents=True)
        for module in MODULES:
            text = (ROOT / "reference" / "minigrad" / module).read_text(encoding="utf-8")
            (package / module).write_text(student_file(text, rng, f"s{n}"), encoding="utf-8")
    return folder


def minigrad_similar(submissions: Path, out: Path, *options: str) -> str:
    """Run the whole command on a fresh `out`; its line counting the pairs."""
    shutil.rmtree(out, ignore_errors=True)
    ran = subprocess.run(
        [sys.executable, "-m", "graders.similarity.cli", str(submissions), "--out", str(out), *options],
        check=True,
        capture_output=True,
        text=True,
    )
    return next(line for line in ran.stdout.splitlines() if line.startswith("pairs at or above"))


def copydetect_seconds(submissions: Path) -> float:
    """copydetect's CopyDetector on the same files: same-name files compared, the release as
    its boilerplate, fingerprints and comparisons timed (its report is not written)."""
    from copydetect import CopyDetector

    start = time.perf_counter()
    detector = CopyDetector(
        test_dirs=[str(submissions)],
        ref_dirs=[str(submissions)],
        boilerplate_dirs=[str(ROOT / "assignments" / "minigrad")],
        extensions=["py"],
        same_name_only=True,
        display_t=0.5,
        autoopen=False,
        silent=True,
    )
    detector.run()
    return time.perf_counter() - start


OPTIONS = {"minigrad-similar (default)": (), "minigrad-similar --common 0": ("--common", "0")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    args = parser.parse_args()
    warn_if_busy()
    rows, pairs = {}, {}
    with tempfile.TemporaryDirectory(prefix="similarity-bench-") as tmp:
        submissions = generate(args.students, Path(tmp) / "class")
        for how, options in OPTIONS.items():
            out = Path(tmp) / f"out{len(rows)}"
            rows[how] = measure(
                lambda out=out, how=how, options=options: pairs.update(
                    {how: minigrad_similar(submissions, out, *options)}
                )
            )
        theirs = Figure([copydetect_seconds(submissions) for _ in range(RUNS)], [])
    print(f"{args.students} students x {len(MODULES)} files, median of {RUNS} runs")
    print(f"{'how':<44}{'seconds (lowest-highest)':>34}")
    for how, figure in rows.items():
        print(f"{how:<44}{str(figure):>34}   {pairs[how]}")
    print(f"{'copydetect CopyDetector.run (no report)':<44}{str(theirs):>34}")
    print(f"\ntarget: under {TARGET_SECONDS:.0f} s for 100 students on 2 cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
