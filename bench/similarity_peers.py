"""Planted copies against honest engines: which pairs minigrad-similar, copydetect's own CLI
and Dolos find, in one run.

    python bench/similarity_peers.py

The class: six honest students, each with a design of their own (closures, a table of rules,
a tape, Function classes, derivatives found by name, and one who wrote only nn.py), and six who
copied, hidden the ways students hide copies: verbatim; names changed and methods reordered;
saved in UTF-7 with its coding cookie, every character base64-encoded; a `;` after every
statement and two lines reworded; moved into core.py behind a one-line engine.py; and an
engine from one classmate with the network of another. A pair is true when the two share a
source (the copier and the copied, and two who copied one engine); every other pair is false.

Each tool runs as it ships (copydetect: `copydetect -t CLASS -b RELEASE -e py -l -d 0`, every
file pair scored, a student pair scored by its highest file pair), and is judged at its default
threshold (minigrad-similar 0.5, copydetect 0.33; Dolos, which has none, at 0.5) and by how many true pairs rank
in its first k (k = the true pairs). Dolos is `@dodona/dolos-lib` from npm, run with the
machine's Node: the version pinned in bench/dolos, installed into build/dolos the first time
(bench/dolos_setup.py). Without Node, npm or a compiler the bench stops and says what to
install: all three tools side by side, or no table.
"""

from __future__ import annotations

import argparse
import csv
import html
import itertools
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dolos_setup
from repeat import warn_if_busy

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from test_similarity import CLOSURES, RULES, disguise, in_utf7, semicolons  # noqa: E402 - the tests' own evasions

RELEASE = ROOT / "assignments" / "minigrad"
ENGINES = Path(__file__).resolve().parent / "similarity_engines"
TAPE, FUNCTIONS, DISPATCH = (
    (ENGINES / f"{name}.py").read_text(encoding="utf-8") for name in ("tape", "functions", "dispatch")
)
NN = (ROOT / "reference" / "minigrad" / "nn.py").read_text(encoding="utf-8")


def reworded(text: str) -> str:
    """A `;` after every statement and two statements written another way."""
    hidden = semicolons(text).replace(
        "forward = staticmethod(lambda a, b: a + b);", "forward = staticmethod(lambda x, y: y + x);", 1
    )
    return hidden.replace("return node;", "result = node; return result;", 1)


def moved(text: str) -> dict[str, bytes]:
    return {"engine.py": b"from .core import *  # noqa: F403\n", "core.py": text.encode()}


# student: (files, the sources their code comes from)
CLASS: dict[str, tuple[dict[str, bytes], set[str]]] = {
    "h-closures": ({"engine.py": CLOSURES.encode()}, {"closures"}),
    "h-rules": ({"engine.py": RULES.encode()}, {"rules"}),
    "h-tape": ({"engine.py": TAPE.encode()}, {"tape"}),
    "h-functions": ({"engine.py": FUNCTIONS.encode()}, {"functions"}),
    "h-dispatch": ({"engine.py": DISPATCH.encode()}, {"dispatch"}),
    "h-network": ({"nn.py": NN.encode()}, {"network"}),
    "c-verbatim": ({"engine.py": RULES.encode()}, {"rules"}),
    "c-renamed": ({"engine.py": disguise(CLOSURES).encode()}, {"closures"}),
    "c-utf7": ({"engine.py": in_utf7(TAPE)}, {"tape"}),
    "c-semicolons": ({"engine.py": reworded(FUNCTIONS).encode()}, {"functions"}),
    "c-moved": (moved(DISPATCH), {"dispatch"}),
    "c-from-two": ({"engine.py": CLOSURES.encode(), "nn.py": NN.encode()}, {"closures", "network"}),
}
TRUE = {frozenset((a, b)) for a, b in itertools.combinations(CLASS, 2) if CLASS[a][1] & CLASS[b][1]}


def build(folder: Path) -> Path:
    for student, (files, _) in CLASS.items():
        package = folder / student / "minigrad"
        shutil.copytree(RELEASE, package, ignore=shutil.ignore_patterns("__pycache__", "data"))
        for name, data in files.items():
            (package / name).write_bytes(data)
    return folder


