"""Grade the sample class in examples/submissions/: the quick start's main job.

Each spec is built into build/sample-class/NAME/ (uploads as students make them: a flat one,
a nested one), then the whole class goes through `minigrad-class` with the seed the specs'
expected scores hold for; grades, feedback and the class report land in build/class/.
"""

from __future__ import annotations

import shutil
import sys

from graders.class_grading import cli

from .submissions import ROOT, load, materialize

EXAMPLES = ROOT / "examples" / "submissions"
BUILD = ROOT / "build"


def build_class() -> int:
    """Every sample student's upload, freshly built; returns the seed the specs share."""
    shutil.rmtree(BUILD / "sample-class", ignore_errors=True)
    specs = sorted(EXAMPLES.glob("*.json"))
    for spec in specs:
        materialize(spec, BUILD / "sample-class" / spec.stem)
    seeds = {load(spec).get("seed", 0) for spec in specs}
    if len(seeds) != 1:
        raise SystemExit(f"the sample class's specs must share one seed, not {sorted(seeds)}")
    return seeds.pop()


def main(argv: list[str]) -> int:
    seed = build_class()
    return cli.main([str(BUILD / "sample-class"), "--out", str(BUILD / "class"), "--seed", str(seed), *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
