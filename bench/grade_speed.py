"""How long one grade takes: each part alone and all of them together, for a correct and a broken
submission, and whole gradings of submissions that hang; graded at the strongest isolation
available, each figure the median of several runs (bench/repeat.py) with its spread and the
CPU time of the grader and its children.

Targets: all parts of one submission in at most 1.0 s, for a correct
submission and for one with a syntax error alike; a submission that hangs, whatever it prints
meanwhile and however many parts reach the hang, in at most 15 s.

The reference's answers are cached per seed in the grader's user folder (reference_cache.py):
the first run of each figure computes them (the highest of its spread), the others reuse them,
as a student graded again or a class does.

`--against COMMIT ...` compares instead: one correct submission, all parts, graded by this
checkout (as it stands, uncommitted changes included) and by each commit's own grader (its
tree, from `git archive`, grading its own correct submission), in rounds: each round grades once
with every tree in turn, so a load that comes and goes falls on all of them alike. One
ungraded round first fills each tree's reference cache and self-test proof. Absolute times
vary with the machine; the ratios of one run hold.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from repeat import RUNS, Figure, measure, warn_if_busy

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


def grading(folder: Path, out: Path, *options: str, tree: Path = ROOT, runs: int = RUNS) -> Figure:
    """Grade `folder` with the grader of `tree` (its own packages first on the path)."""
    command = [sys.executable, "-m", "graders", str(folder), "--out", str(out), *options]
    return measure(lambda: subprocess.run(command, check=True, capture_output=True, cwd=tree), runs)


def verdict(figure: Figure, target: float) -> str:
    return f"{'meets' if figure.median <= target else 'MISSES'} the {target:g} s target"


def side_by_side(commits: list[str]) -> int:
    """Seconds per correct grading, all parts, for this checkout and each commit, in one run."""
    warn_if_busy()
    everything = ("--parts", PARTS[-1])
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this checkout": ROOT}
        for commit in commits:
            tree = Path(tmp) / f"tree-{commit}"
            tree.mkdir()
            archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
            trees[commit] = tree
        folders = {name: own_correct(tree, Path(tmp) / f"correct-{n}") for n, (name, tree) in enumerate(trees.items())}
        for name, tree in trees.items():  # fills each tree's reference cache and self-test proof
            grading(folders[name], Path(tmp) / "out", *everything, tree=tree, runs=1)
        walls: dict[str, list[float]] = {name: [] for name in trees}
        cpus: dict[str, list[float]] = {name: [] for name in trees}
        busy: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(RUNS):
            for name, tree in trees.items():
                once = grading(folders[name], Path(tmp) / "out", *everything, tree=tree, runs=1)
                walls[name] += once.walls
                cpus[name] += once.cpus
                busy[name] += once.busy
        print(f"a correct submission, all parts, {RUNS} rounds side by side (median, lowest-highest):")
        for name in trees:
            figure = Figure(walls[name], cpus[name], busy[name])
            print(f"  {name:<16}{figure}   {verdict(figure, TARGET_SECONDS)}")
    return 0


def own_correct(tree: Path, dest: Path) -> Path:
    """The correct submission as `tree`'s own spec and reference build it."""
    build = "import sys, pathlib, course.submissions as s; s.materialize(*map(pathlib.Path, sys.argv[1:]))"
    spec = tree / SPECS.relative_to(ROOT) / "correct.json"
    subprocess.run([sys.executable, "-c", build, str(spec), str(dest)], cwd=tree, check=True, capture_output=True)
    return dest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", nargs="+", metavar="COMMIT", help="compare this checkout with these commits")
    if (commits := parser.parse_args().against) is not None:
        return side_by_side(commits)
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
