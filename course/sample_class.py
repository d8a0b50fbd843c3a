"""Grade the sample class in examples/submissions/: the quick start's main job.

Each spec is built into build/examples/NAME/ and graded by `minigrad-grade` in its own
process, with results in build/grades/NAME/. One submission's failure never stops the rest.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from .submissions import ROOT, materialize

EXAMPLES = ROOT / "examples" / "submissions"
BUILD = ROOT / "build"


def grade_all(seed: int = 0) -> list[tuple[str, str]]:
    rows = []
    for spec in sorted(EXAMPLES.glob("*.json")):
        folder = BUILD / "examples" / spec.stem
        out = BUILD / "grades" / spec.stem
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        materialize(spec, folder)
        run = subprocess.run(
            [sys.executable, "-m", "graders", str(folder), "--out", str(out), "--seed", str(seed)],
            capture_output=True, text=True,
        )  # fmt: skip
        if run.returncode != 0 or not (out / "results.json").exists():
            rows.append((spec.stem, f"no grade: {run.stderr.strip().splitlines()[-1:]}"))
            continue
        results = json.loads((out / "results.json").read_text())
        parts: dict[str, float] = {}
        for test in results["tests"]:
            parts[test["tags"][0]] = parts.get(test["tags"][0], 0) + test["score"]
        detail = "  ".join(f"{part} {score:g}" for part, score in parts.items())
        rows.append((spec.stem, f"{results['score']:g} / {results['max_score']:g}   ({detail})"))
    return rows


def main() -> int:
    rows = grade_all()
    width = max(len(name) for name, _ in rows)
    print(f"{'submission':<{width}}  score")
    for name, text in rows:
        print(f"{name:<{width}}  {text}")
    print(f"\nresults.json and report.json per submission: {BUILD / 'grades'}/NAME/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
