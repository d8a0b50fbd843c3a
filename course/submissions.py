"""Sample and test submissions, stored as edits of the reference instead of full copies.

A spec `NAME.json` says which submission it starts from and what it changes:
    {"description": "...",
     "base": "reference" | "release" | "<another spec's NAME, same folder>",
     "edits": [{"file": "engine.py", "replace": "old text", "with": "new text"},
               {"file": "nn.py", "delete": true},
               {"file": "nn.py", "from": "release"},  (that base's copy of the file)
               {"file": "engine.py", "append": "code added at the end"},
               {"file": "nn.py", "link_to": "reference"},  (a symbolic link to that base's copy)
               {"file": "nn.py", "grow_to_kib": 600},  (a comment pads the file to that size)
               {"file": "../conftest.py", "write": "a whole new file, here beside minigrad/"}],
     "expect": {"value": 28, ...} or "same as base",
     "folder": "hw1-alice/minigrad" (optional: where the package goes in the upload; "." for a
               flat upload whose engine.py sits at the top; default "minigrad"),
     "seed": 7 (optional: the grading seed the expected scores hold for),
     "messages": ["words the failure messages must contain"],
     "said_once": ["words the grade (summary and messages together) says exactly once"],
     "refused": ["results.json's extra_data.refused, exactly"],
     "first_lines": ["Start here: ...", "lines the grade's text opens its feedback with, verbatim",
                     "(after the score table and its notes: graders/reporting/root_cause.py)"],
     and, for attacks, what tests/test_grader_submissions.py must also check:
     "forbidden_words": ["words that must appear nowhere in the grade"],
     "must_not_exist": ["/paths/the/submission/must/not/have/written"],
     "wait_seconds": 4 (how long a detached daemon gets before the grade is re-read),
     "loopback_port": 47613 (a port the test listens on; nobody may connect),
     "max_seconds": 120 (the grading's execution_time may not exceed it; default 180),
     "max_result_bytes": 400000 (results.json may not be larger; default 1,000,000),
     "needs_level": "bwrap" (the isolation level that contains this attack)}
`materialize` writes the real submission folder (holding minigrad/) that a grader sees.
Every `replace` must match exactly once, so a spec cannot silently stop meaning anything.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from graders.course_facts.kit import ROOT

BASES = {"reference": ROOT / "reference" / "minigrad", "release": ROOT / "assignments" / "minigrad"}


def load(spec: Path) -> dict:
    return json.loads(spec.read_text(encoding="utf-8"))


def materialize(spec: Path, dest: Path) -> Path:
    """Build the submission described by `spec` in `dest`: minigrad/, or wherever the spec's
    "folder" puts the package."""
    _build(spec, dest)
    relocate(dest / "minigrad", dest / load(spec).get("folder", "minigrad"))
    return dest


def _build(spec: Path, dest: Path) -> None:
    data = load(spec)
    package = dest / "minigrad"
    base = data["base"]
    if base in BASES:
        shutil.copytree(BASES[base], package, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        _build(spec.parent / f"{base}.json", dest)
    for edit in data.get("edits", []):
        apply_edit(package / edit["file"], edit)


def relocate(package: Path, where: Path) -> None:
    """Move the built package's files to where the upload keeps them (a wrapping folder, or
    the top of the upload for a flat one)."""
    if where == package:
        return
    where.mkdir(parents=True, exist_ok=True)
    for item in sorted(package.iterdir()):
        item.rename(where / item.name)
    package.rmdir()


def apply_edit(path: Path, edit: dict) -> None:
    if edit.get("delete"):
        path.unlink()
    elif "link_to" in edit:  # as a git or zip upload keeps a link
        path.unlink()
        path.symlink_to(BASES[edit["link_to"]] / edit["file"])
    elif "grow_to_kib" in edit:  # as pasted output or a data dump would
        size = edit["grow_to_kib"] * 1024 - path.stat().st_size - 2
        path.write_text(path.read_text(encoding="utf-8") + "#" + "x" * size + "\n", encoding="utf-8")
    elif "from" in edit:
        shutil.copyfile(BASES[edit["from"]] / edit["file"], path)
    elif "write" in edit:
        path.write_text(edit["write"], encoding="utf-8")
    elif "append" in edit:
        path.write_text(path.read_text(encoding="utf-8") + edit["append"], encoding="utf-8")
    else:
        text = path.read_text(encoding="utf-8")
        if text.count(edit["replace"]) != 1:
            raise ValueError(f"{path.name}: {edit['replace']!r} occurs {text.count(edit['replace'])} times, not once")
        path.write_text(text.replace(edit["replace"], edit["with"]), encoding="utf-8")


def expected_scores(spec: Path) -> dict[str, float]:
    """The per-part scores a spec promises; "same as base" follows the chain of bases."""
    expect = load(spec)["expect"]
    return expected_scores(spec.parent / f"{load(spec)['base']}.json") if expect == "same as base" else expect


if __name__ == "__main__":
    for name in sys.argv[2:]:
        materialize(Path(name), Path(sys.argv[1]) / Path(name).stem)