def ours(submissions: Path, out: Path) -> dict[frozenset[str], float]:
    """minigrad-similar's score for each pair it lists (threshold lowered to rank them all)."""
    command = [
        sys.executable,
        "-m",
        "graders.similarity.cli",
        str(submissions),
        "--out",
        str(out),
        "--threshold",
        "0.01",
    ]
    subprocess.run(command, check=True, capture_output=True)
    with (out / "similarity.csv").open(encoding="utf-8", newline="") as file:
        return {
            frozenset((row["student"], row["other"])): max(float(row["similarity"]), float(row["other_similarity"]))
            for row in csv.DictReader(file)
        }


FLAGGED = re.compile(
    r"Test file: <i>(.*?)</i> \(<b>([\d.]+)%</b>\)<br>\s*Reference file: <i>(.*?)</i> \(<b>([\d.]+)%</b>\)"
)


def copydetect(submissions: Path, out: Path) -> dict[frozenset[str], float]:
    """copydetect's CLI as it ships, every file pair in its report; a student pair's score is its highest."""
    report = out / "report.html"
    command = [str(Path(sys.executable).parent / "copydetect"), "-t", str(submissions), "-b", str(RELEASE)]
    subprocess.run([*command, "-e", "py", "-l", "-d", "0", "-a", "-O", str(report)], check=True, capture_output=True)
    scores: dict[frozenset[str], float] = {}
    for test, share, reference, other_share in FLAGGED.findall(report.read_text(encoding="utf-8")):
        a, b = (Path(html.unescape(path)).relative_to(submissions).parts[0] for path in (test, reference))
        if a != b:
            pair = frozenset((a, b))
            scores[pair] = max(scores.get(pair, 0.0), float(share) / 100, float(other_share) / 100)
    return scores


def dolos(submissions: Path, out: Path) -> dict[frozenset[str], float]:
    """Dolos on every student's .py files (less the untouched release files, which it cannot set
    aside); a student pair's score is its highest file pair's similarity."""
    files = [
        str(path)
        for path in sorted(submissions.glob("*/minigrad/*.py"))
        if not (RELEASE / path.name).is_file() or (RELEASE / path.name).read_bytes() != path.read_bytes()
    ]
    scores: dict[frozenset[str], float] = {}
    for line in dolos_setup.run(files).splitlines():
        left, right, similarity = line.split("\t")
        a, b = (Path(path).relative_to(submissions).parts[0] for path in (left, right))
        if a != b:
            pair = frozenset((a, b))
            scores[pair] = max(scores.get(pair, 0.0), float(similarity))
    return scores


def judged(scores: dict[frozenset[str], float], threshold: float) -> str:
    listed = {pair for pair, score in scores.items() if score >= threshold}
    found, false = len(listed & TRUE), len(listed - TRUE)
    precision = found / len(listed) if listed else 1.0
    ranked = sorted(scores, key=lambda pair: (-scores[pair], sorted(pair)))[: len(TRUE)]
    missed = sorted(" & ".join(sorted(pair)) for pair in TRUE - listed)
    return (
        f"{found}/{len(TRUE)} found, {false} false   precision {precision:.2f} recall {found / len(TRUE):.2f}   "
        f"top {len(TRUE)}: {len(set(ranked) & TRUE)}/{len(TRUE)}   missed: {', '.join(missed) or 'none'}"
    )


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    warn_if_busy()
    try:
        dolos_setup.installed()
    except dolos_setup.DolosMissing as missing:
        print(f"similarity_peers: {missing}", file=sys.stderr)
        return 1
    tools = {
        "minigrad-similar": (ours, 0.5),
        "copydetect (CLI)": (copydetect, 0.33),
        "Dolos (dolos-lib)": (dolos, 0.5),
    }
    print(f"{len(CLASS)} students, {len(TRUE)} true pairs of {len(CLASS) * (len(CLASS) - 1) // 2}")
    with tempfile.TemporaryDirectory(prefix="similarity-peers-") as tmp:
        submissions = build(Path(tmp) / "class")
        for n, (name, (run, threshold)) in enumerate(tools.items()):
            out = Path(tmp) / f"out{n}"
            out.mkdir()
            started = time.perf_counter()
            scores = run(submissions, out)
            seconds = time.perf_counter() - started
            print(f"{name:<20} at {threshold:.2f}: {judged(scores, threshold)}   {seconds:.1f} s")
            for pair in sorted(TRUE, key=sorted):
                print(f"    {' & '.join(sorted(pair)):<32} {scores.get(pair, 0.0):.2f}")
            false = sorted(((score, sorted(pair)) for pair, score in scores.items() if pair not in TRUE), reverse=True)
            print("    highest false pair: " + (f"{' & '.join(false[0][1])} {false[0][0]:.2f}" if false else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
